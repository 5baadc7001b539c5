//! Every preset query evaluated by a real Prometheus over fixture expositions of the stacks
//! that cannot run here (tests/fixtures/expositions), and checked against the value this test
//! computes from the fixtures' own numbers, then the same through VictoriaMetrics (the
//! counters the `increase()` presets read restart inside their windows); then discovery
//! against those Prometheus servers finds exactly the stacks served, with their grouping labels.

use crate::support::expect;
use crate::support::expected_presets;
use crate::support::expositions;
use crate::support::prometheus;
use crate::support::realstack_presets::Victoria;

use expect::*;
use expected_presets::expected;
use expositions::{Exposition, FRAMES, Labels, STEP, serve};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use warroom::metrics::discover::{DiscoverOptions, Discovery, discover, read_values};
use warroom::metrics::presets::{Presets, Stack};
use warroom::metrics::prometheus::{ClientOptions, PrometheusClient};
use warroom::metrics::{InstantQuery, Source, SourceError};

const JOB: &str = "warroom-test";

/// Every fixture, and the stack it stands for.
const ALL: &[(&str, &str)] = &[
    ("postgres-0.17", "postgres"),
    ("pgbouncer-community-0.11", "pgbouncer"),
    ("pgbouncer-community-0.10", "pgbouncer"),
    ("pgbouncer-spreaker", "pgbouncer"),
    ("pgbouncer-baines", "pgbouncer"),
    ("hikaricp-micrometer", "hikaricp"),
    ("hikaricp-tracker", "hikaricp"),
    ("gosql", "go-sql"),
    ("otel-new", "otel"),
    ("otel-old", "otel"),
    ("rails", "rails"),
    ("haproxy", "haproxy"),
    ("haproxy-legacy", "haproxy"),
    ("envoy", "envoy"),
    ("istio", "istio"),
    ("linkerd", "linkerd"),
    ("ingress-nginx", "ingress-nginx"),
    ("kube-state-metrics", "kube-state-metrics"),
    ("cadvisor", "cadvisor"),
    ("redis", "redis"),
];

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// A real Prometheus scraping the named fixtures until their clocks stop.
struct Scraped {
    prom: prometheus::PromServer,
    client: PrometheusClient,
    fx: Fx,
    /// The evaluation time (Unix seconds): the last frame's stamp.
    at: f64,
}

