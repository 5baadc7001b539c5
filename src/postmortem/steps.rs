//! The runbook steps as the draft tells them: each step's title (from its start record,
//! `KIND: TITLE`), when it started and ended, how it ended, whether a confirmation came from a
//! person or was given automatically, what it sent, and for a batch which targets it acted on.
//! Raw answers (HTTP bodies, command output) stay in the journal; the draft names the step by
//! its title and says how it ended. The records are read in the runbook's own words
//! ([`crate::runbook::journal::detail`]) and its step kinds ([`Kind`]).

use crate::incident::event::{Event, StepState};
use crate::incident::record::Record;
use crate::runbook::journal::detail::{self, Attempted, Confirmation, StepDetail};
use crate::runbook::model::Kind;
use crate::runbook::report::StepOutcome;
use chrono::{DateTime, Duration, Utc};
/// A confirmation this soon after the step asked for it was not typed by a person: `--yes`
/// and a rehearsal's plays confirm at once; nobody types a word and Enter in a quarter second.
pub const AUTOMATIC: Duration = Duration::milliseconds(250);

/// One step of one run, as it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRun {
    pub run_id: String,
    pub runbook: String,
    /// The step's id in the runbook (kept for the full timeline and JSON, never for prose).
    pub id: String,
    /// `http`, `batch`, `manual`, …; `None` when the journal has no start record for it.
    pub kind: Option<String>,
    /// The step's title as it ran (variables filled in), else its id in words.
    pub title: String,
    pub started: DateTime<Utc>,
    pub finished: Option<DateTime<Utc>>,
    /// How it ended; `None` while it had not ended when the journal stops.
    pub state: Option<StepState>,
    /// Skipped (its condition already held), declined (not confirmed).
    pub skipped: bool,
    pub declined: bool,
    /// A confirmation was recorded, and whether it came at once (not from a person).
    pub confirmed: bool,
    pub auto_confirmed: bool,
    /// The requests it sent (`POST url body`), as the intents recorded them.
    pub requests: Vec<String>,
    /// Targets a batch acted on (an answer in 2xx), in order.
    pub acted_on: Vec<String>,
    /// When the run it belongs to ended, and how (`None`: still running).
    pub run_end: Option<(DateTime<Utc>, StepState)>,
    /// The time of the step's latest record (a confirmation is compared with it: the prompt
    /// follows the record before it at once).
    pub latest: DateTime<Utc>,
    /// Why it stopped short, as the journal says it: the reason of its last pause (a batch's
    /// budget exhausted, a gate not passed), else the detail of a failed or cancelled end.
    pub stopped: Option<String>,
}

impl StepRun {
    /// True for the steps that change something (and for steps of unknown kind: the journal
    /// kept only their outcome, and they are all the draft knows of them).
    pub fn acting(&self) -> bool {
        self.kind
            .as_deref()
            .is_none_or(|k| Kind::from_name(k).is_some_and(Kind::acts))
    }

    pub fn manual(&self) -> bool {
        self.kind.as_deref() == Some(Kind::Manual.name())
    }

    pub fn batch(&self) -> bool {
        self.kind.as_deref() == Some(Kind::Batch.name())
    }

    /// When it stopped doing anything: its end, else the end of its run, else `last` (the
    /// journal's last record).
    pub fn until(&self, last: DateTime<Utc>) -> DateTime<Utc> {
        self.finished
            .or(self.run_end.map(|e| e.0))
            .unwrap_or(last)
            .max(self.started)
    }

    /// The outcome in words: "succeeded", "failed", "stopped before it finished", …
    pub fn outcome(&self) -> String {
        if self.skipped {
            return "was skipped (its condition already held)".into();
        }
        if self.declined {
            return "was not confirmed and did not run".into();
        }
        match self.state {
            Some(StepState::Succeeded) => "succeeded".into(),
            Some(StepState::Failed) => "failed".into(),
            Some(StepState::TimedOut) => "timed out".into(),
            Some(StepState::Cancelled) => "was cancelled".into(),
            Some(StepState::InDoubt) => "is in doubt (no answer came)".into(),
            Some(StepState::Started) | None => match self.run_end {
                Some((_, StepState::Cancelled)) => "was stopped before it finished".into(),
                Some(_) => "did not finish".into(),
                None => "had not finished when the journal ends".into(),
            },
        }
    }

