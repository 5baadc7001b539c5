//! The runbook pane, executor dialogs and incident actions, through `update` alone.

use super::*;
use crate::app::panes::dialog::{Body, Purpose};
use crate::app::workers::operator::{Answer, Question, Reply};
use crate::incident::Record;
use crate::runbook::batch::Decision;
use crate::runbook::catalog::{self, Entry};
use crate::runbook::executor::Control;
use crate::runbook::operator::Confirmation;
use crate::runbook::report::{RunEvent, RunOutcome, RunRecord};
use crate::runbook::setup::Plan;

fn incident_model() -> Model {
    let mut m = model();
    m.incident = Some(crate::app::model::IncidentHeader {
        id: "2026-07-17-1".into(),
        title: "t".into(),
    });
    m
}

/// Enter on the dialog records nothing, and the dialog says why (`what` in its error).
fn refused(m: &mut Model, what: &str) {
    assert!(update(m, code(KeyCode::Enter)).is_empty());
    let error = m.dialog.as_ref().and_then(|d| d.error.as_deref());
    assert!(error.is_some_and(|e| e.contains(what)), "{error:?}");
}

/// `n` backspaces in the dialog's field.
fn erase(m: &mut Model, n: usize) {
    for _ in 0..n {
        update(m, code(KeyCode::Backspace));
    }
}

fn typed(m: &mut Model, text: &str) {
    for c in text.chars() {
        update(m, key(c));
    }
}

fn entries() -> Vec<Entry> {
    catalog::load(&[])
}

/// The pane open on `name`, its plan shown.
fn planned(m: &mut Model, name: &str) {
    planned_with(m, name, [("service", "planner-api")]);
}

/// [`planned`], the plan having resolved the variables to `values`.
fn planned_with<const N: usize>(m: &mut Model, name: &str, values: [(&str, &str); N]) {
    while m.mode != Mode::Dashboard {
        update(m, code(KeyCode::Esc));
    }
    assert_eq!(update(m, key('b')), vec![Effect::LoadRunbooks]);
    assert_eq!(m.mode, Mode::Runbooks);
    update(m, Msg::RunbooksLoaded(entries()));
    m.runbooks.selected = 0;
    let i = m
        .runbooks
        .entries
        .as_ref()
        .unwrap()
        .iter()
        .position(|e| e.name() == name)
        .unwrap();
    for _ in 0..i {
        update(m, code(KeyCode::Down));
    }
    let effects = update(m, code(KeyCode::Enter));
    assert!(
        matches!(&effects[..], [Effect::PlanRunbook { runbook, vars }] if runbook.name == name && vars.is_empty()),
        "{effects:?}"
    );
    let mut batches = std::collections::BTreeMap::new();
    batches.insert("restart".to_string(), 4);
    update(
        m,
        Msg::Planned {
            name: name.into(),
            result: Ok(Plan {
                lines: vec!["1. rollback  POST http://127.0.0.1:9187/control/rollback".into()],
                batches,
                titles: [(
                    "restart".to_string(),
                    "Restart planner-api in batches".to_string(),
                )]
                .into(),
                values: (values.iter())
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            }),
        },
    );
}

/// A run of `name` started through the typed confirmation; returns its id.
fn started(m: &mut Model, name: &str) -> String {
    planned(m, name);
    assert!(update(m, key('x')).is_empty());
    assert!(matches!(
        m.dialog.as_ref().map(|d| &d.purpose),
        Some(Purpose::StartRun(_))
    ));
    typed(m, name);
    let effects = update(m, code(KeyCode::Enter));
    let [
        Effect::StartRun {
            runbook, run_id, ..
        },
    ] = &effects[..]
    else {
        panic!("{effects:?}")
    };
    assert_eq!(runbook.name, name);
    assert!(m.dialog.is_none());
    // Steps not started yet show the planned titles, variables filled in (pool-exhaustion's
    // restart step is titled "Restart {{service}} …" in the file).
    let run = m.runbooks.run.as_ref().unwrap();
    if name == "pool-exhaustion" {
        let restart = run.steps.iter().find(|s| s.id == "restart").unwrap();
        assert_eq!(restart.title, "Restart planner-api in batches");
    }
    run_id.clone()
}

fn run_event(m: &mut Model, run_id: &str, event: RunEvent) {
    let at = m.now;
    update(
        m,
        Msg::Run {
            record: Box::new(RunRecord {
                at,
                run_id: run_id.into(),
                event,
            }),
            journaled: None,
        },
    );
}

#[test]
fn a_run_starts_only_after_its_name_is_typed_exactly() {
    let mut m = model();
    planned(&mut m, "disable-retries");
    update(&mut m, key('x'));
    typed(&mut m, "disable-retrie");
    assert!(update(&mut m, code(KeyCode::Enter)).is_empty());
    let d = m.dialog.as_ref().expect("still asking");
    assert!(d.error.as_ref().unwrap().contains("\"disable-retries\""));
    typed(&mut m, "S");
    assert!(
        update(&mut m, code(KeyCode::Enter)).is_empty(),
        "case matters"
    );
    // Esc says no: nothing starts.
    assert!(update(&mut m, code(KeyCode::Esc)).is_empty());
    assert!(m.dialog.is_none() && m.runbooks.run.is_none());
    let id = started(&mut m, "disable-retries");
    assert!(id.starts_with("disable-retries-20260717T073000"), "{id}");
    let run = m.runbooks.run.as_ref().unwrap();
    assert_eq!(run.steps.len(), 3);
    assert_eq!(run.control, Control::Run);
}

