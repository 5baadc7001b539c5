//! The runbook pane's keys and the messages of a run.

use super::super::model::{Model, PlanPane};
use super::super::panes::dialog::{Body, Dialog, Field, Purpose};
use super::super::panes::run::RunPane;
use super::super::workers::operator::{Answer, Question};
use super::Effect;
use crate::keymap::{Action, Mode};
use crate::runbook::batch::Decision;
use crate::runbook::executor::Control;
use crate::runbook::model::Runbook;
use crate::runbook::vars::NOT_SET;
use std::collections::BTreeMap;

/// Open the pane, or give it the keys when it is shown beside the panels (and reload the
/// list: a fixed file shows at once).
pub fn open(model: &mut Model) -> Vec<Effect> {
    model.mode = Mode::Runbooks;
    model.runbooks.shown = true;
    vec![Effect::LoadRunbooks]
}

/// A key in the runbook pane.
pub fn key(model: &mut Model, action: Action) -> Vec<Effect> {
    let pane = &mut model.runbooks;
    // Moving goes through the entries the filter shows.
    let shown = pane.visible();
    let at = shown.iter().position(|i| *i == pane.selected);
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
                None => {
                    let next = match (at, down) {
                        (Some(k), true) => shown.get(k + 1).or(shown.last()),
                        (Some(k), false) => shown.get(k.saturating_sub(1)),
                        (None, _) => shown.first(),
                    };
                    if let Some(i) = next {
                        pane.selected = *i;
                    }
                }
            }
        }
        Action::Open => return show_plan(model),
        Action::Search => super::search::filter(model),
        Action::Run => return ask_to_run(model),
        Action::PauseRun => ask_to_hold(model),
        Action::AbortRun => ask_to_abort(model),
        Action::ResumeRun => return super::resume::ask(model),
        Action::Close if pane.plan.is_some() => pane.plan = None,
        Action::Close if pane.filter.is_some() => pane.set_filter(""),
        Action::Close => {
            pane.shown = false;
            model.mode = Mode::Dashboard;
        }
        // `b`: the dashboard's keys; the pane stays in view when there is room for both.
        Action::Runbooks => model.mode = Mode::Dashboard,
        _ => {}
    }
    Vec::new()
}

fn show_plan(model: &mut Model) -> Vec<Effect> {
    let Some(rb) = model.runbooks.entry().and_then(|e| e.runbook()).cloned() else {
        return Vec::new();
    };
    let vars = (proposed(model, &rb.name).into_iter().flatten())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    model.runbooks.plan = Some(PlanPane {
        name: rb.name.clone(),
        lines: None,
        batches: Default::default(),
        titles: Default::default(),
        values: Default::default(),
        scroll: 0,
    });
    vec![Effect::PlanRunbook {
        runbook: Box::new(rb),
        vars,
    }]
}

/// The values an accepted proposal asks for runbook `name`, if one does.
fn proposed<'a>(model: &'a Model, name: &str) -> Option<&'a BTreeMap<String, String>> {
    (model.runbooks.accepted.as_ref())
        .filter(|a| a.run.runbook == name)
        .map(|a| &a.run.variables)
}

/// The values the run dialog of `name` starts from: the plan's, under an accepted proposal's.
pub fn dialog_values(model: &Model, name: &str) -> BTreeMap<String, String> {
    let mut values = (model.runbooks.plan.as_ref())
        .filter(|p| p.name == name)
        .map(|p| p.values.clone())
        .unwrap_or_default();
    values.extend(
        proposed(model, name)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.clone())),
    );
    values
}

/// `x`: the run dialog at once (the plan fills in when ready): type the runbook's name to
/// start it, after changing any variable.
fn ask_to_run(model: &mut Model) -> Vec<Effect> {
    let Some(rb) = model.runbooks.entry().and_then(|e| e.runbook()).cloned() else {
        return Vec::new();
    };
    // One incident, one executor: a follower asks the holder, which confirms and runs it.
    if model.sharing.following() {
        return super::sharing::propose(model, rb.name.clone());
    }
    if let Some(refused) = refuse_run(model) {
        model.notify(refused, true, Some(8));
        return Vec::new();
    }
    let plan = model.runbooks.plan.as_ref().filter(|p| p.name == rb.name);
    let ready = plan.and_then(|p| p.lines.clone());
    let effects = match plan {
        Some(_) => Vec::new(),
        None => show_plan(model),
    };
    let values = dialog_values(model, &rb.name);
    model.dialog = Some(run_dialog(&rb, ready.as_ref(), &values));
    effects
}

