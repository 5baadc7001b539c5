//! Whole-app snapshots of the modes and screens `ui_snapshots` leaves out, at 80×24, 120×40
//! and 200×60 with the same fixed clock: typing a note, the message log, watching before an
//! incident is declared and the declare dialog, the timeline's search, a run in progress
//! beside the dashboard with the panels' keys, abort asking, esc declining one step, and the
//! resume question.

use crate::ui_snapshots::{
    SIZES, key, model, pane, press, record, render, run_in_progress, running, select, t0, type_text,
};
use crossterm::event::KeyCode;
use warroom::app::Model;
use warroom::app::model::IncidentHeader;
use warroom::incident::event::{Direction, Level, RunRef, StepState};
use warroom::incident::{Event, Source};
use warroom::keymap::Mode;

fn with_incident(m: &mut Model) {
    m.incident = Some(IncidentHeader {
        id: "2026-07-17-1".into(),
        title: "Journey planner".into(),
    });
}

fn crossing(panel: &str, minutes_ago: i64, value: f64, threshold: f64) -> Event {
    Event::ThresholdCrossed {
        panel: panel.into(),
        level: Level::Crit,
        direction: Direction::Up,
        value,
        threshold,
        at: t0() - chrono::Duration::minutes(minutes_ago),
    }
}

#[test]
fn typing_a_note() {
    for (w, h) in SIZES {
        let mut m = model(w, h);
        with_incident(&mut m);
        key(&mut m, 'n');
        assert_eq!(m.mode, Mode::Note);
        type_text(&mut m, "pool full on api-0 since the deploy #root-cause");
        let text = render(&m).to_string();
        assert!(text.contains("Note for the timeline"), "{text}");
        assert!(text.contains("#root-cause"), "{text}");
        insta::assert_snapshot!(format!("note_typing_{w}x{h}"), text);
    }
}

#[test]
fn the_message_log_lists_messages_and_lint_findings() {
    for (w, h) in SIZES {
        let mut m = model(w, h);
        with_incident(&mut m);
        m.notify("incident 2026-07-17-1 declared: recording", false, Some(10));
        m.notify(
            "export failed: cannot write \"/srv/postmortems/2026-07-17-1.md\": permission denied; choose another --out directory",
            true,
            None,
        );
        m.lint = vec![
            "Impact: no impact window set (press i and I on the dashboard)".into(),
            "Root cause: the prompt is still there".into(),
        ];
        m.notify(
            "exported /tmp/2026-07-17-1.md; lint: Impact: no impact window set (press i and I on the dashboard) (and 1 more: m lists them)",
            false,
            Some(30),
        );
        key(&mut m, 'm');
        let text = render(&m).to_string();
        assert!(text.contains("permission"), "{text}");
        assert!(text.contains("no impact window set"), "{text}");
        insta::assert_snapshot!(format!("messages_{w}x{h}"), text);
    }
}

#[test]
fn watching_before_an_incident_and_declaring_one() {
    for (w, h) in SIZES {
        let mut m = model(w, h);
        m.declarable = true;
        m.show_timeline = true;
        m.pending = vec![
            (
                Source::Metric,
                "Pool saturation".into(),
                crossing("Pool saturation", 12, 0.97, 0.95),
            ),
            (
                Source::Metric,
                "Error ratio".into(),
                crossing("Error ratio", 7, 0.09, 0.05),
            ),
        ];
        let text = render(&m).to_string();
        assert!(text.contains("watching: no incident yet"), "{text}");
        assert!(text.contains("○ not recording"), "{text}");
        insta::assert_snapshot!(format!("watching_{w}x{h}"), text);

        key(&mut m, 'D');
        let text = render(&m).to_string();
        assert!(text.contains("Declare an incident"), "{text}");
        assert!(
            text.contains("2 threshold crossings seen while watching"),
            "{text}"
        );
        insta::assert_snapshot!(format!("declare_dialog_{w}x{h}"), text);
    }
}