    /// How it ended and, when it stopped short, why, as the journal says it: "was cancelled:
    /// unavailability budget exhausted: 3 unavailable …, budget 1; nothing started". The one
    /// wording of a step's end: its timeline row and its response's reason read the same.
    pub fn ended(&self) -> String {
        let mut t = self.outcome();
        if let Some(p) = self.progress() {
            t = format!("{t} {p}");
        }
        match self.stopped.as_deref().filter(|_| !self.ok()) {
            Some(why) => format!("{t}: {why}"),
            None => t,
        }
    }

    /// What a batch acted on by its end: "after acting on 10 instances (api-0 to api-9)".
    pub fn progress(&self) -> Option<String> {
        if !self.batch() || self.acted_on.is_empty() {
            return None;
        }
        let n = self.acted_on.len();
        let what = if n == 1 { "instance" } else { "instances" };
        let names = match self.acted_on.as_slice() {
            [one] => one.clone(),
            [first, .., last] => format!("{first} to {last}"),
            [] => String::new(),
        };
        Some(format!("after acting on {n} {what} ({names})"))
    }

    /// True when it acted on nothing: skipped, not confirmed, a batch that ended without
    /// restarting any target (refused by its budget, aborted at a pause), or a step cancelled
    /// before it sent a request. Nothing it did can have an effect.
    pub fn did_nothing(&self) -> bool {
        let ended_short = !self.ok() && self.state.is_some();
        self.skipped
            || self.declined
            || (self.batch() && self.acted_on.is_empty() && (ended_short || self.run_end.is_some()))
            || (self.state == Some(StepState::Cancelled) && self.requests.is_empty())
    }

    /// True when it finished and succeeded.
    pub fn ok(&self) -> bool {
        self.state == Some(StepState::Succeeded) && !self.declined
    }

    /// True when it scales a fleet out (its title says so, or it sent `replicas`).
    pub fn scales_out(&self) -> bool {
        let t = self.title.to_lowercase();
        t.contains("scale out")
            || t.contains("scale the")
            || t.starts_with("scale ")
            || self
                .requests
                .iter()
                .any(|r| r.contains("/scale") || r.contains("\"replicas\""))
    }
}

/// A step id in words, for a step whose title the journal does not have: `gateway-off` →
/// "Gateway off".
pub fn words_of(id: &str) -> String {
    let spaced: String = id
        .chars()
        .map(|c| if matches!(c, '-' | '_') { ' ' } else { c })
        .collect();
    crate::postmortem::words::sentence(&spaced)
        .trim_end_matches('.')
        .to_string()
}

/// The target an acknowledgement names: `attempt 1 on api-0: HTTP 200` → `api-0`, when the
/// answer was a 2xx.
fn acted_target(outcome: &str) -> Option<String> {
    let a = Attempted::parse(outcome)?;
    let ok = a.status().is_some_and(|s| (200..300).contains(&s));
    a.target.filter(|_| ok)
}

