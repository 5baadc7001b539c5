//! `warroom demo` in a real terminal (tmux) with nothing installed but warroom: the dashboard
//! draws, the fault develops on the embedded store, `q` quits cleanly and prints the score.

use crate::support::tmux;

use std::time::{Duration, Instant};

#[test]
fn demo_shows_the_outage_developing_and_quits_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = demo_at_60x(&dir);
    let started = Instant::now();
    let Some(term) = tmux::Tmux::start(&cmd, 160, 48) else {
        return;
    };
    term.expect("Briefing", Duration::from_secs(10));
    term.expect("Pool saturation", Duration::from_secs(10));
    eprintln!("first screen after {:?}", started.elapsed());
    assert_eq!(term.format("#{alternate_on}"), "1");
    term.send(&["Escape"]);
    term.wait_for(Duration::from_secs(5), |s| !s.contains("Briefing"))
        .expect("the briefing closes");
    // The bad deploy lands 5 simulated minutes in (5 s at 60×): the pools fill up.
    let screen = term.expect("100.0% ▲ CRIT", Duration::from_secs(60));
    assert!(screen.contains("embedded · planner-peak"), "{screen}");
    // The rehearsal is an incident: the crossing is on its timeline, and `E` exports it.
    term.send(&["t"]);
    term.expect("rose above", Duration::from_secs(30));
    term.expect("Simulated fault", Duration::from_secs(10));
    term.send(&["E"]);
    term.expect("exported", Duration::from_secs(60));
    term.send(&["q"]);
    let screen = term.expect("[exited 0]", Duration::from_secs(10));
    assert_eq!(
        term.format("#{alternate_on}"),
        "0",
        "the terminal was restored"
    );
    // What is printed is the end overlay's report, and only commands that work on a
    // rehearsal (`open --incident` would need a Prometheus).
    assert!(
        screen.contains("The rehearsal of planner-peak is over"),
        "{screen}"
    );
    assert!(
        screen.contains("Response (from the incident's journal)"),
        "{screen}"
    );
    assert!(screen.contains("minutes over objective"), "{screen}");
    assert!(screen.contains("warroom replay "), "{screen}");
    assert!(!screen.contains("open --incident"), "{screen}");
    let incidents = dir.path().join("data").join("incidents");
    let incident = std::fs::read_dir(&incidents)
        .expect("the rehearsal's incident")
        .next()
        .expect("one incident")
        .unwrap()
        .path();
    let draft = std::fs::read_to_string(incident.join("exports").join("postmortem.md")).unwrap();
    assert!(draft.contains("Rehearsal: "), "{draft}");
    assert!(draft.contains("## Timeline"), "{draft}");
}

/// Quit at the briefing: nothing was rehearsed, so nothing is left behind (no incident
/// `investigating` for ever in `incident list`), and the console says so.
#[test]
fn a_demo_quit_at_its_briefing_leaves_no_incident() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = demo_at_60x(&dir);
    let Some(term) = tmux::Tmux::start(&cmd, 120, 40) else {
        return;
    };
    term.expect("Briefing", Duration::from_secs(10));
    let incidents = dir.path().join("data").join("incidents");
    let count = || std::fs::read_dir(&incidents).map_or(0, Iterator::count);
    assert_eq!(count(), 1, "the rehearsal's incident is open while it runs");
    term.send(&["q"]);
    let screen = term.expect("[exited 0]", Duration::from_secs(10));
    assert!(screen.contains("quit at its briefing"), "{screen}");
    assert!(screen.contains("no incident was kept"), "{screen}");
    assert_eq!(count(), 0, "no incident is left behind");
}

/// `warroom demo --speed 60` with an empty config, its log and data in `dir`.
fn demo_at_60x(dir: &tempfile::TempDir) -> String {
    std::fs::write(dir.path().join("w.toml"), "").unwrap();
    format!(
        "{} --config {} --log-file {} --data-dir {} demo --speed 60",
        env!("CARGO_BIN_EXE_warroom"),
        dir.path().join("w.toml").display(),
        dir.path().join("log").display(),
        dir.path().join("data").display(),
    )
}