/// An accepted proposal: its runbook selected and its run dialog open with the proposed
/// values (the plan made with them), or why not.
pub fn ask_to_run_proposed(model: &mut Model) -> Vec<Effect> {
    let Some(name) = model
        .runbooks
        .accepted
        .as_ref()
        .map(|a| a.run.runbook.clone())
    else {
        return Vec::new();
    };
    let Some(i) = (model.runbooks.entries.as_ref()).and_then(|e| {
        e.iter()
            .position(|e| e.name() == name && e.runbook().is_some())
    }) else {
        model.notify(
            format!("no runbook named \"{name}\" loads here: nothing runs"),
            true,
            Some(15),
        );
        return super::sharing::accepted_run_dropped(model, &name, "it does not load here")
            .into_iter()
            .collect();
    };
    model.runbooks.selected = i;
    model.runbooks.shown = true;
    model.mode = Mode::Runbooks;
    // A plan made without the proposed values is made again with them.
    model.runbooks.plan = None;
    ask_to_run(model)
}

/// The run dialog: what the run will do, the name to type, and each variable (prefilled with
/// the value the plan resolved, selected so typing replaces it).
pub fn run_dialog(
    rb: &Runbook,
    plan: Option<&Result<Vec<String>, String>>,
    values: &std::collections::BTreeMap<String, String>,
) -> Dialog {
    let mutating = rb.steps.iter().filter(|s| s.mutating).count();
    let mut text = vec![
        format!(
            "{} steps, {mutating} of them change the system; each of those asks again.",
            rb.steps.len()
        ),
        "Hold and abort take effect between actions; both ask first.".to_string(),
    ];
    match plan {
        None => text.push("preparing the plan (variables, targets)…".into()),
        Some(Err(e)) => text.push(format!("✖ the plan cannot be made: {e}")),
        Some(Ok(lines)) => {
            text.push("Plan:".into());
            text.extend(lines.iter().cloned());
        }
    }
    let mut fields = vec![Field::new(
        "run",
        format!("type \"{}\" to run it", rb.name),
        "",
    )];
    for v in rb.variables.iter().filter(|v| !v.secret) {
        let value = values
            .get(&v.name)
            .cloned()
            .or_else(|| v.default.clone())
            .unwrap_or_default();
        let hint = if v.description.is_empty() {
            "a value".to_string()
        } else {
            crate::sanitize::line(&v.description).into_owned()
        };
        fields.push(Field::new(v.name.clone(), hint, value));
    }
    // A secret the plan found without a value can be typed here, for this run only.
    for v in (rb.variables.iter())
        .filter(|v| v.secret && values.get(&v.name).is_some_and(|s| s == NOT_SET))
    {
        let from = v.env.as_deref().unwrap_or("its environment variable");
        let hint =
            format!("secret, not set: type it for this run only (never recorded), or set {from}");
        fields.push(Field::secret(v.name.clone(), hint));
    }
    Dialog::form(
        format!("Run runbook \"{}\"?", rb.name),
        text,
        fields,
        Purpose::StartRun(Box::new(rb.clone())),
    )
}

/// The variables changed in a run dialog: (name, value) for each field edited away from the
/// value it was given.
pub fn changed_vars(
    d: &Dialog,
    rb: &Runbook,
    values: &std::collections::BTreeMap<String, String>,
) -> Vec<(String, String)> {
    let Body::Form { fields, .. } = &d.body else {
        return Vec::new();
    };
    (fields.iter().skip(1))
        .filter(|f| !f.masked)
        .filter_map(|f| {
            let v = rb.variables.iter().find(|v| v.name == f.label)?;
            let given = values
                .get(&v.name)
                .cloned()
                .or_else(|| v.default.clone())
                .unwrap_or_default();
            (f.value.trim() != given).then(|| (v.name.clone(), f.value.trim().to_string()))
        })
        .collect()
}

/// The secrets typed in a run dialog, by the environment variable each stands for; an empty
/// field is not a value. The field is the only copy: the dialog closes as the run starts.
pub fn typed_secrets(d: &Dialog, rb: &Runbook) -> Vec<(String, crate::secret::Secret)> {
    let Body::Form { fields, .. } = &d.body else {
        return Vec::new();
    };
    (fields.iter().filter(|f| f.masked && !f.value.is_empty()))
        .filter_map(|f| {
            let v = rb
                .variables
                .iter()
                .find(|v| v.secret && v.name == f.label)?;
            Some((v.env.clone()?, crate::secret::Secret::new(f.value.clone())))
        })
        .collect()
}