/// Every step of every run in `events` (journal order), in the order they started.
pub fn runs(events: &[(&Record, &Event)]) -> Vec<StepRun> {
    let mut out: Vec<StepRun> = Vec::new();
    // Index of the open entry of (run, step).
    let open = |out: &[StepRun], run: &str, step: &str| {
        out.iter()
            .rposition(|s| s.run_id == run && s.id == step && s.state.is_none())
    };
    let mut ack_targets: Vec<(String, String)> = Vec::new();
    let mut intents: Vec<(String, String, String, String)> = Vec::new();
    for (r, e) in events {
        match e {
            Event::RunbookStep {
                run,
                step,
                state,
                detail,
            } => {
                let detail = detail.as_deref().unwrap_or_default();
                let new = |kind: Option<String>, title: Option<String>| StepRun {
                    run_id: run.run_id.clone(),
                    runbook: run.runbook.clone(),
                    id: step.clone(),
                    kind,
                    title: title.unwrap_or_else(|| words_of(step)),
                    started: r.time,
                    finished: None,
                    state: None,
                    skipped: false,
                    declined: false,
                    confirmed: false,
                    auto_confirmed: false,
                    requests: Vec::new(),
                    acted_on: Vec::new(),
                    run_end: None,
                    latest: r.time,
                    stopped: None,
                };
                if *state == StepState::Started {
                    let note = StepDetail::parse(detail);
                    if let Some(StepDetail::Start { kind, title }) = note {
                        // A step without a title (a manual step, a note) starts with its id:
                        // the draft writes it in words instead.
                        let title = title.trim().to_string();
                        let title = (title != *step).then_some(title);
                        out.push(new(Some(kind), title));
                    } else if detail.trim().is_empty() {
                        // A start the journal kept without its kind and title.
                        out.push(new(None, None));
                    } else if let Some(StepDetail::Confirmed { by, .. }) = note {
                        let i = match open(&out, &run.run_id, step) {
                            Some(i) => i,
                            None => {
                                out.push(new(None, None));
                                out.len() - 1
                            }
                        };
                        let s = &mut out[i];
                        s.confirmed = true;
                        s.auto_confirmed |=
                            by == Confirmation::Assumed || r.time - s.latest < AUTOMATIC;
                        s.latest = r.time;
                    } else if let Some(i) = open(&out, &run.run_id, step) {
                        out[i].latest = r.time;
                        if let Some(StepDetail::Paused { reason }) = note {
                            out[i].stopped = Some(reason);
                        }
                    }
                    continue;
                }
                let i = match open(&out, &run.run_id, step) {
                    Some(i) => i,
                    None => {
                        out.push(new(None, None));
                        out.len() - 1
                    }
                };
                let s = &mut out[i];
                s.finished = Some(r.time);
                s.state = Some(*state);
                let outcome = detail::outcome_of(*state, detail);
                s.skipped = outcome == Some(StepOutcome::Skipped);
                s.declined = outcome == Some(StepOutcome::Declined);
                let short = matches!(outcome, Some(StepOutcome::Failed | StepOutcome::Cancelled));
                if short && s.stopped.is_none() && s.batch() && !detail.trim().is_empty() {
                    s.stopped = Some(detail.trim().to_string());
                }
            }
            Event::RunbookIntent {
                run_id,
                step,
                idempotency_key,
                request,
            } => {
                let base = step.split('/').next().unwrap_or(step).to_string();
                intents.push((
                    run_id.clone(),
                    base.clone(),
                    idempotency_key.clone(),
                    request.clone(),
                ));
                if let Some(i) = open(&out, run_id, &base) {
                    out[i].requests.push(request.clone());
                }
            }
            Event::RunbookAck {
                run_id,
                idempotency_key,
                outcome,
                ..
            } => {
                let Some((_, base, _, _)) = intents
                    .iter()
                    .find(|(run, _, key, _)| run == run_id && key == idempotency_key)
                else {
                    continue;
                };
                if let Some(t) = acted_target(outcome) {
                    ack_targets.push((run_id.clone(), t.clone()));
                    if let Some(i) = open(&out, run_id, base)
                        && !out[i].acted_on.contains(&t)
                    {
                        out[i].acted_on.push(t);
                    }
                }
            }
            Event::RunbookRun { run, state } if *state != StepState::Started => {
                for s in out.iter_mut().filter(|s| s.run_id == run.run_id) {
                    s.run_end.get_or_insert((r.time, *state));
                }
            }
            _ => {}
        }
    }
    out.sort_by_key(|s| s.started);
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::incident::event::{RunRef, Source};

    fn rec(seq: u64, ms: i64, kind: Event) -> Record {
        Record {
            seq,
            time: DateTime::from_timestamp_millis(1_800_000_000_000 + ms).unwrap(),
            source: Source::Runbook,
            actor: "r".into(),
            host: String::new(),
            kind,
        }
    }

    /// The steps the records hold.
    fn runs_of(records: &[Record]) -> Vec<StepRun> {
        let events: Vec<(&Record, &Event)> = records.iter().map(|r| (r, &r.kind)).collect();
        runs(&events)
    }

    /// A run's step records, numbered from 1: (milliseconds, step, state, detail).
    fn steps(entries: &[(i64, &str, StepState, &str)]) -> Vec<Record> {
        (entries.iter().zip(1..))
            .map(|(&(ms, id, state, detail), seq)| rec(seq, ms, step(id, state, detail)))
            .collect()
    }

    fn step(step: &str, state: StepState, detail: &str) -> Event {
        Event::RunbookStep {
            run: RunRef {
                run_id: "r".into(),
                runbook: "pool-exhaustion".into(),
                hash: "h".into(),
            },
            step: step.into(),
            state,
            detail: Some(detail.into()),
        }
    }

    #[test]
    fn steps_carry_titles_confirmations_and_the_targets_they_acted_on() {
        use StepState::{Started, Succeeded};
        let mut records = steps(&[
            (0, "rollback", Started, "http: Roll back the deploy"),
            (
                1,
                "rollback",
                Started,
                "confirmed: the operator typed \"rollback\"",
            ),
            (900, "rollback", Succeeded, "HTTP 200 {\"ok\":true}"),
            (1000, "restart", Started, "batch: Restart api"),
            (9_000, "restart", Started, "rollout: {\"batch\":1}"),
            (
                12_000,
                "restart",
                Started,
                "confirmed: the operator typed \"batch 1\"",
            ),
        ]);
        records.extend([
            rec(
                6,
                9001,
                Event::RunbookIntent {
                    run_id: "r".into(),
                    step: "restart/api-0/1".into(),
                    idempotency_key: "k".into(),
                    request: "POST /control/restart {\"pod\":\"api-0\"}".into(),
                },
            ),
            rec(
                7,
                9100,
                Event::RunbookAck {
                    run_id: "r".into(),
                    step: "restart".into(),
                    idempotency_key: "k".into(),
                    outcome: "attempt 1 on api-0: HTTP 200".into(),
                },
            ),
            rec(
                8,
                20_000,
                Event::RunbookRun {
                    run: RunRef {
                        run_id: "r".into(),
                        runbook: "pool-exhaustion".into(),
                        hash: "h".into(),
                    },
                    state: StepState::Cancelled,
                },
            ),
        ]);
        let s = runs_of(&records);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].title, "Roll back the deploy");
        assert!(s[0].ok() && s[0].auto_confirmed && s[0].acting());
        assert_eq!(s[1].acted_on, ["api-0"]);
        assert!(!s[1].did_nothing(), "it restarted api-0");
        assert!(!s[1].auto_confirmed, "confirmed 3 s after it asked");
        assert_eq!(s[1].outcome(), "was stopped before it finished");
        assert_eq!(words_of("gateway-off"), "Gateway off");
    }

    /// A batch its budget refused: paused before any target, aborted. It did nothing, and the
    /// pause says why it stopped; a batch that acted did something.
    #[test]
    fn a_batch_refused_by_its_budget_did_nothing_and_says_why() {
        let s = refused_batch();
        assert!(s[0].did_nothing(), "{:?}", s[0]);
        assert!(
            s[0].stopped
                .as_deref()
                .is_some_and(|t| t.starts_with("unavailability budget exhausted")),
            "{:?}",
            s[0].stopped
        );
        assert!(!s[1].did_nothing() && s[1].stopped.is_none());
        assert_eq!(
            s[0].ended(),
            "was cancelled: unavailability budget exhausted: 3 unavailable (3 unhealthy before \
             the start), budget 1; nothing started"
        );
        assert_eq!(s[1].ended(), "succeeded");
    }

    /// A batch restart its budget refused (paused before any target, aborted), then a
    /// rollback that succeeded.
    pub(crate) fn refused_batch() -> Vec<StepRun> {
        use StepState::{Cancelled, Started, Succeeded};
        let refused = steps(&[
            (0, "restart", Started, "batch: Restart api one at a time"),
            (
                1_000,
                "restart",
                Started,
                "paused: unavailability budget exhausted: 3 unavailable (3 unhealthy before the start), budget 1; nothing started",
            ),
            (1_001, "restart", Started, "decision: abort"),
            (1_002, "restart", Cancelled, "aborted by the operator"),
            (2_000, "rollback", Started, "http: Roll back"),
            (3_000, "rollback", Succeeded, "HTTP 200 {}"),
        ]);
        runs_of(&refused)
    }

    /// Confirmations by `--yes`, skipped and declined steps, as journals hold them.
    #[test]
    fn assumed_confirmations_and_skipped_or_declined_steps_are_read() {
        use StepState::{Cancelled, Started, Succeeded};
        let records = steps(&[
            (0, "drain", Started, "haproxy: Drain api-0"),
            (
                5_000,
                "drain",
                Started,
                "confirmed: assumed (--yes), \"drain\" was not typed",
            ),
            (6_000, "drain", Succeeded, "skipped: already drained"),
            (7_000, "scale", Started, "manual: Scale out"),
            (8_000, "scale", Cancelled, "declined: not confirmed"),
            (9_000, "look", Started, "check: Pool below 80 %"),
        ]);
        let s = runs_of(&records);
        assert_eq!(s.len(), 3, "{s:?}");
        assert!(s[0].auto_confirmed && s[0].skipped && !s[0].declined && s[0].acting());
        assert!(s[1].declined && !s[1].skipped && s[1].manual() && !s[1].acting());
        assert_eq!(s[1].outcome(), "was not confirmed and did not run");
        assert!(!s[2].acting() && s[2].kind.as_deref() == Some("check"));
    }
}
