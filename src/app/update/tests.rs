use super::*;

mod console;
mod sharing;
mod silence;
mod variables;
use crate::app::PanelState;
use crate::config::Config;
use crate::incident::{Event, Record, Source};
use crate::metrics::health::HealthState;
use crate::metrics::{Point, QueryAnswer, Series, SourceError};
use crate::theme::Theme;
use chrono::{DateTime, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-07-17T07:30:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn model() -> Model {
    let mut m = Model::new(
        &Config::default().with_panels(crate::metrics::presets::sim_panels()),
        Theme::fallback(),
        "test".into(),
        t0(),
    );
    m.width = 120;
    m.height = 40;
    m
}

fn key(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

fn code(c: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(c, KeyModifiers::NONE))
}

fn ok_answer() -> QueryAnswer {
    QueryAnswer {
        series: vec![Series {
            labels: Default::default(),
            points: vec![Point { t: 1.0, v: 0.5 }],
        }],
        warnings: vec![],
        bytes: 100,
        infos: vec![],
        result_type: None,
        omitted: 0,
    }
}

fn answer_all(m: &mut Model, effects: Vec<Effect>, ok: bool) -> Vec<Effect> {
    let mut next = Vec::new();
    for e in effects {
        let result = if ok {
            Ok(ok_answer())
        } else {
            Err(SourceError::Unreachable("connection refused".into()))
        };
        let msg = match e {
            Effect::Fetch {
                panel,
                ticket,
                pass,
                query,
                ..
            } => Msg::Answer {
                panel,
                ticket,
                pass,
                query,
                result,
                at: m.now,
            },
            Effect::FetchLatest { panel, pass, .. } => Msg::Latest {
                panel,
                pass,
                result,
                at: m.now,
            },
            _ => continue,
        };
        next.extend(update(m, msg));
    }
    next
}

/// A model whose first refresh (both halves of the wave, at `t0`) has been answered.
fn refreshed() -> Model {
    let mut m = model();
    let e = update(&mut m, Msg::Tick(t0()));
    let more = answer_all(&mut m, e, true);
    answer_all(&mut m, more, true);
    m
}

/// The pool panel's latest value `v`, answered `20 * i` seconds after [`t0`] (the model's clock
/// moves there too): the effects of that answer.
fn reading(m: &mut Model, i: usize, v: f64) -> Vec<Effect> {
    let at = t0() + chrono::Duration::seconds(20 * i as i64);
    m.now = at;
    let mut a = ok_answer();
    a.series[0].points = vec![Point { t: i as f64, v }];
    m.panels[0].latest_in_flight = true;
    let pass = m.source.health.admit(at).unwrap();
    update(
        m,
        Msg::Latest {
            panel: 0,
            pass,
            result: Ok(a),
            at,
        },
    )
}

fn panel_of(e: &Effect) -> usize {
    match e {
        Effect::Fetch { panel, .. } | Effect::FetchLatest { panel, .. } => *panel,
        _ => usize::MAX,
    }
}

#[test]
fn the_first_tick_fetches_within_the_in_flight_limit() {
    let mut m = model();
    let effects = update(&mut m, Msg::Tick(t0()));
    assert_eq!(effects.len(), crate::app::model::MAX_IN_FLIGHT);
    let more = answer_all(&mut m, effects, true);
    assert_eq!(more.len(), 4, "the other four panels follow");
    let done = answer_all(&mut m, more, true);
    assert!(done.is_empty(), "nothing is due until the next refresh");
    for i in 0..m.panels.len() {
        assert_eq!(m.panel_state(i), PanelState::Fresh);
    }
}

/// A tick reads the clock a little off its instant: a refresh due a hair after the tick's
/// reading goes on that tick, not a quarter of a second later (5.25 s refreshes, issue 20).
#[test]
fn a_refresh_keeps_its_cadence_when_the_tick_reads_the_clock_early() {
    let mut m = refreshed();
    let ms = chrono::Duration::milliseconds;
    assert!(
        update(&mut m, Msg::Tick(t0() + ms(4750 - 3))).is_empty(),
        "a refresh a tick early"
    );
    let due = update(&mut m, Msg::Tick(t0() + ms(5000 - 3)));
    assert_eq!(
        due.len(),
        crate::app::model::MAX_IN_FLIGHT,
        "the refresh waited for the next tick"
    );
}

#[test]
fn a_panel_never_has_two_queries_in_flight() {
    let mut m = model();
    let first = update(&mut m, Msg::Tick(t0()));
    // Time passes beyond the refresh while the answers hang.
    let later = update(&mut m, Msg::Tick(t0() + chrono::Duration::seconds(30)));
    for e in &later {
        let panel = panel_of(e);
        assert!(
            !first.iter().any(|f| panel_of(f) == panel),
            "panel {panel} asked twice"
        );
    }
    // And the hung panels are honestly stale, not fresh.
    assert!(matches!(m.panel_state(0), PanelState::Loading));
}

#[test]
fn keys_drive_the_model() {
    let mut m = model();
    update(&mut m, key('?'));
    assert_eq!(m.mode, crate::keymap::Mode::Help);
    update(&mut m, code(KeyCode::Esc));
    assert_eq!(m.mode, crate::keymap::Mode::Dashboard);
    update(&mut m, code(KeyCode::Enter));
    assert!(m.zoomed);
    update(&mut m, code(KeyCode::Esc));
    assert!(!m.zoomed);
    update(&mut m, code(KeyCode::Tab));
    assert_eq!(m.selected, 1);
    update(&mut m, code(KeyCode::BackTab));
    update(&mut m, code(KeyCode::BackTab));
    assert_eq!(m.selected, 7, "wraps around");
    update(&mut m, key('k'));
    assert_eq!(m.selected, 5, "up one row of two");
    update(&mut m, key('q'));
    assert_eq!(m.quit, Some(Quit::User));
}

#[test]
fn changing_the_range_refetches_everything_and_drops_old_answers() {
    let mut m = model();
    let first = update(&mut m, Msg::Tick(t0()));
    let range_before = m.range_secs();
    let effects = update(&mut m, key('-'));
    assert!(m.range_secs() < range_before);
    // Four panels still have their old query in flight: only the other four go now.
    assert_eq!(
        effects.len(),
        0,
        "the in-flight limit is still taken by the old queries"
    );
    let next = answer_all(&mut m, first, true);
    assert!(
        m.panels.iter().all(|p| p.series.is_empty()),
        "old-range answers dropped"
    );
    assert_eq!(next.len(), 4);
    for e in &next {
        let Effect::Fetch { query, .. } = e else {
            panic!("a full range fetch was expected, got {e:?}");
        };
        assert!((query.end - query.start - m.range_secs()).abs() < 1e-9);
    }
}

#[test]
fn pause_stops_refreshing_and_resume_refreshes_at_once() {
    let mut m = refreshed();
    update(&mut m, key('p'));
    assert!(m.paused);
    let later = t0() + chrono::Duration::seconds(60);
    assert!(update(&mut m, Msg::Tick(later)).is_empty());
    assert!(matches!(m.panel_state(0), PanelState::Stale { .. }));
    assert!(!update(&mut m, key('p')).is_empty());
}

/// With the source down, requests follow the backoff schedule instead of the refresh rate.
#[test]
fn a_failing_source_is_not_hammered() {
    let mut m = model();
    let mut sent = 0usize;
    let mut last_allowed = None;
    let mut effects = update(&mut m, Msg::Tick(t0()));
    for step in 1..=(4 * 120) {
        sent += effects.len();
        if !effects.is_empty()
            && let Some(t) = last_allowed
        {
            assert!(m.now >= t, "sent before the backoff allowed");
        }
        effects = answer_all(&mut m, effects, false);
        last_allowed = m.source.health.retry_at();
        if !effects.is_empty() {
            continue;
        }
        effects = update(
            &mut m,
            Msg::Tick(t0() + chrono::Duration::milliseconds(250 * step)),
        );
    }
    // Two minutes at a 5 s refresh would be 8 × 24 = 192 requests without backoff.
    assert!(
        sent <= 20,
        "{sent} requests in two minutes against a dead source"
    );
    assert!(sent >= 4, "it keeps probing: {sent}");
    for i in 0..m.panels.len() {
        assert!(
            matches!(m.panel_state(i), PanelState::Failing { .. }),
            "panel {i}: {:?}",
            m.panel_state(i)
        );
    }
}

#[test]
fn a_refused_query_does_not_slow_the_other_panels() {
    let mut m = model();
    let effects = update(&mut m, Msg::Tick(t0()));
    let Effect::Fetch {
        panel,
        ticket,
        pass,
        query,
        ..
    } = effects[0].clone()
    else {
        panic!("a range fetch comes first");
    };
    update(
        &mut m,
        Msg::Answer {
            panel,
            ticket,
            pass,
            query,
            result: Err(SourceError::Api {
                error_type: "bad_data".into(),
                message: "parse error".into(),
            }),
            at: t0(),
        },
    );
    assert!(!matches!(m.source.health.state(), HealthState::Down { .. }));
    assert!(matches!(m.panel_state(panel), PanelState::Failing { .. }));
}

#[test]
fn between_grid_points_the_value_now_is_asked_and_shown() {
    let mut m = refreshed();
    // One refresh later the 1 h grid (a step of a minute or more) has no new point yet.
    let later = t0() + chrono::Duration::seconds(6);
    let effects = update(&mut m, Msg::Tick(later));
    assert!(!effects.is_empty());
    assert!(
        effects
            .iter()
            .all(|e| matches!(e, Effect::FetchLatest { .. })),
        "{effects:?}"
    );
    let Effect::FetchLatest { panel, pass, .. } = effects[0].clone() else {
        unreachable!()
    };
    let mut now = ok_answer();
    now.series[0].points = vec![Point { t: 2.0, v: 0.97 }];
    update(
        &mut m,
        Msg::Latest {
            panel,
            pass,
            result: Ok(now),
            at: later,
        },
    );
    assert_eq!(m.panels[panel].current(), Some(0.97));
    assert_eq!(m.panel_state(panel), PanelState::Fresh);
    assert!(!m.panels[panel].busy());
}

fn with_incident() -> Model {
    let mut m = model();
    m.incident = Some(crate::app::model::IncidentHeader {
        id: "2026-07-17-1".into(),
        title: "Journey planner".into(),
    });
    m
}

#[test]
fn a_typed_note_is_recorded_and_shown_only_once_durable() {
    let mut m = with_incident();
    update(&mut m, key('n'));
    assert_eq!(m.mode, crate::keymap::Mode::Note);
    for c in "pool at 100% #root-cause q".chars() {
        assert!(update(&mut m, key(c)).is_empty());
    }
    assert_eq!(m.quit, None, "q is text while typing");
    update(&mut m, code(KeyCode::Backspace));
    update(&mut m, code(KeyCode::Backspace));
    let effects = update(&mut m, code(KeyCode::Enter));
    assert_eq!(m.mode, crate::keymap::Mode::Dashboard);
    let [Effect::Record { event, source, .. }] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_eq!(*source, Source::Operator);
    assert_eq!(*event, Event::note("pool at 100% #root-cause"));
    assert_eq!(m.recording, 1);
    assert!(m.timeline.is_empty(), "not shown before it is durable");
    update(&mut m, Msg::Recorded(Err("sync failed: EIO".into())));
    assert!(m.journal_error.is_some());
    assert_eq!(m.recording, 0);
    assert!(m.timeline.is_empty());
}

/// An event the journal refuses (it can never be recorded) is said, and the journal is not
/// called "NOT DURABLE" for it: once, one ±Inf crossing refused so made the console refuse
/// every destructive step.
#[test]
fn a_refused_event_is_said_without_calling_the_journal_not_durable() {
    let mut m = with_incident();
    update(&mut m, key('n'));
    update(&mut m, key('x'));
    update(&mut m, code(KeyCode::Enter));
    assert_eq!(m.recording, 1);
    update(
        &mut m,
        Msg::Refused("threshold crossing on panel \"p\" has a threshold that is not finite".into()),
    );
    assert!(m.journal_error.is_none(), "the journal is still durable");
    assert_eq!(m.recording, 0);
    let (shown, _) = crate::ui::timeline::journal_state(&m);
    assert_eq!(shown, "✓ durable");
    assert!(
        m.notice
            .as_ref()
            .is_some_and(|n| n.text.contains("not recorded")),
        "{:?}",
        m.notice
    );
}

#[test]
fn escape_abandons_a_note_and_an_empty_note_records_nothing() {
    let mut m = with_incident();
    update(&mut m, key('n'));
    update(&mut m, key('x'));
    assert!(update(&mut m, code(KeyCode::Esc)).is_empty());
    assert_eq!(m.mode, crate::keymap::Mode::Dashboard);
    update(&mut m, key('n'));
    assert!(m.note.is_empty());
    assert!(update(&mut m, code(KeyCode::Enter)).is_empty());
}

#[test]
fn crossing_a_threshold_records_one_event_each_way() {
    let mut m = with_incident();
    let mut recorded = Vec::new();
    // The pool panel: a value past crit, then well back for over a minute.
    for (i, v) in [0.5, 0.97, 0.98, 0.97, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3]
        .iter()
        .enumerate()
    {
        let effects = reading(&mut m, i, *v);
        recorded.extend(effects.into_iter().filter_map(|e| match e {
            Effect::Record { event, .. } => Some(event),
            _ => None,
        }));
    }
    let ups = recorded
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::ThresholdCrossed {
                    direction: crate::incident::event::Direction::Up,
                    ..
                }
            )
        })
        .count();
    let downs = recorded
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::ThresholdCrossed {
                    direction: crate::incident::event::Direction::Down,
                    ..
                }
            )
        })
        .count();
    // Warn and crit each go up once and come back once.
    assert_eq!((ups, downs), (2, 2), "{recorded:?}");
}

