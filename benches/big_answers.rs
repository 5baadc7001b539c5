//! A panel whose query matches 100,000 series, beside one that matches one, in one run
//! (issue 28, point 3): how long a key takes to show on screen, how long `q` takes to end the
//! process, and the console's peak resident memory, against a loopback "Prometheus" that
//! answers every query with that many series every 5 s. Needs `tmux`.
//! Run: `cargo bench --bench big_answers` (about a minute).

#[path = "support/figure.rs"]
mod figure;

#[path = "../tests/support/big_prometheus.rs"]
mod big_prometheus;
#[path = "../tests/support/prometheus.rs"]
mod prometheus;
#[path = "../tests/support/skip.rs"]
mod skip;
#[path = "../tests/support/tmux.rs"]
mod tmux;

use std::time::{Duration, Instant};

/// Keys pressed (each opens or closes the timeline pane) for the latency's median.
const KEYS: usize = 20;

fn pid_of_console(term: &tmux::Tmux) -> Option<u32> {
    let shell: u32 = term.format("#{pane_pid}").parse().ok()?;
    let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).ok()?;
    children.split_whitespace().next()?.parse().ok()
}

fn peak_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .unwrap_or(f64::NAN)
        / 1024.0
}

/// Waits (polling tmux every millisecond, at most 30 s) until the screen says `text` or not.
fn until_screen(term: &tmux::Tmux, text: &str, present: bool) -> Duration {
    let t = Instant::now();
    while term.screen().contains(text) != present && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(1));
    }
    t.elapsed()
}

/// (key median ms, quit ms, peak MiB) for a panel of `series` series.
fn run(series: usize) -> Option<(f64, f64, f64)> {
    let url = big_prometheus::start(series, 1_000);
    let dir = tempfile::tempdir().unwrap();
    let cmd = big_prometheus::console_command(&figure::warroom_bin(), dir.path(), &url);
    let term = tmux::Tmux::start(&cmd, 160, 40)?;
    term.expect("Pool in use", Duration::from_secs(30));
    // Three refreshes: answers land while the keys are pressed.
    std::thread::sleep(Duration::from_secs(12));
    let pid = pid_of_console(&term)?;
    let mut keys = Vec::new();
    for _ in 0..KEYS {
        let open = term.screen().contains("Timeline");
        term.send(&["t"]);
        keys.push(until_screen(&term, "Timeline", !open).as_secs_f64() * 1000.0);
        std::thread::sleep(Duration::from_millis(200));
    }
    keys.sort_by(f64::total_cmp);
    let peak = peak_mib(pid);
    term.send(&["q"]);
    let quit = until_screen(&term, "[exited 0]", true).as_secs_f64() * 1000.0;
    Some((figure::quantile(&keys, 0.5), quit, peak))
}

fn main() {
    let mut rows = Vec::new();
    for series in [1, 100_000] {
        let Some(r) = run(series) else { return };
        rows.push((series, r));
    }
    println!("series   key on screen (median of {KEYS})   q to exit   peak memory");
    for (series, (key, quit, peak)) in &rows {
        println!("{series:>7}   {key:>10.1} ms   {quit:>10.1} ms   {peak:>8.1} MiB");
        figure::report(
            &format!("big answers: a key on screen, {series} series, median"),
            *key,
            "ms",
            figure::Target::None,
        );
        figure::report(
            &format!("big answers: q to exit, {series} series"),
            *quit,
            "ms",
            figure::Target::Under(1000.0),
        );
        figure::report(
            &format!("big answers: console peak memory, {series} series"),
            *peak,
            "MiB",
            figure::Target::None,
        );
    }
    let (one, many) = (rows[0].1, rows[1].1);
    println!(
        "ratios, 100,000 series over 1: key {:.2}x, q {:.2}x, peak memory {:.2}x",
        many.0 / one.0,
        many.1 / one.1,
        many.2 / one.2
    );
}
