//! Frame time of the default dashboard: 8 panels × 10 series × 400 points, at 120×40, 200×60
//! and 400×110. Prints the median and p99 of many frames (target: p99 under 3 ms at 200×60).
//!
//! Run: `cargo bench --bench render` (`SERIES=N` changes the series per panel, default 10)

use chrono::{DateTime, Utc};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::Instant;
use warroom::app::Model;
use warroom::config::Config;
use warroom::metrics::{Point, Series};
use warroom::theme::Theme;

fn model(now: DateTime<Utc>, w: u16, h: u16) -> Model {
    let mut m = Model::new(
        &Config::default(),
        Theme::builtin("default").unwrap(),
        "bench".into(),
        now,
    );
    m.width = w;
    m.height = h;
    let end = now.timestamp() as f64;
    for panel in 0..m.panels.len() {
        let n: u32 = std::env::var("SERIES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10);
        let series = (0..n)
            .map(|s| Series {
                labels: [("pod".to_string(), format!("api-{s}"))].into(),
                points: (0..400)
                    .map(|i| {
                        let x = f64::from(i);
                        Point {
                            t: end - 3600.0 + x * 9.0,
                            v: 0.5 + 0.4 * ((x / 30.0) + f64::from(s)).sin(),
                        }
                    })
                    .collect(),
            })
            .collect();
        let p = &mut m.panels[panel];
        p.series = series;
        p.last_ok = Some(now);
    }
    m
}

fn main() {
    let now = Utc::now();
    println!(
        "{:<10} {:>8} {:>10} {:>10}",
        "size", "frames", "median", "p99"
    );
    for (w, h) in [(120u16, 40u16), (200, 60), (400, 110)] {
        let m = model(now, w, h);
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        for _ in 0..20 {
            term.draw(|f| warroom::ui::view(f, &m)).unwrap();
        }
        let frames = 400;
        let mut times: Vec<f64> = (0..frames)
            .map(|_| {
                let t = Instant::now();
                term.draw(|f| warroom::ui::view(f, &m)).unwrap();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        let p99 = times[(times.len() * 99) / 100];
        println!(
            "{:<10} {frames:>8} {median:>8.3}ms {p99:>8.3}ms",
            format!("{w}x{h}")
        );
    }
}