/// The screen and the journal agree on a reading the panel shows at CRIT, +Inf included, and
/// on NaN, which neither counts.
#[test]
fn an_infinite_reading_is_crit_on_screen_and_a_crossing_in_the_journal_and_nan_is_neither() {
    for (v, crosses) in [(f64::INFINITY, true), (f64::NAN, false)] {
        let mut m = with_incident();
        let effects = reading(&mut m, 0, v);
        let recorded: Vec<f64> = effects
            .iter()
            .filter_map(|e| match e {
                Effect::Record {
                    event: Event::ThresholdCrossed { value, .. },
                    ..
                } => Some(*value),
                _ => None,
            })
            .collect();
        let on_screen = m.panels[0].current().map(|c| m.panels[0].level(c));
        if crosses {
            assert_eq!(on_screen, Some(crate::app::panes::panel::Level::Crit));
            assert!(
                !recorded.is_empty() && recorded.iter().all(|r| *r == f64::INFINITY),
                "{recorded:?}"
            );
        } else {
            assert_eq!(on_screen, None, "NaN has no level");
            assert!(recorded.is_empty(), "{recorded:?}");
        }
    }
}

fn crossing(seq: u64, panel: &str, direction: crate::incident::event::Direction) -> Record {
    Record {
        seq,
        time: t0() + chrono::Duration::seconds(seq as i64 * 60),
        source: Source::Metric,
        actor: "warroom".into(),
        host: String::new(),
        kind: Event::ThresholdCrossed {
            panel: panel.into(),
            level: crate::incident::event::Level::Crit,
            direction,
            value: 0.97,
            threshold: 0.95,
            at: t0(),
        },
    }
}

