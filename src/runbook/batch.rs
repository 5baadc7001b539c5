//! Batches: a pure state machine over time passed in, in the spirit of a Kubernetes rolling
//! update with `maxUnavailable` and an Argo analysis between steps.
//!
//! - An instance is unavailable while it is being acted on, until it has been healthy for the
//!   whole soak, when it never came back (lost), and whenever it was last seen unhealthy, which
//!   counts instances that were already down before the run started.
//! - A batch starts only as many instances as keep the unavailable count within the budget;
//!   with no room and nothing in flight it pauses and says why.
//! - After each batch the health gate runs; a lost instance or a failed gate pauses for the
//!   operator (continue, retry, abort): nothing continues silently.
//! - Once `failure_budget` instances have been lost over the run, no new batch starts.
//! - After the run deadline no new action starts; the run waits for the operator.
//!
//! Time is a `Duration` since the rollout began, given by the caller.

use std::fmt;
use std::time::Duration;

/// The numbers a rollout obeys.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutConfig {
    pub batch_size: usize,
    pub max_unavailable: usize,
    pub failure_budget: usize,
    pub soak: Duration,
    /// Readings of an instance within this long after its action are ignored: a metric
    /// scraped before the restart would otherwise count towards the soak.
    pub settle: Duration,
    pub instance_deadline: Duration,
    pub run_deadline: Duration,
    /// Whether a fleet gate runs between batches.
    pub gated: bool,
}

/// What the operator decides at a pause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Continue,
    Retry,
    Abort,
}

impl Decision {
    /// The decision as one word, as the journal records it (`continue`, `retry`, `abort`).
    pub fn word(self) -> &'static str {
        match self {
            Decision::Continue => "continue",
            Decision::Retry => "retry",
            Decision::Abort => "abort",
        }
    }
}

/// Why a rollout waits for the operator.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Pause {
    /// No room in the unavailability budget and nothing in flight to free some.
    BudgetExhausted {
        unavailable: usize,
        already_unhealthy: usize,
        budget: usize,
    },
    /// Instances of the last batch did not count healthy before their deadline.
    InstancesLost { batch: usize, targets: Vec<String> },
    /// The fleet gate after a batch did not pass.
    GateNotPassed { batch: usize, verdict: String },
    /// The run's deadline passed: no new action without a decision.
    RunDeadline { after: Duration },
}

impl fmt::Display for Pause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pause::BudgetExhausted {
                unavailable,
                already_unhealthy,
                budget,
            } => write!(
                f,
                "unavailability budget exhausted: {unavailable} unavailable ({already_unhealthy} unhealthy before the start), budget {budget}; nothing started"
            ),
            Pause::InstancesLost { batch, targets } => write!(
                f,
                "batch {batch}: {} did not come back healthy before the instance deadline",
                targets.join(", ")
            ),
            Pause::GateNotPassed { batch, verdict } => {
                write!(f, "health gate after batch {batch} did not pass: {verdict}")
            }
            Pause::RunDeadline { after } => write!(
                f,
                "run deadline of {} passed; no new action without a decision",
                humantime::format_duration(*after)
            ),
        }
    }
}

/// How a rollout ended.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Finished {
    Completed,
    Aborted,
    /// Stopped by a rule; the reason is recorded.
    Stopped {
        reason: String,
    },
}

/// What the caller should do now.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Act on these targets (batch number from 1), then report health with `observe`.
    Act {
        batch: usize,
        targets: Vec<String>,
    },
    /// Read the health of these in-flight targets and report it with `observe`.
    Watch(Vec<String>),
    /// Evaluate the fleet gate and report it with `gate_result`.
    Gate {
        batch: usize,
    },
    /// Wait for the operator's decision, given with `decide`.
    WaitOperator(Pause),
    Finished(Finished),
}

/// Something the journal should record.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum BatchEvent {
    BatchStarted { batch: usize, targets: Vec<String> },
    InstanceHealthy { target: String },
    InstanceLost { target: String },
    GatePassed { batch: usize },
    Paused(Pause),
    Decided { decision: Decision },
    Finished(Finished),
}

/// The words a journal detail holding a batch event begins with; the event follows as JSON:
/// `rollout: {"batch":1,"event":"batch_started","targets":["api-0"]}`.
pub const ROLLOUT: &str = "rollout: ";

impl BatchEvent {
    /// The event as a journal detail: [`ROLLOUT`] and the event as JSON.
    pub fn detail(&self) -> String {
        format!("{ROLLOUT}{}", self.json())
    }

    /// The event read back from a journal detail; `None` for another detail and for a batch
    /// event this version cannot read (the caller shows its text as it is).
    pub fn from_detail(detail: &str) -> Option<BatchEvent> {
        serde_json::from_str(detail.strip_prefix(ROLLOUT)?).ok()
    }

