//! Suggested corrective actions: the lessons the house's own postmortems drew, proposed only
//! when their pattern is in this incident's data, each with the evidence that shows it. They
//! are marked as suggestions: the author keeps them (as action items) or deletes them.
//!
//! | pattern in the data | suggestion |
//! |---|---|
//! | retry amplification above 2× | a shared retry budget with backoff and jitter |
//! | the first signal to cross had no alert | an alert on that signal |
//! | requests gave up waiting for a connection | an alert on pool wait time |
//! | a scale-out followed by worse query latency | a cap on aggregate connections |
//! | duplicate submissions | idempotency keys |
//! | a restart loop that took capacity to 0 % | memory and per-instance connection limits |

use super::board::{Board, instant, secs};
use super::customer::Customer;
use super::detection::Detection;
use super::effects::value_at;
use super::facts::Signals;
use super::phrases;
use super::signals::{self, Role};
use super::steps::StepRun;
use super::timeline::{Crossing, Planned};
use super::words;
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use serde::Serialize;

/// Retry amplification above this is a retry storm.
pub const AMPLIFICATION: f64 = 2.0;
/// How long after a scale-out its effect on latency is read.
pub const AFTER_SCALING: Duration = Duration::minutes(5);
/// Latency this much worse after a scale-out counts as worse.
pub const WORSE: f64 = 1.2;
/// Restarts of this many instances or more, outside any planned restart, are a loop.
pub const LOOP_RESTARTS: f64 = 3.0;

/// One suggested action.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suggestion {
    /// A stable name of the pattern (`retry-amplification`, …).
    pub pattern: &'static str,
    pub action: String,
    /// What in the data shows it.
    pub evidence: String,
}

/// What the suggestions read.
pub struct Input<'a> {
    pub board: &'a Board<'a>,
    pub peaks: &'a Signals,
    pub customer: &'a Customer,
    pub detection: &'a Detection,
    pub steps: &'a [StepRun],
    pub crossings: &'a [Crossing],
    pub planned: &'a [Planned],
    pub planned_windows: &'a [(DateTime<Utc>, DateTime<Utc>)],
    /// Whether the rules were read (else only "no alert fired at all" shows a missing alert).
    pub rules_known: bool,
    pub any_alert: bool,
    /// The action items already filed: a suggestion one of them already covers is left out.
    pub actions: &'a [String],
    pub tz: Tz,
}

/// Whether an action item already says what suggestion `s` would: all the words of one of its
/// pattern's phrases appear in it.
fn covered(s: &Suggestion, actions: &[String], first_signal: Option<&str>) -> bool {
    let signal = first_signal.unwrap_or_default().to_lowercase();
    let phrases: Vec<Vec<&str>> = match s.pattern {
        "retry-amplification" => vec![vec!["retry", "budget"], vec!["backoff", "jitter"]],
        "unalerted-first-signal" => vec![
            std::iter::once("alert")
                .chain(signal.split_whitespace().filter(|w| w.len() > 3))
                .collect(),
        ],
        "pool-wait-at-timeout" => vec![vec!["alert", "wait"]],
        "scale-out-worse-latency" => vec![vec!["cap", "connections"]],
        "duplicates" => vec![vec!["idempoten"]],
        "restart-loop" => vec![vec!["memory", "limit"]],
        _ => vec![],
    };
    actions.iter().any(|a| {
        let a = a.to_lowercase();
        phrases
            .iter()
            .any(|words| words.iter().all(|w| a.contains(w)))
    })
}