#[test]
fn g_jumps_from_the_newest_crossing_to_its_panel_then_to_older_ones() {
    use crate::incident::event::Direction;
    let mut m = with_incident();
    update(&mut m, key('g'));
    assert!(m.jumped.is_none());
    assert!(
        m.notice
            .as_ref()
            .is_some_and(|n| n.text.contains("no threshold crossing")),
        "{:?}",
        m.notice
    );
    let titles: Vec<String> = m.panels.iter().map(|p| p.config.title.clone()).collect();
    assert!(titles.len() >= 3, "{titles:?}");
    m.timeline = vec![
        crossing(1, &titles[2], Direction::Up),
        Record {
            seq: 2,
            time: t0(),
            source: Source::Operator,
            actor: "ana".into(),
            host: String::new(),
            kind: Event::note("looking"),
        },
        crossing(3, "a panel no longer configured", Direction::Up),
        crossing(4, &titles[1], Direction::Up),
    ];
    m.timeline.push(crossing(5, &titles[2], Direction::Down));
    m.timeline_filter = Some(Source::Operator);
    update(&mut m, key('g'));
    assert_eq!(
        (m.selected, m.jumped, m.zoomed),
        (2, Some(1), true),
        "the first breach first"
    );
    assert!(m.show_timeline);
    assert_eq!(m.timeline_filter, None, "the marked crossing must be shown");
    update(&mut m, key('g'));
    assert_eq!(
        (m.selected, m.jumped),
        (1, Some(4)),
        "the unknown panel is skipped"
    );
    update(&mut m, key('g'));
    assert_eq!(
        (m.selected, m.jumped),
        (2, Some(5)),
        "recoveries after breaches"
    );
    update(&mut m, key('g'));
    assert_eq!(
        (m.selected, m.jumped),
        (2, Some(1)),
        "wraps to the first breach"
    );
    // A crossing older than the range shown: the window grows to reach it.
    let range = m.range_idx;
    m.timeline = vec![Record {
        time: t0() - chrono::Duration::hours(5),
        ..crossing(9, &titles[0], Direction::Up)
    }];
    if let Event::ThresholdCrossed { at, .. } = &mut m.timeline[0].kind {
        *at = t0() - chrono::Duration::hours(5);
    }
    m.jumped = None;
    update(&mut m, key('g'));
    assert!(m.range_idx > range);
    assert!(m.range_secs() >= 5.0 * 3600.0, "{}", m.range_secs());
}