#[test]
fn x_opens_the_run_dialog_at_once_and_broken_runbooks_do_not_run() {
    let mut m = model();
    update(&mut m, key('b'));
    let mut list = entries();
    list.insert(
        0,
        Entry::Broken {
            file: "runbooks/aaa.toml".into(),
            error: "runbooks/aaa.toml:2:1: expected".into(),
        },
    );
    update(&mut m, Msg::RunbooksLoaded(list));
    assert!(update(&mut m, key('x')).is_empty(), "broken: nothing");
    assert!(m.dialog.is_none());
    assert!(update(&mut m, code(KeyCode::Enter)).is_empty());
    update(&mut m, code(KeyCode::Down));
    let name = m.runbooks.entry().unwrap().name().clone();
    let effects = update(&mut m, key('x'));
    assert!(
        matches!(&effects[..], [Effect::PlanRunbook { .. }]),
        "{effects:?}"
    );
    // The dialog is open at once: what is typed next is its text, not dashboard keys.
    let d = m
        .dialog
        .as_ref()
        .expect("the run dialog opens with the plan still coming");
    assert!(matches!(d.purpose, Purpose::StartRun(_)));
    assert!(
        d.text.iter().any(|l| l.contains("preparing the plan")),
        "{:?}",
        d.text
    );
    let before = (m.show_timeline, m.runbooks.selected, m.mode);
    typed(&mut m, "tbjq");
    assert_eq!((m.show_timeline, m.runbooks.selected, m.mode), before);
    assert!(m.quit.is_none());
    assert_eq!(m.dialog.as_ref().unwrap().field(0), "tbjq");
    // The plan arrives: the dialog shows it, what was typed stays.
    update(
        &mut m,
        Msg::Planned {
            name: name.clone(),
            result: Ok(Plan {
                lines: vec!["1. first step of the plan".into()],
                batches: Default::default(),
                titles: Default::default(),
                values: Default::default(),
            }),
        },
    );
    let d = m.dialog.as_ref().unwrap();
    assert!(
        d.text.iter().any(|l| l.contains("first step of the plan")),
        "{:?}",
        d.text
    );
    assert_eq!(d.field(0), "tbjq");
    // Esc says no; then esc closes the plan, then the pane.
    assert!(update(&mut m, code(KeyCode::Esc)).is_empty());
    assert!(m.dialog.is_none() && m.runbooks.run.is_none());
    update(&mut m, code(KeyCode::Esc));
    assert!(m.runbooks.plan.is_none());
    assert_eq!(m.mode, Mode::Runbooks);
    update(&mut m, code(KeyCode::Esc));
    assert_eq!(m.mode, Mode::Dashboard);
    assert!(!m.runbooks.shown);
}

#[test]
fn variables_changed_in_the_run_dialog_reach_the_run() {
    let mut m = model();
    planned(&mut m, "pool-exhaustion");
    update(&mut m, key('x'));
    let d = m.dialog.as_ref().unwrap();
    let Body::Form { fields, .. } = &d.body else {
        panic!("{d:?}")
    };
    let service = fields
        .iter()
        .position(|f| f.label == "service")
        .expect("a service field");
    assert_eq!(
        fields[service].value, "planner-api",
        "prefilled from the plan"
    );
    assert!(
        fields[service].caret.selected,
        "prefilled values are selected"
    );
    typed(&mut m, "pool-exhaustion");
    for _ in 0..service {
        update(&mut m, code(KeyCode::Tab));
    }
    typed(&mut m, "checkout-api");
    let effects = update(&mut m, code(KeyCode::Enter));
    let [Effect::StartRun { vars, .. }] = &effects[..] else {
        panic!("{effects:?}")
    };
    assert_eq!(
        vars,
        &vec![("service".to_string(), "checkout-api".to_string())]
    );
}

/// Issue 33 point 6: a secret the plan found unset is typed in the run dialog, drawn as
/// dots, printed by nobody, refused empty, and reaches the run as its environment variable only.
#[test]
fn a_secret_not_set_is_typed_in_the_run_dialog_for_that_run_only() {
    use crate::runbook::vars::NOT_SET;
    let mut m = model();
    let name = "pgbouncer-raise-pool";
    planned_with(
        &mut m,
        name,
        [("pgbouncer_password", NOT_SET), ("pool_size", "40")],
    );
    update(&mut m, key('x'));
    let field = |m: &Model| {
        let Body::Form { fields, .. } = &m.dialog.as_ref().unwrap().body else {
            panic!("not a form")
        };
        let i = (fields.iter().position(|f| f.label == "pgbouncer_password"))
            .expect("a field for the unset secret");
        (i, fields[i].clone())
    };
    let (at, f) = field(&m);
    assert!(f.masked && f.value.is_empty(), "{f:?}");
    assert!(f.hint.contains("PGBOUNCER_ADMIN_PASSWORD"), "{}", f.hint);
    // Without it the run does not start, and the dialog says what is missing.
    typed(&mut m, name);
    assert!(update(&mut m, code(KeyCode::Enter)).is_empty());
    let error = m
        .dialog
        .as_ref()
        .and_then(|d| d.error.clone())
        .unwrap_or_default();
    assert!(error.contains("pgbouncer_password has no value"), "{error}");
    for _ in 0..at {
        update(&mut m, code(KeyCode::Tab));
    }
    let canary = "canary-s3cr3t-7731";
    typed(&mut m, canary);
    assert_eq!(field(&m).1.value, canary);
    let shown = format!("{:?}", m.dialog);
    assert!(!shown.contains(canary), "Debug shows the secret: {shown}");
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
    terminal.draw(|f| crate::ui::view(f, &m)).unwrap();
    let buffer = terminal.backend().buffer();
    let screen: String = (buffer.content.iter())
        .map(ratatui::buffer::Cell::symbol)
        .collect();
    assert!(!screen.contains(canary), "{screen}");
    assert!(screen.contains(&"•".repeat(canary.len())), "{screen}");
    let effects = update(&mut m, code(KeyCode::Enter));
    let [Effect::StartRun { vars, secrets, .. }] = &effects[..] else {
        panic!("{effects:?}")
    };
    assert!(
        vars.iter().all(|(k, _)| k != "pgbouncer_password"),
        "{vars:?}"
    );
    let [(env, secret)] = &secrets[..] else {
        panic!("{secrets:?}")
    };
    assert_eq!(
        (env.as_str(), secret.expose()),
        ("PGBOUNCER_ADMIN_PASSWORD", canary)
    );
    assert!(!format!("{effects:?}").contains(canary));
    assert!(m.dialog.is_none(), "the only copy went with the run");
}

/// Answer the choice dialog shown with option `i` (down to it, then enter).
fn choose(m: &mut Model, i: usize) -> Vec<Effect> {
    if m.dialog.as_ref().is_some_and(|d| d.selected().is_none()) {
        update(m, code(KeyCode::Down));
    }
    for _ in 0..i {
        update(m, code(KeyCode::Down));
    }
    update(m, code(KeyCode::Enter))
}

