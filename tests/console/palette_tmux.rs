//! The k9s and lazygit habits in a real terminal (tmux), on `warroom demo` (issue 33 point 7):
//! `:` opens the command palette, whose tab completes and whose `runbook NAME` opens that
//! runbook's run dialog; `/` filters the runbook list as it is typed; `theme NAME` switches
//! the theme at once.

use crate::support::tmux;
use std::time::Duration;

#[test]
fn the_palette_and_the_list_filter_work_from_the_keyboard() {
    let dir = tempfile::tempdir().unwrap();
    let Some(term) = tmux::demo_past_briefing(dir.path(), 1, 120, 40) else {
        return;
    };
    // `:` lists what it can do; tab completes the runbook's name from the list.
    term.send(&[":"]);
    let screen = term.expect("Command", Duration::from_secs(5));
    assert!(screen.contains("runbook"), "{screen}");
    term.type_text("runbook redis-q");
    term.send(&["Tab"]);
    term.expect("runbook redis-queue-drain", Duration::from_secs(5));
    term.send(&["Enter"]);
    term.expect(
        "Run runbook \"redis-queue-drain\"?",
        Duration::from_secs(10),
    );
    term.send(&["Escape"]);
    term.wait_for(Duration::from_secs(5), |s| !s.contains("Run runbook"))
        .expect("the run dialog closes");
    // `/` in the runbook pane: the list follows the text as it is typed.
    term.send(&["/"]);
    term.type_text("pool");
    let screen = term
        .wait_for(Duration::from_secs(5), |s| {
            s.contains("/pool") && !s.contains("shed-load") && !s.contains("redis-queue-drain")
        })
        .unwrap_or_else(|| panic!("the list is filtered: {}", term.screen()));
    assert!(screen.contains("pool-exhaustion"), "{screen}");
    assert!(screen.contains("pgbouncer-raise-pool"), "{screen}");
    // Enter keeps the filter; esc in the pane clears it.
    term.send(&["Enter"]);
    term.send(&["Escape"]);
    term.expect("shed-load", Duration::from_secs(5));
    // `theme NAME` switches now, and says how to keep it.
    term.send(&[":"]);
    term.type_text("theme light");
    term.send(&["Enter"]);
    term.expect("theme \"light\" for this session", Duration::from_secs(5));
    // An unknown command keeps the palette open and says so.
    term.send(&[":"]);
    term.type_text("frobnicate");
    term.send(&["Enter"]);
    term.expect("no command \"frobnicate\"", Duration::from_secs(5));
}
