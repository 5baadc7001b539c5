use super::*;
use promql_parser::parser::{self, Expr};
use promql_parser::util::{ExprVisitor, walk_expr};

#[test]
fn every_shipped_preset_loads_and_its_queries_parse() {
    let mut ids = BTreeSet::new();
    for (file, text) in BUILTIN {
        let stack = Presets::parse_stack(file, text).unwrap_or_else(|e| panic!("{e}"));
        assert!(ids.insert(stack.id.clone()), "duplicate id {}", stack.id);
        for p in &stack.panels {
            assert!(!p.needs.is_empty(), "{file}: {}", p.panel.title);
            let groups: Vec<Group> = if p.group.is_empty() {
                vec![Vec::new()]
            } else {
                p.group.clone()
            };
            for g in groups {
                let panel = p.resolve(&g);
                assert!(!panel.query.contains(GROUP), "{file}: {}", panel.query);
                parser::parse(&panel.query)
                    .unwrap_or_else(|e| panic!("{file}: {}: {e}", panel.query));
                if let Some(l) = &panel.legend {
                    assert!(!l.contains('$'), "{file}: legend {l}");
                }
            }
        }
    }
    assert_eq!(Presets::builtin().stacks.len(), BUILTIN.len());
}

/// The folder and the built-in list agree: every `presets/*.toml` of the checkout is built in,
/// under its own name and with its text, and nothing else is (as `runbook/catalog.rs` checks
/// for runbooks).
#[test]
fn every_preset_file_of_the_checkout_is_built_in_and_nothing_else() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/metrics/presets");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(std::result::Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    on_disk.sort();
    let mut built_in: Vec<String> = BUILTIN.iter().map(|(f, _)| f.to_string()).collect();
    built_in.sort();
    assert_eq!(built_in, on_disk, "BUILTIN must list every presets/*.toml");
    for (file, text) in BUILTIN {
        assert_eq!(
            std::fs::read_to_string(dir.join(file)).unwrap(),
            *text,
            "{file}"
        );
    }
}

#[test]
fn the_stacks_the_issue_names_are_all_there() {
    let p = Presets::builtin();
    for id in [
        "postgres",
        "pgbouncer",
        "hikaricp",
        "go-sql",
        "otel",
        "envoy",
        "istio",
        "haproxy",
        "ingress-nginx",
        "linkerd",
        "kube-state-metrics",
        "cadvisor",
        "rails",
        "redis",
        "sim",
    ] {
        assert!(p.stack(id).is_some(), "no preset for {id}");
    }
    let pgb = p.stack("pgbouncer").unwrap();
    let needs: BTreeSet<&str> = pgb
        .panels
        .iter()
        .flat_map(|p| p.needs.iter().map(String::as_str))
        .collect();
    // Both generations of the prometheus-community exporter, spreaker's and Baines'.
    for n in [
        "pgbouncer_stats_totals_queries_pooled_total",
        "pgbouncer_stats_queries_pooled_total",
        "pgbouncer_stats_queries_total",
        "pgbouncer_waiting_clients",
    ] {
        assert!(needs.contains(n), "pgbouncer presets miss {n}");
    }
}

/// Each exporter generation that gives PgBouncer's query time also gives the clients' wait, so
/// the query time shown is the server's part (issue 31: the wait was in it, unnamed).
#[test]
fn pgbouncer_query_time_comes_with_the_wait_taken_out() {
    let pgb = Presets::builtin().stack("pgbouncer").unwrap().clone();
    let of = |signal: &str| -> Vec<&Preset> {
        pgb.panels.iter().filter(|p| p.signal == signal).collect()
    };
    let (latency, wait) = (of("query-latency"), of("mean-client-wait"));
    assert_eq!(latency.len(), 3);
    assert_eq!(wait.len(), latency.len());
    for (l, w) in latency.iter().zip(&wait) {
        assert_eq!(l.variant, w.variant);
        // The wait panel's counters are all in the latency query, which subtracts them.
        for n in &w.needs {
            assert!(l.needs.contains(n), "{}: {n}", l.panel.query);
        }
        assert!(l.panel.query.contains(") - sum by"), "{}", l.panel.query);
        assert!(l.panel.title.contains("wait excluded"), "{}", l.panel.title);
    }
    let wait_names: BTreeSet<&str> = wait
        .iter()
        .flat_map(|p| p.needs.iter().map(String::as_str))
        .collect();
    for n in [
        "pgbouncer_stats_totals_client_wait_seconds_total",
        "pgbouncer_stats_client_wait_seconds_total",
        "pgbouncer_stats_waiting_duration_microseconds_total",
    ] {
        assert!(wait_names.contains(n), "no wait panel reads {n}");
    }
}

