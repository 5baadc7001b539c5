//! A large fleet on one panel (issue 34, point 3): the pool saturation of 1, 100 and 2,000 pods
//! (400 points each over the hour) landed on the default dashboard's first panel, as
//! `tests/support/fleet.rs` builds it for the snapshot test. For each size it prints the time
//! to land the answer (keeping the 64 worst and thinning to the cap on points), the frame time
//! at 200x60 on the dashboard and zoomed (median and p99), the points the panel holds and the
//! process's peak resident memory (`VmHWM`, which includes the answer as it arrived).
//!
//! Targets (the issue's): 2,000 series, frame p99 under 3 ms at 200x60, peak memory under
//! 64 MiB.
//!
//! Run: `cargo bench --bench big_fleet` (`POINTS=N` changes the points per series).

#[path = "support/figure.rs"]
mod figure;
#[path = "../tests/support/fleet.rs"]
#[allow(dead_code)]
mod fleet;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::Instant;
use warroom::app::{Model, Msg, update};

const FRAMES: usize = 400;

/// The frame times of `m` at its size, in milliseconds, sorted.
fn frames(m: &Model) -> Vec<f64> {
    let mut term = Terminal::new(TestBackend::new(m.width, m.height)).unwrap();
    for _ in 0..20 {
        term.draw(|f| warroom::ui::view(f, m)).unwrap();
    }
    let mut times: Vec<f64> = (0..FRAMES)
        .map(|_| {
            let t = Instant::now();
            term.draw(|f| warroom::ui::view(f, m)).unwrap();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times
}

/// The process's peak resident set so far, in MiB (Linux's `VmHWM`).
fn peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

fn main() {
    let points: usize = std::env::var("POINTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let now = chrono::Utc::now();
    println!(
        "{:>7} {:>9} {:>8} {:>11} {:>11} {:>11} {:>11} {:>9}",
        "series", "land", "held", "dash p50", "dash p99", "zoom p50", "zoom p99", "peak"
    );
    // Smallest first: the peak resident set only grows, so each size's figure is its own.
    for n in [1usize, 100, 2_000] {
        let t = Instant::now();
        let mut m = fleet::model(now, 200, 60, n, points);
        let land = t.elapsed().as_secs_f64() * 1e3;
        let held: usize = m.panels[0].series.iter().map(|s| s.points.len()).sum();
        let dash = frames(&m);
        let enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE);
        update(&mut m, Msg::Key(enter));
        let zoom = frames(&m);
        let peak = peak_mib();
        let q = |v: &[f64], p| figure::quantile(v, p);
        println!(
            "{n:>7} {land:>7.1}ms {held:>8} {:>9.3}ms {:>9.3}ms {:>9.3}ms {:>9.3}ms {peak:>6.1}MiB",
            q(&dash, 0.5),
            q(&dash, 0.99),
            q(&zoom, 0.5),
            q(&zoom, 0.99),
        );
        let big = n == 2_000;
        let target = |t: f64| {
            if big {
                figure::Target::Under(t)
            } else {
                figure::Target::None
            }
        };
        figure::report(
            &format!("big fleet, {n} series x {points} points, dashboard 200x60, frame p99"),
            q(&dash, 0.99),
            "ms",
            target(3.0),
        );
        figure::report(
            &format!("big fleet, {n} series x {points} points, zoomed 200x60, frame p99"),
            q(&zoom, 0.99),
            "ms",
            target(3.0),
        );
        figure::report(
            &format!("big fleet, {n} series x {points} points, landing the answer"),
            land,
            "ms",
            figure::Target::None,
        );
        figure::report(
            &format!("big fleet, {n} series x {points} points, peak memory"),
            peak,
            "MiB",
            target(64.0),
        );
    }
}
