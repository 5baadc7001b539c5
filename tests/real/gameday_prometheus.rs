//! `warroom gameday --headless --prometheus URL`: the same rehearsal on a real Prometheus that
//! scrapes the simulator gameday serves; the play's gates read that Prometheus.

use crate::support::prometheus;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn a_headless_rehearsal_runs_against_a_real_prometheus() {
    let sim_port = prometheus::free_port();
    let Some(prom) = prometheus::start(prometheus::PromOptions {
        targets: vec![format!("127.0.0.1:{sim_port}")],
        scrape_interval: "1s",
        ..Default::default()
    }) else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_warroom"))
        .arg("--data-dir")
        .arg(data.path())
        .args([
            "gameday",
            "planner-peak",
            "--headless",
            "--prometheus",
            &prom.url,
        ])
        .args(["--listen", &format!("127.0.0.1:{sim_port}")])
        .args([
            "--speed",
            "20",
            "--play",
            "disable-retries@+20s",
            "--for",
            "6m",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let began = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            began.elapsed() < Duration::from_secs(120),
            "gameday did not finish"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no report ({e}):\n{stderr}"));
    // Prometheus scraped the rehearsal's simulator. The rehearsal has ended and its target is
    // gone (its series are stale now), so look back over the last minutes.
    let (status, body) = prometheus::http_get(
        prom.port,
        "/api/v1/query?query=sum(max_over_time(app_logical_requests_total%5B5m%5D))",
        Duration::from_secs(5),
    )
    .expect("Prometheus answers");
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let total: f64 = v["data"]["result"][0]["value"][1]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(total > 0.0, "{body}");
    // The play ran, read its gate from Prometheus and was scored.
    assert!(
        stderr.contains(&format!("runbooks read {}", prom.url)),
        "{stderr}"
    );
    assert!(
        stderr.contains("gate "),
        "the play's gate never reported:\n{stderr}"
    );
    assert!(r["plays"][0]["started_at_s"].is_number(), "{r}");
    let m = r["score"]["time_to_first_mitigation_s"]
        .as_f64()
        .expect("mitigated");
    assert!((20.0..30.0).contains(&m), "first mitigation after {m} s");
}
