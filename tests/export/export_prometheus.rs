//! `warroom export --prometheus URL` takes the missing panel snapshots from a real Prometheus
//! (scraping `warroom sim serve planner-peak` through its bad deploy), writes them beside the
//! journal, and the draft's figures come from them.

use crate::support::prometheus;
use crate::support::sim as sim_support;

use prometheus::{PromOptions, free_port, http_get};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn run(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warroom"))
        .arg("--data-dir")
        .arg(data)
        .arg("--log-file")
        .arg(data.join("warroom.log"))
        .args(args)
        .env("WARROOM_ACTOR", "ana")
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap()
}

const SATURATION: &str = "max(db_pool_connections_in_use / db_pool_connections_max)";

fn saturation(prom_port: u16) -> Option<f64> {
    let enc: String = url::form_urlencoded::byte_serialize(SATURATION.as_bytes()).collect();
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

#[test]
fn missing_snapshots_are_taken_from_prometheus_and_feed_the_draft() {
    let sim_port = free_port();
    let Some(prom) = prometheus::start(PromOptions {
        targets: vec![format!("127.0.0.1:{sim_port}")],
        scrape_interval: "1s",
        ..PromOptions::default()
    }) else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    // 120 simulated seconds (four at 30x) before the bad deploy at 07:00.
    let _sim = sim_support::serve(
        sim_port,
        "planner-peak",
        &["--speed", "30", "--start-at", "1080"],
    );
    let out = run(d, &["incident", "new", "--title", "Planner pools full"]);
    assert!(out.status.success());
    let id = String::from_utf8(out.stdout).unwrap().trim().to_string();

    // Wait (bounded) until Prometheus has seen the pools fill.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = None;
    while Instant::now() < deadline {
        seen = saturation(prom.port);
        if seen.is_some_and(|s| s > 0.95) {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(
        seen.is_some_and(|s| s > 0.95),
        "pools never filled: {seen:?}"
    );
    assert!(
        run(d, &["incident", "status", &id, "resolved"])
            .status
            .success()
    );

    let out = run(
        d,
        &["export", &id, "--format", "json", "--prometheus", &prom.url],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("captured 8 panel snapshot(s)"), "{stderr}");
    let snaps = d.join("incidents").join(&id).join("snapshots");
    let json = |dir: &std::path::Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "json")
            })
            .count()
    };
    assert_eq!(json(&snaps), 8);
    // The draft's fact queries beside them (not among them: only panels are there), answered
    // by the real Prometheus: the user-request counter the simulator exports has a series.
    assert_eq!(std::fs::read_dir(&snaps).unwrap().count(), 8);
    let facts = warroom::incident::snapshot::facts_dir(&snaps);
    assert_eq!(json(&facts), 5);
    let users = warroom::incident::snapshot::read_all(&facts)
        .unwrap()
        .into_iter()
        .find(|s| s.title == warroom::incident::snapshot::fact::USER_REQUESTS)
        .unwrap();
    assert!(
        users.series.iter().any(|s| s.points.len() >= 2),
        "{users:?}"
    );
    let v: serde_json::Value = serde_json::from_slice(
        &std::fs::read(d.join("incidents").join(&id).join("exports/facts.json")).unwrap(),
    )
    .unwrap();
    let peak = v["signals"]["pool_saturation"]["value"].as_f64();
    assert!(peak.is_some_and(|p| p > 0.95), "{}", v["signals"]);

    // A second export reads the snapshots on disk and does not query again.
    let out = run(d, &["export", &id, "--prometheus", &prom.url]);
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("captured"));
}
