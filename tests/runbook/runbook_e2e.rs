//! The acceptance test of issue 5 with real components: `warroom sim serve planner-peak` after
//! the bad deploy, a real Prometheus scraping it, and `warroom runbook run pool-exhaustion
//! --yes` as a child process. Everything is measured through Prometheus:
//! - the run ends successfully and the error ratio is under 2 % afterwards;
//! - the same incident with retries left on (`--var retries_enabled=true`), on its own simulator
//!   and Prometheus at the same moment, is still over 2 % after the same time: attempts per
//!   request stay over the runbook's bound, so its gate holds the run before the restarts (the
//!   simulator itself would recover from rollback and restarts alone; the runbook does not try);
//! - during the batch restart, no more instances are down at once than the batch budget, and
//!   attempts per logical request stay under the runbook's bound (1.3) once retries are off.
//!
//! The simulator runs 60x faster and starts 10 simulated minutes after the deploy, and the
//! runbook's timing variables are shortened, so the test takes about half a minute.

use crate::support::prometheus;
use crate::support::sim as sim_support;

use prometheus::{PromOptions, PromServer, free_port, http_get};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SPEED: &str = "60";
/// planner-peak's deploy is at 1200 s; ten minutes later the pools are saturated.
const START_AT: &str = "1800";
/// The batch step's size, in percent of the instances (`percent` in pool-exhaustion.toml).
const BATCH_PERCENT: f64 = 25.0;
const ERROR_RATIO: &str = "sum(rate(app_requests_total{service=\"planner-api\",code=~\"5..\"}[3s])) \
     / sum(rate(app_requests_total{service=\"planner-api\"}[3s]))";
const AMPLIFICATION: &str = "sum(rate(app_requests_total{service=\"planner-api\"}[3s])) \
     / sum(rate(app_logical_requests_total{service=\"planner-api\"}[3s]))";

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A simulator after the fault and a Prometheus scraping it.
struct Incident {
    sim_port: u16,
    prom: PromServer,
    _sim: sim_support::SimServer,
}

fn incident() -> Option<Incident> {
    let sim_port = free_port();
    let prom = prometheus::start(PromOptions {
        targets: vec![format!("127.0.0.1:{sim_port}")],
        scrape_interval: "250ms",
        ..PromOptions::default()
    })?;
    let sim = sim_support::serve(
        sim_port,
        "planner-peak",
        &["--seed", "1", "--speed", SPEED, "--start-at", START_AT],
    );
    Some(Incident {
        sim_port,
        prom,
        _sim: sim,
    })
}