#[test]
fn watching_keeps_crossings_and_the_first_note_declares_the_incident() {
    let mut m = model();
    m.declarable = true;
    // The pool panel goes past crit while no incident exists: nothing is recorded, it is kept.
    for (i, v) in [0.5, 0.97, 0.98].iter().enumerate() {
        let effects = reading(&mut m, i, *v);
        assert!(
            !effects
                .iter()
                .any(|e| matches!(e, Effect::Record { .. } | Effect::Declare { .. })),
            "{effects:?}"
        );
    }
    assert!(!m.pending.is_empty(), "the crossing is kept");
    let kept_at = match &m.pending[0].2 {
        Event::ThresholdCrossed { at, .. } => *at,
        e => panic!("{e:?}"),
    };
    assert_eq!(
        kept_at,
        t0() + chrono::Duration::seconds(20),
        "at the time it happened"
    );
    // The first note: typed as usual; entering it declares the incident, then records it.
    update(&mut m, key('n'));
    assert_eq!(m.mode, Mode::Note);
    for c in "pool full".chars() {
        update(&mut m, key(c));
    }
    let effects = update(&mut m, code(KeyCode::Enter));
    assert!(matches!(effects[0], Effect::Declare { .. }), "{effects:?}");
    assert!(matches!(
        &effects[1],
        Effect::Record {
            event: Event::Note { .. },
            ..
        }
    ));
    // Asked once: a second action while declaring does not declare again.
    update(&mut m, key('s'));
    assert!(m.dialog.is_some());
    update(&mut m, code(KeyCode::Esc));
    // The loop opened the incident; the kept crossing is recorded, with its own time.
    m.incident = Some(crate::app::model::IncidentHeader {
        id: "2026-07-17-1".into(),
        title: "Pool saturation critical".into(),
    });
    let effects = update(&mut m, Msg::Declared(Ok(())));
    let recorded: Vec<&Event> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Record { event, .. } => Some(event),
            _ => None,
        })
        .collect();
    assert!(
        matches!(recorded[0], Event::ThresholdCrossed { at, .. } if *at == kept_at),
        "{recorded:?}"
    );
    assert!(m.pending.is_empty() && !m.declaring);
}

