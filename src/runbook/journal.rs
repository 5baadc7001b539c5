//! A run recorded on the incident's timeline: [`JournalSink`] turns every transition of a run
//! into a journal record, [`JournalIntents`] writes each idempotency key as a `RunbookIntent`
//! (synced) before the first send, and [`run_records`] / [`intents_of`] read a run back from
//! the journal so `--resume` continues where it stopped with the same keys.
//!
//! The journal's vocabulary has four runbook events (run, step, intent, ack). Transitions map
//! onto them directly; the rest of a run (confirmations, pauses and decisions, batch progress,
//! spawned commands, attempts without a key) is a `RunbookStep` in state `started` whose detail
//! begins with a fixed word (`confirmed:`, `decision:`, …). A step's own start has the detail
//! `KIND: TITLE`, and no step kind is one of those words, so reading back is unambiguous.
//! Gate readings and output lines stay on the live sinks (the console, the progress lines): the
//! journal keeps each step's verdict and output tail in its finishing record.

use super::batch::Decision;
use super::model::Kind;
use super::report::{
    IntentStore, RecordError, RunEvent, RunOutcome, RunRecord, RunSink, StepOutcome, new_key,
};
use crate::incident::event::{Event, RunRef, Source, StepState};
use crate::incident::record::Record;
use crate::incident::writer::{JournalWriter, WriteError};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Whether `kind` names a step kind: a `started` step record whose detail begins with `KIND: `
/// is a step start. The kinds are the model's, declared once ([`Kind::ALL`]).
fn is_kind(kind: &str) -> bool {
    Kind::ALL.iter().any(|k| k.name() == kind)
}
/// A step's outcome that the journal's states do not have is kept as a detail prefix.
pub const SKIPPED: &str = "skipped: ";
pub const DECLINED: &str = "declined: ";
/// An operator's decision at a pause (resume needs it: "continue" passes over a failed step).
pub const DECISION: &str = "decision: ";

/// Append `event` and wait until it is synced. The executor's sink is synchronous, and a record
/// must be durable before the run goes on, so this blocks the thread: on a multi-threaded
/// runtime the worker hands its other tasks over first (`block_in_place`); the console runs
/// its executors on threads of their own (`app::workers::runbooks`).
fn append_now(writer: &JournalWriter, actor: &str, event: Event) -> Result<Record, WriteError> {
    let fut = writer.append(Source::Runbook, actor, event);
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| futures::executor::block_on(fut))
        }
        _ => futures::executor::block_on(fut),
    }
}

fn not_recorded(e: WriteError) -> RecordError {
    RecordError {
        path: "the incident journal".into(),
        source: std::io::Error::other(e.to_string()),
    }
}

fn run_state(o: RunOutcome) -> StepState {
    match o {
        RunOutcome::Succeeded | RunOutcome::DryRun => StepState::Succeeded,
        RunOutcome::Failed => StepState::Failed,
        RunOutcome::Aborted => StepState::Cancelled,
    }
}

fn step_state(o: StepOutcome) -> (StepState, &'static str) {
    match o {
        StepOutcome::Succeeded => (StepState::Succeeded, ""),
        StepOutcome::Skipped => (StepState::Succeeded, SKIPPED),
        StepOutcome::Failed => (StepState::Failed, ""),
        StepOutcome::TimedOut => (StepState::TimedOut, ""),
        StepOutcome::Cancelled => (StepState::Cancelled, ""),
        StepOutcome::Declined => (StepState::Cancelled, DECLINED),
    }
}

/// Records a run's transitions on the incident's timeline, each synced before the run goes on.
pub struct JournalSink {
    writer: JournalWriter,
    run: RunRef,
}

impl JournalSink {
    /// A sink for the run `run` (its id, runbook name and hash appear on every record).
    pub fn new(writer: JournalWriter, run: RunRef) -> Self {
        JournalSink { writer, run }
    }

    fn step(&self, step: &str, state: StepState, detail: String) -> Event {
        Event::RunbookStep {
            run: self.run.clone(),
            step: step.to_string(),
            state,
            detail: Some(detail),
        }
    }

    fn info(&self, step: &str, detail: String) -> Event {
        self.step(step, StepState::Started, detail)
    }

