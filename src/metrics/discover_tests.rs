use super::*;
use crate::metrics::presets::Presets;

/// The names that make a PostgreSQL and an HAProxy stack.
const PG_AND_HAPROXY: &[&str] = &[
    "pg_up",
    "pg_stat_activity_count",
    "pg_settings_max_connections",
    "pg_settings_superuser_reserved_connections",
    "haproxy_backend_current_sessions",
    "haproxy_backend_limit_sessions",
];

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(std::string::ToString::to_string).collect()
}

fn found_of(list: &[&str], labels: &[(&str, &[&str])]) -> Vec<Found> {
    detect(Presets::builtin(), &names(list))
        .iter()
        .map(|d| {
            let l: Option<BTreeSet<String>> = labels
                .iter()
                .find(|(id, _)| *id == d.stack.id)
                .map(|(_, l)| l.iter().map(std::string::ToString::to_string).collect());
            d.resolve(l.as_ref())
        })
        .collect()
}

#[test]
fn the_names_selector_parses_covers_every_name_and_stays_short() {
    let p = Presets::builtin();
    let sel = names_selector(p);
    assert!(sel.len() < 4000, "{} bytes: {sel}", sel.len());
    let expr = promql_parser::parser::parse(&sel).unwrap_or_else(|e| panic!("{e}: {sel}"));
    let promql_parser::parser::Expr::VectorSelector(vs) = expr else {
        panic!("not a selector: {sel}")
    };
    let m = &vs.matchers.matchers[0];
    assert_eq!(m.name, "__name__");
    let re = regex::Regex::new(&format!("^(?:{})$", m.value)).unwrap();
    for n in p.all_names() {
        assert!(re.is_match(&n), "{n} not matched by {}", m.value);
    }
    assert!(re.is_match("db.client.connection.count"));
    assert!(!re.is_match("node_cpu_seconds_total"));
    assert!(
        !re.is_match("dbXclientXconnectionXcount"),
        "dots must be escaped"
    );
}

#[test]
fn only_the_stacks_whose_names_exist_are_detected() {
    let d = detect(
        Presets::builtin(),
        &names(&[PG_AND_HAPROXY, &["node_cpu_seconds_total", "up"]].concat()),
    );
    let ids: Vec<&str> = d.iter().map(|d| d.stack.id.as_str()).collect();
    assert_eq!(ids, vec!["postgres", "haproxy"]);
    assert!(detect(Presets::builtin(), &names(&["up", "node_load1"])).is_empty());
    // A name a stack only detects by is not enough without a preset it can fill.
    assert!(
        detect(Presets::builtin(), &names(&["pg_up"]))
            .iter()
            .any(|d| d.stack.id == "postgres")
    );
    assert!(detect(Presets::builtin(), &names(&["pg_settings_max_connections"])).is_empty());
}

#[test]
fn pgbouncer_generations_pick_their_own_names() {
    let common = [
        "pgbouncer_up",
        "pgbouncer_pools_client_waiting_connections",
        "pgbouncer_pools_server_active_connections",
        "pgbouncer_pools_client_maxwait_seconds",
        "pgbouncer_databases_pool_size",
    ];
    let mut new = common.to_vec();
    new.extend([
        "pgbouncer_stats_totals_queries_pooled_total",
        "pgbouncer_stats_totals_queries_duration_seconds_total",
        "pgbouncer_stats_totals_client_wait_seconds_total",
    ]);
    let mut old = common.to_vec();
    old.extend([
        "pgbouncer_stats_queries_pooled_total",
        "pgbouncer_stats_queries_duration_seconds_total",
        "pgbouncer_stats_client_wait_seconds_total",
    ]);
    for (list, name) in [
        (new, "pgbouncer_stats_totals_"),
        (old, "pgbouncer_stats_queries_"),
    ] {
        let f = found_of(&list, &[]);
        let pgb = &f[0];
        let lat = pgb
            .signals
            .iter()
            .find(|s| s.signal == "query-latency")
            .unwrap();
        assert!(lat.panel.query.contains(name), "{}", lat.panel.query);
        assert_eq!(
            pgb.signals
                .iter()
                .filter(|s| s.signal == "saturation")
                .count(),
            1
        );
    }
    let baines = found_of(
        &[
            "pgbouncer_waiting_clients",
            "pgbouncer_active_clients",
            "pgbouncer_pool_size",
        ],
        &[],
    );
    let s: Vec<&str> = baines[0]
        .signals
        .iter()
        .map(|s| s.signal.as_str())
        .collect();
    assert_eq!(s, vec!["saturation", "waiting-clients"]);
    assert!(baines[0].variants.iter().any(|v| v.contains("Baines")));
}