/// The secret fields of a run dialog still empty: (variable, environment variable), for the
/// answer that the run needs them.
pub fn secrets_missing(d: &Dialog) -> Vec<String> {
    let Body::Form { fields, .. } = &d.body else {
        return Vec::new();
    };
    (fields.iter().filter(|f| f.masked && f.value.is_empty()))
        .map(|f| f.label.clone())
        .collect()
}

/// The plan arrived: a run dialog waiting for it shows it.
pub fn plan_ready(model: &mut Model, name: &str) {
    let Some(p) = model.runbooks.plan.as_ref().filter(|p| p.name == name) else {
        return;
    };
    let lines = p.lines.clone();
    let values = dialog_values(model, name);
    for d in model
        .dialog
        .iter_mut()
        .chain(model.dialogs_waiting.iter_mut())
    {
        if let Purpose::StartRun(rb) = &d.purpose
            && rb.name == name
        {
            let fresh = run_dialog(rb, lines.as_ref(), &values);
            d.text = fresh.text;
            // Values the operator has not touched take the resolved ones; a secret the plan
            // found unset gains its field.
            if let (Body::Form { fields, .. }, Body::Form { fields: new, .. }) =
                (&mut d.body, fresh.body)
            {
                let old = std::mem::take(fields);
                *fields = (new.into_iter())
                    .map(|n| match old.iter().find(|f| f.label == n.label) {
                        Some(f)
                            if !(f.caret.selected || f.value.is_empty() && f.label != "run") =>
                        {
                            f.clone()
                        }
                        _ => n,
                    })
                    .collect();
            }
        }
    }
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

/// The typed name matched: start the run with the variables changed in the dialog and the
/// secrets typed there (for this run only).
pub fn start(
    model: &mut Model,
    rb: Runbook,
    vars: Vec<(String, String)>,
    secrets: Vec<(String, crate::secret::Secret)>,
) -> Vec<Effect> {
    if let Some(refused) = refuse_run(model) {
        model.notify(refused, true, Some(8));
        return Vec::new();
    }
    let run_id = rb.run_id(model.now);
    let (vars, accepted) = super::sharing::run_proposed(model, &rb.name, &run_id, vars);
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
    model.runbooks.shown = true;
    model.mode = Mode::Runbooks;
    // The panels the run's gates read come first; the first of them is selected.
    if let Some(first) = model.panel_order().first() {
        model.selected = *first;
    }
    if !vars.is_empty() {
        let list: Vec<String> = vars.iter().map(|(k, v)| format!("{k}={v}")).collect();
        model.notify(format!("run with {}", list.join(", ")), false, Some(8));
    }
    let start = Effect::StartRun {
        runbook: Box::new(rb),
        run_id,
        vars,
        secrets,
        resume: None,
    };
    accepted.into_iter().chain([start]).collect()
}

/// What a run has done and not done, for the questions that stop or change it.
pub fn progress_lines(run: &RunPane) -> Vec<String> {
    use super::super::panes::run::StepMark;
    let ids = |f: &dyn Fn(StepMark) -> bool| -> Vec<String> {
        (run.steps.iter())
            .filter(|s| f(s.mark))
            .map(|s| s.id.clone())
            .collect()
    };
    let done = ids(&|m| matches!(m, StepMark::Done(_)));
    let running = ids(&|m| m == StepMark::Running);
    let pending = ids(&|m| m == StepMark::Pending);
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    let mut out = vec![format!("done: {}", list(&done))];
    if !running.is_empty() {
        let batch = run
            .batch
            .as_ref()
            .map(|b| {
                format!(
                    " (batch {}{} in progress: {})",
                    b.batch,
                    b.of.map(|n| format!(" of {n}")).unwrap_or_default(),
                    b.targets.join(", ")
                )
            })
            .unwrap_or_default();
        out.push(format!("running: {}{batch}", list(&running)));
    }
    out.push(format!("not started: {}", list(&pending)));
    out
}

/// `A`: ask before aborting, saying what is done and what is not.
fn ask_to_abort(model: &mut Model) {
    let Some(run) = model.runbooks.active() else {
        model.notify("no run in progress to abort", false, Some(5));
        return;
    };
    let mut text = progress_lines(run);
    text.push(
        "Abort stops before the run's next action; what is done stays done (R resumes later)."
            .into(),
    );
    model.dialog = Some(Dialog::choose(
        format!("Abort run of \"{}\"?", run.runbook),
        text,
        vec!["keep the run going".into(), "abort the run".into()],
        0,
        Purpose::AbortRun {
            run_id: run.run_id.clone(),
        },
    ));
}

/// `H`: ask before holding (pausing) the run or letting it go on.
fn ask_to_hold(model: &mut Model) {
    let Some(run) = model.runbooks.active() else {
        model.notify("no run in progress to hold", false, Some(5));
        return;
    };
    let holding = run.control == Control::Pause;
    let mut text = progress_lines(run);
    text.push(if holding {
        "The run is held: it goes on with its next action.".into()
    } else {
        "The run stops before its next action and waits (H again resumes).".into()
    });
    let (title, yes, control) = if holding {
        ("Resume", "resume the run", Control::Run)
    } else {
        ("Hold", "hold the run", Control::Pause)
    };
    model.dialog = Some(Dialog::choose(
        format!("{title} run of \"{}\"?", run.runbook),
        text,
        vec!["leave it as it is".into(), yes.into()],
        0,
        Purpose::ControlRun {
            run_id: run.run_id.clone(),
            control,
        },
    ));
}

/// The hold or resume was confirmed.
pub fn control(model: &mut Model, run_id: &str, control: Control) -> Vec<Effect> {
    if control == Control::Abort {
        return abort(model);
    }
    let Some(run) = model
        .runbooks
        .run
        .as_mut()
        .filter(|r| !r.finished() && r.run_id == run_id)
    else {
        return Vec::new();
    };
    run.control = control;
    model.notify(
        if control == Control::Pause {
            "hold requested: the run stops before its next action"
        } else {
            "the run goes on"
        },
        false,
        Some(5),
    );
    vec![Effect::ControlRun {
        run_id: run_id.to_string(),
        control,
    }]
}

/// The abort was confirmed.
pub fn abort(model: &mut Model) -> Vec<Effect> {
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
        Purpose::Confirm { run_id: r, .. }
        | Purpose::Decide { run_id: r, .. }
        | Purpose::Declined { run_id: r, .. }
        | Purpose::AbortRun { run_id: r }
        | Purpose::ControlRun { run_id: r, .. } => r == run_id,
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
        Purpose::Confirm { reply, .. } | Purpose::Declined { reply, .. } => Some(Effect::Answer {
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

/// The choices after esc on a step's confirmation.
pub const DECLINED: [&str; 2] = ["ask again (nothing was sent)", "abort the run"];

/// The choices after esc on the confirmation of a step the runbook lets the run go on without.
pub const DECLINED_SKIPPABLE: [&str; 3] = [
    "ask again (nothing was sent)",
    "skip this step and go on",
    "abort the run",
];

/// Esc on a step's confirmation: that step is declined, not the run. Offer to ask again or
/// abort; nothing is answered until one is chosen.
pub fn declined(model: &mut Model, d: Dialog) {
    let Purpose::Confirm {
        run_id,
        reply,
        skippable,
    } = &d.purpose
    else {
        model.dialog = Some(d);
        return;
    };
    let word = match &d.body {
        Body::Type { word, .. } => word.clone(),
        _ => String::new(),
    };
    // The step asking (a batch step asks per batch: its word is "batch 3").
    let step = (model.runbooks.run.as_ref())
        .and_then(|r| r.current().map(|i| r.steps[i].id.clone()))
        .unwrap_or_else(|| word.clone());
    let mut text = vec![
        format!("You did not confirm \"{word}\": nothing was sent for it."),
        if *skippable {
            "The runbook allows going on without this step: ask again, skip it, or abort the run."
        } else {
            "This step cannot be skipped: ask again, or abort the run."
        }
        .into(),
    ];
    let choices: &[&str] = if *skippable {
        &DECLINED_SKIPPABLE
    } else {
        &DECLINED
    };
    if let Some(run) = model.runbooks.run.as_ref() {
        text.extend(progress_lines(run));
    }
    let (run_id, reply) = (run_id.clone(), reply.clone());
    let mut original = d;
    if let Body::Type { typed, caret, .. } = &mut original.body {
        typed.clear();
        *caret = Default::default();
    }
    original.error = None;
    model.dialog = Some(Dialog::choose(
        format!("Step \"{step}\" not confirmed"),
        text,
        choices
            .iter()
            .map(std::string::ToString::to_string)
            .collect(),
        0,
        Purpose::Declined {
            run_id,
            reply,
            question: Box::new(original),
        },
    ));
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
    model.dirty = true;
    let known = (model.runbooks.run.as_ref()).is_some_and(|r| r.run_id == run_id && !r.finished());
    if !known {
        // Nobody here started that run: the answer is no.
        return vec![Effect::Answer {
            reply,
            answer: Answer::Confirmed(false),
        }];
    }
    let d = match question {
        Question::Confirm(c) => {
            if let Some(r) = model.runbooks.run.as_mut() {
                r.waiting = Some(format!("confirmation: type \"{}\"", c.word));
            }
            Dialog::typed(
                format!("Confirm step \"{}\"", c.step),
                c.summary.lines().map(String::from).collect(),
                c.word,
                Purpose::Confirm {
                    run_id,
                    reply,
                    skippable: c.skippable,
                },
            )
        }
        Question::Decide { step, reason } => Dialog::choose(
            format!("Step \"{step}\" needs a decision"),
            vec![reason],
            DECISIONS.iter().map(|(_, t)| (*t).to_string()).collect(),
            0,
            Purpose::Decide { run_id, reply },
        )
        .unselected(),
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

/// The runbook list was (re)loaded: those that apply here first, the selection kept in range.
pub fn loaded(model: &mut Model, mut entries: Vec<crate::runbook::catalog::Entry>) {
    let rehearsal = model.rehearsal;
    let unresolved = &model.runbooks.unresolved;
    crate::runbook::catalog::Entry::here_first_resolved(&mut entries, rehearsal, unresolved);
    let n = entries.len();
    model.runbooks.entries = Some(entries);
    model.runbooks.selected = model.runbooks.selected.min(n.saturating_sub(1));
    model.dirty = true;
}

/// A plan is ready, or cannot be made: shown in the plan pane when it is still the one asked
/// for; otherwise a failure is said on the message line.
pub fn planned(
    model: &mut Model,
    name: String,
    result: Result<crate::runbook::setup::Plan, String>,
) {
    match model.runbooks.plan.as_mut().filter(|p| p.name == name) {
        Some(p) => {
            match result {
                Ok(plan) => {
                    p.lines = Some(Ok(plan.lines));
                    p.batches = plan.batches;
                    p.titles = plan.titles;
                    p.values = plan.values;
                }
                Err(e) => p.lines = Some(Err(crate::sanitize::line(&e).into_owned())),
            }
            plan_ready(model, &name);
        }
        None => {
            if let Err(e) = result {
                model.notify(format!("runbook \"{name}\": {e}"), true, Some(10));
            }
        }
    }
    model.dirty = true;
}

/// A run's transition: the run pane follows it, and the timeline takes its journal record.
pub fn run_event(
    model: &mut Model,
    record: &crate::runbook::report::RunRecord,
    journaled: Option<Box<crate::incident::Record>>,
) {
    if let Some(run) = (model.runbooks.run.as_mut()).filter(|r| r.run_id == record.run_id) {
        run.apply(record);
    }
    if let Some(r) = journaled {
        model.add_record(*r);
    }
    model.dirty = true;
}

/// A run's task ended: its questions go, and its outcome is said on the message line.
pub fn ended(
    model: &mut Model,
    run_id: &str,
    outcome: crate::runbook::report::RunOutcome,
) -> Vec<Effect> {
    use crate::runbook::report::RunOutcome;
    let effects = drop_questions(model, run_id);
    if let Some(run) = model.runbooks.run.as_mut().filter(|r| r.run_id == run_id) {
        if run.outcome.is_none() {
            run.outcome = Some(outcome);
        }
        let word = match outcome {
            RunOutcome::Succeeded => "succeeded",
            RunOutcome::DryRun => "ended its dry run",
            RunOutcome::Failed => "failed",
            RunOutcome::Aborted => "was aborted (R resumes it)",
        };
        let text = format!("runbook \"{}\" {word}", run.runbook);
        model.notify(text, outcome != RunOutcome::Succeeded, Some(15));
    }
    model.dirty = true;
    effects
}
