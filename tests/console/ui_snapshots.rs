//! Snapshots of every screen at 80×24, 120×40 and 200×60 with a fixed clock, colour checks, and
//! a sweep of every size from 0×0 to 200×60 that must not panic.

use chrono::{DateTime, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use warroom::app::{Model, Msg, update};
use warroom::config::Config;
use warroom::metrics::{Labels, Point, QueryAnswer, Series, SourceError};
use warroom::theme::Theme;

pub(crate) const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 60)];

pub(crate) fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-07-17T08:30:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn series(labels: &[(&str, &str)], f: impl Fn(f64) -> f64) -> Series {
    let end = t0().timestamp() as f64;
    Series {
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<Labels>(),
        points: (0..=120)
            .map(|i| {
                let t = end - 3600.0 + f64::from(i) * 30.0;
                Point {
                    t,
                    v: f(f64::from(i) / 120.0),
                }
            })
            .collect(),
    }
}

/// Put an answer on a panel as a landed query would (the landing itself is tested in `update`).
fn deliver(
    m: &mut Model,
    panel: usize,
    result: Result<QueryAnswer, SourceError>,
    at: DateTime<Utc>,
) {
    let p = &mut m.panels[panel];
    match result {
        Ok(a) => {
            p.series = a.series;
            p.warnings = a.warnings;
            p.last_ok = Some(at);
            p.last_error = None;
        }
        Err(e) => p.last_error = Some((at, e.to_string())),
    }
}

fn answer(series: Vec<Series>) -> Result<QueryAnswer, SourceError> {
    Ok(QueryAnswer {
        series,
        warnings: vec![],
        bytes: 0,
        infos: vec![],
        result_type: None,
        omitted: 0,
    })
}

/// A dashboard with every panel state: fresh at crit, fresh ok, partial, stale, failing with
/// old data, loading, fresh below a "low is bad" threshold, fresh with no series.
pub(crate) fn model(width: u16, height: u16) -> Model {
    let mut m = Model::new(
        &Config::default().with_panels(warroom::metrics::presets::sim_panels()),
        Theme::builtin("default").unwrap(),
        "prometheus http://127.0.0.1:9090".into(),
        t0(),
    );
    m.width = width;
    m.height = height;
    let pass = m.source.health.admit(t0()).unwrap();
    m.source.health.report(pass, Ok(()), t0(), &mut rand::rng());
    let pods = ["api-0", "api-1", "api-2"];
    let sat = pods
        .iter()
        .enumerate()
        .map(|(k, p)| {
            series(&[("pod", p)], move |x| {
                (0.3 + x * 0.9 - k as f64 * 0.05).min(1.0)
            })
        })
        .collect();
    deliver(&mut m, 0, answer(sat), t0());
    deliver(
        &mut m,
        1,
        answer(vec![series(&[], |x| 0.02 + 0.01 * x)]),
        t0(),
    );
    let lat = vec![
        series(&[("quantile", "p50")], |x| 0.042 + 5.0 * x * x),
        series(&[("quantile", "p99")], |x| 0.2 + 11.0 * x * x),
    ];
    let mut partial = QueryAnswer {
        series: lat,
        warnings: vec!["1 of 3 shards did not answer".into()],
        bytes: 0,
        infos: vec![],
        result_type: None,
        omitted: 0,
    };
    partial.warnings.truncate(1);
    deliver(&mut m, 2, Ok(partial), t0());
    deliver(
        &mut m,
        3,
        answer(vec![series(&[], |x| 1.0 + 1.6 * x)]),
        t0() - chrono::Duration::seconds(95),
    );
    deliver(
        &mut m,
        4,
        answer(vec![series(&[], |x| 0.9 * x)]),
        t0() - chrono::Duration::seconds(40),
    );
    deliver(
        &mut m,
        4,
        Err(SourceError::Api {
            error_type: "execution".into(),
            message: "query processing would load too many samples".into(),
        }),
        t0(),
    );
    // Panel 5 stays loading.
    deliver(
        &mut m,
        6,
        answer(vec![series(&[], |x| 1.0 - 0.25 * x)]),
        t0(),
    );
    deliver(&mut m, 7, answer(vec![]), t0());
    m
}

