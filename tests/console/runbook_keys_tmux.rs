//! The runbook pane's safe keys in a real terminal (tmux), on `warroom demo`: esc on a step's
//! confirmation declines that step only (ask again, or abort); abort asks first, saying what is
//! done and what is not; an aborted run resumes from the pane, its done steps never run again.

use crate::support::tmux;
use std::time::Duration;
use warroom::incident::event::StepState;
use warroom::incident::{Event, Store};

/// The runbook steps the journal recorded as started, by step id, in order (attempts of
/// progress inside a step are not starts).
fn starts(data: &std::path::Path) -> Vec<String> {
    let store = Store::new(data);
    let ids = store.list().unwrap_or_default();
    let Some(id) = ids.last() else {
        return Vec::new();
    };
    let kinds: Vec<&str> = warroom::runbook::model::Kind::ALL
        .iter()
        .map(|k| k.name())
        .collect();
    (store.read(id).unwrap().records.into_iter())
        .filter_map(|r| match r.kind {
            Event::RunbookStep {
                step,
                state: StepState::Started,
                detail: Some(d),
                ..
            } if d.split_once(": ").is_some_and(|(k, _)| kinds.contains(&k)) => Some(step),
            _ => None,
        })
        .collect()
}

#[test]
fn esc_declines_one_step_abort_asks_and_the_run_resumes_from_the_pane() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let Some(term) = tmux::demo_past_briefing(dir.path(), 30, 160, 48) else {
        return;
    };
    term.send(&["b"]);
    term.expect("pool-exhaustion", Duration::from_secs(10));
    // `x` on the list: the run dialog at once (the plan fills in), so the name typed next is
    // its text and never dashboard keys.
    term.send(&["j", "x"]);
    term.expect("Run runbook \"disable-retries\"?", Duration::from_secs(5));
    term.type_text("disable-retries");
    term.expect("/control/retries", Duration::from_secs(20));
    term.send(&["Enter"]);

    // Esc on the step's confirmation: that step is declined, the run is not.
    term.expect("Confirm step \"disable\"", Duration::from_secs(20));
    term.read_pause();
    term.send(&["Escape"]);
    let screen = term.expect("Step \"disable\" not confirmed", Duration::from_secs(5));
    assert!(screen.contains("nothing was sent for it"), "{screen}");
    assert!(screen.contains("ask again"), "{screen}");
    assert!(screen.contains("▶ running"), "{screen}");
    assert!(!screen.contains("■ aborted"), "{screen}");
    // Ask again (the default): the question is back; this time it is answered.
    term.send(&["Enter"]);
    term.expect("Confirm step \"disable\"", Duration::from_secs(5));
    term.type_text("disable");
    term.send(&["Enter"]);
    term.expect("✓ disable", Duration::from_secs(20));

    // Abort asks, saying what is done and what is not; the default keeps the run going.
    term.send(&["A"]);
    let screen = term.expect("Abort run of \"disable-retries\"?", Duration::from_secs(5));
    assert!(screen.contains("done: note, disable"), "{screen}");
    assert!(screen.contains("amplification-falls"), "{screen}");
    term.send(&["Enter"]);
    let screen = term
        .wait_for(Duration::from_secs(5), |s| !s.contains("Abort run of"))
        .expect("the question closes");
    assert!(screen.contains("▶ running"), "kept going: {screen}");
    term.send(&["A"]);
    term.expect("Abort run of \"disable-retries\"?", Duration::from_secs(5));
    term.send(&["Down", "Enter"]);
    term.expect("■ aborted", Duration::from_secs(20));
    assert_eq!(starts(&data), ["note", "disable", "amplification-falls"]);

    // Resume from the pane: done steps stay done; the step in doubt needs a decision.
    term.send(&["R"]);
    let screen = term.expect("Resume run disable-retries-", Duration::from_secs(5));
    assert!(
        screen.contains("done (never run again): note, disable"),
        "{screen}"
    );
    assert!(
        screen.contains("\"amplification-falls\" started and did not finish"),
        "{screen}"
    );
    term.send(&["Down", "Enter"]);
    term.expect("resumes at \"amplification-falls\"", Duration::from_secs(5));
    term.wait_for(Duration::from_secs(20), |_| starts(&data).len() == 4)
        .expect("the resumed run starts its step again");
    assert_eq!(
        starts(&data),
        [
            "note",
            "disable",
            "amplification-falls",
            "amplification-falls"
        ],
        "the done steps were not run again"
    );
    term.expect("▶ running", Duration::from_secs(10));
    // Leave: abort again (asked), then quit.
    term.send(&["A"]);
    term.expect("Abort run of", Duration::from_secs(5));
    term.send(&["Down", "Enter"]);
    term.expect("■ aborted", Duration::from_secs(20));
    term.send(&["q"]);
    term.expect("[exited 0]", Duration::from_secs(10));
}