/// redis_exporter's names select the Redis stack, and its queue panel reads the metric the
/// redis-queue-drain runbook's gate reads, summed over the same labels.
#[test]
fn redis_is_detected_and_its_queue_reads_what_the_runbook_gates_on() {
    let p = Presets::builtin();
    let found = crate::metrics::discover::detect(p, &["redis_up", "redis_key_size"]);
    let ids: Vec<&str> = found.iter().map(|d| d.stack.id.as_str()).collect();
    assert_eq!(ids, ["redis"]);
    let redis = p.stack("redis").unwrap();
    let queue = redis
        .panels
        .iter()
        .find(|p| p.signal == "queue-depth")
        .unwrap();
    let runbook = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("runbooks/redis-queue-drain.toml"),
    )
    .unwrap();
    let gate = runbook
        .lines()
        .find(|l| l.starts_with("gate =") && l.contains("redis_key_size"))
        .expect("the runbook gates on redis_key_size");
    assert_eq!(queue.needs, ["redis_key_size"]);
    assert!(gate.contains("sum(redis_key_size{key="), "{gate}");
    assert_eq!(queue.panel.query, "sum by (key) (redis_key_size)");
    // Memory only where maxmemory is set.
    let memory = redis.panels.iter().find(|p| p.signal == "memory").unwrap();
    assert!(memory.panel.query.contains("(redis_memory_max_bytes) > 0)"));
}