fn scrape(names: &[&str]) -> Option<Scraped> {
    // The last frame is stamped a little before now: Prometheus keeps no sample older than
    // an hour before its newest (its own `up` is stamped now).
    let span_ms = (FRAMES as f64 * STEP * 1000.0) as i64;
    let t0_ms = now_ms() - span_ms - 20_000;
    let mut served: Vec<Arc<AtomicUsize>> = Vec::new();
    let mut exps = Vec::new();
    for n in names {
        let e = Exposition::load(n);
        let (addr, count) = serve(e.clone(), t0_ms);
        served.push(count);
        exps.push((e, addr));
    }
    let prom = prometheus::start(prometheus::PromOptions {
        targets: exps.iter().map(|(_, a)| a.clone()).collect(),
        scrape_interval: "250ms",
        ..Default::default()
    })?;
    let deadline = Instant::now() + Duration::from_secs(90);
    while served.iter().any(|c| c.load(Ordering::SeqCst) < FRAMES + 3) {
        assert!(
            Instant::now() < deadline,
            "the fixtures were not scraped {} times within 90 s: {:?}",
            FRAMES + 3,
            served
                .iter()
                .map(|c| c.load(Ordering::SeqCst))
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let end = FRAMES as f64 * STEP;
    let client = PrometheusClient::new(ClientOptions::new(prom.url.clone())).expect("client");
    Some(Scraped {
        fx: Fx::new(&exps, JOB, end),
        at: (t0_ms as f64 + end * 1000.0) / 1000.0,
        prom,
        client,
    })
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1e-9)
}

fn labels_of(s: &warroom::metrics::Series) -> Labels {
    s.labels
        .iter()
        .filter(|(k, _)| k.as_str() != "__name__")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn dotted(query: &str) -> bool {
    query.contains("{\"")
}

/// Where the presets are asked: a client of a Prometheus or VictoriaMetrics holding the
/// fixtures, what they must give, and when.
struct Answers<'a> {
    client: &'a PrometheusClient,
    fx: &'a Fx,
    /// The evaluation time (Unix seconds): the last frame's stamp.
    at: f64,
}

/// Run every preset of `stack` (each alternative, each grouping candidate) through the
/// engine at `s.at` and compare with [`expected`]. Returns the failures.
fn check_stack(
    rt: &tokio::runtime::Runtime,
    s: &Answers,
    stack: &Stack,
    utf8_names: bool,
    skipped: &mut Vec<String>,
) -> Vec<String> {
    let mut failures = Vec::new();
    let mut seen: Vec<(String, usize)> = Vec::new();
    for p in &stack.panels {
        let n = seen.iter().filter(|(sig, _)| *sig == p.signal).count();
        seen.push((p.signal.clone(), n));
        let groups = if p.group.is_empty() {
            vec![Vec::new()]
        } else {
            p.group.clone()
        };
        for g in groups {
            let query = p.resolve(&g).query;
            if dotted(&query) && !utf8_names {
                skipped.push(format!("{} {} #{n}: {query}", stack.id, p.signal));
                continue;
            }
            let what = format!(
                "{} · {} #{n} · group {:?}\n  {query}",
                stack.id, p.signal, g
            );
            let answer = rt.block_on(s.client.query(InstantQuery {
                query: query.clone(),
                time: Some(s.at),
            }));
            let answer = match answer {
                Ok(a) => a,
                Err(SourceError::Api {
                    error_type,
                    message,
                }) if error_type == "bad_data" => {
                    failures.push(format!("{what}\n  does not parse: {message}"));
                    continue;
                }
                Err(e) => {
                    failures.push(format!("{what}\n  failed: {e}"));
                    continue;
                }
            };
            let got: Vector = answer
                .series
                .iter()
                .filter_map(|se| se.last().map(|p| (labels_of(se), p.v)))
                .collect();
            let Some(want) = expected(&stack.id, &p.signal, n, &g, s.fx) else {
                failures.push(format!(
                    "{what}\n  no expected value written; the engine gave {got:?}"
                ));
                continue;
            };
            let same = got.len() == want.len()
                && want
                    .iter()
                    .all(|(k, w)| got.get(k).is_some_and(|x| close(*x, *w)));
            if !same {
                failures.push(format!("{what}\n  engine:   {got:?}\n  expected: {want:?}"));
            }
            // Non-empty where the fixtures hold the names: an empty answer that matches an
            // empty expectation must be an honest one.
            if want.is_empty() && !dotted(&query) && stack.id != "sim" {
                let absent = p
                    .needs
                    .iter()
                    .all(|m| !s.fx.samples.iter().any(|(n, _, _)| n == m));
                if !absent {
                    failures.push(format!(
                        "{what}\n  expected nothing although its metrics are served"
                    ));
                }
            }
        }
    }
    failures
}

/// Every preset of every stack through one engine; panics with the failures.
fn check_all(rt: &tokio::runtime::Runtime, s: &Answers, engine: &str, utf8_names: bool) {
    let mut failures = Vec::new();
    let mut skipped = Vec::new();
    let mut checked = 0;
    for stack in &Presets::builtin().stacks {
        checked += stack.panels.len();
        failures.extend(check_stack(rt, s, stack, utf8_names, &mut skipped));
    }
    if !skipped.is_empty() {
        eprintln!(
            "SKIPPED in {engine} (no UTF-8 metric names; promql-parser checks them):\n  {}",
            skipped.join("\n  ")
        );
    }
    eprintln!(
        "checked {checked} presets in {engine} against {} fixtures",
        ALL.len()
    );
    assert!(
        failures.is_empty(),
        "{} presets disagree in {engine}:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_preset_query_gives_in_prometheus_what_its_fixtures_say() {
    let names: Vec<&str> = ALL.iter().map(|(n, _)| *n).collect();
    let Some(s) = scrape(&names) else { return };
    let rt = runtime();
    let version = rt
        .block_on(s.client.buildinfo())
        .expect("buildinfo")
        .version;
    // Quoted metric names (UTF-8 names) arrived in Prometheus 3.0.
    let utf8_names = version
        .split('.')
        .next()
        .and_then(|m| m.parse::<u32>().ok())
        .is_some_and(|m| m >= 3);
    let answers = Answers {
        client: &s.client,
        fx: &s.fx,
        at: s.at,
    };
    check_all(&rt, &answers, &format!("Prometheus {version}"), utf8_names);
}

/// The same fixtures and expectations through VictoriaMetrics (Debian's package), written with
/// the timestamps a scrape would give them: every preset reads there what it reads on
/// Prometheus. Its `changes()` counts a series' first sample as a change and its `increase()`
/// counts a new series' first value, where Prometheus does neither (issue 31, point 7).
#[test]
fn every_preset_query_gives_the_same_in_victoriametrics() {
    let Some(vm) = Victoria::start(&[], "1s") else {
        return;
    };
    let span_ms = (FRAMES as f64 * STEP * 1000.0) as i64;
    let t0_ms = now_ms() - span_ms - 20_000;
    let mut exps = Vec::new();
    for (n, _) in ALL {
        let e = Exposition::load(n);
        let instance = format!("fixture-{n}");
        let body: String = (0..=FRAMES).map(|k| e.render(k, t0_ms)).collect();
        vm.import(&body, &[("job", JOB), ("instance", &instance)]);
        exps.push((e, instance));
    }
    let end = FRAMES as f64 * STEP;
    let client = PrometheusClient::new(ClientOptions::new(vm.url.clone())).expect("client");
    let fx = Fx::new(&exps, JOB, end);
    let answers = Answers {
        client: &client,
        fx: &fx,
        at: (t0_ms as f64 + end * 1000.0) / 1000.0,
    };
    // VictoriaMetrics 1.79 (Debian 12) reads no quoted metric names.
    check_all(&runtime(), &answers, "VictoriaMetrics", false);
}

fn found_ids(d: &Discovery) -> BTreeSet<&str> {
    d.found.iter().map(|f| f.stack.as_str()).collect()
}

fn signal<'a>(
    d: &'a Discovery,
    stack: &str,
    sig: &str,
) -> &'a warroom::metrics::discover::SignalPanel {
    d.found
        .iter()
        .find(|f| f.stack == stack)
        .and_then(|f| f.signals.iter().find(|s| s.signal == sig))
        .unwrap_or_else(|| panic!("no {sig} for {stack} in {:#?}", d.found))
}

