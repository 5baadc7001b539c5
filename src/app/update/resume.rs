//! `R` in the runbook pane: resume the run that was aborted, failed or interrupted, with the
//! CLI's `--resume` semantics: steps done are never run again; a step that started and did
//! not finish (or was declined or failed with no decision) is in doubt, and the operator
//! decides: retry it (the same idempotency keys) or go on after it. The run keeps its id.

use super::super::effect::{Effect, Resume};
use super::super::model::Model;
use super::super::panes::dialog::{Dialog, Purpose};
use super::super::panes::run::RunPane;
use crate::keymap::Mode;
use crate::runbook::model::Runbook;
use crate::runbook::report::{RunEvent, RunOutcome, RunRecord};

/// The run to resume: the newest run on the timeline, when it stopped short (aborted,
/// failed, or never finished: interrupted, or another front end's).
fn candidate(model: &Model) -> Option<(String, String)> {
    use crate::incident::Event;
    use crate::incident::event::StepState;
    let newest = model.timeline.iter().rev().find_map(|r| match &r.kind {
        Event::RunbookRun { run, .. } => Some(run.run_id.clone()),
        _ => None,
    })?;
    let last = model.timeline.iter().rev().find_map(|r| match &r.kind {
        Event::RunbookRun { run, state } if run.run_id == newest => Some((run.clone(), *state)),
        _ => None,
    })?;
    match last.1 {
        StepState::Succeeded => None,
        _ => Some((last.0.runbook, last.0.run_id)),
    }
}

/// A run's records as the journal has them, its stop set aside: an aborted or failed run
/// goes on from where it stopped, as an interrupted one does.
pub fn records_to_resume(model: &Model, run_id: &str) -> Vec<RunRecord> {
    let mut records = crate::runbook::journal::run_records(&model.timeline, run_id);
    if let Some(RunRecord {
        event: RunEvent::RunFinished { outcome },
        ..
    }) = records.last()
        && matches!(outcome, RunOutcome::Aborted | RunOutcome::Failed)
    {
        records.pop();
    }
    records
}

/// `R`: say where the run would go on, and ask.
pub fn ask(model: &mut Model) -> Vec<Effect> {
    if let Some(r) = model.runbooks.active() {
        let text = format!("runbook \"{}\" is running: nothing to resume", r.runbook);
        model.notify(text, false, Some(5));
        return Vec::new();
    }
    let Some((name, run_id)) = candidate(model) else {
        model.notify(
            "no aborted or interrupted run to resume on this incident's timeline",
            false,
            Some(6),
        );
        return Vec::new();
    };
    let Some(rb) = (model.runbooks.entries.iter().flatten())
        .find_map(|e| e.runbook().filter(|r| r.name == name))
        .cloned()
    else {
        let text = format!("run {run_id} is of runbook \"{name}\", which is not in the list");
        model.notify(text, true, None);
        return Vec::new();
    };
    if model.incident.is_none() {
        model.notify(
            "runs resume from the incident's journal, and no incident is recorded here",
            true,
            None,
        );
        return Vec::new();
    }
    let records = records_to_resume(model, &run_id);
    let point = match crate::runbook::resume::resume_point(&rb, &records) {
        Ok(p) => p,
        Err(e) => {
            model.notify(format!("run {run_id} cannot resume: {e}"), true, None);
            return Vec::new();
        }
    };
    let at = |id: &str| rb.steps.iter().position(|s| s.id == id);
    let mut text = vec![
        format!(
            "done (never run again): {}",
            if point.completed.is_empty() {
                "none".to_string()
            } else {
                point.completed.join(", ")
            }
        ),
        "Steps that change the system ask again before they act.".into(),
    ];
    let (options, from): (Vec<String>, Vec<Option<usize>>) = match &point.in_doubt {
        Some(step) => {
            let i = at(step).unwrap_or(point.next_step);
            text.insert(
                1,
                format!(
                    "\"{step}\" started and did not finish: it is in doubt. Retry sends it again \
                     with the same idempotency key; going on treats it as done."
                ),
            );
            (
                vec![
                    "not now".into(),
                    format!("retry \"{step}\""),
                    format!("go on after \"{step}\""),
                ],
                vec![None, Some(i), Some(i + 1)],
            )
        }
        None => {
            let next = rb
                .steps
                .get(point.next_step)
                .map_or("(the end)".to_string(), |s| format!("\"{}\"", s.id));
            (
                vec!["not now".into(), format!("resume from {next}")],
                vec![None, Some(point.next_step)],
            )
        }
    };
    model.dialog = Some(Dialog::choose(
        format!("Resume run {run_id}?"),
        text,
        options,
        0,
        Purpose::Resume {
            runbook: Box::new(rb),
            run_id,
            from,
        },
    ));
    Vec::new()
}

/// The resume was chosen: the pane shows the run as its records leave it, and it goes on.
pub fn start(model: &mut Model, rb: Runbook, run_id: String, from: usize) -> Vec<Effect> {
    if let Some(r) = model.runbooks.active() {
        let text = format!("runbook \"{}\" is running: one run at a time", r.runbook);
        model.notify(text, true, None);
        return Vec::new();
    }
    let mut view = RunPane::new(run_id.clone(), &rb, model.now);
    for r in records_to_resume(model, &run_id) {
        view.apply(&r);
    }
    view.outcome = None;
    view.control = crate::runbook::executor::Control::Run;
    model.runbooks.run = Some(view);
    model.runbooks.shown = true;
    model.mode = Mode::Runbooks;
    // The panels the run's gates read come first; the first of them is selected.
    if let Some(first) = model.panel_order().first() {
        model.selected = *first;
    }
    let step = rb
        .steps
        .get(from)
        .map_or("its end".to_string(), |s| format!("\"{}\"", s.id));
    model.notify(format!("run {run_id} resumes at {step}"), false, Some(8));
    vec![Effect::StartRun {
        runbook: Box::new(rb),
        run_id,
        vars: Vec::new(),
        secrets: Vec::new(),
        resume: Some(Resume {
            from,
            records: model.timeline.clone(),
        }),
    }]
}