#[test]
fn d_asks_for_a_title_prefilled_from_what_is_wrong() {
    let mut m = model();
    update(&mut m, key('D'));
    assert!(m.dialog.is_none(), "not declarable: nothing to declare");
    m.declarable = true;
    let mut a = ok_answer();
    a.series[0].points = vec![Point { t: 0.0, v: 0.99 }];
    m.panels[0].latest = a.series.clone();
    update(&mut m, key('D'));
    let d = m.dialog.as_ref().expect("the declare dialog");
    assert!(
        d.field(0).contains(&m.panels[0].config.title),
        "{:?}",
        d.field(0)
    );
    assert!(d.field(0).ends_with("critical"), "{:?}", d.field(0));
    // Typing replaces the prefilled title.
    for c in "Checkout down".chars() {
        update(&mut m, key(c));
    }
    let effects = update(&mut m, code(KeyCode::Enter));
    assert_eq!(
        effects,
        vec![Effect::Declare {
            title: Some("Checkout down".into()),
            severity: Some("SEV-3".parse().unwrap()),
        }]
    );
}

#[test]
fn a_dialog_declares_only_what_it_records() {
    let mut m = model();
    m.declarable = true;
    // A status dialog opened and cancelled declares nothing.
    assert!(update(&mut m, key('s')).is_empty());
    assert!(m.dialog.is_some());
    assert!(update(&mut m, code(KeyCode::Esc)).is_empty());
    assert!(!m.declaring);
    // Chosen: the incident is declared, then the status recorded.
    update(&mut m, key('s'));
    let effects = update(&mut m, code(KeyCode::Enter));
    assert!(matches!(effects[0], Effect::Declare { .. }), "{effects:?}");
    assert!(
        matches!(
            &effects[1],
            Effect::Record {
                event: Event::StatusChanged { .. },
                ..
            }
        ),
        "{effects:?}"
    );
    // Nothing to correct or export before there is an incident: said, nothing declared.
    let mut m = model();
    m.declarable = true;
    for c in ['c', 'E'] {
        assert!(update(&mut m, key(c)).is_empty());
        assert!(m.dialog.is_none() && !m.declaring);
        let said = m
            .notice
            .as_ref()
            .map(|n| n.text.clone())
            .unwrap_or_default();
        assert!(said.contains("D declares one"), "{said}");
    }
}

