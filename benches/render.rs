//! Frame time of the default dashboard: 8 panels × 10 series × 400 points, at 120×40, 200×60
//! and 400×110. Prints the median and p99 of many frames (target: p99 under 3 ms at 200×60).
//!
//! Then the frame time while a batch runbook runs and the timeline floods (issue 5): each
//! frame first takes 20 output lines, a gate reading, a batch event and 10 journaled records
//! through `update` (the flood), then draws; over the dashboard with the timeline beside it,
//! and over the runbook pane with the timeline beside it.
//!
//! Run: `cargo bench --bench render` (`SERIES=N` changes the series per panel, default 10)

#[path = "support/figure.rs"]
mod figure;

use chrono::{DateTime, Utc};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::Instant;
use warroom::app::{Model, Msg, update};
use warroom::config::Config;
use warroom::metrics::{Point, Series};
use warroom::theme::Theme;

fn model(now: DateTime<Utc>, w: u16, h: u16) -> Model {
    let mut m = Model::new(
        &Config::default().with_panels(warroom::metrics::presets::sim_panels()),
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
        figure::report(
            &format!("frame time, 8 panels x 10 series x 400 points, {w}x{h}, p99"),
            p99,
            "ms",
            if (w, h) == (200, 60) {
                figure::Target::Under(3.0)
            } else {
                figure::Target::None
            },
        );
    }
    fingerprint(now);
    flood(now);
}

/// The fingerprint of the frame on screen (`tui::frames::Shown`), taken on every frame drawn:
/// foldhash, as the console has it, beside the standard library's SipHash, at 200x60.
fn fingerprint(now: DateTime<Utc>) {
    use std::hash::BuildHasher;
    let m = model(now, 200, 60);
    let mut term = Terminal::new(TestBackend::new(200, 60)).unwrap();
    term.draw(|f| warroom::ui::view(f, &m)).unwrap();
    let buffer = term.backend().buffer().clone();
    let fold = foldhash::fast::RandomState::default();
    let sip = std::hash::RandomState::new();
    let (mut f, mut s) = (Vec::new(), Vec::new());
    let mut keep = 0u64;
    for _ in 0..300 {
        let t = Instant::now();
        keep ^= fold.hash_one(&buffer);
        f.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        keep ^= sip.hash_one(&buffer);
        s.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let ((fm, _), (sm, _)) = (percentiles(f), percentiles(s));
    println!(
        "fingerprint of a 200x60 frame: foldhash {fm:.3} ms, SipHash {sm:.3} ms ({:.1}x) [{}]",
        sm / fm,
        keep % 2
    );
    figure::report(
        "frame fingerprint 200x60, foldhash, median",
        fm,
        "ms",
        figure::Target::None,
    );
}

fn percentiles(mut times: Vec<f64>) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], times[(times.len() * 99) / 100])
}

/// A batch run of `pool-exhaustion` in progress, the timeline flooded, on `m`.
fn flood(now: DateTime<Utc>) {
    use warroom::incident::{Event, Record, Source};
    use warroom::runbook::batch::BatchEvent;
    use warroom::runbook::report::{RunEvent, RunRecord};
    println!();
    println!("while a batch runbook runs and the timeline floods (update + draw per frame)");
    println!(
        "{:<28} {:>8} {:>10} {:>10}",
        "screen", "frames", "median", "p99"
    );
    for (w, h, pane) in [(120u16, 40u16, false), (200, 60, false), (200, 60, true)] {
        let mut m = model(now, w, h);
        m.incident = Some(warroom::app::model::IncidentHeader {
            id: "2026-07-17-1".into(),
            title: "bench".into(),
        });
        m.show_timeline = true;
        let rb = warroom::runbook::catalog::load(&[])
            .into_iter()
            .find(|e| e.name() == "pool-exhaustion")
            .and_then(|e| e.runbook().cloned())
            .unwrap();
        let run_id = "pool-exhaustion-bench".to_string();
        m.runbooks.run = Some(warroom::app::panes::run::RunPane::new(
            run_id.clone(),
            &rb,
            now,
        ));
        if pane {
            update(
                &mut m,
                Msg::Key(crossterm::event::KeyEvent::new(
                    crossterm::event::KeyCode::Char('b'),
                    crossterm::event::KeyModifiers::NONE,
                )),
            );
            update(
                &mut m,
                Msg::RunbooksLoaded(warroom::runbook::catalog::load(&[])),
            );
        }
        let run = |m: &mut Model, event: RunEvent| {
            update(
                m,
                Msg::Run {
                    record: Box::new(RunRecord {
                        at: now,
                        run_id: run_id.clone(),
                        event,
                    }),
                    journaled: None,
                },
            );
        };
        run(
            &mut m,
            RunEvent::StepStarted {
                step: "restart".into(),
                kind: "batch".into(),
                title: "Restart planner-api in batches of 25 %".into(),
            },
        );
        let mut seq = 0u64;
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        let frames = 400;
        let mut times = Vec::with_capacity(frames);
        for frame in 0..frames + 20 {
            let t = Instant::now();
            for i in 0..20 {
                run(
                    &mut m,
                    RunEvent::Output {
                        step: "restart".into(),
                        line: format!("frame {frame} line {i}: restarting api-{}", i % 10),
                    },
                );
            }
            run(
                &mut m,
                RunEvent::GateReading {
                    step: "restart".into(),
                    reading: format!("Success({:.3})", 0.01 * f64::from(frame as u32 % 7)),
                    verdict: "Pending".into(),
                },
            );
            run(
                &mut m,
                RunEvent::Batch {
                    step: "restart".into(),
                    batch_event: BatchEvent::BatchStarted {
                        batch: frame % 4 + 1,
                        targets: vec!["api-3".into(), "api-4".into(), "api-5".into()],
                    },
                },
            );
            for _ in 0..10 {
                seq += 1;
                update(
                    &mut m,
                    Msg::Journaled(Box::new(Record {
                        seq,
                        time: now,
                        source: Source::Runbook,
                        actor: run_id.clone(),
                        host: String::new(),
                        kind: Event::note(format!("batch record {seq}")),
                    })),
                );
            }
            term.draw(|f| warroom::ui::view(f, &m)).unwrap();
            if frame >= 20 {
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        let (median, p99) = percentiles(times);
        let name = format!(
            "{w}x{h} {}",
            if pane {
                "pane+timeline"
            } else {
                "dashboard+timeline"
            }
        );
        println!(
            "{name:<28} {frames:>8} {median:>8.3}ms {p99:>8.3}ms  ({seq} records on the timeline)"
        );
        figure::report(
            &format!("frame time during a batch run and a timeline flood, {name}, p99"),
            p99,
            "ms",
            figure::Target::None,
        );
    }
}
