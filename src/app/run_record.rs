//! A run in the console reports to two places: the incident's journal (durable, through the
//! one `JournalWriter`) and the model (live, as `Msg::Run`). Each transition is appended and
//! synced first and only then shown; a record that cannot be made durable stops the run
//! before its next action. Idempotency keys are journaled (`RunbookIntent`) before the first
//! send. Without an incident (the demo) the run is shown but not recorded.
//!
//! Until the runbook domain ships its own journal-backed sink, this is that sink.

use super::msg::Msg;
use crate::incident::event::{RunRef, StepState};
use crate::incident::{Event, JournalWriter, Source};
use crate::runbook::record::{
    IntentStore, RecordError, RunEvent, RunOutcome, RunRecord, RunSink, StepOutcome, new_key,
};
use std::collections::BTreeMap;
use std::sync::Mutex;
use tokio::sync::mpsc;

/// The journal event for a run transition, if the timeline records it. Gate readings, output
/// lines and spawned processes stay live only (they would flood the timeline); attempts are
/// recorded as the answer to their intent.
pub fn journal_event(run: &RunRef, event: &RunEvent) -> Option<Event> {
    let step = |step: &str, state: StepState, detail: Option<String>| Event::RunbookStep {
        run: run.clone(),
        step: step.to_string(),
        state,
        detail,
    };
    Some(match event {
        RunEvent::RunStarted { dry_run, .. } => {
            if *dry_run {
                return None;
            }
            Event::RunbookRun {
                run: run.clone(),
                state: StepState::Started,
            }
        }
        RunEvent::RunResumed { from_step } => step(
            from_step,
            StepState::Started,
            Some("run resumed here".into()),
        ),
        RunEvent::StepStarted { step: s, title, .. } => {
            step(s, StepState::Started, Some(title.clone()))
        }
        RunEvent::StepFinished {
            step: s,
            outcome,
            detail,
        } => step(
            s,
            step_state(*outcome),
            Some(
                format!("{outcome:?}: {detail}")
                    .trim_end_matches(": ")
                    .to_string(),
            ),
        ),
        RunEvent::Confirmed { step: s, what } => step(
            s,
            StepState::Started,
            Some(format!("confirmed by typing \"{what}\"")),
        ),
        RunEvent::Declined { step: s, what } => step(
            s,
            StepState::Cancelled,
            Some(format!("\"{what}\" not confirmed")),
        ),
        RunEvent::Batch { step: s, event } => step(
            s,
            StepState::Started,
            Some(super::run::batch_text(&event.batch_event)),
        ),
        RunEvent::Paused { step: s, reason } => step(
            s,
            StepState::Started,
            Some(format!("paused for the operator: {reason}")),
        ),
        RunEvent::Decided { step: s, decision } => step(
            s,
            StepState::Started,
            Some(format!("operator chose {decision:?}")),
        ),
        RunEvent::Attempt {
            step: s,
            idempotency_key: Some(key),
            status,
            error,
            attempt,
            ..
        } => Event::RunbookAck {
            run_id: run.run_id.clone(),
            step: s.clone(),
            idempotency_key: key.clone(),
            outcome: match (status, error) {
                (Some(code), _) => format!("attempt {attempt}: HTTP {code}"),
                (None, Some(e)) => format!("attempt {attempt}: {e}"),
                (None, None) => format!("attempt {attempt}"),
            },
        },
        RunEvent::RunFinished { outcome } => Event::RunbookRun {
            run: run.clone(),
            state: match outcome {
                RunOutcome::Succeeded | RunOutcome::DryRun => StepState::Succeeded,
                RunOutcome::Failed => StepState::Failed,
                RunOutcome::Aborted => StepState::Cancelled,
            },
        },
        RunEvent::Attempt { .. }
        | RunEvent::GateReading { .. }
        | RunEvent::Output { .. }
        | RunEvent::Spawned { .. } => return None,
    })
}

fn step_state(o: StepOutcome) -> StepState {
    match o {
        StepOutcome::Succeeded | StepOutcome::Skipped => StepState::Succeeded,
        StepOutcome::Failed => StepState::Failed,
        StepOutcome::TimedOut => StepState::TimedOut,
        StepOutcome::Cancelled | StepOutcome::Declined => StepState::Cancelled,
    }
}

/// Append and wait for the sync from the executor's (synchronous) sink call. The writer is its
/// own thread, so waiting here never needs the async runtime that runs the executor.
fn append_durably(
    journal: &JournalWriter,
    actor: &str,
    event: Event,
) -> Result<crate::incident::Record, RecordError> {
    futures::executor::block_on(journal.append(Source::Runbook, actor, event)).map_err(|e| {
        RecordError {
            path: "the incident journal".into(),
            source: std::io::Error::other(e.to_string()),
        }
    })
}

/// The console's sink for one run.
pub struct ConsoleSink {
    pub run: RunRef,
    pub journal: Option<JournalWriter>,
    pub tx: mpsc::UnboundedSender<Msg>,
}

impl RunSink for ConsoleSink {
    fn record(&self, record: &RunRecord) -> Result<(), RecordError> {
        let journaled = match (&self.journal, journal_event(&self.run, &record.event)) {
            (Some(j), Some(ev)) => Some(append_durably(j, &self.run.run_id, ev)?),
            _ => None,
        };
        // The console may have gone; the record stands either way.
        let _ = self.tx.send(Msg::Run {
            record: Box::new(record.clone()),
            journaled: journaled.map(Box::new),
        });
        Ok(())
    }
}

/// Idempotency keys journaled as `RunbookIntent` before they are returned; without an incident
/// they are kept in memory (a rehearsal).
pub struct JournalIntents {
    pub run_id: String,
    pub journal: Option<JournalWriter>,
    pub tx: mpsc::UnboundedSender<Msg>,
    pub keys: Mutex<BTreeMap<String, String>>,
}

impl IntentStore for JournalIntents {
    fn key(&self, scope: &str) -> Result<String, RecordError> {
        let mut keys = self.keys.lock().map_err(|_| RecordError {
            path: "the run's keys".into(),
            source: std::io::Error::other("poisoned"),
        })?;
        if let Some(k) = keys.get(scope) {
            return Ok(k.clone());
        }
        let key = new_key();
        if let Some(j) = &self.journal {
            // Scopes are RUN/STEP[/TARGET/BATCH].
            let step = scope.split('/').nth(1).unwrap_or(scope).to_string();
            let r = append_durably(
                j,
                &self.run_id,
                Event::RunbookIntent {
                    run_id: self.run_id.clone(),
                    step,
                    idempotency_key: key.clone(),
                    request: scope.to_string(),
                },
            )?;
            let _ = self.tx.send(Msg::Journaled(Box::new(r)));
        }
        keys.insert(scope.to_string(), key.clone());
        Ok(key)
    }
}