#[test]
fn discovery_finds_exactly_the_stacks_served_with_their_groups() {
    let Some(s) = scrape(&[
        "pgbouncer-community-0.10",
        "envoy",
        "otel-old",
        "kube-state-metrics",
        "haproxy",
    ]) else {
        return;
    };
    let rt = runtime();
    let d = rt
        .block_on(discover(
            &s.client,
            Presets::builtin(),
            &DiscoverOptions::default(),
            s.at,
        ))
        .expect("discovery");
    assert_eq!(
        found_ids(&d),
        [
            "pgbouncer",
            "otel",
            "haproxy",
            "envoy",
            "kube-state-metrics"
        ]
        .into(),
        "{:#?}",
        d.found
    );
    assert_eq!(
        d.dashboard.summary(),
        "PgBouncer, OpenTelemetry, HAProxy, Envoy, kube-state-metrics"
    );
    // One names request, and a probe for each stack with a choice: OTel (group), HAProxy
    // (proxy or backend), Envoy (vanilla tags).
    assert_eq!(d.requests, 4, "{d:#?}");
    let lat = signal(&d, "pgbouncer", "query-latency");
    assert!(
        lat.panel
            .query
            .contains("pgbouncer_stats_queries_pooled_total"),
        "{}",
        lat.panel.query
    );
    let pgb = d.found.iter().find(|f| f.stack == "pgbouncer").unwrap();
    assert!(
        pgb.variants.iter().any(|v| v.contains("< 0.11")),
        "{:?}",
        pgb.variants
    );
    assert!(
        !pgb.variants
            .iter()
            .any(|v| v.contains("≥ 0.11") || v.contains("Baines"))
    );
    assert_eq!(
        signal(&d, "otel", "saturation").group,
        vec!["job", "pool_name"]
    );
    assert_eq!(signal(&d, "haproxy", "saturation").group, vec!["proxy"]);
    assert!(signal(&d, "envoy", "retry-amplification").variant.is_some());

    // The report reads what Prometheus says for each chosen query.
    let readings = rt.block_on(read_values(&s.client, &d, Some(s.at)));
    let haproxy_sat = readings
        .iter()
        .find(|r| r.stack == "haproxy" && r.signal == "saturation")
        .unwrap();
    let v = haproxy_sat.value.as_ref().expect("reading");
    // api by its worst server (95 of 100; the backend's own limit would read 180 of 2000),
    // admin by the backend (its server has no maxconn), static not at all (no limit anywhere).
    assert_eq!(v.series, 2, "{v:?}");
    assert!(close(v.worst.as_ref().unwrap().0, 95.0 / 100.0), "{v:?}");
    let text =
        warroom::metrics::discover::Report::new(&s.prom.url, d.clone(), readings).to_string();
    assert!(
        text.contains("Found: PgBouncer, OpenTelemetry, HAProxy, Envoy, kube-state-metrics"),
        "{text}"
    );
    assert!(text.contains("95.0%"), "{text}");
    // Loading `--toml` back gives the same panels.
    let toml = d.to_toml(&s.prom.url);
    let cfg = warroom::config::Config::parse("discovered.toml", &toml).expect("loads back");
    assert_eq!(
        cfg.panels.len(),
        d.found.iter().map(|f| f.signals.len()).sum::<usize>()
    );
}