#[test]
fn searching_the_timeline() {
    for (w, h) in SIZES {
        let mut m = model(w, h);
        with_incident(&mut m);
        let min = |n: i64| t0() - chrono::Duration::minutes(50 - n);
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
                crossing("Pool saturation", 47, 0.99, 0.95),
            ),
            record(
                3,
                min(9),
                Source::Operator,
                Event::note("retries look high"),
            ),
            record(
                4,
                min(12),
                Source::Operator,
                Event::note("pool full on api-0"),
            ),
        ];
        key(&mut m, '/');
        type_text(&mut m, "pool");
        let text = render(&m).to_string();
        assert!(text.contains("pool"), "{text}");
        insta::assert_snapshot!(format!("timeline_search_typing_{w}x{h}"), text);
        press(&mut m, KeyCode::Enter);
        let text = render(&m).to_string();
        assert!(
            text.contains("\"pool\": row #4"),
            "the newest match first: {text}"
        );
        insta::assert_snapshot!(format!("timeline_search_found_{w}x{h}"), text);
    }
}

#[test]
fn a_run_in_progress_beside_the_dashboard() {
    for (w, h) in SIZES {
        let mut m = run_in_progress(w, h);
        // `b`: the panels' keys; the run goes on, its pane in view where both fit.
        key(&mut m, 'b');
        assert_eq!(m.mode, Mode::Dashboard);
        let text = render(&m).to_string();
        let bar = text.lines().last().unwrap_or_default();
        assert!(
            bar.contains("pool-exhaustion"),
            "the bar keeps the run: {bar}"
        );
        if w >= 120 {
            assert!(text.contains("Run · pool-exhaustion"), "{text}");
            assert!(text.contains("Retry amplification"), "{text}");
        }
        insta::assert_snapshot!(format!("run_beside_dashboard_{w}x{h}"), text);
    }
}

#[test]
fn abort_asks_and_esc_declines_one_step() {
    for (w, h) in SIZES {
        let mut m = run_in_progress(w, h);
        key(&mut m, 'A');
        let text = render(&m).to_string();
        assert!(text.contains("Abort run of \"pool-exhaustion\"?"), "{text}");
        assert!(m.runbooks.run.as_ref().unwrap().outcome.is_none());
        insta::assert_snapshot!(format!("abort_asks_{w}x{h}"), text);

        let mut m = running(w, h);
        press(&mut m, KeyCode::Esc);
        let text = render(&m).to_string();
        assert!(text.contains("Step \"restart\" not confirmed"), "{text}");
        assert!(text.contains("ask again"), "{text}");
        insta::assert_snapshot!(format!("step_declined_{w}x{h}"), text);
    }
}

#[test]
fn resume_asks_where_the_run_goes_on() {
    for (w, h) in SIZES {
        let mut m = pane(w, h);
        with_incident(&mut m);
        select(&mut m, "disable-retries");
        let hash = (m.runbooks.entries.iter().flatten())
            .find_map(|e| e.runbook().filter(|r| r.name == "disable-retries"))
            .unwrap()
            .hash
            .clone();
        let run = RunRef {
            runbook: "disable-retries".into(),
            run_id: "disable-retries-20260717T081500.000Z".into(),
            hash,
        };
        let step = |seq, id: &str, state, detail: &str| {
            record(
                seq,
                t0() - chrono::Duration::minutes(15 - seq as i64),
                Source::Runbook,
                Event::RunbookStep {
                    run: run.clone(),
                    step: id.into(),
                    state,
                    detail: Some(detail.into()),
                },
            )
        };
        m.timeline = vec![
            record(
                1,
                t0() - chrono::Duration::minutes(15),
                Source::Runbook,
                Event::RunbookRun {
                    run: run.clone(),
                    state: StepState::Started,
                },
            ),
            step(2, "note", StepState::Started, "note: Why"),
            step(3, "note", StepState::Succeeded, ""),
            step(4, "disable", StepState::Started, "http: Disable retries"),
            step(5, "disable", StepState::Succeeded, "200 OK"),
            step(
                6,
                "amplification-falls",
                StepState::Started,
                "wait: Attempts per request fall",
            ),
            record(
                7,
                t0() - chrono::Duration::minutes(8),
                Source::Runbook,
                Event::RunbookRun {
                    run: run.clone(),
                    state: StepState::Cancelled,
                },
            ),
        ];
        key(&mut m, 'R');
        let text = render(&m).to_string();
        assert!(text.contains("Resume run disable-retries-"), "{text}");
        assert!(
            text.contains("done (never run again): note, disable"),
            "{text}"
        );
        insta::assert_snapshot!(format!("resume_asks_{w}x{h}"), text);
    }
}

