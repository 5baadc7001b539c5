//! The runbook pane's keys and the messages of a run.

use super::super::model::{Model, PlanPane};
use super::super::panes::dialog::{Dialog, Purpose};
use super::super::panes::run::RunPane;
use super::super::workers::operator::{Answer, Question};
use super::Effect;
use crate::keymap::{Action, Mode};
use crate::runbook::batch::Decision;
use crate::runbook::executor::Control;
use crate::runbook::model::Runbook;

/// Open the pane (and reload the list: a fixed file shows at once).
pub fn open(model: &mut Model) -> Vec<Effect> {
    model.mode = Mode::Runbooks;
    vec![Effect::LoadRunbooks]
}

/// A key in the runbook pane.
pub fn key(model: &mut Model, action: Action) -> Vec<Effect> {
    let pane = &mut model.runbooks;
    let n = pane.entries.as_ref().map_or(0, Vec::len);
    match action {
        Action::Up | Action::Down => {
            let down = action == Action::Down;
            match &mut pane.plan {
                Some(p) => {
                    p.scroll = if down {
                        p.scroll.saturating_add(1)
                    } else {
                        p.scroll.saturating_sub(1)
                    }
                }
                None if n > 0 => {
                    pane.selected = if down {
                        (pane.selected + 1).min(n - 1)
                    } else {
                        pane.selected.saturating_sub(1)
                    }
                }
                None => {}
            }
        }
        Action::Open => return show_plan(model),
        Action::Run => return ask_to_run(model),
        Action::PauseRun => {
            if let Some(run) = model.runbooks.run.as_mut().filter(|r| !r.finished()) {
                run.control = match run.control {
                    Control::Pause => Control::Run,
                    _ => Control::Pause,
                };
                let (run_id, control) = (run.run_id.clone(), run.control);
                model.notify(
                    if control == Control::Pause {
                        "pause requested: the run stops before its next action"
                    } else {
                        "the run resumes"
                    },
                    false,
                    Some(5),
                );
                return vec![Effect::ControlRun { run_id, control }];
            }
        }
        Action::AbortRun => return abort(model),
        Action::Close if pane.plan.is_some() => pane.plan = None,
        Action::Close => model.mode = Mode::Dashboard,
        _ => {}
    }
    Vec::new()
}

fn show_plan(model: &mut Model) -> Vec<Effect> {
    let Some(rb) = model.runbooks.entry().and_then(|e| e.runbook()).cloned() else {
        return Vec::new();
    };
    model.runbooks.plan = Some(PlanPane {
        name: rb.name.clone(),
        lines: None,
        batches: Default::default(),
        titles: Default::default(),
        scroll: 0,
    });
    vec![Effect::PlanRunbook(Box::new(rb))]
}

/// `x`: the plan first; from the plan, the typed confirmation.
fn ask_to_run(model: &mut Model) -> Vec<Effect> {
    let Some(rb) = model.runbooks.entry().and_then(|e| e.runbook()).cloned() else {
        return Vec::new();
    };
    let plan_ready = model
        .runbooks
        .plan
        .as_ref()
        .is_some_and(|p| p.name == rb.name && matches!(p.lines, Some(Ok(_))));
    if !plan_ready {
        model.notify("read the plan first: it opens now", false, Some(5));
        return show_plan(model);
    }
    // One incident, one executor: a follower asks the holder, which confirms and runs it.
    if model.sharing.following() {
        return super::sharing::propose(model, rb.name.clone());
    }
    if let Some(refused) = refuse_run(model) {
        model.notify(refused, true, Some(8));
        return Vec::new();
    }
    let mutating = rb.steps.iter().filter(|s| s.mutating).count();
    let text = vec![
        format!(
            "{} steps, {mutating} of them change the system; each of those asks again.",
            rb.steps.len()
        ),
        "Pause and abort take effect between actions.".to_string(),
    ];
    let name = rb.name.clone();
    model.dialog = Some(Dialog::typed(
        format!("Run runbook \"{name}\"?"),
        text,
        name,
        Purpose::StartRun(Box::new(rb)),
    ));
    Vec::new()
}

/// Why a run may not start now, if it may not.
fn refuse_run(model: &Model) -> Option<String> {
    if let Some(r) = model.runbooks.active() {
        return Some(format!(
            "runbook \"{}\" is running: one run at a time (abort it first)",
            r.runbook
        ));
    }
    if let Some(e) = &model.journal_error {
        return Some(format!(
            "the journal is not durable ({e}): destructive steps are refused until it is"
        ));
    }
    None
}