#[test]
fn hold_resume_and_abort_ask_first_and_quit_waits_for_the_run() {
    let mut m = model();
    let id = started(&mut m, "pool-exhaustion");
    // Hold asks; the default answer leaves the run alone.
    assert!(update(&mut m, key('H')).is_empty());
    assert!(matches!(
        m.dialog.as_ref().unwrap().purpose,
        Purpose::ControlRun { .. }
    ));
    assert!(choose(&mut m, 0).is_empty());
    update(&mut m, key('H'));
    assert_eq!(
        choose(&mut m, 1),
        vec![Effect::ControlRun {
            run_id: id.clone(),
            control: Control::Pause
        }]
    );
    update(&mut m, key('H'));
    assert_eq!(
        choose(&mut m, 1),
        vec![Effect::ControlRun {
            run_id: id.clone(),
            control: Control::Run
        }]
    );
    // The old keys do nothing to the run: `a` is the dashboard's action item, `p` its pause.
    update(&mut m, key('p'));
    assert!(m.paused, "p pauses refreshing, beside the pane");
    update(&mut m, key('p'));
    update(&mut m, key('q'));
    assert!(m.quit.is_none(), "quit is refused while a run is active");
    // A second run is refused while one runs.
    planned(&mut m, "shed-load");
    update(&mut m, key('x'));
    assert!(m.dialog.is_none());
    assert!(
        m.notice
            .as_ref()
            .unwrap()
            .text
            .contains("one run at a time")
    );
    // Abort: asked first, saying what is done and not; then the control, and a pending
    // question answered no.
    let (reply, mut rx) = Reply::new();
    update(
        &mut m,
        Msg::Ask {
            run_id: id.clone(),
            question: Question::Confirm(Confirmation {
                step: "rollback".into(),
                summary: "Step \"rollback\": Roll back".into(),
                word: "rollback".into(),
                skippable: false,
            }),
            reply,
        },
    );
    // A dialog takes keys first; one waiting behind another does not, and abort answers it.
    let d = m.dialog.take().unwrap();
    m.dialogs_waiting.push_back(d);
    assert!(update(&mut m, key('A')).is_empty(), "abort asks first");
    let d = m.dialog.as_ref().unwrap();
    assert!(matches!(d.purpose, Purpose::AbortRun { .. }));
    assert!(
        d.text.iter().any(|l| l.starts_with("done: ")),
        "{:?}",
        d.text
    );
    assert!(
        d.text.iter().any(|l| l.starts_with("not started: ")),
        "{:?}",
        d.text
    );
    assert_eq!(d.selected(), Some(0), "the default keeps the run going");
    let effects = choose(&mut m, 1);
    assert_eq!(
        effects[0],
        Effect::ControlRun {
            run_id: id.clone(),
            control: Control::Abort
        }
    );
    assert!(
        matches!(
            &effects[1..],
            [Effect::Answer {
                answer: Answer::Confirmed(false),
                ..
            }]
        ),
        "{effects:?}"
    );
    assert!(m.dialog.is_none() && m.dialogs_waiting.is_empty());
    assert!(rx.try_recv().is_err(), "the effect, not update, sends");
    update(
        &mut m,
        Msg::RunEnded {
            run_id: id,
            outcome: RunOutcome::Aborted,
        },
    );
    update(&mut m, key('q'));
    assert_eq!(m.quit, Some(Quit::User));
}

/// The executor asks run `id` to confirm `step` by typing `word`; the reply the answer goes to.
fn ask_confirm(m: &mut Model, id: &str, step: &str, word: &str, skippable: bool) -> Reply {
    let summary = format!("Step \"{step}\"");
    ask(
        m,
        id,
        Question::Confirm(Confirmation {
            step: step.into(),
            summary,
            word: word.into(),
            skippable,
        }),
    )
    .0
}

/// The executor asks run `id` to decide about a failed `step`.
fn ask_decide(m: &mut Model, id: &str, step: &str, reason: &str) -> (Reply, Vec<Effect>) {
    let question = Question::Decide {
        step: step.into(),
        reason: reason.into(),
    };
    ask(m, id, question)
}

/// The executor's `question` reaches the console; the reply it waits on and what the console did.
fn ask(m: &mut Model, id: &str, question: Question) -> (Reply, Vec<Effect>) {
    let (reply, _rx) = Reply::new();
    let msg = Msg::Ask {
        run_id: id.into(),
        question,
        reply: reply.clone(),
    };
    (reply, update(m, msg))
}

#[test]
fn executor_questions_become_dialogs_and_answers_go_back() {
    let mut m = model();
    let id = started(&mut m, "pool-exhaustion");
    let reply = ask_confirm(&mut m, &id, "restart", "batch 1", false);
    assert!(m.runbooks.run.as_ref().unwrap().waiting.is_some());
    typed(&mut m, "batch 2");
    assert!(update(&mut m, code(KeyCode::Enter)).is_empty());
    // A wrong answer is cleared, not left to be edited into the right one.
    let d = m.dialog.as_ref().unwrap();
    assert!(
        matches!(&d.body, Body::Type { typed, .. } if typed.is_empty()),
        "{d:?}"
    );
    assert!(d.error.as_ref().unwrap().contains("\"batch 2\" is not"));
    typed(&mut m, "batch 1");
    assert_eq!(
        update(&mut m, code(KeyCode::Enter)),
        vec![Effect::Answer {
            reply: reply.clone(),
            answer: Answer::Confirmed(true)
        }]
    );
    // Decisions: safest first, nothing highlighted: a stray enter answers nothing.
    let (reply, _) = ask_decide(
        &mut m,
        &id,
        "restart",
        "health gate after batch 1 did not pass",
    );
    let d = m.dialog.as_ref().unwrap();
    assert_eq!(d.selected(), None);
    assert!(update(&mut m, code(KeyCode::Enter)).is_empty());
    assert!(m.dialog.as_ref().unwrap().error.is_some(), "it says why");
    update(&mut m, code(KeyCode::Down));
    assert_eq!(
        m.dialog.as_ref().unwrap().selected(),
        Some(0),
        "abort first"
    );
    update(&mut m, code(KeyCode::Down));
    assert_eq!(
        update(&mut m, code(KeyCode::Enter)),
        vec![Effect::Answer {
            reply,
            answer: Answer::Decided(Decision::Retry)
        }]
    );
    // Esc on a decision does not answer it: a failed step's decision is chosen.
    let (reply, _) = ask_decide(&mut m, &id, "restart", "gate failed");
    assert!(update(&mut m, code(KeyCode::Esc)).is_empty());
    assert!(m.dialog.as_ref().unwrap().error.is_some());
    assert_eq!(
        choose(&mut m, 0),
        vec![Effect::Answer {
            reply,
            answer: Answer::Decided(Decision::Abort)
        }]
    );
    // Esc on a confirmation declines that step only: ask again, or abort.
    let reply = ask_confirm(&mut m, &id, "rollback", "rollback", false);
    typed(&mut m, "roll");
    assert!(
        update(&mut m, code(KeyCode::Esc)).is_empty(),
        "nothing answered yet"
    );
    let d = m.dialog.as_ref().unwrap();
    assert!(matches!(d.purpose, Purpose::Declined { .. }), "{d:?}");
    assert!(d.text[0].contains("nothing was sent"), "{:?}", d.text);
    // Ask again: the question is back, emptied.
    assert!(choose(&mut m, 0).is_empty());
    assert!(matches!(
        m.dialog.as_ref().map(|d| (&d.purpose, &d.body)),
        Some((Purpose::Confirm { .. }, Body::Type { typed, .. })) if typed.is_empty()
    ));
    // Esc on the choice is no answer either: the question again.
    update(&mut m, code(KeyCode::Esc));
    assert!(update(&mut m, code(KeyCode::Esc)).is_empty());
    assert!(matches!(
        m.dialog.as_ref().unwrap().purpose,
        Purpose::Confirm { .. }
    ));
    update(&mut m, code(KeyCode::Esc));
    assert_eq!(
        choose(&mut m, 1),
        vec![Effect::Answer {
            reply,
            answer: Answer::Confirmed(false)
        }]
    );
    // A step the runbook lets the run go on without: esc offers to skip it, and only it.
    let reply = ask_confirm(&mut m, &id, "cancel-long", "cancel-long", true);
    assert!(update(&mut m, code(KeyCode::Esc)).is_empty());
    let d = m.dialog.as_ref().unwrap();
    assert!(
        matches!(&d.body, Body::Choose { options, .. } if options.len() == 3 && options[1].starts_with("skip")),
        "{d:?}"
    );
    assert_eq!(
        choose(&mut m, 1),
        vec![Effect::Answer {
            reply,
            answer: Answer::Skipped
        }]
    );
    // A question from a run this console did not start is refused at once.
    let (reply, effects) = ask_decide(&mut m, "someone-else", "s", "r");
    assert!(m.dialog.is_none());
    assert_eq!(
        effects,
        vec![Effect::Answer {
            reply,
            answer: Answer::Confirmed(false)
        }]
    );
}

