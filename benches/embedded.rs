//! Embedded engine benchmarks (a plain main: `cargo bench --bench embedded`).
//!
//! 1. Evaluation time of each default-dashboard query over a 1 h range at 400 points, embedded
//!    versus a real Prometheus on the same data: one simulated hour of planner-peak (the bad
//!    deploy included), a scrape every 5 s, written as OpenMetrics, turned into TSDB blocks by
//!    `promtool tsdb create-blocks-from openmetrics` and loaded by Prometheus, and ingested into
//!    the embedded store with the same timestamps. Prometheus's time is its own `evalTotalTime`
//!    (`stats=all`), so HTTP and JSON are not counted against it; its wall time over HTTP is
//!    shown too. Medians of 15 runs. One subquery (the peak request rate over 10 minutes, the
//!    shape alerting rules and runbook gates use) is measured the same way.
//! 2. The store after two simulated hours scraped every simulated second (the demo's feed) with
//!    the default 3 h retention: series, points, resident memory.

#[path = "support/figure.rs"]
mod figure;

#[path = "../tests/support/prometheus.rs"]
mod prometheus;
#[path = "../tests/support/skip.rs"]
mod skip;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use warroom::metrics::RangeQuery;
use warroom::metrics::embedded::EmbeddedSource;
use warroom::sim::exposition::samples;
use warroom::sim::{Scenario, Sim};

const RUNS: usize = 15;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

fn label_text(labels: &[(String, String)]) -> String {
    let parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect();
    format!("{{{}}}", parts.join(","))
}

fn dashboard_against_prometheus() {
    let Some(bin) = prometheus::require_binary("prometheus") else {
        return;
    };
    let Some(promtool) = prometheus::require_binary("promtool") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs();
    let end = (now - now % 60 - 120) as f64;
    let start = end - 3600.0;

    // One simulated hour from 06:58, scraped every 5 s, into both stores.
    let store = EmbeddedSource::default();
    let mut sim = Sim::new(Scenario::load("planner-peak").expect("planner-peak"), 1);
    sim.run_until(1100.0);
    // name -> series -> lines in time order (OpenMetrics keeps a family's samples together).
    let mut by_name: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for k in 0..=720 {
        sim.run_until(1100.0 + k as f64 * 5.0);
        let t = start + k as f64 * 5.0;
        let s = samples(&sim);
        store.ingest(t, &s);
        for x in &s {
            let series = format!("{}{}", x.name, label_text(&x.labels));
            let line = format!("{series} {} {t}", x.value);
            by_name
                .entry(x.name.clone())
                .or_default()
                .entry(series)
                .or_default()
                .push(line);
        }
    }
    let mut om = String::new();
    for (name, series) in &by_name {
        let _ = writeln!(om, "# TYPE {name} unknown");
        for l in series.values().flatten() {
            let _ = writeln!(om, "{l}");
        }
    }
    om.push_str("# EOF\n");
    let om_path = dir.path().join("hour.om");
    std::fs::write(&om_path, om).expect("write OpenMetrics");
    let data = dir.path().join("data");
    let status = Command::new(promtool)
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(&om_path)
        .arg(&data)
        .stdout(Stdio::null())
        .status()
        .expect("run promtool");
    assert!(status.success(), "promtool could not create blocks");

    let port = prometheus::free_port();
    let cfg = dir.path().join("prometheus.yml");
    std::fs::write(&cfg, "global:\n  scrape_interval: 15s\n").expect("write config");
    let mut child = Command::new(bin)
        .arg(format!("--config.file={}", cfg.display()))
        .arg(format!("--storage.tsdb.path={}", data.display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start prometheus");
    assert!(
        prometheus::wait_ready(port, "/-/ready", Duration::from_secs(60)),
        "prometheus did not become ready"
    );

    println!(
        "1 h of planner-peak at 5 s, {:?} (series, points) embedded",
        store.size()
    );
    println!(
        "{:<60} {:>10} {:>10} {:>10} {:>7}",
        "query (1 h, 400 points)", "embedded", "prom eval", "prom http", "ratio"
    );
    let step = 3600.0 / 400.0;
    let mut queries: Vec<(String, String)> = warroom::metrics::presets::sim_panels()
        .into_iter()
        .map(|p| (p.title, p.query))
        .collect();
    queries.push((
        "Subquery: peak request rate (10m:30s)".into(),
        "max_over_time(sum(rate(app_requests_total[1m]))[10m:30s])".into(),
    ));
    for (title, query) in queries {
        let enc: String = url::form_urlencoded::byte_serialize(query.as_bytes()).collect();
        let path = format!(
            "/api/v1/query_range?query={enc}&start={start}&end={end}&step={step}&stats=all"
        );
        let (mut emb, mut eval, mut http) = (Vec::new(), Vec::new(), Vec::new());
        let mut points = (0, 0);
        for _ in 0..RUNS {
            let t = Instant::now();
            let a = store
                .range_now(&RangeQuery {
                    query: query.clone(),
                    start,
                    end,
                    step,
                })
                .expect("embedded answers");
            emb.push(t.elapsed().as_secs_f64() * 1e3);
            points.0 = a.series.iter().map(|s| s.points.len()).sum();

            let t = Instant::now();
            let (code, body) = prometheus::http_get(port, &path, Duration::from_secs(30))
                .expect("prometheus answers");
            http.push(t.elapsed().as_secs_f64() * 1e3);
            assert_eq!(code, 200, "{body}");
            let v: serde_json::Value = serde_json::from_str(&body).expect("json");
            eval.push(
                v["data"]["stats"]["timings"]["evalTotalTime"]
                    .as_f64()
                    .unwrap_or(f64::NAN)
                    * 1e3,
            );
            points.1 = v["data"]["result"]
                .as_array()
                .map(|r| {
                    r.iter()
                        .map(|s| s["values"].as_array().map_or(0, Vec::len))
                        .sum()
                })
                .unwrap_or(0);
        }
        let (e, pe, ph) = (median(emb), median(eval), median(http));
        let label = format!("{title} [{} / {} pts]", points.0, points.1);
        println!(
            "{label:<60} {e:>8.2}ms {pe:>8.2}ms {ph:>8.2}ms {:>6.2}x",
            e / pe
        );
        figure::report(
            &format!("embedded / Prometheus eval time, {title} (1 h, 400 points)"),
            e / pe,
            "x",
            figure::Target::None,
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn two_hours_memory() {
    let before = rss_mb();
    let store = EmbeddedSource::default();
    let mut sim = Sim::new(Scenario::load("planner-peak").expect("planner-peak"), 1);
    let t = Instant::now();
    for _ in 0..7200 {
        sim.step();
        sim.step();
        store.ingest(1_780_000_000.0 + sim.now(), &samples(&sim));
    }
    let (series, points) = store.size();
    println!(
        "2 simulated hours at 1 s: {series} series, {points} points, simulate and ingest {:.2?} total ({:.0} µs a scrape), resident {:.0} MB (+{:.0} MB for the store)",
        t.elapsed(),
        t.elapsed().as_secs_f64() * 1e6 / 7200.0,
        rss_mb(),
        rss_mb() - before
    );
    figure::report(
        "2 simulated hours in the embedded store, resident memory",
        rss_mb(),
        "MB",
        figure::Target::Under(100.0),
    );
}

fn main() {
    // Memory first, while the process holds nothing else.
    two_hours_memory();
    dashboard_against_prometheus();
}
