//! Replay benchmark (issue 6): a 100,000-record journal and 8 panel snapshots opened and
//! replayed to the first frame drawn on a 120×40 `TestBackend` (target under 1 s), then a seek
//! to the end (all 100,000 records on the timeline) and frames while playing.
//!
//! A plain main (percentiles, not criterion's means). Run: `cargo bench --bench replay`.
//! The incident is written under `$WARROOM_BENCH_DIR` (default `target/`), so the figure is the
//! disk's (page cache warm after the first round), not a tmpfs's.

#[path = "support/figure.rs"]
mod figure;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use figure::{Target, quantile, report};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::io::Write;
use std::time::{Duration, Instant};
use warroom::config::Config;
use warroom::incident::event::{Direction, Level};
use warroom::incident::snapshot::{self, PanelSnapshot, SnapshotSeries, SnapshotWindow};
use warroom::incident::{Event, Record, Source, Store};
use warroom::metrics::presets::sim_panels;
use warroom::replay::{Msg, Replay, update};
use warroom::theme::Theme;

const RECORDS: u64 = 100_000;
const ROUNDS: usize = 12;
/// No phase runs longer than this, however slow the machine.
const PHASE_LIMIT: Duration = Duration::from_secs(60);

fn event(i: u64) -> Event {
    if i.is_multiple_of(3) {
        Event::ThresholdCrossed {
            panel: "DB pool in use".into(),
            level: Level::Crit,
            direction: if i.is_multiple_of(2) {
                Direction::Up
            } else {
                Direction::Down
            },
            value: 0.97,
            threshold: 0.95,
            at: chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
        }
    } else {
        Event::note(format!("record {i}: retries at three layers #factor"))
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Sorted milliseconds, and their median and p99.
fn summary(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (quantile(&v, 0.5), quantile(&v, 0.99))
}

fn draw(term: &mut Terminal<TestBackend>, r: &Replay) {
    term.draw(|f| warroom::replay::view::draw(f, r))
        .expect("draw");
}

fn main() {
    let base = std::env::var("WARROOM_BENCH_DIR").unwrap_or_else(|_| "target".into());
    std::fs::create_dir_all(&base).expect("bench dir");
    let dir = tempfile::tempdir_in(&base).expect("temp dir");
    let store = Store::new(dir.path());
    let t0: chrono::DateTime<chrono::Utc> = "2026-07-17T07:18:00Z".parse().expect("time");
    let id = store.create(t0).expect("incident");

    // The journal: 100,000 records a quarter second apart (about 7 hours), written without a
    // sync each (only reading is measured).
    let path = store.journal_path(&id);
    {
        let file = std::fs::File::create(&path).expect("create");
        let mut out = std::io::BufWriter::new(file);
        for seq in 1..=RECORDS {
            let record = Record {
                seq,
                time: t0 + chrono::Duration::milliseconds(seq as i64 * 250),
                source: if seq.is_multiple_of(3) {
                    Source::Metric
                } else {
                    Source::Operator
                },
                actor: "bench".into(),
                host: String::new(),
                kind: event(seq),
            };
            out.write_all(&record.encode().expect("encode"))
                .expect("write");
        }
        out.flush().expect("flush");
    }
    // 8 panel snapshots over the window, 3 series each, at the capture's own step.
    let end = t0 + chrono::Duration::milliseconds(RECORDS as i64 * 250);
    let window = SnapshotWindow::covering(t0, end, 15.0);
    let snaps: Vec<PanelSnapshot> = sim_panels()
        .iter()
        .enumerate()
        .map(|(order, p)| PanelSnapshot {
            order,
            slug: snapshot::slug(&p.title),
            title: p.title.clone(),
            query: p.query.clone(),
            unit: snapshot::unit_name(p.unit).into(),
            warn: p.warn,
            crit: p.crit,
            bad_when: "above".into(),
            legend: None,
            signal: None,
            window,
            series: (0..3)
                .map(|s| SnapshotSeries {
                    labels: [("pod".to_string(), format!("api-{s}"))].into(),
                    points: (0..)
                        .map(|k| t0.timestamp() as f64 + k as f64 * window.step_s)
                        .take_while(|t| *t <= end.timestamp() as f64)
                        .enumerate()
                        .map(|(k, t)| [t, ((k as f64 / 40.0).sin() + 1.0) * (s + 1) as f64])
                        .collect(),
                })
                .collect(),
            error: None,
        })
        .collect();
    snapshot::write_all(&store.snapshots_dir(&id), &snaps).expect("snapshots");
    let size = std::fs::metadata(&path).expect("size").len();
    println!(
        "incident: {RECORDS} records ({:.1} MB), 8 snapshots of {} points × 3 series",
        size as f64 / 1e6,
        snaps[0].series[0].points.len()
    );

    let config = Config::default();
    let theme = Theme::builtin("default").expect("theme");
    let key = |code| Msg::Key(KeyEvent::new(code, KeyModifiers::NONE));

    // 1. Open and replay to the first frame; 2. seek to the end and draw.
    let (mut first, mut to_end) = (Vec::new(), Vec::new());
    let mut last = None;
    let phase = Instant::now();
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let loaded = warroom::replay::load::load(&store, &id.to_string()).expect("load");
        let mut r = Replay::new(&config, theme.clone(), loaded, 60.0);
        update(
            &mut r,
            Msg::Resize {
                width: 120,
                height: 40,
            },
        );
        let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
        draw(&mut term, &r);
        first.push(ms(t.elapsed()));
        let t = Instant::now();
        update(&mut r, key(KeyCode::End));
        draw(&mut term, &r);
        to_end.push(ms(t.elapsed()));
        assert_eq!(
            r.model().timeline.len(),
            RECORDS as usize,
            "all on the timeline"
        );
        last = Some((r, term));
        if phase.elapsed() > PHASE_LIMIT {
            break;
        }
    }
    let (first_p50, first_p99) = summary(first.clone());
    let (end_p50, end_p99) = summary(to_end.clone());
    println!(
        "open + replay to the first frame (120×40), {} rounds: median {first_p50:.1} ms, p99 \
         {first_p99:.1} ms (target < 1000 ms)",
        first.len()
    );
    println!(
        "seek to the end (100,000 records on the timeline) + frame: median {end_p50:.1} ms, p99 \
         {end_p99:.1} ms"
    );

    // 3. Frames while playing: a tick of 50 ms wall time at 60× and a frame, back from the start.
    let (mut r, mut term) = last.expect("one round");
    update(&mut r, key(KeyCode::Home));
    update(&mut r, key(KeyCode::Char(' ')));
    let mut frames = Vec::new();
    let phase = Instant::now();
    for _ in 0..500 {
        let t = Instant::now();
        update(&mut r, Msg::Tick(Duration::from_millis(50)));
        draw(&mut term, &r);
        frames.push(ms(t.elapsed()));
        if phase.elapsed() > PHASE_LIMIT {
            break;
        }
    }
    let (frame_p50, frame_p99) = summary(frames.clone());
    println!(
        "playing at 60×: {} frames, median {frame_p50:.2} ms, p99 {frame_p99:.2} ms per tick + \
         frame (the frame cap is 16 ms)",
        frames.len()
    );

    report(
        "replay a 100,000-record journal to the first frame, median",
        first_p50,
        "ms",
        Target::Under(1000.0),
    );
    report(
        "replay a 100,000-record journal to the first frame, p99",
        first_p99,
        "ms",
        Target::Under(1000.0),
    );
    report(
        "replay: seek to the end of 100,000 records and draw, p99",
        end_p99,
        "ms",
        Target::None,
    );
    report(
        "replay: tick and frame while playing, p99",
        frame_p99,
        "ms",
        Target::Under(16.0),
    );
}