#[test]
fn after_an_export_the_first_finding_is_said_and_m_lists_them_all() {
    let mut m = model();
    let findings = vec![
        "Impact: no impact window set".to_string(),
        "Root cause: the prompt is still there".to_string(),
    ];
    update(
        &mut m,
        Msg::Exported(Ok(("/tmp/d.md".into(), findings.clone()))),
    );
    let said = m
        .notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default();
    assert!(said.contains("no impact window set"), "{said}");
    assert!(said.contains("1 more: m lists them"), "{said}");
    assert_eq!(m.lint, findings);
    // The keys stay the dashboard's: q still quits.
    assert_eq!(m.mode, Mode::Dashboard);
    update(&mut m, key('m'));
    assert_eq!(m.mode, Mode::Help);
}

/// Issue 30: the headline gives an all-clear only on current values, says a down source first,
/// and an old value is shown with its age, never as "ok" (the panel failing or not).
#[test]
fn old_values_are_never_an_all_clear_and_a_down_source_is_said_first() {
    let mut m = model();
    let said = crate::ui::summary::line(&m, 400)[0].0.clone();
    assert_eq!(said, "◌ 0 of 8 panels answered: no all-clear yet");
    for p in &mut m.panels {
        // A value on the good side of every threshold, answered at t0.
        let good = match p.config.bad_when {
            crate::config::BadWhen::Below => 1.0,
            crate::config::BadWhen::Above => 0.0,
        };
        p.latest = vec![Series {
            labels: Default::default(),
            points: vec![Point {
                t: t0().timestamp() as f64,
                v: good,
            }],
        }];
        p.last_ok = Some(t0());
    }
    let line = |m: &Model| {
        let parts = crate::ui::summary::line(m, 400);
        parts
            .into_iter()
            .map(|(s, _)| s)
            .collect::<Vec<_>>()
            .join(" · ")
    };
    assert!(
        line(&m).starts_with("✓ no panel past a threshold"),
        "{}",
        line(&m)
    );
    assert_eq!(m.value_age(0), None);
    // A minute later with no new answer: the values are old, and the line says so.
    m.now = t0() + chrono::Duration::seconds(60);
    let said = line(&m);
    assert!(!said.contains('✓'), "{said}");
    assert!(said.starts_with("◷ 8 stale Pool saturation, "), "{said}");
    assert_eq!(m.value_age(0), Some(60));
    let tag = crate::ui::panel::value_tag(
        crate::app::panes::panel::Level::Ok,
        m.value_age(0),
        &m.theme,
    );
    assert_eq!(tag[0].content, "◷ 1m old");
    // The source goes down: said first, with the newest reading's age, and no suggestion.
    let pass = m.source.health.admit(m.now).unwrap();
    let error = SourceError::Unreachable("connection refused".into());
    m.source
        .health
        .report(pass, Err(&error), m.now, &mut rand::rng());
    let said = line(&m);
    assert!(
        said.starts_with("✖ source unreachable since 07:31:00, newest reading 1m old"),
        "{said}"
    );
    assert!(!said.contains("failing") && !said.contains("try"), "{said}");
}