    /// The journal event for `e`, or `None` when it stays on the live sinks only.
    fn event(&self, e: &RunEvent) -> Option<Event> {
        Some(match e {
            RunEvent::RunStarted { .. } | RunEvent::RunResumed { .. } => Event::RunbookRun {
                run: self.run.clone(),
                state: StepState::Started,
            },
            RunEvent::RunFinished { outcome } => Event::RunbookRun {
                run: self.run.clone(),
                state: run_state(*outcome),
            },
            RunEvent::StepStarted { step, kind, title } => {
                self.step(step, StepState::Started, format!("{kind}: {title}"))
            }
            RunEvent::StepFinished {
                step,
                outcome,
                detail,
            } => {
                let (state, prefix) = step_state(*outcome);
                self.step(step, state, format!("{prefix}{detail}"))
            }
            RunEvent::Confirmed {
                step,
                what,
                automatic: false,
            } => self.info(step, format!("confirmed: the operator typed \"{what}\"")),
            // The postmortem tells a check no one made from one a person confirmed.
            RunEvent::Confirmed { step, what, .. } => self.info(
                step,
                format!("confirmed: assumed (--yes), \"{what}\" was not typed"),
            ),
            RunEvent::Declined { step, what } => {
                self.info(step, format!("not confirmed: \"{what}\" was not typed"))
            }
            RunEvent::Paused { step, reason } => self.info(step, format!("paused: {reason}")),
            RunEvent::Decided { step, decision } => self.info(
                step,
                format!("{DECISION}{}", format!("{decision:?}").to_lowercase()),
            ),
            RunEvent::Batch { step, batch_event } => self.info(step, batch_event.detail()),
            RunEvent::Spawned { step, target, argv } => self.info(
                step,
                format!(
                    "spawned: {}{}",
                    serde_json::to_string(argv).unwrap_or_default(),
                    target
                        .as_ref()
                        .map(|t| format!(" on {t}"))
                        .unwrap_or_default()
                ),
            ),
            RunEvent::Attempt {
                step,
                target,
                attempt,
                method,
                url,
                idempotency_key,
                status,
                error,
            } => {
                let answer = status
                    .map(|s| format!("HTTP {s}"))
                    .or_else(|| error.clone())
                    .unwrap_or_default();
                let on = target
                    .as_ref()
                    .map(|t| format!(" on {t}"))
                    .unwrap_or_default();
                match idempotency_key {
                    Some(key) => Event::RunbookAck {
                        run_id: self.run.run_id.clone(),
                        step: step.clone(),
                        idempotency_key: key.clone(),
                        outcome: format!("attempt {attempt}{on}: {answer}"),
                    },
                    None => self.info(
                        step,
                        format!("attempt {attempt}{on}: {method} {url}: {answer}"),
                    ),
                }
            }
            RunEvent::GateReading { .. } | RunEvent::Output { .. } => return None,
        })
    }
}

impl JournalSink {
    /// Record one transition and hand back the synced record (`None` when the transition
    /// stays on the live sinks only), for a caller that shows it, such as the console.
    pub fn append(&self, record: &RunRecord) -> Result<Option<Record>, RecordError> {
        let Some(event) = self.event(&record.event) else {
            return Ok(None);
        };
        append_now(&self.writer, &self.run.run_id, event)
            .map(Some)
            .map_err(not_recorded)
    }
}

impl RunSink for JournalSink {
    fn record(&self, record: &RunRecord) -> Result<(), RecordError> {
        self.append(record).map(|_| ())
    }
}

/// Idempotency keys as `RunbookIntent` records: created once per scope, synced before the key
/// is returned (so before the first send), and found again after a restart.
pub struct JournalIntents {
    writer: JournalWriter,
    run_id: String,
    keys: Mutex<BTreeMap<String, String>>,
}

impl JournalIntents {
    /// The store for run `run_id`, with the keys `records` (the journal so far) already hold.
    pub fn new(writer: JournalWriter, run_id: &str, records: &[Record]) -> Self {
        JournalIntents {
            writer,
            run_id: run_id.to_string(),
            keys: Mutex::new(intents_of(records, run_id)),
        }
    }

    fn poisoned() -> RecordError {
        RecordError {
            path: "the incident journal".into(),
            source: std::io::Error::other("the key table was poisoned by a panic"),
        }
    }
}

impl JournalIntents {
    /// The key for `scope`, and the synced `RunbookIntent` record when the key is new.
    pub fn key_recorded(
        &self,
        scope: &str,
        request: &str,
    ) -> Result<(String, Option<Record>), RecordError> {
        let mut keys = self.keys.lock().map_err(|_| Self::poisoned())?;
        if let Some(k) = keys.get(scope) {
            return Ok((k.clone(), None));
        }
        let key = new_key();
        // The scope is "RUN/STEP[/TARGET/BATCH]"; the journal keeps the part after the run.
        let step = scope
            .strip_prefix(&format!("{}/", self.run_id))
            .unwrap_or(scope);
        let record = append_now(
            &self.writer,
            &self.run_id,
            Event::RunbookIntent {
                run_id: self.run_id.clone(),
                step: step.to_string(),
                idempotency_key: key.clone(),
                request: request.to_string(),
            },
        )
        .map_err(not_recorded)?;
        keys.insert(scope.to_string(), key.clone());
        Ok((key, Some(record)))
    }
}

impl IntentStore for JournalIntents {
    fn key(&self, scope: &str) -> Result<String, RecordError> {
        self.key_for(scope, "")
    }

    fn key_for(&self, scope: &str, request: &str) -> Result<String, RecordError> {
        self.key_recorded(scope, request).map(|(k, _)| k)
    }
}