    /// The event as JSON, as the journal and the run's progress lines write it: keys in
    /// alphabetical order (through a `serde_json::Value`), as journals have always held them.
    pub fn json(&self) -> String {
        serde_json::to_value(self)
            .map(|v| v.to_string())
            .unwrap_or_default()
    }
}

/// The event in words, for the run pane, the timeline and a run's progress lines.
impl fmt::Display for BatchEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            BatchEvent::BatchStarted { batch, targets } => {
                format!("batch {batch} started: {}", targets.join(", "))
            }
            BatchEvent::InstanceHealthy { target } => format!("{target} healthy"),
            BatchEvent::InstanceLost { target } => format!("{target} lost"),
            BatchEvent::GatePassed { batch } => format!("health gate passed after batch {batch}"),
            BatchEvent::Paused(p) => format!("paused: {}", p.short()),
            BatchEvent::Decided { decision } => format!("operator chose {}", decision.word()),
            BatchEvent::Finished(end) => format!("batches finished: {}", end.word()),
        };
        f.write_str(&crate::sanitize::line(&text))
    }
}

impl Pause {
    /// Why the rollout paused, in two words.
    pub fn short(&self) -> &'static str {
        match self {
            Pause::BudgetExhausted { .. } => "budget exhausted",
            Pause::InstancesLost { .. } => "instances lost",
            Pause::GateNotPassed { .. } => "gate not passed",
            Pause::RunDeadline { .. } => "run deadline",
        }
    }
}

impl Finished {
    /// How the rollout ended, in a word.
    pub fn word(&self) -> &'static str {
        match self {
            Finished::Completed => "completed",
            Finished::Aborted => "aborted",
            Finished::Stopped { .. } => "stopped",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Waiting,
    InFlight { started: Duration },
    Done,
    Lost,
}

#[derive(Debug, Clone)]
struct Instance {
    name: String,
    state: State,
    /// Last observation: `Some(true)` healthy.
    healthy: Option<bool>,
    healthy_since: Option<Duration>,
    unavailable: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Ready,
    InBatch,
    Gate,
    Paused(Pause),
    Finished(Finished),
}

/// One batch rollout.
#[derive(Debug, Clone)]
pub struct Rollout {
    cfg: RolloutConfig,
    instances: Vec<Instance>,
    index: std::collections::HashMap<String, usize>,
    phase: Phase,
    /// Index of the next waiting instance to consider.
    cursor: usize,
    batch: usize,
    in_batch: Vec<usize>,
    unavailable: usize,
    already_unhealthy: usize,
    lost: usize,
    deadline: Duration,
    /// Lost instances the operator chose to retry; acted on before any waiting one.
    requeue: Vec<usize>,
    events: Vec<BatchEvent>,
}

impl Rollout {
    /// `targets` with their health before the start (`false` = already unhealthy).
    pub fn new(cfg: RolloutConfig, targets: Vec<(String, bool)>) -> Self {
        let mut r = Rollout {
            deadline: cfg.run_deadline,
            cfg,
            instances: Vec::with_capacity(targets.len()),
            index: std::collections::HashMap::with_capacity(targets.len()),
            phase: Phase::Ready,
            cursor: 0,
            batch: 0,
            in_batch: Vec::new(),
            unavailable: 0,
            already_unhealthy: 0,
            lost: 0,
            requeue: Vec::new(),
            events: Vec::new(),
        };
        for (name, healthy) in targets {
            if r.index.contains_key(&name) {
                continue;
            }
            r.index.insert(name.clone(), r.instances.len());
            r.instances.push(Instance {
                name,
                state: State::Waiting,
                healthy: Some(healthy),
                healthy_since: None,
                unavailable: false,
            });
            let i = r.instances.len() - 1;
            r.refresh(i);
            if !healthy {
                r.already_unhealthy += 1;
            }
        }
        r
    }

    /// Instances unavailable now, by warroom's conservative count.
    pub fn unavailable(&self) -> usize {
        self.unavailable
    }

    pub fn lost(&self) -> usize {
        self.lost
    }

    /// Events since the last call, for the journal.
    pub fn take_events(&mut self) -> Vec<BatchEvent> {
        std::mem::take(&mut self.events)
    }

    fn refresh(&mut self, i: usize) {
        let inst = &mut self.instances[i];
        let now = match inst.state {
            State::InFlight { .. } | State::Lost => true,
            State::Waiting | State::Done => inst.healthy == Some(false),
        };
        if now != inst.unavailable {
            inst.unavailable = now;
            if now {
                self.unavailable += 1;
            } else {
                self.unavailable -= 1;
            }
        }
    }

    fn pause(&mut self, p: Pause) {
        self.events.push(BatchEvent::Paused(p.clone()));
        self.phase = Phase::Paused(p);
    }