#[test]
fn labels_choose_the_group_and_the_variant() {
    let envoy = [
        "envoy_cluster_upstream_rq_total",
        "envoy_cluster_upstream_rq_xx",
        "envoy_cluster_upstream_rq_retry",
        "envoy_cluster_upstream_rq_completed",
    ];
    let d = detect(Presets::builtin(), &names(&envoy));
    assert_eq!(
        d[0].probe(),
        Some(vec![
            "{__name__=\"envoy_cluster_upstream_rq_total\"}".to_string()
        ])
    );
    let vanilla = found_of(
        &envoy,
        &[("envoy", &["__name__", "envoy_cluster_name", "instance"])],
    );
    assert_eq!(vanilla[0].signals.len(), 2, "{:?}", vanilla[0].signals);
    // Istio's tag names: no vanilla panels.
    let istio = found_of(
        &envoy,
        &[("envoy", &["__name__", "cluster_name", "instance"])],
    );
    assert!(istio.iter().all(|f| f.signals.is_empty()), "{istio:?}");
    let legacy = [
        "haproxy_backend_current_sessions",
        "haproxy_backend_limit_sessions",
    ];
    let f = found_of(&legacy, &[("haproxy", &["backend", "instance"])]);
    assert!(
        f[0].signals[0].panel.query.contains("sum by (backend)"),
        "{:?}",
        f[0].signals[0]
    );
    assert_eq!(f[0].signals[0].panel.legend.as_deref(), Some("{{backend}}"));
    let f = found_of(&legacy, &[("haproxy", &["proxy", "instance"])]);
    assert!(f[0].signals[0].panel.query.contains("sum by (proxy)"));
    // No probe answer: the first candidate.
    let f = found_of(&legacy, &[]);
    assert!(f[0].signals[0].panel.query.contains("sum by (proxy)"));
}

#[test]
fn postgres_lock_waits_need_the_wait_event_labels() {
    let pg = [
        "pg_up",
        "pg_stat_activity_count",
        "pg_settings_max_connections",
        "pg_settings_superuser_reserved_connections",
    ];
    let old = found_of(&pg, &[("postgres", &["datname", "state", "instance"])]);
    assert!(!old[0].signals.iter().any(|s| s.signal == "lock-waits"));
    assert!(old[0].missing.iter().any(|m| m.signal == "lock-waits"));
    let new = found_of(
        &pg,
        &[(
            "postgres",
            &["datname", "state", "wait_event_type", "instance"],
        )],
    );
    assert!(new[0].signals.iter().any(|s| s.signal == "lock-waits"));
}

#[test]
fn the_dashboard_orders_by_priority_and_names_its_stacks() {
    let f = found_of(
        &[PG_AND_HAPROXY, &["haproxy_backend_http_responses_total"]].concat(),
        &[
            ("haproxy", &["proxy"]),
            ("postgres", &["datname", "instance"]),
        ],
    );
    let d = build(&f, MAX_PANELS);
    assert_eq!(d.summary(), "postgres_exporter, HAProxy");
    let order: Vec<(&str, &str)> = d
        .panels
        .iter()
        .map(|p| (p.stack.as_str(), p.signal.as_str()))
        .collect();
    assert_eq!(
        order,
        vec![
            ("postgres", "saturation"),
            ("haproxy", "saturation"),
            ("haproxy", "error-ratio"),
            ("postgres", "instances-up"),
        ]
    );
    assert_eq!(
        d.panels[0].empty_hint(),
        "no series for pg_stat_activity_count · warroom discover"
    );
    assert_eq!(build(&f, 2).panels.len(), 2);
}

#[test]
fn discovered_toml_loads_back_as_the_same_panels() {
    let f = found_of(
        &[
            "hikaricp_connections_max",
            "hikaricp_connections_active",
            "hikaricp_connections_pending",
            "jdbc_connections_max",
            "jdbc_connections_active",
        ],
        &[],
    );
    let d = build(&f, MAX_PANELS);
    let text = d.to_toml("http://127.0.0.1:9090");
    let cfg = crate::config::Config::parse("discovered.toml", &text)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(cfg.panels, d.panel_configs(), "{text}");
    assert!(text.contains("# HikariCP · saturation"), "{text}");
}

#[test]
fn empty_hints_name_the_first_metric() {
    assert_eq!(
        empty_hint_for_query("sum by (pool) (hikaricp_connections_active) / (sum by (pool) (hikaricp_connections_max) > 0)").as_deref(),
        Some("no series for hikaricp_connections_active · warroom discover")
    );
    assert_eq!(empty_hint_for_query("1 + 1"), None);
}