pub(crate) fn render(m: &Model) -> TestBackend {
    let mut term = Terminal::new(TestBackend::new(m.width, m.height)).unwrap();
    term.draw(|f| warroom::ui::view(f, m)).unwrap();
    term.backend().clone()
}

pub(crate) fn press(m: &mut Model, code: KeyCode) {
    update(m, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

#[test]
fn dashboard_with_every_panel_state() {
    for (w, h) in SIZES {
        let m = model(w, h);
        insta::assert_snapshot!(format!("dashboard_{w}x{h}"), render(&m));
    }
}

#[test]
fn zoomed_panels() {
    for (w, h) in SIZES {
        let mut m = model(w, h);
        press(&mut m, KeyCode::Enter);
        insta::assert_snapshot!(format!("zoom_saturation_{w}x{h}"), render(&m));
    }
    // The failing panel, zoomed: its reason and its old data both show.
    let mut m = model(120, 40);
    for _ in 0..4 {
        press(&mut m, KeyCode::Tab);
    }
    press(&mut m, KeyCode::Enter);
    let screen = render(&m).to_string();
    assert!(screen.contains("✖ failing"), "{screen}");
    assert!(screen.contains("too many samples"), "{screen}");
    insta::assert_snapshot!("zoom_failing_120x40", screen);
}

#[test]
fn help_overlay_lists_the_bindings() {
    for (w, h) in SIZES {
        let mut m = model(w, h);
        press(&mut m, KeyCode::Char('?'));
        let screen = render(&m);
        insta::assert_snapshot!(format!("help_{w}x{h}"), screen);
    }
    let mut m = model(200, 60);
    press(&mut m, KeyCode::Char('?'));
    let screen = render(&m).to_string();
    for (keys, what) in m.keymap.help(warroom::keymap::Mode::Dashboard) {
        assert!(screen.contains(what), "help lacks {what:?}");
        assert!(screen.contains(&keys), "help lacks keys {keys:?}");
    }
    // At 80×24 the help scrolls: every binding of every mode is reachable.
    let mut small = model(80, 24);
    press(&mut small, KeyCode::Char('?'));
    let mut seen = String::new();
    for _ in 0..60 {
        seen.push_str(&render(&small).to_string());
        press(&mut small, KeyCode::Char('j'));
    }
    for mode in warroom::keymap::Mode::ALL {
        if mode == warroom::keymap::Mode::Help {
            continue;
        }
        for (_, what) in small.keymap.help(mode) {
            assert!(seen.contains(what), "80x24 help never shows {what:?}");
        }
    }
    assert!(seen.contains("Levels:"), "{seen}");
}

/// `?` shows the keys of the view it was opened from first: from the runbook pane, the
/// runbooks' keys head the overlay, then the dashboard's; closed, it is back in the pane.
#[test]
fn help_from_the_runbook_pane_lists_its_keys_first() {
    let first_heading = |m: &Model| {
        let screen = render(m).to_string();
        let at = |name: &str| screen.find(&format!("{name} keys"));
        let (runbooks, dashboard) = (at("runbooks").unwrap(), at("dashboard").unwrap());
        (runbooks < dashboard, screen)
    };
    let mut m = model(200, 60);
    press(&mut m, KeyCode::Char('?'));
    let (runbooks_first, screen) = first_heading(&m);
    assert!(
        !runbooks_first,
        "from the dashboard, its keys first: {screen}"
    );
    press(&mut m, KeyCode::Esc);
    press(&mut m, KeyCode::Char('b'));
    assert_eq!(m.mode, warroom::keymap::Mode::Runbooks);
    press(&mut m, KeyCode::Char('?'));
    let (runbooks_first, screen) = first_heading(&m);
    assert!(
        runbooks_first,
        "from the runbook pane, its keys first: {screen}"
    );
    press(&mut m, KeyCode::Esc);
    assert_eq!(m.mode, warroom::keymap::Mode::Runbooks);
}

const BRIEFING: &str = "It is a weekday morning and commuter traffic is ramping towards its 07:40 peak.\nA routine release goes out at 07:00; the canary looked healthy.\n\nRecover the service and keep it recovered.";

#[test]
fn briefing_overlay_shows_until_dismissed() {
    for (w, h) in SIZES {
        let mut m = model(w, h);
        m.briefing = Some(BRIEFING.into());
        insta::assert_snapshot!(format!("briefing_{w}x{h}"), render(&m));
    }
    let mut m = model(120, 40);
    m.briefing = Some(BRIEFING.into());
    press(&mut m, KeyCode::Tab);
    assert_eq!(
        m.selected, 0,
        "keys other than close do nothing under the briefing"
    );
    assert!(render(&m).to_string().contains("Briefing"));
    press(&mut m, KeyCode::Esc);
    assert!(m.briefing.is_none());
    assert!(!render(&m).to_string().contains("Briefing"));
}

#[test]
fn too_small_screen_says_so() {
    for (w, h) in [(39, 24), (80, 9), (20, 5)] {
        let m = model(w, h);
        insta::assert_snapshot!(format!("too_small_{w}x{h}"), render(&m));
    }
}

#[test]
fn states_and_levels_are_coloured_by_role_and_never_by_colour_alone() {
    let m = model(200, 60);
    let buf = render(&m);
    let buf = buf.buffer();
    let find = |needle: &str| -> Option<(u16, u16)> {
        for y in 0..buf.area.height {
            let line: String = (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect();
            if let Some(byte) = line.find(needle) {
                let x = line[..byte].chars().count() as u16;
                return Some((x, y));
            }
        }
        None
    };
    // The default theme's roles: crit and failing light red (red on black is under 4.5:1),
    // stale yellow.
    let (x, y) = find("▲ CRIT").expect("a CRIT level is shown with its symbol");
    assert_eq!(buf[(x, y)].fg, Color::LightRed);
    let (x, y) = find("✖ failing").expect("failing is shown in words");
    assert_eq!(buf[(x, y)].fg, Color::LightRed);
    let (x, y) = find("◷ stale").expect("stale is shown in words");
    assert_eq!(buf[(x, y)].fg, Color::Yellow);
    assert!(find("◐ partial").is_some());
    assert!(find("◌ loading").is_some());
    assert!(find("● live").is_some());

    // Monochrome loses nothing: the same words are there with no colour at all.
    let mut mono = model(200, 60);
    mono.theme = Theme::builtin("mono").unwrap();
    let text = render(&mono).to_string();
    for word in [
        "▲ CRIT",
        "✖ failing",
        "◷ stale",
        "◐ partial",
        "◌ loading",
        "● live",
    ] {
        assert!(text.contains(word), "mono lacks {word}");
    }
}

#[test]
fn every_size_renders_without_panic() {
    let mut screens = Vec::new();
    let base = model(80, 24);
    screens.push(base);
    let mut zoom = model(80, 24);
    press(&mut zoom, KeyCode::Enter);
    screens.push(zoom);
    let mut help = model(80, 24);
    press(&mut help, KeyCode::Char('?'));
    screens.push(help);
    let mut briefing = model(80, 24);
    briefing.briefing = Some(BRIEFING.into());
    screens.push(briefing);
    let with_timeline = || {
        let mut m = model(80, 24);
        m.show_timeline = true;
        m.incident = Some(warroom::app::model::IncidentHeader {
            id: "2026-07-17-1".into(),
            title: "Journey planner".into(),
        });
        m.timeline = vec![record(
            1,
            t0(),
            warroom::incident::Source::Operator,
            warroom::incident::Event::note("pool at 100% #root-cause"),
        )];
        m
    };
    screens.push(with_timeline());
    let mut note = with_timeline();
    note.mode = warroom::keymap::Mode::Note;
    note.note = "typing a long note ".repeat(20);
    screens.push(note);
    let mut term = Terminal::new(TestBackend::new(1, 1)).unwrap();
    let mut rendered = 0;
    for m in &mut screens {
        for w in 0..=200u16 {
            for h in 0..=60u16 {
                term.backend_mut().resize(w, h);
                term.resize(ratatui::layout::Rect::new(0, 0, w, h)).unwrap();
                m.width = w;
                m.height = h;
                term.draw(|f| warroom::ui::view(f, m)).unwrap();
                rendered += 1;
            }
        }
    }
    assert_eq!(rendered, screens.len() * 201 * 61);
}

/// A record of the on-call responder.
pub(crate) fn record(
    seq: u64,
    at: DateTime<Utc>,
    source: warroom::incident::Source,
    kind: warroom::incident::Event,
) -> warroom::incident::Record {
    crate::support::records::record(seq, at, source, "oncall", kind)
}

/// The timeline pane beside the panels, with a crossing, an alert, notes (one hostile) and a
/// status change; then the same incident spanning two days shows dates.
#[test]
fn timeline_pane() {
    use warroom::incident::event::{Direction, Level};
    use warroom::incident::{Event, Source};
    let timeline = |m: &mut Model, start: DateTime<Utc>| {
        m.incident = Some(warroom::app::model::IncidentHeader {
            id: "2026-07-17-1".into(),
            title: "Journey planner".into(),
        });
        m.show_timeline = true;
        let min = |n: i64| start + chrono::Duration::minutes(n);
        m.timeline = vec![
            record(
                1,
                min(0),
                Source::Operator,
                Event::IncidentOpened {
                    title: "Journey planner".into(),
                    severity: "SEV-2".parse().unwrap(),
                },
            ),
            record(
                2,
                min(3),
                Source::Metric,
                Event::ThresholdCrossed {
                    panel: "Pool saturation".into(),
                    level: Level::Crit,
                    direction: Direction::Up,
                    value: 0.99,
                    threshold: 0.95,
                    at: min(3),
                },
            ),
            record(
                3,
                min(9),
                Source::Operator,
                Event::note(
                    warroom::sanitize::line("retries \u{1b}]0;pwned\u{7} look high #factor")
                        .into_owned(),
                ),
            ),
            record(
                4,
                min(40),
                Source::Operator,
                Event::StatusChanged {
                    status: "identified".parse().unwrap(),
                },
            ),
        ];
    };
    for (w, h) in [(120, 40), (200, 60)] {
        let mut m = model(w, h);
        timeline(&mut m, t0() - chrono::Duration::minutes(50));
        let screen = render(&m);
        assert!(warroom::sanitize::is_clean(&screen.to_string(), true));
        insta::assert_snapshot!(format!("timeline_{w}x{h}"), screen);
    }
    let mut m = model(120, 40);
    timeline(&mut m, t0() - chrono::Duration::hours(30));
    let screen = render(&m).to_string();
    assert!(
        screen.contains("07-16"),
        "a multi-day incident shows dates: {screen}"
    );
    insta::assert_snapshot!("timeline_multiday_120x40", screen);
    // Narrow terminals show the timeline instead of the panels.
    let mut m = model(80, 24);
    timeline(&mut m, t0() - chrono::Duration::minutes(50));
    let screen = render(&m).to_string();
    assert!(!screen.contains("Pool wait p99"), "{screen}");
    insta::assert_snapshot!("timeline_80x24", screen);
    // `g` jumps from the crossing to its panel, and the pane scrolls to keep the crossing in
    // view under sixty newer notes.
    let mut m = model(120, 40);
    timeline(&mut m, t0() - chrono::Duration::minutes(50));
    for i in 0..60 {
        m.timeline.push(record(
            5 + i,
            t0() - chrono::Duration::seconds(60 - i as i64),
            Source::Operator,
            Event::note(format!("later note {i}")),
        ));
    }
    assert!(!render(&m).to_string().contains("Pool saturation ▲"));
    key(&mut m, 'g');
    let pool = m
        .panels
        .iter()
        .position(|p| p.config.title == "Pool saturation")
        .expect("the default dashboard has a pool panel");
    assert_eq!((m.selected, m.zoomed, m.jumped), (pool, true, Some(2)));
    let screen = render(&m).to_string();
    let marked: Vec<&str> = screen.lines().filter(|l| l.contains('▶')).collect();
    assert_eq!(marked.len(), 1, "{screen}");
    assert!(marked[0].contains("#2 "), "the crossing's record: {screen}");
    assert!(marked[0].contains("▶metric"), "{screen}");
    insta::assert_snapshot!("timeline_jumped_120x40", screen);
}

pub(crate) fn key(m: &mut Model, c: char) {
    press(m, KeyCode::Char(c));
}

pub(crate) fn type_text(m: &mut Model, text: &str) {
    for c in text.chars() {
        key(m, c);
    }
}

/// The runbook pane on the shipped runbooks plus one broken file.
pub(crate) fn pane(w: u16, h: u16) -> Model {
    use warroom::runbook::catalog::{self, Entry};
    let mut m = model(w, h);
    key(&mut m, 'b');
    let mut entries = catalog::load(&[]);
    entries.push(Entry::Broken {
        file: "ops/runbooks/zz-broken.toml".into(),
        error: "ops/runbooks/zz-broken.toml:3:9: expected a string for \"id\"\n  |\n3 | id = 42\n  |         ^".into(),
    });
    update(&mut m, Msg::RunbooksLoaded(entries));
    m
}

pub(crate) fn select(m: &mut Model, name: &str) {
    let i = m
        .runbooks
        .entries
        .as_ref()
        .unwrap()
        .iter()
        .position(|e| e.name() == name)
        .unwrap();
    m.runbooks.selected = i;
}

/// `pool-exhaustion` planned, confirmed and half-way through its batch restart, with a
/// gate reading, output and a confirmation waiting.
pub(crate) fn running(w: u16, h: u16) -> Model {
    use warroom::app::workers::operator::{Question, Reply};
    let mut m = run_in_progress(w, h);
    let id = m.runbooks.run.as_ref().unwrap().run_id.clone();
    let (reply, _rx) = Reply::new();
    std::mem::forget(_rx);
    update(
        &mut m,
        Msg::Ask {
            run_id: id.clone(),
            question: Question::Confirm(warroom::runbook::operator::Confirmation {
                step: "restart".into(),
                summary: "Batch 3 of step \"restart\": api-6, api-7, api-8".into(),
                word: "batch 3".into(),
                skippable: false,
            }),
            reply,
        },
    );
    type_text(&mut m, "batch");
    m
}

/// `pool-exhaustion` half-way through its batch restart (a gate reading, output), nothing
/// asked.
pub(crate) fn run_in_progress(w: u16, h: u16) -> Model {
    use warroom::runbook::batch::BatchEvent;
    use warroom::runbook::report::{RunEvent, RunRecord, StepOutcome};
    let mut m = pane(w, h);
    select(&mut m, "pool-exhaustion");
    press(&mut m, KeyCode::Enter);
    let mut batches = std::collections::BTreeMap::new();
    batches.insert("restart".to_string(), 4);
    update(
        &mut m,
        Msg::Planned {
            name: "pool-exhaustion".into(),
            result: Ok(warroom::runbook::setup::Plan {
                lines: vec!["plan".into()],
                batches,
                titles: Default::default(),
                values: Default::default(),
            }),
        },
    );
    key(&mut m, 'x');
    type_text(&mut m, "pool-exhaustion");
    press(&mut m, KeyCode::Enter);
    let id = m.runbooks.run.as_ref().unwrap().run_id.clone();
    let ev = |m: &mut Model, event: RunEvent| {
        update(
            m,
            Msg::Run {
                record: Box::new(RunRecord {
                    at: t0(),
                    run_id: id.clone(),
                    event,
                }),
                journaled: None,
            },
        );
    };
    for (step, kind, title, detail) in [
        ("why", "note", "why", ""),
        ("rollback", "http", "Roll back the deploy", "200 OK"),
        (
            "disable-retries",
            "http",
            "Disable retries in every layer",
            "200 OK",
        ),
        (
            "amplification-falls",
            "wait",
            "Attempts per request fall under 1.3",
            "condition holds",
        ),
    ] {
        ev(
            &mut m,
            RunEvent::StepStarted {
                step: step.into(),
                kind: kind.into(),
                title: title.into(),
            },
        );
        ev(
            &mut m,
            RunEvent::StepFinished {
                step: step.into(),
                outcome: StepOutcome::Succeeded,
                detail: detail.into(),
            },
        );
    }
    ev(
        &mut m,
        RunEvent::StepStarted {
            step: "restart".into(),
            kind: "batch".into(),
            title: "Restart planner-api in batches of 25 %".into(),
        },
    );
    ev(
        &mut m,
        RunEvent::Batch {
            step: "restart".into(),
            batch_event: BatchEvent::BatchStarted {
                batch: 2,
                targets: vec!["api-3".into(), "api-4".into(), "api-5".into()],
            },
        },
    );
    ev(
        &mut m,
        RunEvent::Batch {
            step: "restart".into(),
            batch_event: BatchEvent::InstanceHealthy {
                target: "api-3".into(),
            },
        },
    );
    ev(
        &mut m,
        RunEvent::GateReading {
            step: "restart".into(),
            reading: "Success(0.012)".into(),
            verdict: "Pending".into(),
        },
    );
    for i in 0..30 {
        ev(
            &mut m,
            RunEvent::Output {
                step: "restart".into(),
                line: format!("restarting pod api-{i} \u{1b}[31mred\u{1b}[0m"),
            },
        );
    }
    m
}

#[test]
fn runbook_pane_list_plan_and_run() {
    for (w, h) in SIZES {
        let mut m = pane(w, h);
        select(&mut m, "zz-broken");
        let screen = render(&m);
        let text = screen.to_string();
        assert!(text.contains("✖ zz-broken"), "{text}");
        assert!(text.contains("zz-broken.toml:3:9"), "{text}");
        insta::assert_snapshot!(format!("runbooks_broken_{w}x{h}"), screen);

        let mut m = pane(w, h);
        select(&mut m, "disable-retries");
        press(&mut m, KeyCode::Enter);
        update(
            &mut m,
            Msg::Planned {
                name: "disable-retries".into(),
                result: Ok(warroom::runbook::setup::Plan {
                    lines: vec![
                        "runbook disable-retries".into(),
                        "1. note".into(),
                        "2. disable  http  MUTATING".into(),
                        "   POST http://127.0.0.1:9187/control/retries".into(),
                    ],
                    batches: Default::default(),
                    titles: Default::default(),
                    values: Default::default(),
                }),
            },
        );
        key(&mut m, 'x');
        type_text(&mut m, "disable-retri");
        insta::assert_snapshot!(format!("runbooks_plan_confirm_{w}x{h}"), render(&m));

        let m = running(w, h);
        let screen = render(&m);
        let text = screen.to_string();
        assert!(warroom::sanitize::is_clean(&text, true));
        assert!(w < 120 || text.contains("batch 2/4"), "{text}");
        insta::assert_snapshot!(format!("runbooks_running_{w}x{h}"), screen);
    }
}

/// On a real stack: a runbook whose secret has no environment variable here stays listed,
/// dimmed after the ones that can act, and its detail says which variable and where to set it;
/// a simulator runbook is dimmed for where it acts.
#[test]
fn runbooks_that_cannot_be_prepared_here_are_dimmed_with_why() {
    use warroom::runbook::catalog;
    use warroom::runbook::setup::RunbookSetup;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("needs-token.toml"),
        "name = \"needs-token\"\ndescription = \"Acts on a service whose token only its environment holds.\"\n[variables]\nbase_url = { default = \"http://127.0.0.1:9\" }\ntoken = { secret = true, env = \"WARROOM_TEST_NEVER_SET_TOKEN\" }\n[[step]]\nid = \"n\"\nkind = \"note\"\ntext = \"{{base_url}}\"\n",
    )
    .unwrap();
    let setup = RunbookSetup::new(vec![dir.path().to_path_buf()], vec![]);
    let entries: Vec<catalog::Entry> = catalog::load(&setup.dirs)
        .into_iter()
        .filter(|e| {
            ["needs-token", "disable-retries", "redis-queue-drain"].contains(&e.name().as_str())
        })
        .collect();
    assert_eq!(entries.len(), 3);
    let unresolved = catalog::unresolved(&entries, &setup);
    assert_eq!(unresolved.keys().collect::<Vec<_>>(), ["needs-token"]);
    let mut m = model(100, 24);
    m.rehearsal = false;
    key(&mut m, 'b');
    update(&mut m, Msg::RunbooksUnresolved(unresolved));
    update(&mut m, Msg::RunbooksLoaded(entries));
    let order: Vec<String> = m
        .runbooks
        .entries
        .as_ref()
        .unwrap()
        .iter()
        .map(warroom::runbook::catalog::Entry::name)
        .collect();
    assert_eq!(
        order,
        ["redis-queue-drain", "disable-retries", "needs-token"]
    );
    // Dimmed as the simulator's runbook is; the one that can act is not (the first, selected,
    // is compared unselected).
    let fg = |m: &Model, name: &str| {
        let screen = render(m);
        let text = screen.to_string();
        let (y, line) = text
            .lines()
            .enumerate()
            .find(|(_, l)| l.contains(name))
            .unwrap();
        let x = line
            .chars()
            .position(|c| c == name.chars().next().unwrap())
            .unwrap();
        screen.buffer()[(x as u16, y as u16)].fg
    };
    assert_eq!(fg(&m, "○ disable-retries"), fg(&m, "○ needs-token"));
    select(&mut m, "needs-token");
    assert_ne!(fg(&m, "redis-queue-drain"), fg(&m, "○ disable-retries"));
    let screen = render(&m);
    let text = screen.to_string();
    assert!(
        text.contains("○ cannot be prepared here: variable \"token\" has no value"),
        "{text}"
    );
    assert!(text.contains("WARROOM_TEST_NEVER_SET_TOKEN"), "{text}");
    insta::assert_snapshot!("runbooks_unresolved_100x24", screen);
}

#[test]
fn incident_dialogs() {
    for (w, h) in SIZES {
        let mut m = model(w, h);
        m.incident = Some(warroom::app::model::IncidentHeader {
            id: "2026-07-17-1".into(),
            title: "Journey planner".into(),
        });
        key(&mut m, 'a');
        type_text(&mut m, "Add a retry budget to the gateway");
        press(&mut m, KeyCode::Tab);
        type_text(&mut m, "platform");
        press(&mut m, KeyCode::Tab);
        type_text(&mut m, "P7");
        press(&mut m, KeyCode::Enter);
        insta::assert_snapshot!(format!("dialog_action_item_{w}x{h}"), render(&m));
        press(&mut m, KeyCode::Esc);
        key(&mut m, 's');
        insta::assert_snapshot!(format!("dialog_status_{w}x{h}"), render(&m));
    }
}

#[test]
fn timeline_filtered_oldest_first() {
    use warroom::incident::{Event, Source};
    let mut m = model(120, 40);
    m.incident = Some(warroom::app::model::IncidentHeader {
        id: "2026-07-17-1".into(),
        title: "Journey planner".into(),
    });
    m.timeline = (1..=6)
        .map(|i| {
            record(
                i,
                t0() - chrono::Duration::minutes(30 - i as i64),
                if i % 2 == 0 {
                    Source::Runbook
                } else {
                    Source::Operator
                },
                Event::note(format!("record {i}")),
            )
        })
        .collect();
    key(&mut m, 'f');
    key(&mut m, 'f');
    key(&mut m, 'f');
    key(&mut m, 'O');
    let text = render(&m).to_string();
    assert!(text.contains("only runbook · oldest first"), "{text}");
    let (two, four) = (
        text.find("record 2").unwrap(),
        text.find("record 4").unwrap(),
    );
    assert!(two < four, "oldest first");
    assert!(
        !text.contains("record 1"),
        "operator records are filtered out"
    );
    insta::assert_snapshot!("timeline_runbook_oldest_first_120x40", text);
}

#[test]
fn new_screens_render_at_every_size_without_panic() {
    let mut screens = vec![running(80, 24)];
    let mut plan = pane(80, 24);
    select(&mut plan, "pool-exhaustion");
    press(&mut plan, KeyCode::Enter);
    plan.show_timeline = true;
    screens.push(plan);
    let mut term = Terminal::new(TestBackend::new(1, 1)).unwrap();
    for m in &mut screens {
        for w in 0..=200u16 {
            for h in 0..=60u16 {
                term.backend_mut().resize(w, h);
                term.resize(ratatui::layout::Rect::new(0, 0, w, h)).unwrap();
                m.width = w;
                m.height = h;
                term.draw(|f| warroom::ui::view(f, m)).unwrap();
            }
        }
    }
}