/// The idempotency keys run `run_id` recorded, by scope.
pub fn intents_of(records: &[Record], run_id: &str) -> BTreeMap<String, String> {
    records
        .iter()
        .filter_map(|r| match &r.kind {
            Event::RunbookIntent {
                run_id: id,
                step,
                idempotency_key,
                ..
            } if id == run_id => Some((format!("{run_id}/{step}"), idempotency_key.clone())),
            _ => None,
        })
        .collect()
}

/// Run `run_id` as the journal recorded it, in the executor's terms, for [`super::resume`]:
/// its start (with the runbook's hash), step starts and ends, decisions and its end.
pub fn run_records(records: &[Record], run_id: &str) -> Vec<RunRecord> {
    let mut out = Vec::new();
    for r in records {
        let event = match &r.kind {
            Event::RunbookRun { run, state } if run.run_id == run_id => match state {
                StepState::Started => RunEvent::RunStarted {
                    runbook: run.runbook.clone(),
                    hash: run.hash.clone(),
                    dry_run: false,
                    variables: BTreeMap::new(),
                },
                StepState::Succeeded => RunEvent::RunFinished {
                    outcome: RunOutcome::Succeeded,
                },
                StepState::Cancelled => RunEvent::RunFinished {
                    outcome: RunOutcome::Aborted,
                },
                _ => RunEvent::RunFinished {
                    outcome: RunOutcome::Failed,
                },
            },
            Event::RunbookStep {
                run,
                step,
                state,
                detail,
            } if run.run_id == run_id => {
                let detail = detail.clone().unwrap_or_default();
                match step_event(step, *state, &detail) {
                    Some(e) => e,
                    None => continue,
                }
            }
            _ => continue,
        };
        out.push(RunRecord {
            at: r.time,
            run_id: run_id.to_string(),
            event,
        });
    }
    out
}

fn step_event(step: &str, state: StepState, detail: &str) -> Option<RunEvent> {
    let finished = |outcome| RunEvent::StepFinished {
        step: step.to_string(),
        outcome,
        detail: detail.to_string(),
    };
    Some(match state {
        StepState::Started => {
            if let Some(d) = detail.strip_prefix(DECISION) {
                let decision = match d {
                    "continue" => Decision::Continue,
                    "retry" => Decision::Retry,
                    _ => Decision::Abort,
                };
                return Some(RunEvent::Decided {
                    step: step.to_string(),
                    decision,
                });
            }
            let (kind, title) = detail.split_once(": ")?;
            if !is_kind(kind) {
                return None;
            }
            RunEvent::StepStarted {
                step: step.to_string(),
                kind: kind.to_string(),
                title: title.to_string(),
            }
        }
        StepState::Succeeded if detail.starts_with(SKIPPED) => finished(StepOutcome::Skipped),
        StepState::Succeeded => finished(StepOutcome::Succeeded),
        StepState::Failed => finished(StepOutcome::Failed),
        StepState::TimedOut => finished(StepOutcome::TimedOut),
        StepState::Cancelled if detail.starts_with(DECLINED) => finished(StepOutcome::Declined),
        StepState::Cancelled => finished(StepOutcome::Cancelled),
        // Nothing writes it today; if something does, the step is in doubt, as it says.
        StepState::InDoubt => RunEvent::StepStarted {
            step: step.to_string(),
            kind: String::new(),
            title: detail.to_string(),
        },
    })
}

/// The runs recorded in `records` that have not finished, oldest first (for `--resume` without
/// an id and for the console's "resume" offer).
pub fn unfinished_runs(records: &[Record]) -> Vec<RunRef> {
    let mut open: Vec<RunRef> = Vec::new();
    for r in records {
        if let Event::RunbookRun { run, state } = &r.kind {
            open.retain(|o| o.run_id != run.run_id);
            if *state == StepState::Started {
                open.push(run.clone());
            }
        }
    }
    open
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incident::event::Source;
    use crate::runbook::model::Kind;

    fn started(kind: &str) -> Record {
        Record {
            seq: 1,
            time: chrono::Utc::now(),
            source: Source::Runbook,
            actor: "r".into(),
            host: String::new(),
            kind: Event::RunbookStep {
                run: RunRef {
                    run_id: "r".into(),
                    runbook: "rb".into(),
                    hash: "h".into(),
                },
                step: "s".into(),
                state: StepState::Started,
                detail: Some(format!("{kind}: a title")),
            },
        }
    }

    /// Every kind's step start is read back (a hand-typed list once forgot kinds: resume then
    /// lost the start of such a step and could not see it in doubt).
    #[test]
    fn every_step_kind_start_is_read_back() {
        for k in Kind::ALL {
            let back = run_records(&[started(k.name())], "r");
            assert!(
                matches!(&back[..], [RunRecord { event: RunEvent::StepStarted { kind, .. }, .. }] if kind == k.name()),
                "{}: {back:?}",
                k.name()
            );
        }
        assert!(run_records(&[started("confirmed")], "r").is_empty());
    }
}