/// The typed name matched: start the run.
pub fn start(model: &mut Model, rb: Runbook) -> Vec<Effect> {
    if let Some(refused) = refuse_run(model) {
        model.notify(refused, true, Some(8));
        return Vec::new();
    }
    let run_id = format!("{}-{}", rb.name, model.now.format("%Y%m%dT%H%M%S%.3fZ"));
    let mut view = RunPane::new(run_id.clone(), &rb, model.now);
    if let Some(p) = model.runbooks.plan.take().filter(|p| p.name == rb.name) {
        view.batch_totals = p.batches;
        // The titles as they will run ("Restart planner-api …", not "{{service}}").
        for step in &mut view.steps {
            if let Some(t) = p.titles.get(&step.id) {
                step.title.clone_from(t);
            }
        }
    }
    model.runbooks.run = Some(view);
    model.mode = Mode::Runbooks;
    vec![Effect::StartRun {
        runbook: Box::new(rb),
        run_id,
    }]
}

fn abort(model: &mut Model) -> Vec<Effect> {
    let Some(run) = model.runbooks.run.as_mut().filter(|r| !r.finished()) else {
        return Vec::new();
    };
    run.control = Control::Abort;
    let run_id = run.run_id.clone();
    let mut effects = vec![Effect::ControlRun {
        run_id: run_id.clone(),
        control: Control::Abort,
    }];
    // A question the run is waiting on is answered no: the run then stops at once.
    effects.extend(drop_questions(model, &run_id));
    model.notify(
        "abort requested: the run stops before its next action",
        true,
        Some(8),
    );
    effects
}

/// Close every dialog of `run_id`, answering no (or abort).
pub fn drop_questions(model: &mut Model, run_id: &str) -> Vec<Effect> {
    let mut effects = Vec::new();
    let of_run = |d: &Dialog| match &d.purpose {
        Purpose::Confirm { run_id: r, .. } | Purpose::Decide { run_id: r, .. } => r == run_id,
        _ => false,
    };
    let mut all: Vec<Dialog> = model.dialog.take().into_iter().collect();
    all.extend(model.dialogs_waiting.drain(..));
    for d in all {
        if of_run(&d) {
            effects.extend(refusal(&d));
        } else if model.dialog.is_none() {
            model.dialog = Some(d);
        } else {
            model.dialogs_waiting.push_back(d);
        }
    }
    effects
}

/// The "no" a closed dialog means to the executor, if it asked.
pub fn refusal(d: &Dialog) -> Option<Effect> {
    match &d.purpose {
        Purpose::Confirm { reply, .. } => Some(Effect::Answer {
            reply: reply.clone(),
            answer: Answer::Confirmed(false),
        }),
        Purpose::Decide { reply, .. } => Some(Effect::Answer {
            reply: reply.clone(),
            answer: Answer::Decided(Decision::Abort),
        }),
        _ => None,
    }
}

/// The choices of a decision, safest first.
pub const DECISIONS: [(Decision, &str); 3] = [
    (Decision::Abort, "abort the run"),
    (Decision::Retry, "retry the step"),
    (Decision::Continue, "continue with the next step"),
];

/// The executor asks: show a dialog (after the one open, if any).
pub fn ask(
    model: &mut Model,
    run_id: String,
    question: Question,
    reply: super::super::workers::operator::Reply,
) -> Vec<Effect> {
    let d = match question {
        Question::Confirm(c) => {
            if let Some(r) = model.runbooks.run.as_mut() {
                r.waiting = Some(format!("confirmation: type \"{}\"", c.word));
            }
            Dialog::typed(
                format!("Confirm step \"{}\"", c.step),
                c.summary.lines().map(String::from).collect(),
                c.word,
                Purpose::Confirm { run_id, reply },
            )
        }
        Question::Decide { step, reason } => Dialog::choose(
            format!("Step \"{step}\" needs a decision"),
            vec![reason],
            DECISIONS.iter().map(|(_, t)| (*t).to_string()).collect(),
            0,
            Purpose::Decide { run_id, reply },
        ),
    };
    let d = Dialog {
        title: crate::sanitize::line(&d.title).into_owned(),
        text: d
            .text
            .iter()
            .map(|l| crate::sanitize::line(l).into_owned())
            .collect(),
        ..d
    };
    if model.dialog.is_none() {
        model.dialog = Some(d);
    } else {
        model.dialogs_waiting.push_back(d);
    }
    Vec::new()
}
