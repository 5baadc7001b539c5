//! Simulator benchmarks (a plain main: `cargo bench --bench sim`).
//!
//! 1. One simulated hour of the planner fleet (10 instances, peak about 2,000 requests/s,
//!    the bad deploy included): single-threaded, so wall time is CPU time. Target < 0.5 s.
//! 2. `/metrics` scrape latency while the model runs at 30x: p50 and p99 over 500 scrapes
//!    on loopback. Target p99 < 10 ms.

#[path = "support/figure.rs"]
mod figure;

use std::sync::Arc;
use std::time::{Duration, Instant};
use warroom::sim::{Scenario, Sim, SimService, server};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn one_hour() {
    let sc = Scenario::load("planner-peak").expect("planner-peak");
    let mut times = Vec::new();
    for seed in 0..5 {
        let mut sim = Sim::new(sc.clone(), seed);
        let t = Instant::now();
        sim.run_until(3600.0);
        times.push(t.elapsed());
        std::hint::black_box(sim.totals().logical);
    }
    times.sort();
    println!(
        "planner-peak, one simulated hour (7200 steps, 10 instances): min {:?}, median {:?}",
        times[0],
        times[times.len() / 2]
    );
    figure::report(
        "one simulated planner hour, median",
        times[times.len() / 2].as_secs_f64() * 1000.0,
        "ms",
        figure::Target::Under(500.0),
    );
}

fn scrape_latency() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let mut sim = Sim::new(Scenario::load("planner-peak").expect("planner-peak"), 1);
        sim.run_until(1140.0);
        let service = Arc::new(SimService::new(sim, 30.0));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/metrics", listener.local_addr().expect("addr"));
        let app = server::router(service.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        tokio::spawn(server::run_clock(service.clone(), 1140.0));
        let client = reqwest::Client::new();
        let mut lat = Vec::new();
        let mut bytes = 0;
        for _ in 0..500 {
            let t = Instant::now();
            let body = client
                .get(&url)
                .send()
                .await
                .expect("scrape")
                .text()
                .await
                .expect("body");
            lat.push(t.elapsed());
            bytes = body.len();
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        lat.sort();
        println!(
            "/metrics at 30x ({bytes} bytes): p50 {:?}, p99 {:?}, max {:?}",
            percentile(&lat, 0.5),
            percentile(&lat, 0.99),
            lat[lat.len() - 1]
        );
        figure::report(
            "simulator /metrics at 30x, p99",
            percentile(&lat, 0.99).as_secs_f64() * 1000.0,
            "ms",
            figure::Target::Under(10.0),
        );
    });
}

fn main() {
    one_hour();
    scrape_latency();
}
