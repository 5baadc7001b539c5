//! `warroom gameday SCENARIO --prometheus URL` in a real terminal: the rehearsal's simulator is
//! scraped by a real Prometheus, and the console reads that Prometheus: the fault shows on the
//! dashboard, `q` quits cleanly and prints the score.

use crate::support::prometheus;
use crate::support::tmux;

use std::time::Duration;

#[test]
fn gameday_on_a_real_prometheus_shows_the_fault_and_scores() {
    let sim_port = prometheus::free_port();
    let Some(prom) = prometheus::start(prometheus::PromOptions {
        targets: vec![format!("127.0.0.1:{sim_port}")],
        scrape_interval: "1s",
        ..Default::default()
    }) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Refresh every 2 s: the rehearsal at 60x moves two simulated minutes between refreshes.
    std::fs::write(dir.path().join("w.toml"), "refresh = \"2s\"\n").unwrap();
    let cmd = format!(
        "{} --config {} --log-file {} --data-dir {} gameday planner-peak --prometheus {} --listen 127.0.0.1:{sim_port} --speed 60",
        env!("CARGO_BIN_EXE_warroom"),
        dir.path().join("w.toml").display(),
        dir.path().join("log").display(),
        dir.path().join("data").display(),
        prom.url,
    );
    // Wide enough for the whole source line beside the incident id (which outranks it).
    let Some(term) = tmux::Tmux::start(&cmd, 200, 48) else {
        return;
    };
    term.expect("Briefing", Duration::from_secs(10));
    term.send(&["Escape"]);
    term.wait_for(Duration::from_secs(5), |s| !s.contains("Briefing"))
        .expect("the briefing closes");
    // The bad deploy lands 5 simulated minutes in (5 s at 60x); Prometheus scrapes it every
    // second and the pools show full.
    let screen = term.expect("100.0% ▲ CRIT", Duration::from_secs(60));
    assert!(
        screen.contains(&format!("scrapes http://127.0.0.1:{sim_port}")),
        "{screen}"
    );
    assert!(screen.contains("prometheus"), "{screen}");
    term.send(&["q"]);
    let screen = term.expect("[exited 0]", Duration::from_secs(10));
    assert_eq!(
        term.format("#{alternate_on}"),
        "0",
        "the terminal was restored"
    );
    assert!(
        screen.contains("The rehearsal of planner-peak is over"),
        "{screen}"
    );
    assert!(screen.contains("minutes over objective"), "{screen}");
}
