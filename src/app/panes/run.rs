//! A runbook run as the console shows it: each step's state, the batch in progress (n of m),
//! the last gate reading, what the run waits for, and the tail of its output. Built only from
//! the executor's events, so the pane shows what the journal records.

use crate::runbook::batch::BatchEvent;
use crate::runbook::executor::Control;
use crate::runbook::journal::detail::answer;
use crate::runbook::model::Runbook;
use crate::runbook::report::{RunEvent, RunOutcome, RunRecord, StepOutcome};
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, VecDeque};

/// Output lines kept for the pane.
pub const OUTPUT_TAIL: usize = 50;

/// Where a step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepMark {
    Pending,
    Running,
    Done(StepOutcome),
}

/// One step's line.
#[derive(Debug, Clone, PartialEq)]
pub struct StepLine {
    pub id: String,
    pub kind: &'static str,
    pub title: String,
    pub mark: StepMark,
    pub detail: String,
}

/// The batch in progress.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchProgress {
    pub step: String,
    pub batch: usize,
    /// Batches in all, when the targets were known before the run.
    pub of: Option<usize>,
    pub targets: Vec<String>,
    pub healthy: usize,
    pub lost: usize,
}

/// A run's state.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPane {
    pub run_id: String,
    pub runbook: String,
    pub steps: Vec<StepLine>,
    pub batch: Option<BatchProgress>,
    /// Batches per batch step, when known.
    pub batch_totals: BTreeMap<String, usize>,
    /// The last gate reading: step, reading, verdict.
    pub gate: Option<(String, String, String)>,
    /// What the run waits for (a confirmation, a decision), if anything.
    pub waiting: Option<String>,
    pub output: VecDeque<String>,
    /// What the console asked of the run (it takes effect between actions).
    pub control: Control,
    pub outcome: Option<RunOutcome>,
    pub started: DateTime<Utc>,
    /// Events seen.
    pub events: u64,
}

impl RunPane {
    /// A run of `rb` about to start.
    pub fn new(run_id: String, rb: &Runbook, now: DateTime<Utc>) -> RunPane {
        RunPane {
            run_id,
            runbook: rb.name.clone(),
            steps: rb
                .steps
                .iter()
                .map(|s| StepLine {
                    id: s.id.clone(),
                    kind: s.kind.name(),
                    title: crate::sanitize::line(&s.title).into_owned(),
                    mark: StepMark::Pending,
                    detail: String::new(),
                })
                .collect(),
            batch: None,
            batch_totals: BTreeMap::new(),
            gate: None,
            waiting: None,
            output: VecDeque::new(),
            control: Control::Run,
            outcome: None,
            started: now,
            events: 0,
        }
    }

    pub fn finished(&self) -> bool {
        self.outcome.is_some()
    }

    /// Index of the step running, if any.
    pub fn current(&self) -> Option<usize> {
        self.steps.iter().position(|s| s.mark == StepMark::Running)
    }

    fn line(&mut self, id: &str) -> Option<&mut StepLine> {
        self.steps.iter_mut().find(|s| s.id == id)
    }

    /// Apply one event from the executor.
    pub fn apply(&mut self, r: &RunRecord) {
        self.events += 1;
        match &r.event {
            RunEvent::StepStarted { step, title, .. } => {
                self.gate = None;
                if let Some(l) = self.line(step) {
                    l.mark = StepMark::Running;
                    l.title = crate::sanitize::line(title).into_owned();
                    l.detail.clear();
                }
            }
            RunEvent::StepFinished {
                step,
                outcome,
                detail,
            } => {
                if let Some(l) = self.line(step) {
                    l.mark = StepMark::Done(*outcome);
                    l.detail = crate::sanitize::line(detail).into_owned();
                }
                if self.batch.as_ref().is_some_and(|b| &b.step == step) {
                    self.batch = None;
                }
                self.waiting = None;
            }
            RunEvent::Attempt {
                step,
                target,
                attempt,
                method,
                status,
                error,
                ..
            } => {
                let what = answer(*status, error.as_deref());
                let on = target.as_ref().map(|t| format!(" {t}")).unwrap_or_default();
                if let Some(l) = self.line(step) {
                    l.detail =
                        crate::sanitize::line(&format!("{method}{on} attempt {attempt}: {what}"))
                            .into_owned();
                }
            }
            RunEvent::GateReading {
                step,
                reading,
                verdict,
            } => {
                self.gate = Some((
                    step.clone(),
                    crate::sanitize::line(reading).into_owned(),
                    crate::sanitize::line(verdict).into_owned(),
                ));
            }
            RunEvent::Batch { step, batch_event } => self.batch_event(step, batch_event),
            RunEvent::Output { line, .. } => {
                self.output
                    .push_back(crate::sanitize::line(line).into_owned());
                while self.output.len() > OUTPUT_TAIL {
                    self.output.pop_front();
                }
            }
            RunEvent::Spawned { argv, .. } => {
                self.output.push_back(
                    crate::sanitize::line(&format!("$ {}", argv.join(" "))).into_owned(),
                );
                while self.output.len() > OUTPUT_TAIL {
                    self.output.pop_front();
                }
            }
            RunEvent::Paused { step, reason } => {
                self.waiting = Some(
                    crate::sanitize::line(&format!("{step} needs a decision: {reason}"))
                        .into_owned(),
                );
            }
            RunEvent::Decided { .. } | RunEvent::Confirmed { .. } | RunEvent::Declined { .. } => {
                self.waiting = None;
            }
            RunEvent::RunFinished { outcome } => {
                self.outcome = Some(*outcome);
                self.waiting = None;
                for l in &mut self.steps {
                    if l.mark == StepMark::Running {
                        l.mark = StepMark::Done(StepOutcome::Cancelled);
                    }
                }
            }
            RunEvent::RunStarted { .. } | RunEvent::RunResumed { .. } => {}
        }
    }

    fn batch_event(&mut self, step: &str, ev: &BatchEvent) {
        match ev {
            BatchEvent::BatchStarted { batch, targets } => {
                self.batch = Some(BatchProgress {
                    step: step.to_string(),
                    batch: *batch,
                    of: self.batch_totals.get(step).copied(),
                    targets: targets
                        .iter()
                        .map(|t| crate::sanitize::line(t).into_owned())
                        .collect(),
                    healthy: 0,
                    lost: 0,
                });
            }
            BatchEvent::InstanceHealthy { .. } => {
                if let Some(b) = &mut self.batch {
                    b.healthy += 1;
                }
            }
            BatchEvent::InstanceLost { .. } => {
                if let Some(b) = &mut self.batch {
                    b.lost += 1;
                }
            }
            _ => {}
        }
        if let Some(l) = self.line(step) {
            l.detail = ev.to_string();
        }
    }
}