    fn finish(&mut self, f: Finished) {
        self.events.push(BatchEvent::Finished(f.clone()));
        self.phase = Phase::Finished(f);
    }

    /// The batch's actions are being sent at `now`, after `waited` at its confirmation: the
    /// instances' deadlines start now, and the run deadline does not count the wait (a person
    /// reading a confirmation is not the rollout being slow).
    pub fn sent(&mut self, now: Duration, waited: Duration) {
        for &i in &self.in_batch {
            if let State::InFlight { started } = &mut self.instances[i].state {
                *started = now;
            }
        }
        self.deadline += waited;
    }

    /// A health reading of `target` at `now`.
    pub fn observe(&mut self, now: Duration, target: &str, healthy: bool) {
        let Some(&i) = self.index.get(target) else {
            return;
        };
        let soak = self.cfg.soak;
        let settle = self.cfg.settle;
        let inst = &mut self.instances[i];
        if let State::InFlight { started } = inst.state
            && now.saturating_sub(started) < settle
        {
            return;
        }
        inst.healthy = Some(healthy);
        if !healthy {
            inst.healthy_since = None;
        } else if inst.healthy_since.is_none() {
            inst.healthy_since = Some(now);
        }
        if let State::InFlight { .. } = inst.state
            && healthy
            && inst
                .healthy_since
                .is_some_and(|since| now.saturating_sub(since) >= soak)
        {
            inst.state = State::Done;
            self.events.push(BatchEvent::InstanceHealthy {
                target: inst.name.clone(),
            });
        }
        self.refresh(i);
    }

    /// The fleet gate's verdict after a batch: `Ok(())` passed, `Err(why)` did not.
    pub fn gate_result(&mut self, verdict: Result<(), String>) {
        if self.phase != Phase::Gate {
            return;
        }
        match verdict {
            Ok(()) => {
                self.events
                    .push(BatchEvent::GatePassed { batch: self.batch });
                self.phase = Phase::Ready;
            }
            Err(v) => self.pause(Pause::GateNotPassed {
                batch: self.batch,
                verdict: v,
            }),
        }
    }

    /// The operator's decision at a pause (ignored when not paused).
    pub fn decide(&mut self, now: Duration, d: Decision) {
        let Phase::Paused(p) = self.phase.clone() else {
            return;
        };
        self.events.push(BatchEvent::Decided { decision: d });
        if d == Decision::Abort {
            self.finish(Finished::Aborted);
            return;
        }
        match p {
            Pause::GateNotPassed { .. } if d == Decision::Retry => self.phase = Phase::Gate,
            Pause::InstancesLost { .. } if d == Decision::Retry => {
                // Act again on the lost instances of the last batch; they become in flight.
                let lost: Vec<usize> = self
                    .in_batch
                    .iter()
                    .copied()
                    .filter(|&i| self.instances[i].state == State::Lost)
                    .collect();
                for &i in &lost {
                    self.instances[i].state = State::Waiting;
                    self.lost -= 1;
                    self.refresh(i);
                }
                // Re-queue them at the front: the next `Act` takes them first.
                self.requeue = lost;
                self.phase = Phase::Ready;
            }
            Pause::RunDeadline { .. } => {
                // An explicit decision grants one more deadline period from now.
                self.deadline = now + self.cfg.run_deadline;
                self.phase = Phase::Ready;
            }
            _ => self.phase = Phase::Ready,
        }
    }
}

mod next;

#[cfg(test)]
mod tests {
    use super::*;

    /// The journal's detail is the format older journals hold, and reads back as it was.
    #[test]
    fn a_batch_event_detail_keeps_the_journal_format_and_reads_back() {
        let started = BatchEvent::BatchStarted {
            batch: 1,
            targets: vec!["api-0".into()],
        };
        let old = r#"rollout: {"batch":1,"event":"batch_started","targets":["api-0"]}"#;
        assert_eq!(started.detail(), old);
        assert_eq!(BatchEvent::from_detail(old), Some(started));
        for e in [
            BatchEvent::Paused(Pause::RunDeadline {
                after: Duration::from_secs(90),
            }),
            BatchEvent::Paused(Pause::InstancesLost {
                batch: 2,
                targets: vec!["api-3".into()],
            }),
            BatchEvent::Decided {
                decision: Decision::Continue,
            },
            BatchEvent::Finished(Finished::Stopped {
                reason: "failure budget".into(),
            }),
            BatchEvent::Finished(Finished::Completed),
        ] {
            assert_eq!(BatchEvent::from_detail(&e.detail()).as_ref(), Some(&e));
        }
        assert_eq!(BatchEvent::from_detail(r#"rollout: {"batch":1}"#), None);
        assert_eq!(BatchEvent::from_detail("paused: budget"), None);
    }
}