#[test]
fn discovery_tells_istio_from_envoy_and_the_debian_pgbouncer_exporter() {
    let Some(s) = scrape(&[
        "istio",
        "pgbouncer-baines",
        "postgres-0.17",
        "linkerd",
        "haproxy-legacy",
    ]) else {
        return;
    };
    let rt = runtime();
    let d = rt
        .block_on(discover(
            &s.client,
            Presets::builtin(),
            &DiscoverOptions::default(),
            s.at,
        ))
        .expect("discovery");
    // Istio's sidecars export envoy_cluster_upstream_rq_total too, under cluster_name: the
    // vanilla Envoy preset must not claim them.
    assert_eq!(
        found_ids(&d),
        ["postgres", "pgbouncer", "haproxy", "istio", "linkerd"].into(),
        "{:#?}",
        d.found
    );
    let pgb = d.found.iter().find(|f| f.stack == "pgbouncer").unwrap();
    assert_eq!(
        pgb.variants,
        vec!["Debian prometheus-pgbouncer-exporter (Baines)"]
    );
    assert!(
        signal(&d, "pgbouncer", "saturation")
            .panel
            .query
            .contains("pgbouncer_active_clients")
    );
    assert_eq!(
        signal(&d, "istio", "error-ratio").group,
        vec!["destination_workload"]
    );
    assert_eq!(
        signal(&d, "linkerd", "error-ratio").group,
        vec!["deployment"]
    );
    // The legacy haproxy_exporter: its label is `backend`, its latency the 2.0 name.
    assert_eq!(signal(&d, "haproxy", "saturation").group, vec!["backend"]);
    assert!(
        signal(&d, "haproxy", "request-latency")
            .panel
            .query
            .contains("max by (backend) (haproxy_backend_http_response_time_average_seconds)")
    );
    let h = d.found.iter().find(|f| f.stack == "haproxy").unwrap();
    assert_eq!(
        h.variants,
        vec!["prometheus/haproxy_exporter (label backend, deprecated)"]
    );
    // postgres_exporter ≥ 0.17 labels: lock waits are there.
    assert!(
        signal(&d, "postgres", "lock-waits")
            .panel
            .query
            .contains("wait_event_type=\"Lock\"")
    );
    assert_eq!(signal(&d, "postgres", "saturation").group, vec!["instance"]);
    // Several stacks answer one signal: each shows (saturation from PostgreSQL, PgBouncer and
    // HAProxy; the users' error ratio from HAProxy, Istio and Linkerd, PostgreSQL's rollbacks
    // being a signal of their own), the most important first.
    let sats = d
        .dashboard
        .panels
        .iter()
        .filter(|p| p.signal == "saturation")
        .count();
    assert_eq!(sats, 3);
    let errs = d
        .dashboard
        .panels
        .iter()
        .filter(|p| p.signal == "error-ratio")
        .count();
    assert_eq!(errs, 3);
    assert!(
        d.dashboard
            .panels
            .iter()
            .any(|p| p.signal == "rollback-ratio")
    );
    assert_eq!(d.dashboard.panels[0].signal, "saturation");
}