/// The suggestions whose patterns are in the data, in the table's order.
pub fn compute(i: &Input) -> Vec<Suggestion> {
    let mut out = Vec::new();
    let b = i.board;
    let clock = |t: DateTime<Utc>| words::clock(t, i.tz);

    if let Some(a) = &i.peaks.retry_amplification
        && a.value > AMPLIFICATION
    {
        out.push(Suggestion {
            pattern: "retry-amplification",
            action: "Implement a shared retry budget with exponential backoff and jitter across \
                     every layer that retries."
                .into(),
            evidence: format!(
                "retries made {} attempts for each user request at the peak ({}), more than {}",
                words::number(a.value, 1),
                a.at.clock,
                words::number(AMPLIFICATION, 0)
            ),
        });
    }

    if let (Some(panel), Some(at)) = (
        &i.detection.first_crossing_panel,
        &i.detection.first_crossing,
    ) {
        let unwatched = match &i.detection.unwatched {
            Some(u) => u.contains(panel),
            None => !i.rules_known && !i.any_alert,
        };
        if unwatched {
            let why = if i.detection.unwatched.is_some() {
                "no alert rule watches it"
            } else {
                "no alert fired during the incident"
            };
            let lead = i
                .detection
                .lead
                .as_ref()
                .map(|l| format!(", {l} before the impact began"))
                .unwrap_or_default();
            out.push(Suggestion {
                pattern: "unalerted-first-signal",
                action: format!(
                    "Alert on {} before it reaches its critical threshold.",
                    b.name(panel)
                ),
                evidence: format!(
                    "{} was the first signal to cross a threshold, at {}{lead}, and {why}",
                    panel, at.clock
                ),
            });
        }
    }

    if let Some(n) = &i.customer.acquire_timeouts {
        let wait = b
            .role(Role::PoolWait)
            .and_then(|s| signals::worst_between(s, f64::MIN, f64::MAX))
            .map(|(v, t)| {
                format!(
                    "; pool wait p99 peaked at {} ({})",
                    words::seconds(v),
                    clock(instant(t))
                )
            })
            .unwrap_or_default();
        out.push(Suggestion {
            pattern: "pool-wait-at-timeout",
            action: "Alert on database connection wait time, not only on pool saturation.".into(),
            evidence: format!(
                "{} attempts waited for a database connection until the acquire timeout and gave \
                 up{wait}",
                n.text
            ),
        });
    }

    if let Some(lat) = b.role(Role::Latency) {
        for s in i
            .steps
            .iter()
            .filter(|s| s.acting() && s.ok() && s.scales_out())
        {
            let t0 = secs(s.started);
            let Some(before) = value_at(lat, t0) else {
                continue;
            };
            let later = signals::instants(lat, t0, secs(s.started + AFTER_SCALING));
            let Some((worst, at)) = later
                .iter()
                .filter_map(|t| value_at(lat, *t).map(|v| (v, *t)))
                .max_by(|a, b| a.0.total_cmp(&b.0))
            else {
                continue;
            };
            let unit = lat.unit();
            if worst > before * WORSE && words::value(unit, worst) != words::value(unit, before) {
                out.push(Suggestion {
                    pattern: "scale-out-worse-latency",
                    action: "Cap aggregate database connections independently of the instance \
                             count."
                        .into(),
                    evidence: format!(
                        "after “{}” at {}, median query latency {} by {}",
                        s.title,
                        clock(s.started),
                        phrases::moved(unit, before, worst),
                        clock(instant(at))
                    ),
                });
                break;
            }
        }
    }

    if let Some(d) = &i.customer.duplicates {
        out.push(Suggestion {
            pattern: "duplicates",
            action: "Enforce idempotency keys on every submission and synchronization request."
                .into(),
            evidence: format!("{} duplicate submissions were written", d.text),
        });
    }

    if let Some(s) = restart_loop(i) {
        out.push(s);
    }
    let first = i.detection.first_crossing_panel.as_deref();
    out.retain(|s| !covered(s, i.actions, first));
    out
}

/// Instances restarting on their own while capacity reached 0 %: the status page's cascade.
fn restart_loop(i: &Input) -> Option<Suggestion> {
    let b = i.board;
    let planned = |t: f64| {
        i.planned_windows
            .iter()
            .any(|(a, z)| t >= secs(*a) && t <= secs(*z))
    };
    let cap = b.role(Role::Capacity)?;
    let zero = signals::instants(cap, f64::MIN, f64::MAX)
        .into_iter()
        .filter(|t| !planned(*t))
        .find(|t| signals::worst_at(cap, *t).is_some_and(|v| v <= 1e-9))?;
    let restarts = b.role(Role::Restarts).and_then(|r| {
        signals::instants(r, f64::MIN, f64::MAX)
            .into_iter()
            .filter(|t| !planned(*t))
            .filter_map(|t| signals::worst_at(r, t))
            .max_by(f64::total_cmp)
    });
    let crossed = i.crossings.iter().any(|c| {
        c.bad
            && b.role_of(&c.panel) == Some(Role::Restarts)
            && !i.planned.iter().any(|p| p.panel == c.panel)
    });
    if !(restarts.is_some_and(|r| r >= LOOP_RESTARTS) || crossed) {
        return None;
    }
    let memory = b
        .fact(crate::incident::snapshot::fact::MEMORY)
        .and_then(|m| signals::worst_between(m, f64::MIN, f64::MAX))
        .map(|(v, t)| {
            format!(
                "; memory per instance peaked at {} ({})",
                crate::config::Unit::Bytes.format(v),
                words::clock(instant(t), i.tz)
            )
        })
        .unwrap_or_default();
    Some(Suggestion {
        pattern: "restart-loop",
        action: "Raise memory limits and per-instance database connection limits so an overloaded \
                 instance sheds load instead of restarting, and alert on restarts."
            .into(),
        evidence: format!(
            "instances restarted on their own{} and capacity fell to 0% of instances serving at \
             {}{memory}",
            restarts
                .map(|r| format!(" ({} restarts in five minutes)", words::number(r, 0)))
                .unwrap_or_default(),
            words::clock(instant(zero), i.tz)
        ),
    })
}