#[test]
fn run_events_show_step_batch_gate_and_journaled_records_reach_the_timeline() {
    let mut m = incident_model();
    let id = started(&mut m, "pool-exhaustion");
    run_event(
        &mut m,
        &id,
        RunEvent::StepStarted {
            step: "restart".into(),
            kind: "batch".into(),
            title: "Restart planner-api".into(),
        },
    );
    run_event(
        &mut m,
        &id,
        RunEvent::Batch {
            step: "restart".into(),
            batch_event: crate::runbook::batch::BatchEvent::BatchStarted {
                batch: 2,
                targets: vec!["api-3".into(), "api-4".into()],
            },
        },
    );
    run_event(
        &mut m,
        &id,
        RunEvent::GateReading {
            step: "restart".into(),
            reading: "Success(0.01)".into(),
            verdict: "Pending".into(),
        },
    );
    let run = m.runbooks.run.as_ref().unwrap();
    assert_eq!(run.current(), Some(4));
    let b = run.batch.as_ref().unwrap();
    assert_eq!((b.batch, b.of), (2, Some(4)));
    assert_eq!(b.targets, vec!["api-3", "api-4"]);
    assert!(run.gate.as_ref().unwrap().2.contains("Pending"));
    let journaled = Record {
        seq: 9,
        time: m.now,
        source: Source::Runbook,
        actor: id.clone(),
        host: String::new(),
        kind: Event::note("x"),
    };
    let at = m.now;
    update(
        &mut m,
        Msg::Run {
            record: Box::new(RunRecord {
                at,
                run_id: id.clone(),
                event: RunEvent::RunFinished {
                    outcome: RunOutcome::Succeeded,
                },
            }),
            journaled: Some(Box::new(journaled.clone())),
        },
    );
    assert_eq!(m.timeline.last(), Some(&journaled));
    assert_eq!(
        m.recording, 0,
        "run records are not the console's own appends"
    );
    assert!(m.runbooks.active().is_none());
}

#[test]
fn a_journal_that_is_not_durable_refuses_runs() {
    let mut m = incident_model();
    m.journal_error = Some("sync failed".into());
    planned(&mut m, "shed-load");
    update(&mut m, key('x'));
    assert!(m.dialog.is_none());
    assert!(m.notice.as_ref().unwrap().text.contains("not durable"));
}

