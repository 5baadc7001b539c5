//! Issue 28, point 3: a query that matches 100,000 series (a missing `sum by`, a label per
//! request) does not stop the console. A hostile loopback "Prometheus" answers every query with
//! 100,000 series; the panel keeps its worst 64 and says how many there were, keys are answered
//! and `q` quits. (How fast, and the memory it takes, is measured in `benches/big_answers.rs`.)

use crate::support::big_prometheus;
use crate::support::tmux::Tmux;
use std::time::Duration;

/// Series in each answer.
const SERIES: usize = 100_000;

#[test]
fn a_panel_of_100000_series_keeps_its_worst_and_the_console_answers_and_quits() {
    let url = big_prometheus::start(SERIES, 200);
    let data = tempfile::tempdir().unwrap();
    let command = big_prometheus::console_command(env!("CARGO_BIN_EXE_warroom"), data.path(), &url);
    let Some(term) = Tmux::start(&command, 160, 30) else {
        return;
    };
    let screen = term.expect(
        &format!("worst 64 of {SERIES} series"),
        Duration::from_secs(90),
    );
    // The worst kept is the highest value sent: 99999 / 100000.
    assert!(
        screen.contains("100.0%") || screen.contains("99.9%"),
        "{screen}"
    );
    // A key is answered (the timeline pane opens) and `q` quits, with the answers still
    // coming every 5 s.
    term.send(&["t"]);
    term.expect("Timeline", Duration::from_secs(20));
    term.send(&["q"]);
    term.expect("[exited 0]", Duration::from_secs(20));
}
