//! `warroom gameday --headless`: a long rehearsal stays within its memory bound with old
//! samples pruned, and a play runs at the moment asked for and is scored.
//!
//! Alone in its test binary: it reads the peak memory of its child processes.

use std::process::Command;
use std::time::{Duration, Instant};

fn warroom() -> Command {
    Command::new(env!("CARGO_BIN_EXE_warroom"))
}

/// Run to completion (bounded), returning the JSON report. Output goes to files, not pipes:
/// the report (the simulator's record at every scrape) is larger than a pipe holds, and the
/// child would wait for a reader that waits for it.
fn run(args: &[&str], limit: Duration) -> serde_json::Value {
    run_in(args, &[], limit)
}

/// [`run`] with `env` set for the child.
fn run_in(args: &[&str], env: &[(&str, &std::path::Path)], limit: Duration) -> serde_json::Value {
    let data = tempfile::tempdir().unwrap();
    let (out, err) = (data.path().join("stdout"), data.path().join("stderr"));
    let mut child = warroom()
        .envs(env.iter().copied())
        .arg("--data-dir")
        .arg(data.path())
        .args(args)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let began = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if began.elapsed() > limit {
            let _ = child.kill();
            panic!(
                "gameday {args:?} did not finish within {limit:?}: {}",
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let stdout = std::fs::read_to_string(&out).unwrap();
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}): {stdout}\n{}",
            std::fs::read_to_string(&err).unwrap_or_default()
        )
    })
}

#[test]
fn two_simulated_hours_stay_under_100_mb_with_old_samples_pruned() {
    // Two hours, past a one-hour retention, at the highest speed.
    let r = run(
        &[
            "gameday",
            "planner-peak",
            "--headless",
            "--speed",
            "1000",
            "--for",
            "2h",
            "--retention",
            "1h",
            "--json",
        ],
        Duration::from_secs(240),
    );
    let simulated = r["simulated_to_s"].as_f64().unwrap() - r["simulated_from_s"].as_f64().unwrap();
    assert!(
        simulated >= 2.0 * 3600.0,
        "ran {simulated} simulated seconds"
    );
    let series = r["store_series"].as_f64().unwrap();
    let samples = r["store_samples"].as_f64().unwrap();
    let per_series = samples / series;
    // One sample every 5 simulated seconds, one hour kept (plus the pruning slack of an
    // eighth): the store is full but no fuller.
    let kept = 3600.0 / 5.0;
    assert!(
        per_series <= kept * 1.125 + 1.0,
        "{per_series} samples per series: not pruned"
    );
    assert!(
        per_series >= kept * 0.5,
        "{per_series} samples per series: scrapes were lost"
    );
    // The simulator's own record is kept as long as the samples, no longer.
    let record = r["simulator"]
        .as_array()
        .expect("the simulator's record")
        .len();
    assert!(
        record == kept as usize,
        "{record} scrapes kept of the simulator's record"
    );
    // The rehearsal was recorded as an incident, with a snapshot per panel.
    assert!(r["incident"].is_string(), "{}", r["incident"]);
    assert_eq!(r["snapshots"], 8);
    let peak = r["peak_rss_bytes"].as_f64().expect("VmHWM on Linux");
    assert!(peak < 100.0 * 1024.0 * 1024.0, "peak RSS {peak} bytes");
    // The kernel's own account of the child agrees.
    let usage =
        nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    let max_rss = usage.max_rss() as f64 * 1024.0;
    assert!(
        max_rss < 100.0 * 1024.0 * 1024.0,
        "children's max RSS {max_rss} bytes"
    );
    // No one acted: the outage ran its course and was scored as such.
    assert!(r["score"]["time_to_first_mitigation_s"].is_null());
    assert!(r["score"]["failed_logical_requests"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_play_runs_at_its_moment_and_counts_as_the_first_mitigation() {
    let r = run(
        &[
            "gameday",
            "planner-peak",
            "--headless",
            "--speed",
            "20",
            "--play",
            "disable-retries@+1m",
            "--for",
            "8m",
            "--json",
        ],
        Duration::from_secs(120),
    );
    let play = &r["plays"][0];
    assert_eq!(play["runbook"], "disable-retries");
    let fault = r["score"]["fault_at_s"].as_f64().unwrap();
    assert_eq!(play["at_s"].as_f64().unwrap(), fault + 60.0);
    let started = play["started_at_s"].as_f64().expect("the play started");
    assert!(
        started >= fault + 60.0 && started < fault + 62.0,
        "started at {started}"
    );
    // The runbook's first action reached the simulator soon after: start-up of a process and
    // its HTTP call, a few seconds of simulated time at 20x.
    let mitigation = r["score"]["time_to_first_mitigation_s"]
        .as_f64()
        .expect("mitigated");
    assert!(
        (60.0..75.0).contains(&mitigation),
        "first mitigation after {mitigation} s"
    );
}

#[test]
fn a_play_finds_the_users_own_runbooks_where_runbook_list_does() {
    // A runbook of the user's own, in the XDG config dir and nowhere else.
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("warroom").join("runbooks");
    std::fs::create_dir_all(&dir).unwrap();
    let shipped = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("runbooks/disable-retries.toml"),
    )
    .unwrap();
    let mine = shipped.replacen(
        "name = \"disable-retries\"",
        "name = \"our-retries-off\"",
        1,
    );
    assert_ne!(mine, shipped);
    std::fs::write(dir.join("our-retries-off.toml"), mine).unwrap();
    let env = [("XDG_CONFIG_HOME", home.path())];

    let listed = warroom()
        .env("XDG_CONFIG_HOME", home.path())
        .args(["runbook", "list"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains("our-retries-off"), "{listed}");

    let r = run_in(
        &[
            "gameday",
            "planner-peak",
            "--headless",
            "--speed",
            "50",
            "--play",
            "our-retries-off@+1m",
            "--for",
            "8m",
            "--json",
        ],
        &env,
        Duration::from_secs(120),
    );
    assert_eq!(r["plays"][0]["runbook"], "our-retries-off");
    assert!(
        r["score"]["time_to_first_mitigation_s"].is_number(),
        "the user's runbook acted: {}",
        r["score"]
    );
}
