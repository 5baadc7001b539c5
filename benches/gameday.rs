//! Headless game days on one clock: the wall time of a one-hour rehearsal of each scenario
//! with its fixing plays, at `--speed 60` and at higher speeds, and the fastest speed whose
//! outcome is unchanged (every play succeeded, the first control action within ten simulated
//! seconds of the speed-60 run's and the recovery within a scrape interval and a minute of
//! it). Run: `cargo bench --bench gameday` (about five minutes: three simulated hours at 60x,
//! then the faster runs).

#[path = "support/figure.rs"]
mod figure;

use std::process::Command;
use std::time::{Duration, Instant};

/// Each scenario and the plays that fix it inside the hour (the seed's response, earlier).
const SCENARIOS: [(&str, &[&str]); 3] = [
    ("planner-peak", &["pool-exhaustion@+20m"]),
    (
        "bird-count",
        &[
            "disable-retries@+20m",
            "raise-pool@+25m",
            "queue-drain@+30m",
        ],
    ),
    ("crash-loop", &["scale-headroom@+20m"]),
];
/// The speeds tried after 60, in order; the first whose outcome differs ends the search.
const FASTER: [f64; 5] = [120.0, 250.0, 500.0, 750.0, 1000.0];

/// What a run's outcome is judged by.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    plays_succeeded: bool,
    first_mitigation_s: Option<f64>,
    recovery_s: Option<f64>,
}

impl Outcome {
    fn same_as(&self, base: &Outcome) -> bool {
        let close = |a: Option<f64>, b: Option<f64>, by: f64| match (a, b) {
            (Some(a), Some(b)) => (a - b).abs() <= by,
            (None, None) => true,
            _ => false,
        };
        self.plays_succeeded
            && close(self.first_mitigation_s, base.first_mitigation_s, 10.0)
            && close(self.recovery_s, base.recovery_s, 65.0)
    }
}

fn run(name: &str, plays: &[&str], speed: f64) -> (Duration, Outcome) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("stdout");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warroom"));
    cmd.arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("--log-file")
        .arg(dir.path().join("log"))
        .args(["gameday", name, "--headless", "--json", "--for", "1h"])
        .args(["--speed", &speed.to_string()])
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::process::Stdio::null());
    for p in plays {
        cmd.args(["--play", p]);
    }
    let began = Instant::now();
    let status = cmd.status().expect("warroom runs");
    let wall = began.elapsed();
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap_or_default();
    let plays_succeeded = status.success()
        && r["plays"]
            .as_array()
            .is_some_and(|p| p.iter().all(|p| p["outcome"] == "succeeded"));
    let outcome = Outcome {
        plays_succeeded,
        first_mitigation_s: r["response"]["time_to_first_mitigation_s"].as_f64(),
        recovery_s: r["response"]["time_to_recovery_s"].as_f64(),
    };
    (wall, outcome)
}

fn main() {
    for (name, plays) in SCENARIOS {
        let (wall, base) = run(name, plays, 60.0);
        println!(
            "gameday {name:<13} 1 h at 60x: {:>6.1} s wall, {base:?}",
            wall.as_secs_f64()
        );
        figure::report(
            &format!("gameday {name}: one simulated hour at 60x, wall time"),
            wall.as_secs_f64(),
            "s",
            figure::Target::Under(70.0),
        );
        let mut fastest = (60.0, wall);
        for speed in FASTER {
            let (wall, outcome) = run(name, plays, speed);
            let same = outcome.same_as(&base);
            println!(
                "gameday {name:<13} 1 h at {speed}x: {:>6.1} s wall, {} {outcome:?}",
                wall.as_secs_f64(),
                if same {
                    "same outcome"
                } else {
                    "OUTCOME CHANGED"
                }
            );
            if !same {
                break;
            }
            fastest = (speed, wall);
        }
        figure::report(
            &format!("gameday {name}: fastest speed with the outcome unchanged"),
            fastest.0,
            "x",
            figure::Target::None,
        );
        figure::report(
            &format!("gameday {name}: one simulated hour at that speed, wall time"),
            fastest.1.as_secs_f64(),
            "s",
            figure::Target::None,
        );
    }
}
