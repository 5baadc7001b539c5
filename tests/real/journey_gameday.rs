//! The journey of issue 9 run by `warroom gameday --headless`, for the score: an incident is
//! opened and fed from the command line (`warroom incident note/action/status`), the rehearsal
//! plays `pool-exhaustion` three simulated minutes after the fault and records the run in that
//! incident; the score says the team acted at that moment and the service recovered, and the
//! journal holds every step, the note with its tag and the action item.
//!
//! `tests/gameday_headless.rs` covers the memory bound and a single play's timing; this file
//! adds the whole recovery and its record (kept apart: that file reads its children's peak
//! memory).

use crate::support::journey;

use std::time::{Duration, Instant};
use warroom::incident::Event;
use warroom::incident::event::{StepState, Tag};

fn ok(dir: &std::path::Path, args: &[&str]) -> String {
    let out = journey::warroom(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "warroom {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn a_headless_gameday_recovers_with_pool_exhaustion_and_records_the_incident() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("warroom.toml"),
        "timezone = \"Europe/Berlin\"\n",
    )
    .unwrap();
    let id = ok(
        dir.path(),
        &["incident", "new", "--title", "Game day: planner peak"],
    );
    ok(
        dir.path(),
        &[
            "incident",
            "note",
            &id,
            "rehearsal of the planner outage #summary",
        ],
    );
    ok(
        dir.path(),
        &[
            "incident",
            "action",
            &id,
            "Practise the pool-exhaustion runbook quarterly",
            "--owner",
            "sre",
            "--priority",
            "P2",
        ],
    );
    // Output goes to files, not pipes: the report (the simulator's record at every scrape) is
    // larger than a pipe holds, and the child would block on a full one.
    let (out_path, err_path) = (
        dir.path().join("gameday.out"),
        dir.path().join("gameday.err"),
    );
    let mut child = journey::warroom(dir.path())
        .args(["gameday", "planner-peak", "--headless", "--speed", "30"])
        .args(["--play", "pool-exhaustion@+3m", "--for", "30m", "--json"])
        .args(["--incident", &id])
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let began = Instant::now();
    let limit = Duration::from_secs(150);
    while child.try_wait().unwrap().is_none() {
        if began.elapsed() > limit {
            let _ = child.kill();
            panic!("the headless game day did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    child.wait().unwrap();
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let r: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("no JSON score ({e}): {stdout}\n{stderr}"));
    eprintln!("score: {}", r["score"]);
    ok(dir.path(), &["incident", "status", &id, "resolved"]);

    // The score: acted at the play's moment, recovered, and the outage cost something.
    let play = &r["plays"][0];
    assert_eq!(play["runbook"], "pool-exhaustion", "{r:#}");
    let mitigation = r["score"]["time_to_first_mitigation_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("no mitigation: {r:#}"));
    assert!(
        (180.0..200.0).contains(&mitigation),
        "first mitigation {mitigation} s after the fault; the play was at +3m"
    );
    let recovery = r["score"]["time_to_recovery_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("the service did not recover: {r:#}"));
    assert!(recovery >= mitigation, "recovered at {recovery} s");
    assert!(r["score"]["failed_logical_requests"].as_f64().unwrap() > 0.0);
    assert!(r["score"]["minutes_over_objective"].as_f64().unwrap() >= 3.0);

    // The journal: the run's steps, the note, the action item, the status.
    let records = journey::timeline(dir.path(), &id);
    let has = |f: &dyn Fn(&Event) -> bool| records.iter().any(|x| f(&x.kind));
    for step in [
        "rollback",
        "disable-retries",
        "amplification-falls",
        "restart",
        "recovered",
    ] {
        assert!(
            has(
                &|e| matches!(e, Event::RunbookStep { step: s, state: StepState::Succeeded, .. } if s == step)
            ),
            "step {step} not recorded as succeeded: {records:#?}"
        );
    }
    assert!(has(
        &|e| matches!(e, Event::Note { tags, .. } if tags.contains(&Tag::Summary))
    ));
    assert!(has(
        &|e| matches!(e, Event::ActionItem { owner, .. } if owner.as_deref() == Some("sre"))
    ));
    // The steps are in the order the runbook has them.
    let order: Vec<&str> = records
        .iter()
        .filter_map(|x| match &x.kind {
            Event::RunbookStep {
                step,
                state: StepState::Succeeded,
                ..
            } => Some(step.as_str()),
            _ => None,
        })
        .collect();
    let at = |step: &str| order.iter().position(|s| *s == step);
    assert!(
        at("rollback") < at("restart") && at("restart") < at("recovered"),
        "{order:?}"
    );
}