#[test]
fn dotted_names_are_read_from_quoted_selectors() {
    assert_eq!(
        metric_names(r#"sum by (job) ({"db.client.connection.count", "db.client.connection.state"="used"}) / (sum({"db.client.connection.max"}) > 0)"#)
            .unwrap(),
        vec!["db.client.connection.count", "db.client.connection.max"]
    );
    assert_eq!(
        metric_names("rate(a_total[5m]) / on (x) b offset 5m + sum(c) - d{e=\"f\"}").unwrap(),
        vec!["a_total", "b", "c", "d"]
    );
    assert!(metric_names("sum(rate(x[5m])").is_err());
}

#[test]
fn group_placeholders_fill_query_and_legend() {
    let s = Presets::parse_stack(
        "t.toml",
        r#"
[stack]
id = "t"
name = "T"
probe = ["m"]
group = ["job, pool_name", "job"]

[[panel]]
signal = "saturation"
priority = 10
title = "T"
query = "sum by ($group) (m) / (sum by ($group) (n) > 0)"
unit = "percent"
legend = "$group"
"#,
    )
    .unwrap();
    let p = &s.panels[0];
    assert_eq!(p.needs, vec!["m", "n"]);
    let r = p.resolve(&p.group[0]);
    assert_eq!(
        r.query,
        "sum by (job, pool_name) (m) / (sum by (job, pool_name) (n) > 0)"
    );
    assert_eq!(r.legend.as_deref(), Some("{{job}} {{pool_name}}"));
}

fn error_of(text: &str) -> String {
    match Presets::parse_stack("bad.toml", text) {
        Err(e) => e.to_string(),
        Ok(s) => panic!("expected an error, got {s:?}"),
    }
}

#[test]
fn broken_presets_say_what_and_where() {
    let head = "[stack]\nid = \"t\"\nname = \"T\"\n\n";
    let e = error_of(&format!(
        "{head}[[panel]]\nsignal = \"saturation\"\npriority = 10\ntitle = \"X\"\nquery = \"sum(rate(x[5m])\"\n"
    ));
    assert!(
        e.contains("bad.toml:5:1") && e.contains("does not parse as PromQL"),
        "{e}"
    );
    let e = error_of(&format!(
        "{head}[[panel]]\nsignal = \"saturation\"\npriority = 10\ntitle = \"X\"\nquery = \"sum by ($group) (x)\"\n"
    ));
    assert!(e.contains("uses $group"), "{e}");
    let e = error_of(&format!(
        "{head}[[panel]]\nsignal = \"saturation\"\npriority = 10\nvariant = \"nope\"\ntitle = \"X\"\nquery = \"x\"\n"
    ));
    assert!(e.contains("variant \"nope\" is not declared"), "{e}");
    let e = error_of(&format!(
        "{head}[[panel]]\nsignal = \"saturation\"\npriority = 10\ntitle = \"X\"\nquery = \"x\"\ntypo = 1\n"
    ));
    assert!(e.contains("typo"), "{e}");
    let e = error_of(&format!(
        "{head}[[panel]]\nsignal = \"Saturation\"\npriority = 10\ntitle = \"X\"\nquery = \"x\"\n"
    ));
    assert!(e.contains("signal \"Saturation\""), "{e}");
    let e = error_of(&format!(
        "{head}[[panel]]\nsignal = \"s\"\npriority = 10\ntitle = \"X\"\nquery = \"1 + 1\"\n"
    ));
    assert!(e.contains("names no metric"), "{e}");
    let e = error_of(&format!(
        "{head}[[panel]]\nsignal = \"s\"\npriority = 10\ntitle = \"X\"\nquery = \"x\"\nwarn = 2.0\ncrit = 1.0\n"
    ));
    assert!(e.contains("wrong order"), "{e}");
    let e = error_of(head);
    assert!(e.contains("at least one [[panel]]"), "{e}");
}

#[test]
fn stack_ids_must_be_unique() {
    let a = "[stack]\nid = \"a\"\nname = \"A\"\n[[panel]]\nsignal = \"s\"\npriority = 1\ntitle = \"X\"\nquery = \"x\"\n";
    let e = Presets::parse(&[("a.toml", a), ("b.toml", a)]).unwrap_err();
    assert!(e.to_string().contains("already used by a.toml"), "{e}");
}

/// The counters the presets take a rate of whose names do not end in `_total`, `_sum`,
/// `_count` or `_bucket`: newer Prometheus versions (their PromQL annotations; 2.42 sends
/// none) answer those with the info "metric might not be a counter". The console shows it as
/// a note; this list says where to expect it.
#[test]
fn the_rates_that_draw_the_might_not_be_a_counter_info_are_these() {
    struct Rates(BTreeSet<String>);
    impl ExprVisitor for Rates {
        type Error = ();
        fn pre_visit(&mut self, e: &Expr) -> Result<bool, ()> {
            if let Expr::Call(c) = e
                && matches!(c.func.name, "rate" | "increase" | "irate")
                && let Some(Expr::MatrixSelector(ms)) =
                    c.args.args.first().map(std::convert::AsRef::as_ref)
                && let Some(n) = &ms.vs.name
                && !["_total", "_sum", "_count", "_bucket"]
                    .iter()
                    .any(|s| n.ends_with(s))
            {
                self.0.insert(n.clone());
            }
            Ok(true)
        }
    }
    let mut r = Rates(BTreeSet::new());
    for s in &Presets::builtin().stacks {
        for p in &s.panels {
            let q = p.resolve(p.default_group()).query;
            let _ = walk_expr(&mut r, &parser::parse(&q).unwrap());
        }
    }
    let got: Vec<&str> = r.0.iter().map(String::as_str).collect();
    assert_eq!(
        got,
        vec![
            "envoy_cluster_upstream_rq_completed",
            "envoy_cluster_upstream_rq_pending_overflow",
            "envoy_cluster_upstream_rq_retry",
            "envoy_cluster_upstream_rq_xx",
            "nginx_ingress_controller_requests",
            "pg_stat_database_deadlocks",
            "pg_stat_database_xact_commit",
            "pg_stat_database_xact_rollback",
            "pgxpool_acquire_duration_ns",
            "pgxpool_empty_acquire",
        ]
    );
}

#[test]
fn a_directory_overrides_and_adds_stacks() {
    let dir = tempfile::tempdir().unwrap();
    let mine = "[stack]\nid = \"postgres\"\nname = \"our postgres\"\n[[panel]]\nsignal = \"saturation\"\npriority = 1\ntitle = \"Ours\"\nquery = \"our_pool_in_use / our_pool_max\"\n";
    std::fs::write(dir.path().join("postgres.toml"), mine).unwrap();
    let extra = mine.replace("\"postgres\"", "\"billing\"");
    std::fs::write(dir.path().join("billing.toml"), extra).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a preset").unwrap();
    let p = Presets::with_dir(dir.path()).unwrap();
    assert_eq!(p.stacks.len(), BUILTIN.len() + 1);
    assert_eq!(p.stack("postgres").unwrap().name, "our postgres");
    assert_eq!(p.stacks.last().unwrap().id, "billing");
    std::fs::write(dir.path().join("broken.toml"), "[stack]\nid = 3\n").unwrap();
    let e = Presets::with_dir(dir.path()).unwrap_err().to_string();
    assert!(e.contains("broken.toml:2"), "{e}");
    assert_eq!(
        Presets::with_dir(&dir.path().join("absent"))
            .unwrap()
            .stacks
            .len(),
        BUILTIN.len()
    );
}