/// Issue 33 point 8: help over a running rehearsal stops its clock until it closes; over a
/// rehearsal already paused (or not a rehearsal) it changes nothing.
#[test]
fn help_pauses_a_running_rehearsal_and_closing_it_resumes() {
    let mut m = model();
    m.rehearsal = true;
    let effects = update(&mut m, key('?'));
    assert_eq!(effects, vec![Effect::Pace { running: false }]);
    assert!(m.paused && m.mode == Mode::Help);
    let effects = update(&mut m, code(KeyCode::Esc));
    assert_eq!(effects.first(), Some(&Effect::Pace { running: true }));
    assert!(!m.paused && m.mode == Mode::Dashboard);
    // Paused by the operator: help leaves it paused.
    update(&mut m, key('p'));
    assert!(m.paused);
    assert!(update(&mut m, key('?')).is_empty());
    assert!(update(&mut m, key('?')).is_empty());
    assert!(m.paused, "help does not resume what the operator paused");
    // Not a rehearsal: nothing to pause.
    let mut m = model();
    assert!(update(&mut m, key('?')).is_empty());
    assert!(!m.paused);
}

/// Issue 33 point 7: `y` copies what there is (asking which when there are several), `o` the
/// selected panel's graph URL; each copy is also said on the message line.
#[test]
fn y_copies_and_o_links_the_selected_panel() {
    let mut m = model();
    // No incident, no run, no export: the panel's PromQL is the one thing, copied at once.
    let query = m.panels[m.selected].config.query.clone();
    assert_eq!(update(&mut m, key('y')), vec![Effect::Copy(query.clone())]);
    assert!(m.notice.as_ref().is_some_and(|n| n.text.contains(&query)));
    // With an incident and an export there is a choice; the second option is the PromQL.
    m.incident = Some(crate::app::model::IncidentHeader {
        id: "INC-20261204-0001".into(),
        title: "t".into(),
    });
    update(
        &mut m,
        Msg::Exported(Ok(("exports/INC/postmortem.md".into(), Vec::new()))),
    );
    assert!(update(&mut m, key('y')).is_empty());
    let d = m.dialog.as_ref().expect("a choice");
    let crate::app::panes::dialog::Body::Choose { options, .. } = &d.body else {
        panic!("{d:?}")
    };
    assert_eq!(options.len(), 3, "{options:?}");
    assert_eq!(
        update(&mut m, code(KeyCode::Enter)),
        vec![Effect::Copy("INC-20261204-0001".into())]
    );
    update(&mut m, key('y'));
    update(&mut m, code(KeyCode::Down));
    update(&mut m, code(KeyCode::Down));
    assert_eq!(
        update(&mut m, code(KeyCode::Enter)),
        vec![Effect::Copy("exports/INC/postmortem.md".into())]
    );
    // `o`: no Prometheus URL (an embedded engine) says so and copies nothing.
    assert!(update(&mut m, key('o')).is_empty());
    assert!(
        m.notice
            .as_ref()
            .is_some_and(|n| n.text.contains("no Prometheus"))
    );
    m.graph_base = Some("http://127.0.0.1:9090/".into());
    let [Effect::Copy(url)] = &update(&mut m, key('o'))[..] else {
        panic!("no copy")
    };
    let parsed = url::Url::parse(url).unwrap();
    assert_eq!(parsed.path(), "/graph");
    assert!(
        parsed
            .query_pairs()
            .any(|(k, v)| k == "g0.expr" && v == query)
    );
}

