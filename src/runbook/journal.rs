//! A run recorded on the incident's timeline: [`JournalSink`] turns every transition of a run
//! into a journal record, [`JournalIntents`] writes each idempotency key as a `RunbookIntent`
//! (synced) before the first send, and [`run_records`] / [`intents_of`] read a run back from
//! the journal so `--resume` continues where it stopped with the same keys.
//!
//! The journal's vocabulary has four runbook events (run, step, intent, ack). Transitions map
//! onto them directly; the rest of a run (confirmations, pauses and decisions, batch progress,
//! spawned commands, attempts without a key) is a `RunbookStep` in state `started` whose detail
//! begins with a fixed word (`confirmed:`, `decision:`, …). A step's own start has the detail
//! `KIND: TITLE`, and no step kind is one of those words, so reading back is unambiguous. The
//! wording of every detail is [`detail`]'s, for this writer and every reader.
//! Gate readings and output lines stay on the live sinks (the console, the progress lines): the
//! journal keeps each step's verdict and output tail in its finishing record.

pub mod detail;

use super::model::Kind;
use super::report::{IntentStore, RecordError, RunEvent, RunOutcome, RunRecord, RunSink, new_key};
use crate::incident::event::{Event, RunRef, Source, StepState};
use crate::incident::record::Record;
use crate::incident::writer::{JournalWriter, WriteError};
use detail::{Attempted, Confirmation, StepDetail};
pub use detail::{DECISION, DECLINED, SKIPPED};
use std::collections::BTreeMap;
use std::sync::Mutex;

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

    /// The journal event for `e`, or `None` when it stays on the live sinks only.
    fn event(&self, e: &RunEvent) -> Option<Event> {
        journal_event(&self.run, e)
    }
}

fn step_record(run: &RunRef, step: &str, state: StepState, detail: String) -> Event {
    Event::RunbookStep {
        run: run.clone(),
        step: step.to_string(),
        state,
        detail: Some(detail),
    }
}

fn info(run: &RunRef, step: &str, detail: StepDetail) -> Event {
    step_record(run, step, StepState::Started, detail.detail())
}

/// The journal event run `run`'s transition `e` is recorded as, or `None` when it stays on
/// the live sinks only (gate readings, output lines).
pub fn journal_event(run: &RunRef, e: &RunEvent) -> Option<Event> {
    Some(match e {
        RunEvent::RunStarted { .. } | RunEvent::RunResumed { .. } => Event::RunbookRun {
            run: run.clone(),
            state: StepState::Started,
        },
        RunEvent::RunFinished { outcome } => Event::RunbookRun {
            run: run.clone(),
            state: run_state(*outcome),
        },
        RunEvent::StepStarted { step, kind, title } => info(
            run,
            step,
            StepDetail::Start {
                kind: kind.clone(),
                title: title.clone(),
            },
        ),
        RunEvent::StepFinished {
            step,
            outcome,
            detail,
        } => {
            let (state, detail) = detail::finished(*outcome, detail);
            step_record(run, step, state, detail)
        }
        // The postmortem tells a check no one made from one a person confirmed.
        RunEvent::Confirmed {
            step,
            what,
            automatic,
        } => info(
            run,
            step,
            StepDetail::Confirmed {
                by: if *automatic {
                    Confirmation::Assumed
                } else {
                    Confirmation::Typed
                },
                what: what.clone(),
            },
        ),
        RunEvent::Declined { step, what } => {
            info(run, step, StepDetail::NotConfirmed { what: what.clone() })
        }
        RunEvent::Paused { step, reason } => info(
            run,
            step,
            StepDetail::Paused {
                reason: reason.clone(),
            },
        ),
        RunEvent::Decided { step, decision } => info(run, step, StepDetail::Decided(*decision)),
        RunEvent::Batch { step, batch_event } => {
            info(run, step, StepDetail::Batch(batch_event.clone()))
        }
        RunEvent::Spawned { step, target, argv } => info(
            run,
            step,
            StepDetail::Spawned {
                argv: argv.clone(),
                target: target.clone(),
            },
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
            let attempt = Attempted {
                attempt: *attempt,
                target: target.clone(),
                answer: detail::answer(*status, error.as_deref()),
            };
            match idempotency_key {
                Some(key) => Event::RunbookAck {
                    run_id: run.run_id.clone(),
                    step: step.clone(),
                    idempotency_key: key.clone(),
                    outcome: attempt.outcome(),
                },
                None => info(
                    run,
                    step,
                    StepDetail::Attempt {
                        attempt,
                        request: format!("{method} {url}"),
                    },
                ),
            }
        }
        RunEvent::GateReading { .. } | RunEvent::Output { .. } => return None,
    })
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
    let step = step.to_string();
    Some(match state {
        StepState::Started => match StepDetail::parse(detail)? {
            StepDetail::Decided(decision) => RunEvent::Decided { step, decision },
            StepDetail::Start { kind, title } if Kind::from_name(&kind).is_some() => {
                RunEvent::StepStarted { step, kind, title }
            }
            _ => return None,
        },
        // Nothing writes it today; if something does, the step is in doubt, as it says.
        StepState::InDoubt => RunEvent::StepStarted {
            step,
            kind: String::new(),
            title: detail.to_string(),
        },
        _ => RunEvent::StepFinished {
            step,
            outcome: detail::outcome_of(state, detail)?,
            detail: detail.to_string(),
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

/// A record in words, as `warroom incident timeline` and the rehearsal's report print it: a
/// run's step details in words ([`detail::words`]), everything else as the journal's own
/// [`crate::incident::timeline::describe`] says it.
pub fn describe(event: &Event) -> String {
    match event {
        Event::RunbookStep {
            run,
            step,
            state,
            detail: Some(d),
        } => crate::incident::timeline::describe(&Event::RunbookStep {
            run: run.clone(),
            step: step.clone(),
            state: *state,
            detail: Some(detail::words(d)),
        }),
        other => crate::incident::timeline::describe(other),
    }
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
