//! Discovery against a real Prometheus holding 5,000 unrelated metric names besides four
//! stacks (postgres_exporter 0.17, HAProxy, Envoy, HikariCP): requests sent, bytes received
//! and the time to a built dashboard, median of 20 runs. The requests and bytes are counted
//! twice: by discovery itself and by Prometheus (`prometheus_http_requests_total` and
//! `prometheus_http_response_size_bytes_sum` of its label handlers, before and after).
//! Target: 1 request for the names plus at most 1 per detected stack, under 100 ms.
//!
//! `cargo bench --bench discover` (needs `prometheus`)

#[path = "support/figure.rs"]
mod figure;

#[path = "../tests/support/prometheus.rs"]
mod prometheus;
#[path = "../tests/support/skip.rs"]
mod skip;

#[path = "../tests/support/expositions.rs"]
mod expositions;

use figure::Target;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use warroom::metrics::discover::{DiscoverOptions, discover};
use warroom::metrics::presets::Presets;
use warroom::metrics::prometheus::{ClientOptions, PrometheusClient};

const RUNS: usize = 20;
const NAMES: usize = 5000;

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Prometheus's own count of label-endpoint requests and the bytes it sent for them, read
/// from its `/metrics` (it does not scrape itself here).
fn served(port: u16) -> (f64, f64) {
    let (_, text) = prometheus::http_get(port, "/metrics", Duration::from_secs(5))
        .expect("prometheus /metrics");
    let (mut requests, mut bytes) = (0.0, 0.0);
    for l in text.lines() {
        let label = l.contains("handler=\"/api/v1/label/:name/values\"")
            || l.contains("handler=\"/api/v1/labels\"");
        let value = || {
            l.rsplit(' ')
                .next()
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        if label && l.starts_with("prometheus_http_requests_total{") {
            requests += value();
        } else if label && l.starts_with("prometheus_http_response_size_bytes_sum{") {
            bytes += value();
        }
    }
    (requests, bytes)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let t0_ms = (now() * 1000.0) as i64 - 40 * 60 * 1000;
    let mut targets = Vec::new();
    let mut fixtures = vec![expositions::many_names(NAMES)];
    for f in ["postgres-0.17", "haproxy", "envoy", "hikaricp-micrometer"] {
        fixtures.push(expositions::Exposition::load(f));
    }
    for e in fixtures {
        targets.push(expositions::serve(e, t0_ms).0);
    }
    let Some(prom) = prometheus::start(prometheus::PromOptions {
        targets: targets.clone(),
        scrape_interval: "1s",
        ..Default::default()
    }) else {
        return;
    };
    let c = PrometheusClient::new(ClientOptions::new(prom.url.clone())).expect("client");
    // Wait until every name is in.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let selector = vec![
            r#"{__name__=~"fixture_metric_.*|pg_up|haproxy_process_nbthread|envoy_cluster_upstream_rq_total|hikaricp_connections_max"}"#
                .to_string(),
        ];
        let n = c
            .label_values(
                "__name__",
                &selector,
                Some((now() - 3600.0, now())),
                None,
                8 << 20,
            )
            .await
            .map(|l| l.values.len())
            .unwrap_or(0);
        if n as usize >= NAMES + 4 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus did not ingest the fixtures ({n} names)"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let opts = DiscoverOptions::default();
    let presets = Presets::builtin();
    // One run to warm the connection and Prometheus's caches, then the measured ones.
    let first = Instant::now();
    let mut last = discover(&c, presets, &opts, now())
        .await
        .expect("discovery");
    let cold_ms = first.elapsed().as_secs_f64() * 1000.0;
    let before = served(prom.port);
    let mut times = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        last = discover(&c, presets, &opts, now())
            .await
            .expect("discovery");
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let after = served(prom.port);
    let per_run_requests = (after.0 - before.0) / RUNS as f64;
    let per_run_bytes = (after.1 - before.1) / RUNS as f64;
    let stacks = last.found.len();
    println!(
        "found {} ({} panels) among {} names; discovery counts {} requests, {} bytes a run; Prometheus counts {per_run_requests:.1} requests, {per_run_bytes:.0} bytes",
        last.dashboard.summary(),
        last.dashboard.panels.len(),
        last.names_listed,
        last.requests,
        last.bytes
    );
    assert_eq!(stacks, 4, "{:#?}", last.found);
    // What listing every name would cost instead (an engine that ignores match[]).
    let t = Instant::now();
    let all = c
        .label_values(
            "__name__",
            &[],
            Some((now() - 3600.0, now())),
            None,
            8 << 20,
        )
        .await
        .expect("all names");
    let all_ms = t.elapsed().as_secs_f64() * 1000.0;
    println!(
        "listing all {} names without match[]: {} bytes in {all_ms:.1} ms",
        all.values.len(),
        all.bytes
    );
    figure::report(
        "requests per discovery (Prometheus's count)",
        per_run_requests,
        "requests",
        Target::Under(1.0 + stacks as f64 + 0.5),
    );
    figure::report("stacks detected", stacks as f64, "stacks", Target::None);
    figure::report(
        "bytes received per discovery",
        per_run_bytes,
        "bytes",
        Target::None,
    );
    figure::report(
        "bytes listing all names (no match[])",
        all.bytes as f64,
        "bytes",
        Target::None,
    );
    figure::report(
        "time to a built dashboard, first run",
        cold_ms,
        "ms",
        Target::None,
    );
    figure::report(
        "time to a built dashboard, median of 20",
        median(times.clone()),
        "ms",
        Target::Under(100.0),
    );
    figure::report(
        "time to a built dashboard, slowest of 20",
        times.iter().cloned().fold(0.0, f64::max),
        "ms",
        Target::None,
    );
}