#[test]
fn a_click_selects_the_panel_under_it_and_the_wheel_scrolls_what_is_under_it() {
    use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    let mouse = |kind, column, row| {
        Msg::Mouse(MouseEvent {
            kind,
            column,
            row,
            modifiers: KeyModifiers::NONE,
        })
    };
    let mut m = model();
    let area = m.areas().panels.expect("panels on screen");
    // A point over another panel than the selected one.
    let (x, y, i) = (area.top()..area.bottom())
        .flat_map(|y| (area.left()..area.right()).map(move |x| (x, y)))
        .find_map(|(x, y)| {
            let at = ratatui::layout::Position::new(x, y);
            crate::ui::dashboard::panel_at(area, &m, at)
                .filter(|i| *i != m.selected)
                .map(|i| (x, y, i))
        })
        .expect("another panel on screen");
    update(&mut m, mouse(MouseEventKind::Down(MouseButton::Left), x, y));
    assert_eq!(m.selected, i);
    // The wheel over the timeline scrolls it, one row a notch.
    for n in 0..20 {
        m.timeline.push(crossing(
            n + 1,
            "Pool saturation",
            crate::incident::event::Direction::Up,
        ));
    }
    m.show_timeline = true;
    let tl = m.areas().timeline.expect("the timeline beside the panels");
    update(
        &mut m,
        mouse(MouseEventKind::ScrollDown, tl.x + 1, tl.y + 1),
    );
    update(
        &mut m,
        mouse(MouseEventKind::ScrollDown, tl.x + 1, tl.y + 1),
    );
    assert_eq!(m.timeline_pane.scroll, 2);
    update(&mut m, mouse(MouseEventKind::ScrollUp, tl.x + 1, tl.y + 1));
    assert_eq!(m.timeline_pane.scroll, 1);
    // Over a dialog the mouse does nothing.
    update(&mut m, key(':'));
    update(
        &mut m,
        mouse(MouseEventKind::ScrollDown, tl.x + 1, tl.y + 1),
    );
    assert_eq!(m.timeline_pane.scroll, 1);
}
