//! Resuming a run after a crash, from its records: completed steps are never re-run, a step
//! that started but did not finish is in doubt and needs the operator's decision, and a
//! runbook whose content changed since the run started cannot resume.

use super::batch::Decision;
use super::model::Runbook;
use super::report::{RunEvent, RunOutcome, RunRecord, StepOutcome};

/// Where a run continues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumePoint {
    pub run_id: String,
    /// Steps done (succeeded, or failed and then passed over by the operator).
    pub completed: Vec<String>,
    /// A step started but not finished, or failed with no decision recorded: the operator
    /// decides (retry re-sends with the same idempotency keys; continue skips it).
    pub in_doubt: Option<String>,
    /// Index of the first step to run when there is nothing in doubt.
    pub next_step: usize,
}

/// Why a run cannot resume.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResumeError {
    #[error("no run was recorded; start a new run")]
    NoRun,
    #[error("run \"{0}\" already finished ({outcome}); start a new run", outcome = .1.word())]
    Finished(String, RunOutcome),
    #[error(
        "runbook \"{name}\" changed since run \"{run_id}\" started (recorded {recorded}, now {current}); a changed runbook cannot resume: start a new run"
    )]
    Changed {
        name: String,
        run_id: String,
        recorded: String,
        current: String,
    },
    #[error("run \"{0}\" was a dry run; nothing to resume")]
    DryRun(String),
    #[error("the run recorded step \"{0}\", which the runbook does not have")]
    UnknownStep(String),
}

/// Work out where `records` (one run's, in order) leave `rb`.
pub fn resume_point(rb: &Runbook, records: &[RunRecord]) -> Result<ResumePoint, ResumeError> {
    let first = records.first().ok_or(ResumeError::NoRun)?;
    let run_id = first.run_id.clone();
    let mut started = false;
    let mut completed: Vec<String> = Vec::new();
    let mut open: Option<String> = None;
    let mut failed: Option<String> = None;
    for r in records.iter().filter(|r| r.run_id == run_id) {
        match &r.event {
            RunEvent::RunStarted { hash, dry_run, .. } => {
                if *dry_run {
                    return Err(ResumeError::DryRun(run_id));
                }
                if *hash != rb.hash {
                    return Err(ResumeError::Changed {
                        name: rb.name.clone(),
                        run_id,
                        recorded: hash.clone(),
                        current: rb.hash.clone(),
                    });
                }
                started = true;
            }
            RunEvent::StepStarted { step, .. } => {
                if rb.step(step).is_none() {
                    return Err(ResumeError::UnknownStep(step.clone()));
                }
                open = Some(step.clone());
                failed = None;
            }
            RunEvent::StepFinished { step, outcome, .. } => {
                open = None;
                match outcome {
                    StepOutcome::Succeeded | StepOutcome::Skipped => completed.push(step.clone()),
                    _ => failed = Some(step.clone()),
                }
            }
            RunEvent::Decided { step, decision } if failed.as_deref() == Some(step) => {
                if *decision == Decision::Continue {
                    completed.push(step.clone());
                }
                failed = None;
            }
            RunEvent::RunFinished { outcome } => {
                return Err(ResumeError::Finished(run_id, *outcome));
            }
            _ => {}
        }
    }
    if !started {
        return Err(ResumeError::NoRun);
    }
    let in_doubt = open.or(failed);
    let next_step = rb
        .steps
        .iter()
        .position(|s| !completed.contains(&s.id))
        .unwrap_or(rb.steps.len());
    Ok(ResumePoint {
        run_id,
        completed,
        in_doubt,
        next_step,
    })
}

/// Read a run's JSONL record; a torn last line (a crash mid-write) is ignored.
pub fn read_records(path: &std::path::Path) -> std::io::Result<Vec<RunRecord>> {
    let text = std::fs::read_to_string(path)?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}