fn recorded(effects: &[Effect]) -> Event {
    match effects {
        [Effect::Record { event, source, .. }] => {
            assert_eq!(*source, Source::Operator);
            event.clone()
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn status_and_severity_are_chosen_and_recorded() {
    let mut m = incident_model();
    update(&mut m, key('s'));
    update(&mut m, code(KeyCode::Down));
    update(&mut m, code(KeyCode::Down));
    let e = recorded(&update(&mut m, code(KeyCode::Enter)));
    assert_eq!(
        e,
        Event::StatusChanged {
            status: "monitoring".parse().unwrap()
        }
    );
    update(&mut m, key('v'));
    update(&mut m, code(KeyCode::Up));
    let e = recorded(&update(&mut m, code(KeyCode::Enter)));
    assert_eq!(
        e,
        Event::SeverityChanged {
            severity: "SEV-2".parse().unwrap()
        }
    );
    // Without an incident: a notice, no dialog.
    let mut m = model();
    update(&mut m, key('s'));
    assert!(m.dialog.is_none());
    assert!(m.notice.is_some());
}

#[test]
fn action_items_are_checked_and_numbered() {
    let mut m = incident_model();
    update(&mut m, key('a'));
    refused(&mut m, "action is empty");
    typed(&mut m, "Add a retry budget");
    update(&mut m, code(KeyCode::Tab));
    typed(&mut m, "platform");
    update(&mut m, code(KeyCode::Tab));
    typed(&mut m, "P9");
    refused(&mut m, "P9");
    update(&mut m, code(KeyCode::Backspace));
    typed(&mut m, "1");
    update(&mut m, code(KeyCode::Tab));
    typed(&mut m, "2026-13-01");
    assert!(update(&mut m, code(KeyCode::Enter)).is_empty());
    erase(&mut m, 5);
    typed(&mut m, "08-01");
    let e = recorded(&update(&mut m, code(KeyCode::Enter)));
    assert_eq!(
        e,
        Event::ActionItem {
            // Numbered by the journal, where every writer's records meet.
            id: String::new(),
            action: "Add a retry budget".into(),
            owner: Some("platform".into()),
            priority: Some("P1".parse().unwrap()),
            due: Some(chrono::NaiveDate::from_ymd_opt(2026, 8, 1).unwrap()),
        }
    );
    // A second one before the first is acknowledged goes out the same way.
    update(&mut m, key('a'));
    typed(&mut m, "Alert on pool saturation");
    let Event::ActionItem { id, owner, .. } = recorded(&update(&mut m, code(KeyCode::Enter)))
    else {
        panic!()
    };
    assert_eq!((id.as_str(), owner), ("", None));
}

#[test]
fn impact_times_are_read_in_the_configured_zone() {
    let mut m = incident_model();
    m.tz = chrono_tz::Europe::London;
    update(&mut m, key('i'));
    let Some(Body::Form { fields, .. }) = m.dialog.as_ref().map(|d| &d.body) else {
        panic!()
    };
    assert_eq!(
        fields[0].value, "2026-07-17 08:30:00",
        "prefilled with now, local"
    );
    erase(&mut m, 19);
    typed(&mut m, "07:05");
    let e = recorded(&update(&mut m, code(KeyCode::Enter)));
    assert_eq!(
        e,
        Event::ImpactStart {
            at: DateTime::parse_from_rfc3339("2026-07-17T06:05:00Z")
                .unwrap()
                .with_timezone(&Utc)
        }
    );
    update(&mut m, key('I'));
    erase(&mut m, 19);
    typed(&mut m, "23:59");
    refused(&mut m, "future");
    update(&mut m, code(KeyCode::Esc));
    assert!(m.dialog.is_none());
}

#[test]
fn corrections_supersede_notes_and_retract_other_records() {
    let mut m = incident_model();
    let rec = |seq, source, kind| Record {
        seq,
        time: t0(),
        source,
        actor: "a".into(),
        host: String::new(),
        kind,
    };
    m.timeline = vec![
        rec(
            1,
            Source::Operator,
            Event::StatusChanged {
                status: "identified".parse().unwrap(),
            },
        ),
        rec(2, Source::Operator, Event::note("pool at 100% #impact")),
        rec(3, Source::Metric, Event::note("metric")),
    ];
    update(&mut m, key('c'));
    assert_eq!(
        m.dialog.as_ref().unwrap().field(0),
        "2",
        "the newest operator record"
    );
    update(&mut m, code(KeyCode::Tab));
    assert!(
        update(&mut m, code(KeyCode::Enter)).is_empty(),
        "a reason is required"
    );
    typed(&mut m, "wrong pool");
    update(&mut m, code(KeyCode::Tab));
    typed(&mut m, "pool at 90%");
    let e = recorded(&update(&mut m, code(KeyCode::Enter)));
    assert_eq!(
        e,
        Event::Correction {
            supersedes: 2,
            reason: "wrong pool".into(),
            replacement: Some(Box::new(Event::note("pool at 90%"))),
        }
    );
    // A status change can be retracted but not replaced by text.
    update(&mut m, key('c'));
    update(&mut m, code(KeyCode::Backspace));
    typed(&mut m, "1");
    update(&mut m, code(KeyCode::Tab));
    typed(&mut m, "too early");
    update(&mut m, code(KeyCode::Tab));
    typed(&mut m, "x");
    refused(&mut m, "not a note");
    update(&mut m, code(KeyCode::Backspace));
    let e = recorded(&update(&mut m, code(KeyCode::Enter)));
    assert!(matches!(
        e,
        Event::Correction {
            supersedes: 1,
            replacement: None,
            ..
        }
    ));
    // No such record.
    update(&mut m, key('c'));
    update(&mut m, code(KeyCode::Backspace));
    typed(&mut m, "42");
    update(&mut m, code(KeyCode::Tab));
    typed(&mut m, "r");
    refused(&mut m, "#42");
}

#[test]
fn editor_notes_are_recorded_when_not_empty() {
    let mut m = incident_model();
    assert_eq!(update(&mut m, key('e')), vec![Effect::EditNote]);
    let e = recorded(&update(
        &mut m,
        Msg::EditorClosed(Ok("line one\nline two #lesson".into())),
    ));
    assert_eq!(e, Event::note("line one\nline two #lesson"));
    assert!(update(&mut m, Msg::EditorClosed(Ok(String::new()))).is_empty());
    assert!(update(&mut m, Msg::EditorClosed(Err("vi exited with 1".into()))).is_empty());
    assert!(m.notice.as_ref().unwrap().text.contains("vi exited"));
}

#[test]
fn timeline_filter_steps_through_sources_and_order_toggles() {
    let mut m = model();
    update(&mut m, key('f'));
    assert!(m.show_timeline);
    assert_eq!(m.timeline_filter, Some(Source::Metric));
    for _ in 0..FILTERS.len() - 1 {
        update(&mut m, key('f'));
    }
    assert_eq!(m.timeline_filter, FILTERS.last().copied());
    update(&mut m, key('f'));
    assert_eq!(m.timeline_filter, None, "then all again");
    update(&mut m, key('O'));
    assert!(m.oldest_first);
    update(&mut m, key('O'));
    assert!(!m.oldest_first);
}

#[test]
fn help_scrolls_and_returns_to_the_mode_it_came_from() {
    let mut m = model();
    update(&mut m, key('b'));
    update(&mut m, key('?'));
    assert_eq!(m.mode, Mode::Help);
    update(&mut m, key('j'));
    update(&mut m, key('j'));
    update(&mut m, key('k'));
    assert_eq!(m.help_scroll, 1);
    update(&mut m, code(KeyCode::Esc));
    assert_eq!(m.mode, Mode::Runbooks);
}

/// The journal's records of a run of pool-exhaustion that stopped during `restart`.
fn stopped_run(rb: &crate::runbook::model::Runbook, finished: bool) -> Vec<Record> {
    use crate::incident::event::{RunRef, StepState};
    let run = RunRef {
        run_id: "pool-exhaustion-r1".into(),
        runbook: rb.name.clone(),
        hash: rb.hash.clone(),
    };
    let step = |seq: u64, id: &str, state: StepState, detail: &str| Record {
        seq,
        time: t0(),
        source: Source::Runbook,
        actor: "warroom".into(),
        host: String::new(),
        kind: Event::RunbookStep {
            run: run.clone(),
            step: id.into(),
            state,
            detail: Some(detail.into()),
        },
    };
    let whole = |seq: u64, state: StepState| Record {
        seq,
        time: t0(),
        source: Source::Runbook,
        actor: "warroom".into(),
        host: String::new(),
        kind: Event::RunbookRun {
            run: run.clone(),
            state,
        },
    };
    let mut v = vec![whole(1, StepState::Started)];
    let mut seq = 2;
    for id in ["why", "rollback", "disable-retries", "amplification-falls"] {
        let kind = rb.step(id).unwrap().kind.name();
        v.push(step(seq, id, StepState::Started, &format!("{kind}: {id}")));
        v.push(step(seq + 1, id, StepState::Succeeded, "done"));
        seq += 2;
    }
    v.push(step(seq, "restart", StepState::Started, "batch: Restart"));
    if finished {
        v.push(whole(seq + 1, StepState::Cancelled));
    }
    v
}

#[test]
fn an_aborted_or_interrupted_run_resumes_from_the_pane_without_rerunning_done_steps() {
    for finished in [true, false] {
        let mut m = incident_model();
        update(&mut m, key('b'));
        update(&mut m, Msg::RunbooksLoaded(entries()));
        let rb = m
            .runbooks
            .entries
            .iter()
            .flatten()
            .find_map(|e| e.runbook().filter(|r| r.name == "pool-exhaustion"))
            .unwrap()
            .clone();
        m.timeline = stopped_run(&rb, finished);
        assert!(update(&mut m, key('R')).is_empty());
        let d = m.dialog.as_ref().expect("resume asks");
        assert!(matches!(d.purpose, Purpose::Resume { .. }), "{d:?}");
        assert!(
            d.text[0].contains("why, rollback, disable-retries, amplification-falls"),
            "{:?}",
            d.text
        );
        assert!(
            d.text
                .iter()
                .any(|l| l.contains("\"restart\" started and did not finish"))
        );
        assert_eq!(d.selected(), Some(0), "the default is not now");
        assert!(choose(&mut m, 0).is_empty());
        // Retry the step in doubt: the same run id, from the restart step.
        update(&mut m, key('R'));
        let effects = choose(&mut m, 1);
        let [
            Effect::StartRun {
                run_id,
                resume: Some(r),
                ..
            },
        ] = &effects[..]
        else {
            panic!("{effects:?}")
        };
        assert_eq!(run_id, "pool-exhaustion-r1");
        assert_eq!(
            r.from,
            rb.steps.iter().position(|s| s.id == "restart").unwrap()
        );
        let run = m.runbooks.run.as_ref().unwrap();
        assert!(!run.finished(), "the pane shows the run going on");
        let done: Vec<&str> = (run.steps.iter())
            .filter(|s| matches!(s.mark, crate::app::panes::run::StepMark::Done(_)))
            .map(|s| s.id.as_str())
            .collect();
        assert_eq!(
            done,
            ["why", "rollback", "disable-retries", "amplification-falls"]
        );
        // While it runs, R has nothing to resume.
        update(&mut m, key('R'));
        assert!(m.dialog.is_none());
    }
    // Going on after the step in doubt starts at the next one.
    let mut m = incident_model();
    update(&mut m, key('b'));
    update(&mut m, Msg::RunbooksLoaded(entries()));
    let rb = (m.runbooks.entries.iter().flatten())
        .find_map(|e| e.runbook().filter(|r| r.name == "pool-exhaustion"))
        .unwrap()
        .clone();
    m.timeline = stopped_run(&rb, true);
    update(&mut m, key('R'));
    let effects = choose(&mut m, 2);
    let [
        Effect::StartRun {
            resume: Some(r), ..
        },
    ] = &effects[..]
    else {
        panic!("{effects:?}")
    };
    assert_eq!(
        r.from,
        rb.steps.iter().position(|s| s.id == "recovered").unwrap()
    );
}

#[test]
fn no_key_acts_while_the_terminal_is_too_small() {
    let mut m = incident_model();
    m.width = 39;
    for c in ['n', 'b', 's', 'a', 't', 'D', '?'] {
        assert!(update(&mut m, key(c)).is_empty());
    }
    assert_eq!(m.mode, Mode::Dashboard);
    assert!(m.dialog.is_none() && !m.show_timeline);
    m.width = 80;
    m.height = 9;
    update(&mut m, key('n'));
    assert_eq!(m.mode, Mode::Dashboard);
    update(&mut m, key('q'));
    assert_eq!(m.quit, Some(Quit::User), "quit still works");
    // Resized back, the same key acts.
    let mut m = incident_model();
    update(
        &mut m,
        Msg::Resize {
            width: 30,
            height: 8,
        },
    );
    update(&mut m, key('n'));
    assert_eq!(m.mode, Mode::Dashboard);
    update(
        &mut m,
        Msg::Resize {
            width: 80,
            height: 24,
        },
    );
    update(&mut m, key('n'));
    assert_eq!(m.mode, Mode::Note);
}

/// One of every run event, its texts made by the code that makes them in a run (verdicts,
/// readings, pauses, HTTP answers, failure reasons). The match has no wildcard: a new event
/// kind does not compile until it has a sample here.
fn every_run_event() -> Vec<RunEvent> {
    use crate::runbook::batch::{BatchEvent, Finished, Pause};
    use crate::runbook::gate::{Reading, Verdict};
    use crate::runbook::report::StepOutcome;
    let step = || "restart".to_string();
    let fail = Verdict::Fail(format!(
        "2 failed readings > failure limit 1 (last {})",
        Reading::Fail(1.0)
    ));
    let pauses = [
        Pause::BudgetExhausted {
            unavailable: 2,
            already_unhealthy: 1,
            budget: 1,
        },
        Pause::InstancesLost {
            batch: 1,
            targets: vec!["api-0".into()],
        },
        Pause::GateNotPassed {
            batch: 1,
            verdict: fail.to_string(),
        },
        Pause::RunDeadline {
            after: std::time::Duration::from_secs(600),
        },
    ];
    let mut batch = vec![
        BatchEvent::BatchStarted {
            batch: 1,
            targets: vec!["api-0".into(), "api-1".into()],
        },
        BatchEvent::InstanceHealthy {
            target: "api-0".into(),
        },
        BatchEvent::InstanceLost {
            target: "api-1".into(),
        },
        BatchEvent::GatePassed { batch: 1 },
        BatchEvent::Decided {
            decision: Decision::Retry,
        },
        BatchEvent::Finished(Finished::Completed),
        BatchEvent::Finished(Finished::Stopped {
            reason: "failure budget spent".into(),
        }),
    ];
    batch.extend(pauses.iter().cloned().map(BatchEvent::Paused));
    let mut all = vec![
        RunEvent::RunStarted {
            runbook: "pool-exhaustion".into(),
            hash: "abc".into(),
            dry_run: false,
            variables: [("service".to_string(), "planner-api".to_string())].into(),
        },
        RunEvent::RunResumed { from_step: step() },
        RunEvent::StepStarted {
            step: step(),
            kind: "batch".into(),
            title: "Restart planner-api in batches".into(),
        },
        RunEvent::Confirmed {
            step: step(),
            what: "batch 1".into(),
            automatic: false,
        },
        RunEvent::Declined {
            step: step(),
            what: "batch 2".into(),
        },
        RunEvent::Attempt {
            step: step(),
            target: Some("api-0".into()),
            attempt: 1,
            method: "POST".into(),
            url: "http://127.0.0.1:9/restart".into(),
            idempotency_key: None,
            status: Some(503),
            error: None,
        },
        RunEvent::Spawned {
            step: step(),
            target: Some("api-0".into()),
            argv: vec!["kubectl".into(), "rollout".into(), "restart".into()],
        },
        RunEvent::Output {
            step: step(),
            line: "batch 1 confirmed after 14 s at the confirmation".into(),
        },
        RunEvent::GateReading {
            step: step(),
            reading: Reading::Fail(1.0).to_string(),
            verdict: fail.to_string(),
        },
        RunEvent::Decided {
            step: step(),
            decision: Decision::Continue,
        },
        RunEvent::RunFinished {
            outcome: RunOutcome::Failed,
        },
    ];
    for p in pauses {
        all.push(RunEvent::Paused {
            step: step(),
            reason: p.to_string(),
        });
    }
    all.extend(batch.into_iter().map(|batch_event| RunEvent::Batch {
        step: step(),
        batch_event,
    }));
    for outcome in [
        StepOutcome::Succeeded,
        StepOutcome::Failed,
        StepOutcome::TimedOut,
        StepOutcome::Cancelled,
        StepOutcome::Declined,
        StepOutcome::Skipped,
    ] {
        let detail = match outcome {
            StepOutcome::Succeeded => crate::runbook::http::answer_text(
                200,
                r#"{"applied":{"pool_size":40},"ok":true,"note":"raised"}"#,
            ),
            o => format!("{}: {fail}", o.word()),
        };
        all.push(RunEvent::StepFinished {
            step: step(),
            outcome,
            detail,
        });
    }
    for e in &all {
        match e {
            RunEvent::RunStarted { .. }
            | RunEvent::RunResumed { .. }
            | RunEvent::StepStarted { .. }
            | RunEvent::Confirmed { .. }
            | RunEvent::Declined { .. }
            | RunEvent::Attempt { .. }
            | RunEvent::Spawned { .. }
            | RunEvent::Output { .. }
            | RunEvent::GateReading { .. }
            | RunEvent::Batch { .. }
            | RunEvent::Paused { .. }
            | RunEvent::Decided { .. }
            | RunEvent::StepFinished { .. }
            | RunEvent::RunFinished { .. } => {}
        }
    }
    all
}

/// Debug output and raw JSON in a text a person reads. `words`: also the enums' variant names
/// alone ("operator chose Continue"), for texts that hold no panel title ("Retry amplification").
fn machine_text(text: &str, words: bool) -> Option<&'static str> {
    const MARKS: [&str; 9] = [
        "{\"", "\":", "Fail(", "Some(", "None", "Ok(", "Err(", "TimedOut", "DryRun",
    ];
    const WORDS: [&str; 7] = [
        "Success",
        "Pending",
        "Inconclusive",
        "Succeeded",
        "Decided",
        "Continue",
        "Retry",
    ];
    let found = MARKS.into_iter().find(|m| text.contains(m));
    found.or_else(|| {
        words
            .then(|| WORDS.into_iter().find(|m| text.contains(m)))
            .flatten()
    })
}

/// Issue 33, point 3: every run event, as the run pane, the console's timeline, `warroom
/// incident timeline` and `warroom runbook run`'s progress show it, reads as words: no Debug
/// output, no JSON.
#[test]
fn every_run_event_reads_as_words_everywhere_it_is_shown() {
    use crate::incident::event::RunRef;
    use ratatui::{Terminal, backend::TestBackend};
    let mut m = model();
    let id = started(&mut m, "pool-exhaustion");
    let run = RunRef {
        run_id: id.clone(),
        runbook: "pool-exhaustion".into(),
        hash: "abc".into(),
    };
    let mut records = Vec::new();
    let mut screens = String::new();
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    for (n, event) in every_run_event().into_iter().enumerate() {
        let record = RunRecord {
            at: m.now,
            run_id: id.clone(),
            event,
        };
        let line = crate::runbook::progress::line(&record, "12:00:00");
        if let Some(mark) = machine_text(&line, true) {
            panic!("`runbook run` printed {mark:?}: {line}");
        }
        let journaled =
            crate::runbook::journal::journal_event(&run, &record.event).map(|kind| Record {
                seq: n as u64 + 1,
                time: m.now,
                source: crate::incident::Source::Runbook,
                actor: "run".into(),
                host: String::new(),
                kind,
            });
        if let Some(r) = &journaled {
            let cli = crate::runbook::journal::describe(&r.kind);
            if let Some(mark) = machine_text(&cli, true) {
                panic!("`incident timeline` printed {mark:?}: {cli}");
            }
            records.push(r.clone());
        }
        let msg = Msg::Run {
            record: Box::new(record),
            journaled: journaled.map(Box::new),
        };
        update(&mut m, msg);
        terminal.draw(|f| crate::ui::view(f, &m)).unwrap();
        let buffer = terminal.backend().buffer();
        for y in 0..buffer.area.height {
            let row: String = (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect();
            screens.push_str(row.trim_end());
            screens.push('\n');
        }
    }
    for row in crate::app::panes::timeline::rows(&records, &|_| None) {
        if let Some(mark) = machine_text(&row.text, true) {
            panic!("the console's timeline shows {mark:?}: {}", row.text);
        }
    }
    for line in screens.lines() {
        if let Some(mark) = machine_text(line, false) {
            panic!("the screen shows {mark:?}: {line}");
        }
    }
    assert!(
        screens.contains("HTTP 200 OK"),
        "the run pane was on screen"
    );
}

/// Issue 33, point 2: a dialog that comes up by itself counts as a new target for keys (the
/// runtime then drops the rest of a burst begun before it, `app::typing`), and a key typed
/// ahead answers nothing, even an Enter on a highlighted choice, nor reaches the dashboard.
#[test]
fn keys_typed_before_a_dialog_came_up_answer_nothing() {
    let mut m = model();
    let id = started(&mut m, "pool-exhaustion");
    let before = m.targets_changed;
    let reply = ask_confirm(&mut m, &id, "restart", "batch 3", false);
    assert_eq!(
        m.targets_changed,
        before + 1,
        "the question changed the target"
    );
    for c in "batch 3".chars() {
        assert!(update(&mut m, Msg::KeyAhead(KeyEvent::from(KeyCode::Char(c)))).is_empty());
    }
    assert!(update(&mut m, Msg::KeyAhead(KeyEvent::from(KeyCode::Enter))).is_empty());
    let d = m.dialog.as_ref().unwrap();
    assert!(
        matches!(&d.body, Body::Type { typed, .. } if typed.is_empty()),
        "{d:?}"
    );
    assert!(d.error.as_ref().unwrap().contains("typed before"), "{d:?}");
    // Typed for it, it is answered.
    typed(&mut m, "batch 3");
    assert_eq!(
        update(&mut m, code(KeyCode::Enter)),
        vec![Effect::Answer {
            reply,
            answer: Answer::Confirmed(true)
        }]
    );
    // With no dialog, a key typed ahead does not reach the dashboard ('a' adds an action item).
    let mode = m.mode;
    update(&mut m, Msg::KeyAhead(KeyEvent::from(KeyCode::Char('a'))));
    assert_eq!(m.mode, mode);
    assert!(m.dialog.is_none());
    // A key's own dialog is no change of target.
    let mut m = incident_model();
    let before = m.targets_changed;
    update(&mut m, key('s'));
    assert!(m.dialog.is_some(), "s opens the status dialog");
    assert_eq!(m.targets_changed, before);
}

#[test]
fn the_palette_lists_completes_and_does_what_the_keys_do() {
    let mut m = incident_model();
    assert!(update(&mut m, key(':')).is_empty());
    let d = m.dialog.as_ref().expect("the palette");
    assert_eq!(d.purpose, Purpose::Palette);
    assert!(d.text.iter().any(|l| l.contains("runbook")), "{:?}", d.text);
    // Typing narrows the listing; tab completes as far as the candidates agree.
    typed(&mut m, "exp");
    let d = m.dialog.as_ref().unwrap();
    assert_eq!(d.text.len(), 1, "{:?}", d.text);
    update(&mut m, code(KeyCode::Tab));
    assert_eq!(m.dialog.as_ref().unwrap().field(0), "export");
    let effects = update(&mut m, code(KeyCode::Enter));
    assert!(matches!(&effects[..], [Effect::Export(_)]), "{effects:?}");
    assert!(m.dialog.is_none());
    // A word it does not know keeps the palette open and says so.
    update(&mut m, key(':'));
    typed(&mut m, "frobnicate");
    refused(&mut m, "no command");
    update(&mut m, code(KeyCode::Esc));
    // `status NAME` records the status, as the status dialog would.
    update(&mut m, key(':'));
    typed(&mut m, "status iden");
    update(&mut m, code(KeyCode::Tab));
    assert_eq!(m.dialog.as_ref().unwrap().field(0), "status identified");
    let effects = update(&mut m, code(KeyCode::Enter));
    assert!(
        matches!(&effects[..], [Effect::Record { event: Event::StatusChanged { status }, .. }]
            if *status == crate::incident::event::Status::Identified),
        "{effects:?}"
    );
    // `theme NAME` switches the theme for the session.
    update(&mut m, key(':'));
    typed(&mut m, "theme light");
    update(&mut m, code(KeyCode::Enter));
    assert_eq!(m.theme.name, "light");
    // `runbook NAME` opens that runbook's run dialog, wherever the list's selection was.
    update(&mut m, key('b'));
    update(&mut m, Msg::RunbooksLoaded(entries()));
    update(&mut m, code(KeyCode::Esc));
    update(&mut m, key(':'));
    typed(&mut m, "runbook disable-re");
    update(&mut m, code(KeyCode::Tab));
    let effects = update(&mut m, code(KeyCode::Enter));
    assert!(
        matches!(&effects[..], [Effect::LoadRunbooks, Effect::PlanRunbook { runbook: rb, .. }] if rb.name == "disable-retries"),
        "{effects:?}"
    );
    let d = m.dialog.as_ref().expect("the run dialog");
    assert!(
        matches!(&d.purpose, Purpose::StartRun(rb) if rb.name == "disable-retries"),
        "{d:?}"
    );
}

#[test]
fn slash_filters_the_runbook_list_and_esc_restores_it() {
    let mut m = incident_model();
    update(&mut m, key('b'));
    update(&mut m, Msg::RunbooksLoaded(entries()));
    let all = m.runbooks.visible().len();
    assert!(all > 8, "{all}");
    update(&mut m, key('/'));
    assert!(m.search.as_ref().is_some_and(|s| s.runbooks));
    // The list follows the text as it is typed.
    typed(&mut m, "redis");
    let names: Vec<String> = (m.runbooks.visible().into_iter())
        .map(|i| m.runbooks.entries.as_ref().unwrap()[i].name())
        .collect();
    assert_eq!(names, ["redis-queue-drain"]);
    assert_eq!(
        m.runbooks.entry().map(Entry::name).as_deref(),
        Some("redis-queue-drain")
    );
    update(&mut m, code(KeyCode::Enter));
    assert!(m.search.is_none());
    // x runs what is selected in the filtered list.
    update(&mut m, key('x'));
    assert!(
        matches!(&m.dialog.as_ref().unwrap().purpose, Purpose::StartRun(rb) if rb.name == "redis-queue-drain")
    );
    update(&mut m, code(KeyCode::Esc));
    // A filter nothing matches selects nothing: x runs nothing hidden.
    update(&mut m, key('/'));
    typed(&mut m, "zzz");
    update(&mut m, code(KeyCode::Enter));
    assert!(m.runbooks.visible().is_empty() && m.runbooks.entry().is_none());
    update(&mut m, key('x'));
    assert!(m.dialog.is_none());
    // Esc while typing restores the filter before; esc in the pane then clears it.
    update(&mut m, key('/'));
    typed(&mut m, "pool");
    assert_eq!(m.runbooks.filter.as_deref(), Some("pool"));
    update(&mut m, code(KeyCode::Esc));
    assert_eq!(m.runbooks.filter.as_deref(), Some("zzz"));
    update(&mut m, code(KeyCode::Esc));
    assert_eq!(m.runbooks.visible().len(), all);
    assert_eq!(m.mode, Mode::Runbooks);
}
