//! Issue 33, points 1 and 2 in a real terminal (tmux), on `warroom demo` at 60× (a batch's
//! 5-minute instance deadline is 5 s of the wall clock): a person who reads a batch's
//! confirmation for longer than the instance deadline loses no instance (the deadline starts
//! when the action is sent, and the pane says how long the confirmation took); keys typed for
//! a dialog that did not come up answer nothing and record nothing; Enter on a "needs a
//! decision" dialog does nothing until a choice is highlighted; a wrong answer is cleared.

use crate::support::tmux::{self, Tmux};
use std::time::Duration;
use warroom::incident::{Event, Store};

/// The journal of the demo's incident, as JSON lines of its events.
fn events(data: &std::path::Path) -> Vec<String> {
    let store = Store::new(data);
    let Some(id) = store.list().unwrap_or_default().last().cloned() else {
        return Vec::new();
    };
    (store.read(&id).unwrap().records.into_iter())
        .map(|r| serde_json::to_string(&r.kind).unwrap())
        .collect()
}

fn action_items(data: &std::path::Path) -> usize {
    let store = Store::new(data);
    let Some(id) = store.list().unwrap_or_default().last().cloned() else {
        return 0;
    };
    (store.read(&id).unwrap().records.iter())
        .filter(|r| matches!(r.kind, Event::ActionItem { .. }))
        .count()
}

/// The batch restart started from the list, up to its first batch's confirmation.
fn to_the_first_batch(term: &Tmux) {
    term.send(&["b"]);
    term.expect("pool-exhaustion", Duration::from_secs(10));
    // The list is sorted: batch-restart first.
    term.send(&["x"]);
    term.expect("Run runbook \"batch-restart\"?", Duration::from_secs(5));
    term.type_text("batch-restart");
    term.expect("instances-serving (check)", Duration::from_secs(20));
    term.send(&["Enter"]);
    term.expect("Type \"batch 1\"", Duration::from_secs(30));
}

#[test]
fn a_slow_confirmation_loses_nothing_and_keys_go_only_where_they_were_typed() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let Some(term) = tmux::demo_past_briefing(dir.path(), 60, 160, 48) else {
        return;
    };
    to_the_first_batch(&term);
    // A wrong answer is refused and cleared: the next attempt starts from nothing.
    term.answer("batch 9");
    term.send(&["Enter"]);
    let screen = term.expect("Type \"batch 1\"", Duration::from_secs(5));
    assert!(
        !screen.contains("batch 9"),
        "the wrong answer is cleared: {screen}"
    );
    // Read it for longer than the instance deadline (5 min of the demo's clock: 5 s here).
    std::thread::sleep(Duration::from_secs(8));
    term.type_text("batch 1");
    term.send(&["Enter"]);
    let screen = term.expect("at the confirmation", Duration::from_secs(20));
    assert!(
        screen.contains("batch 1 confirmed after") && screen.contains("deadlines start now"),
        "{screen}"
    );
    // The batch's instances come back in time: none is lost, and the rollout goes on to its
    // gate and the next batch or a decision.
    let screen = term
        .wait_for(Duration::from_secs(60), |s| {
            s.contains("Type \"batch 2\"") || s.contains("needs a decision")
        })
        .expect("the first batch ends");
    assert!(
        !screen.contains("did not come back healthy"),
        "an instance lost: {screen}"
    );
    let journal = events(&data);
    assert!(
        !journal.iter().any(|e| e.contains("instance_lost")),
        "{journal:#?}"
    );
    if screen.contains("Type \"batch 2\"") {
        // Answered as a person would: the rollout goes on to its next gate.
        term.answer("batch 2");
        term.send(&["Enter"]);
        term.wait_for(Duration::from_secs(60), |s| {
            s.contains("Type \"batch 3\"") || s.contains("needs a decision")
        })
        .expect("the second batch ends");
    }
    decision_keys(&term, &data);
}

/// Whatever decision the rollout asks for next (the gate holds the pools at their peak in the
/// demo until the cause is fixed): Enter answers nothing until a choice is highlighted, and
/// text typed at it is neither an answer nor a journal record.
fn decision_keys(term: &Tmux, data: &std::path::Path) {
    let screen = term.expect("needs a decision", Duration::from_secs(90));
    let items = action_items(data);
    let records = events(data).len();
    term.read_pause();
    term.send(&["Enter"]);
    let screen2 = term.expect("nothing is highlighted", Duration::from_secs(5));
    assert!(
        screen2.contains("needs a decision"),
        "still asked: {screen}"
    );
    // "batch 3⏎" typed at a decision: no action item, no answer.
    term.type_text("batch 3");
    term.send(&["Enter"]);
    std::thread::sleep(Duration::from_millis(500));
    let screen3 = term.screen();
    assert!(screen3.contains("needs a decision"), "{screen3}");
    assert_eq!(action_items(data), items, "a key became an action item");
    assert!(
        events(data)[records..]
            .iter()
            .all(|e| !e.contains("decided") && !e.contains("tch 3")),
        "{:#?}",
        &events(data)[records..]
    );
    // Leave: abort, then quit.
    term.send(&["Escape"]);
    term.send(&["A"]);
    if term
        .wait_for(Duration::from_secs(5), |s| s.contains("Abort run of"))
        .is_some()
    {
        term.send(&["Down", "Enter"]);
        term.expect("■ aborted", Duration::from_secs(20));
    }
}
