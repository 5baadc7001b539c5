//! Frames of `warroom replay` at a fixed cursor, drawn by the console's own views on a
//! `TestBackend`: the panels cut at the cursor, the timeline up to it (newest first), the
//! status bar saying REPLAY with the cursor's time in the configured zone; the help overlay;
//! an incident without snapshots.

use crate::support::records;
use chrono::{DateTime, Duration, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use warroom::config::Config;
use warroom::incident::event::{Direction, Level};
use warroom::incident::snapshot::{self, PanelSnapshot, SnapshotSeries, SnapshotWindow};
use warroom::incident::vocabulary::{Severity, Status};
use warroom::incident::{Event, IncidentId, Record, Source};
use warroom::metrics::presets::sim_panels;
use warroom::replay::{Loaded, Msg, Replay, update};
use warroom::theme::Theme;

fn t0() -> DateTime<Utc> {
    "2026-11-29T14:00:00Z".parse().unwrap()
}

/// The incident's records: minute offsets from `t0` and what happened.
fn records() -> Vec<Record> {
    let crossing = |direction, value| Event::ThresholdCrossed {
        panel: "Pool saturation".into(),
        level: Level::Crit,
        direction,
        value,
        threshold: 0.95,
        at: t0(),
    };
    let events: Vec<(i64, Source, Event)> = vec![
        (
            0,
            Source::Operator,
            Event::IncidentOpened {
                title: "Checkout pool exhaustion".into(),
                severity: Severity::Sev2,
            },
        ),
        (6, Source::Metric, crossing(Direction::Up, 0.97)),
        (
            9,
            Source::Operator,
            Event::note("pool at 100% after the deploy #impact"),
        ),
        (
            12,
            Source::Operator,
            Event::StatusChanged {
                status: Status::Identified,
            },
        ),
        (31, Source::Operator, Event::note("rolled back the deploy")),
        (48, Source::Metric, crossing(Direction::Down, 0.62)),
        (
            55,
            Source::Operator,
            Event::StatusChanged {
                status: Status::Resolved,
            },
        ),
    ];
    records::numbered(events.into_iter().map(|(min, source, kind)| {
        let time = t0() + Duration::minutes(min) + Duration::seconds(17);
        (time, source, "ana", kind)
    }))
}

/// A snapshot of each default panel over the hour: a rise to a peak at minute 25, then down.
fn snapshots() -> Vec<PanelSnapshot> {
    let window = SnapshotWindow::covering(t0(), t0() + Duration::hours(1), 60.0);
    sim_panels()
        .iter()
        .enumerate()
        .map(|(order, p)| {
            let top = p.crit.unwrap_or(1.0) * 1.1;
            let points = (0..=60)
                .map(|m| {
                    let shape = 1.0 - ((m as f64 - 25.0) / 25.0).abs().min(1.0);
                    [
                        (t0().timestamp() + m * 60) as f64,
                        top * (0.2 + 0.8 * shape),
                    ]
                })
                .collect();
            PanelSnapshot {
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
                series: vec![SnapshotSeries {
                    labels: Default::default(),
                    points,
                }],
                error: None,
            }
        })
        .collect()
}

fn replay(snapshots: Vec<PanelSnapshot>, w: u16, h: u16) -> Replay {
    let config = Config::parse("w.toml", "timezone = \"Europe/Berlin\"\n").unwrap();
    let id = IncidentId::parse("2026-11-29-1").unwrap();
    let loaded = Loaded::new(id, records(), None, snapshots);
    let theme = Theme::builtin("default").unwrap();
    let mut r = Replay::new(&config, theme, loaded, 60.0);
    update(
        &mut r,
        Msg::Resize {
            width: w,
            height: h,
        },
    );
    r
}

fn press(r: &mut Replay, code: KeyCode) {
    update(r, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

/// Pause, then seek to 14:25:17 UTC (the first record plus 25 minutes) with the keys.
fn at_25_minutes(r: &mut Replay) {
    press(r, KeyCode::Char(' '));
    press(r, KeyCode::End);
    press(r, KeyCode::Home);
    press(r, KeyCode::Char('L'));
    press(r, KeyCode::Char('L'));
    for _ in 0..5 {
        press(r, KeyCode::Char('l'));
    }
}

fn render(r: &Replay) -> TestBackend {
    let m = r.model();
    let mut term = Terminal::new(TestBackend::new(m.width, m.height)).unwrap();
    term.draw(|f| warroom::replay::view::draw(f, r)).unwrap();
    term.backend().clone()
}

#[test]
fn a_frame_at_a_fixed_cursor() {
    let mut r = replay(snapshots(), 120, 40);
    at_25_minutes(&mut r);
    assert_eq!(
        r.model().now,
        t0() + Duration::minutes(25) + Duration::seconds(17)
    );
    let screen = render(&r);
    let text = format!("{screen}");
    assert!(text.contains("REPLAY ⏸ paused 60×"), "{text}");
    // The panels' values are the record's: none says it is live.
    assert!(!text.contains("● live"), "{text}");
    assert!(text.contains("↺ replayed"), "{text}");
    // The cursor in the configured zone: 14:25:17 UTC is 15:25:17 in Berlin in November.
    assert!(text.contains("2026-11-29 15:25:17 CET"), "{text}");
    // The records up to the cursor, newest first; none after it.
    // (Rows wrap in the narrow pane: each is found by a word of its own.)
    let status = text.find("identified").expect("the 14:12 status");
    let note = text.find("pool at").expect("the 14:09 note");
    assert!(status < note, "newest first: {text}");
    assert!(!text.contains("rolled back"), "14:31 is after the cursor");
    assert!(
        !text.contains("Status: resolved"),
        "14:55 is after the cursor"
    );
    insta::assert_snapshot!("replay_at_25_minutes_120x40", screen);
}

#[test]
fn the_help_lists_the_replay_keys() {
    let mut r = replay(snapshots(), 120, 40);
    at_25_minutes(&mut r);
    press(&mut r, KeyCode::Char('?'));
    let text = format!("{}", render(&r));
    for line in [
        "Replay keys",
        "play or pause",
        "forward 10 minutes",
        "faster",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    insta::assert_snapshot!("replay_help_120x40", text);
    press(&mut r, KeyCode::Esc);
    assert!(!format!("{}", render(&r)).contains("Replay keys"));
}

#[test]
fn without_snapshots_the_timeline_plays_and_the_panels_say_why() {
    let mut r = replay(vec![], 80, 24);
    at_25_minutes(&mut r);
    let text = format!("{}", render(&r));
    assert!(text.contains("no panel snapshots"), "{text}");
    assert!(text.contains("pool at 100%"), "{text}");
    insta::assert_snapshot!("replay_no_snapshots_80x24", text);
    // The panels, once the timeline is hidden, say they have no snapshot and how to get one.
    press(&mut r, KeyCode::Char('t'));
    let text = format!("{}", render(&r));
    assert!(text.contains("no snapshot of this panel"), "{text}");
}

#[test]
fn every_size_renders_without_panic() {
    let mut r = replay(snapshots(), 1, 1);
    at_25_minutes(&mut r);
    for w in (0..=200).step_by(7) {
        for h in (0..=60).step_by(5) {
            update(
                &mut r,
                Msg::Resize {
                    width: w,
                    height: h,
                },
            );
            let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
            term.draw(|f| warroom::replay::view::draw(f, &r)).unwrap();
        }
    }
}