/// One instant query's single value, if Prometheus has one.
fn query(prom: &PromServer, q: &str) -> Option<f64> {
    let enc: String = url::form_urlencoded::byte_serialize(q.as_bytes()).collect();
    let (status, body) = http_get(
        prom.port,
        &format!("/api/v1/query?query={enc}"),
        Duration::from_secs(3),
    )?;
    if status != 200 {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(&body).ok()?;
    let x: f64 = v["data"]["result"][0]["value"][1].as_str()?.parse().ok()?;
    x.is_finite().then_some(x)
}

/// Poll `q` until `pred` holds; bounded by `within`. The last value, and whether it held.
fn wait_for(
    prom: &PromServer,
    q: &str,
    within: Duration,
    pred: impl Fn(f64) -> bool,
) -> (Option<f64>, bool) {
    let end = Instant::now() + within;
    let mut last = None;
    while Instant::now() < end {
        if let Some(v) = query(prom, q) {
            last = Some(v);
            if pred(v) {
                return (last, true);
            }
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    (last, false)
}

fn runbook(i: &Incident, data: &std::path::Path, extra: &[&str]) -> Child {
    let runbooks = concat!(env!("CARGO_MANIFEST_DIR"), "/runbooks");
    let base = format!("base_url=http://127.0.0.1:{}", i.sim_port);
    Command::new(env!("CARGO_BIN_EXE_warroom"))
        .args([
            "runbook",
            "run",
            "pool-exhaustion",
            "--yes",
            "--runbooks",
            runbooks,
        ])
        .args(["--prometheus", &i.prom.url, "--var", &base])
        // Timing for a simulator at 60x and a 250 ms scrape interval (a restart is 333 ms).
        .args(["--var", "window=3s", "--var", "interval=1s"])
        .args(["--var", "soak=1s", "--var", "settle=1s"])
        .args(extra)
        .arg("--data-dir")
        .arg(data)
        .arg("--log-file")
        .arg(data.join("warroom.log"))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(data.join("out.txt")).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("start warroom runbook run")
}

fn output(data: &std::path::Path) -> String {
    std::fs::read_to_string(data.join("out.txt")).unwrap_or_default()
}

#[test]
fn pool_exhaustion_recovers_the_planner_and_the_same_run_with_retries_on_does_not() {
    let (Some(fixed), Some(control)) = (incident(), incident()) else {
        return;
    };
    // Both see the storm through Prometheus before anything is done.
    for i in [&fixed, &control] {
        let (v, ok) = wait_for(&i.prom, ERROR_RATIO, Duration::from_secs(20), |v| v > 0.5);
        assert!(ok, "no storm after the deploy: error ratio {v:?}");
    }
    let data = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let started = Instant::now();
    let mut run = Killed(runbook(&fixed, data.0.path(), &[]));
    let mut with_retries = Killed(runbook(
        &control,
        data.1.path(),
        &["--var", "retries_enabled=true"],
    ));

    // While the run goes on: the most instances down at once, attempts per request.
    let mut most_down: f64 = 0.0;
    let mut restarting = false;
    let mut worst_amplification: f64 = 0.0;
    let status = loop {
        if let Some(s) = run.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "the run did not finish in 90 s:\n{}",
            output(data.0.path())
        );
        let out = output(data.0.path());
        restarting = restarting || out.contains("▶ restart");
        if restarting && !out.contains("▶ recovered") {
            if let Some(d) = query(
                &fixed.prom,
                "count(app_instance_up{service=\"planner-api\"} == 0) or vector(0)",
            ) {
                most_down = most_down.max(d);
            }
            if let Some(a) = query(&fixed.prom, AMPLIFICATION) {
                worst_amplification = worst_amplification.max(a);
            }
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    let took = started.elapsed();
    let out = output(data.0.path());
    assert!(status.success(), "the run failed ({status}):\n{out}");
    // The error ratio, measured by us, after the run.
    let after = query(&fixed.prom, ERROR_RATIO).expect("error ratio after the run");
    eprintln!("run took {took:?}; error ratio after: {after:.4}");
    assert!(after < 0.02, "error ratio after the run: {after}\n{out}");

    // The same incident, the same time, retries left on: not recovered.
    let without = query(&control.prom, ERROR_RATIO).expect("error ratio with retries on");
    eprintln!("with retries left on, after the same {took:?}: {without:.4}");
    assert!(
        without > 0.02,
        "with retries on the service recovered too: {without}"
    );
    let held = query(&control.prom, AMPLIFICATION).expect("amplification with retries on");
    eprintln!("with retries left on, attempts per logical request: {held:.2}");
    assert!(held > 1.3, "{held}");
    let _ = with_retries.0.kill();
    let _ = with_retries.0.wait();
    let control_out = output(data.1.path());
    assert!(
        control_out.contains("▶ amplification-falls") && !control_out.contains("▶ restart"),
        "with retries on the run must hold at its amplification gate:\n{control_out}"
    );

    // The batch budget and the amplification bound, through Prometheus, during the restarts.
    let down_history = query(
        &fixed.prom,
        &format!(
            "max_over_time((count(app_instance_up{{service=\"planner-api\"}} == 0) or vector(0))[{}s:100ms])",
            took.as_secs() + 2
        ),
    )
    .expect("instances down history");
    most_down = most_down.max(down_history);
    eprintln!(
        "most instances down at once: {most_down}; worst amplification while restarting: {worst_amplification:.3}"
    );
    assert!(
        restarting,
        "the run never reached its batch restart:\n{out}"
    );
    assert!(
        most_down >= 1.0,
        "no restart was seen: the check would be vacuous"
    );
    // The budget: the batch size (max_unavailable defaults to it), from the fleet Prometheus saw.
    let fleet = query(
        &fixed.prom,
        "count(app_instance_up{service=\"planner-api\"})",
    )
    .expect("fleet size");
    let budget = (fleet * BATCH_PERCENT / 100.0).ceil();
    eprintln!("fleet {fleet}, budget {budget} down at once");
    assert!(
        most_down <= budget,
        "{most_down} instances down at once, budget {budget}"
    );
    assert!(worst_amplification > 0.0, "amplification was never read");
    assert!(
        worst_amplification < 1.3,
        "attempts per logical request during the restarts: {worst_amplification}"
    );
}
