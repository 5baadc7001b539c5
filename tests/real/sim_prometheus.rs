//! `warroom sim serve planner-peak --speed 30` scraped by a real Prometheus: pool saturation
//! and retry amplification rise after the bad deploy and fall after the runbook's control calls
//! (rollback, retries off, batch restarts), read back through Prometheus's HTTP API.

use crate::support::prometheus;
use crate::support::sim as sim_support;
use sim_support::control;

use prometheus::{PromOptions, free_port, http_get};
use std::time::{Duration, Instant};

const SATURATION: &str = "min(db_pool_connections_in_use / db_pool_connections_max)";
const AMPLIFICATION: &str = "(sum(rate(app_logical_requests_total[5s])) + \
     sum(rate(app_retries_total[5s]))) / sum(rate(app_logical_requests_total[5s]))";

/// One instant query's scalar result, if Prometheus has one.
fn query(prom_port: u16, q: &str) -> Option<f64> {
    let enc: String = url::form_urlencoded::byte_serialize(q.as_bytes()).collect();
    let (status, body) = http_get(
        prom_port,
        &format!("/api/v1/query?query={enc}"),
        Duration::from_secs(2),
    )?;
    if status != 200 {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(&body).ok()?;
    v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
}

/// Poll until `pred(saturation, amplification)` holds; bounded by `within`.
fn wait_for(prom: u16, within: Duration, pred: impl Fn(f64, f64) -> bool) -> Option<(f64, f64)> {
    let deadline = Instant::now() + within;
    let mut last = None;
    while Instant::now() < deadline {
        if let (Some(s), Some(a)) = (query(prom, SATURATION), query(prom, AMPLIFICATION)) {
            last = Some((s, a));
            if pred(s, a) {
                return last;
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    eprintln!("last reading (saturation, amplification): {last:?}");
    None
}

#[test]
fn prometheus_sees_the_storm_and_the_recovery() {
    let sim_port = free_port();
    let Some(prom) = prometheus::start(PromOptions {
        targets: vec![format!("127.0.0.1:{sim_port}")],
        scrape_interval: "1s",
        ..PromOptions::default()
    }) else {
        return;
    };
    // 300 simulated seconds (ten at 30x) before the bad deploy at 07:00: on a busy machine
    // Prometheus's first scrapes come a few seconds late, and some must precede the fault.
    let sim = sim_support::serve(
        sim_port,
        "planner-peak",
        &["--speed", "30", "--start-at", "900"],
    );

    let storm = wait_for(prom.port, Duration::from_secs(40), |s, a| {
        s > 0.95 && a > 2.0
    })
    .expect("saturation and amplification rise after the fault");
    eprintln!(
        "storm: saturation {:.2}, amplification {:.2}",
        storm.0, storm.1
    );
    // It rose: the same series were low before the fault.
    let before = query(prom.port, &format!("min_over_time(({SATURATION})[60s:1s])"))
        .expect("saturation history");
    assert!(before < 0.5, "saturation before the fault: {before}");

    control(sim_port, "rollback", "{}");
    control(sim_port, "retries", r#"{"layer":"all","enabled":false}"#);
    for batch in [0..5, 5..10] {
        for i in batch {
            control(sim_port, "restart", &format!("{{\"pod\":\"api-{i}\"}}"));
        }
        std::thread::sleep(Duration::from_secs(1)); // 30 simulated seconds between batches
    }
    let calm = wait_for(prom.port, Duration::from_secs(25), |s, a| {
        s < 0.5 && a < 1.1
    })
    .expect("saturation and amplification fall after the control calls");
    eprintln!(
        "after: saturation {:.2}, amplification {:.2}",
        calm.0, calm.1
    );
    assert!(calm.0 < storm.0 && calm.1 < storm.1);
    drop(sim);
}
