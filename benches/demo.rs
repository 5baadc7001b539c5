//! `warroom demo` as a process in a real terminal: start to first frame, CPU while idle between
//! refreshes (the simulator, the embedded store and the console all in one process), and
//! resident memory. Needs `tmux`. Run: `cargo bench --bench demo` (about 70 s).

#[path = "support/figure.rs"]
mod figure;

#[path = "../tests/support/procstat.rs"]
mod procstat;
#[path = "../tests/support/prometheus.rs"]
mod prometheus;
#[path = "../tests/support/skip.rs"]
mod skip;
#[path = "../tests/support/tmux.rs"]
mod tmux;

use std::time::Duration;

fn main() {
    let idle_secs = 60;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let cmd = format!(
        "{} --data-dir {} --log-file {} demo --speed 30",
        figure::warroom_bin(),
        dir.path().join("data").display(),
        log.display()
    );
    let Some(term) = tmux::Tmux::start(&cmd, 200, 60) else {
        return;
    };
    term.expect("Pool saturation", Duration::from_secs(10));
    let first = procstat::first_frame_ms(&log).unwrap_or(f64::NAN);
    // The briefing overlay is up first; dismiss it as a user would.
    term.send(&["Escape"]);
    std::thread::sleep(Duration::from_secs(3));
    let shell: u32 = term.format("#{pane_pid}").parse().unwrap_or(0);
    let Some(pid) = procstat::first_child(shell) else {
        println!("demo: pid not found");
        return;
    };
    let before = procstat::cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(idle_secs));
    let after = procstat::cpu_ticks(pid);
    let cpu_pct = (after - before) as f64 / procstat::TICKS_PER_SEC / idle_secs as f64 * 100.0;
    println!(
        "demo at 30x (200x60)         first frame {first:>7.2} ms | CPU {cpu_pct:>5.2} % of a core over {idle_secs} s with no key pressed | RSS {:>6.1} MiB (peak {:.1} MiB)",
        procstat::status_kib(pid, "VmRSS:") as f64 / 1024.0,
        procstat::status_kib(pid, "VmHWM:") as f64 / 1024.0
    );
    figure::report(
        "demo first frame (release, 200x60)",
        first,
        "ms",
        figure::Target::Under(1000.0),
    );
    figure::report(
        "demo CPU with no key pressed (simulator, store and console at 30x)",
        cpu_pct,
        "% of a core",
        figure::Target::None,
    );
    term.send(&["q"]);
    term.expect("[exited 0]", Duration::from_secs(10));
}