#[test]
fn the_variable_chooser_lists_the_variables_then_the_values() {
    use warroom::app::panes::variables::Variables;
    use warroom::variables::Bindings;
    let cfg = warroom::config::Config::parse(
        "w.toml",
        "[[variable]]\nname = \"pod\"\nkind = \"custom\"\nquery = \"api-0,api-1,api-2\"\n\
         current = \"api-1\"\ninclude_all = true\n\n\
         [[variable]]\nname = \"window\"\nkind = \"interval\"\nquery = \"1m,5m\"\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for (w, h) in SIZES {
        let mut m = model(w, h);
        let mut vars = Variables::new(cfg.variables.clone());
        let opts = Variables::options();
        vars.bindings = Some(Bindings::offline(&vars.defs, &[], &opts, &mut Vec::new()));
        m.variables = vars;
        key(&mut m, 'V');
        let text = render(&m).to_string();
        assert!(text.contains("$pod = api-1 (4 to choose from)"), "{text}");
        insta::assert_snapshot!(format!("variables_list_{w}x{h}"), text);
        press(&mut m, KeyCode::Enter);
        let text = render(&m).to_string();
        assert!(text.contains("All") && text.contains("api-2"), "{text}");
        insta::assert_snapshot!(format!("variables_values_{w}x{h}"), text);
    }
}

#[test]
fn a_multi_value_variable_is_chosen_with_checks() {
    use warroom::app::panes::variables::Variables;
    use warroom::variables::Bindings;
    let cfg = warroom::config::Config::parse(
        "w.toml",
        "[[variable]]\nname = \"pod\"\nkind = \"custom\"\nquery = \"api-0,api-1,api-2\"\n\
         current = [\"api-0\", \"api-2\"]\nmulti = true\ninclude_all = true\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for (w, h) in SIZES {
        let mut m = model(w, h);
        let mut vars = Variables::new(cfg.variables.clone());
        let opts = Variables::options();
        vars.bindings = Some(Bindings::offline(&vars.defs, &[], &opts, &mut Vec::new()));
        m.variables = vars;
        key(&mut m, 'V');
        key(&mut m, 'j');
        key(&mut m, ' ');
        let text = render(&m).to_string();
        for checked in [
            "[ ] All",
            "[x] api-0",
            "[x] api-1",
            "[x] api-2",
            "space checks",
        ] {
            assert!(text.contains(checked), "{checked}: {text}");
        }
        insta::assert_snapshot!(format!("variables_checks_{w}x{h}"), text);
    }
}

#[test]
fn the_command_palette_and_the_filtered_runbook_list() {
    use warroom::app::Msg;
    use warroom::app::update::update;
    for (w, h) in SIZES {
        let mut m = model(w, h);
        with_incident(&mut m);
        key(&mut m, ':');
        type_text(&mut m, "s");
        let text = render(&m).to_string();
        for listed in ["status", "severity", "silence"] {
            assert!(text.contains(listed), "{listed}: {text}");
        }
        insta::assert_snapshot!(format!("palette_{w}x{h}"), text);
        press(&mut m, KeyCode::Esc);
        key(&mut m, 'b');
        update(
            &mut m,
            Msg::RunbooksLoaded(warroom::runbook::catalog::load(&[])),
        );
        key(&mut m, '/');
        type_text(&mut m, "restart");
        let text = render(&m).to_string();
        assert!(text.contains("/restart"), "{text}");
        assert!(!text.contains("shed-load"), "{text}");
        insta::assert_snapshot!(format!("runbooks_filtered_{w}x{h}"), text);
    }
}
