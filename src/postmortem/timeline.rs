//! The draft's timeline table, resolution steps and detection facts, from the journal's
//! records with corrections applied.
//!
//! Noise is collapsed: a panel flapping around a threshold is one row when it went bad (with
//! how often it crossed back and forth) and one when it came back for good; an alert firing for
//! many series is one row; warn crossings that a crit crossing of the same panel accompanies
//! within the minute are dropped; runbook steps appear once, with their outcome; intents,
//! acknowledgements, action items (they have their own table) and journal notices are left out.

use super::words;
use crate::incident::event::{Direction, Event, Level, StepState};
use crate::incident::record::Record;
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use serde::Serialize;
use std::collections::BTreeMap;

/// Flaps closer than this to the previous crossing belong to the same episode.
pub const COLLAPSE: Duration = Duration::minutes(10);

/// A row of the timeline table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// When (UTC, RFC 3339 in JSON).
    pub at: DateTime<Utc>,
    /// "07:18" in the configured timezone.
    pub time: String,
    pub event: String,
}

/// A threshold crossing as the draft reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossing {
    pub at: DateTime<Utc>,
    pub panel: String,
    pub level: Level,
    /// True when the value went the bad way (the first crossing of a panel and level is always
    /// the bad way: the detector starts from normal).
    pub bad: bool,
    pub value: f64,
    pub threshold: f64,
}

/// Each record's event as it stands after corrections, in journal order (corrections
/// themselves and retracted records left out).
pub fn effective(records: &[Record]) -> Vec<(&Record, &Event)> {
    let corrected = crate::incident::summary::summarize(records).corrected;
    records
        .iter()
        .filter(|r| !matches!(r.kind, Event::Correction { .. }))
        .filter_map(|r| match corrected.get(&r.seq) {
            None => Some((r, &r.kind)),
            Some(by) => match records.get((*by as usize).wrapping_sub(1)).map(|c| &c.kind) {
                Some(Event::Correction {
                    replacement: Some(e),
                    ..
                }) => Some((r, e.as_ref())),
                _ => None,
            },
        })
        .collect()
}

/// Every threshold crossing, in time order, with which way was bad.
pub fn crossings(events: &[(&Record, &Event)]) -> Vec<Crossing> {
    let mut out: Vec<Crossing> = Vec::new();
    let mut bad_way: BTreeMap<(String, bool), Direction> = BTreeMap::new();
    let mut raw: Vec<(DateTime<Utc>, &Event)> = events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::ThresholdCrossed { at, .. } => Some((*at, *e)),
            _ => None,
        })
        .collect();
    raw.sort_by_key(|c| c.0);
    for (_, e) in raw {
        let Event::ThresholdCrossed {
            panel,
            level,
            direction,
            value,
            threshold,
            at,
        } = e
        else {
            continue;
        };
        let key = (panel.clone(), *level == Level::Crit);
        let bad = *bad_way.entry(key).or_insert(*direction) == *direction;
        out.push(Crossing {
            at: *at,
            panel: panel.clone(),
            level: *level,
            bad,
            value: *value,
            threshold: *threshold,
        });
    }
    out
}

fn level_word(l: Level) -> &'static str {
    match l {
        Level::Warn => "warning",
        Level::Crit => "critical",
    }
}

fn state_word(s: StepState) -> &'static str {
    match s {
        StepState::Started => "started",
        StepState::Succeeded => "succeeded",
        StepState::Failed => "failed",
        StepState::TimedOut => "timed out",
        StepState::Cancelled => "was cancelled",
        StepState::InDoubt => "is in doubt (no answer came)",
    }
}

/// How a crossing's figures are written: the panel's unit when a snapshot names it.
pub type Formatter<'a> = &'a dyn Fn(&str, f64) -> String;

fn crossing_rows(crossings: &[Crossing], fmt: Formatter, tz: Tz) -> Vec<Row> {
    let mut groups: BTreeMap<(String, bool), Vec<&Crossing>> = BTreeMap::new();
    for c in crossings {
        groups
            .entry((c.panel.clone(), c.level == Level::Crit))
            .or_default()
            .push(c);
    }
    let crit_up: Vec<(&str, DateTime<Utc>, bool)> = crossings
        .iter()
        .filter(|c| c.level == Level::Crit)
        .map(|c| (c.panel.as_str(), c.at, c.bad))
        .collect();
    let shadowed = |c: &Crossing| {
        c.level == Level::Warn
            && crit_up.iter().any(|(p, at, bad)| {
                *p == c.panel && *bad == c.bad && (*at - c.at).num_seconds().abs() < 60
            })
    };
    let mut rows = Vec::new();
    for list in groups.values() {
        // Episodes: from a bad crossing to the back crossing after which nothing happens for
        // COLLAPSE.
        let mut i = 0;
        while i < list.len() {
            let start = list[i];
            let mut j = i;
            while j + 1 < list.len() && list[j + 1].at - list[j].at < COLLAPSE {
                j += 1;
            }
            // The episode ends on a back crossing if the last one is back.
            let episode = &list[i..=j];
            let flaps = episode.iter().filter(|c| c.bad).count().saturating_sub(1);
            if start.bad && !shadowed(start) {
                let mut event = format!(
                    "{} rose past its {} threshold of {} (reading {}).",
                    start.panel,
                    level_word(start.level),
                    fmt(&start.panel, start.threshold),
                    fmt(&start.panel, start.value)
                );
                if flaps > 0 {
                    let last = episode.last().map_or(start.at, |c| c.at);
                    event.push_str(&format!(
                        " It crossed back and forth {} more time{} until {}.",
                        flaps,
                        if flaps == 1 { "" } else { "s" },
                        words::clock(last, tz)
                    ));
                }
                rows.push(Row {
                    at: start.at,
                    time: words::clock(start.at, tz),
                    event,
                });
            }
            if let Some(end) = episode.last().filter(|c| !c.bad && !shadowed(c)) {
                rows.push(Row {
                    at: end.at,
                    time: words::clock(end.at, tz),
                    event: format!(
                        "{} came back past its {} threshold of {} (reading {}).",
                        end.panel,
                        level_word(end.level),
                        fmt(&end.panel, end.threshold),
                        fmt(&end.panel, end.value)
                    ),
                });
            }
            i = j + 1;
        }
    }
    rows
}

/// The row a run of runbook steps is being collapsed into.
struct StepRun {
    runbook: String,
    state: StepState,
    first: String,
    count: usize,
    last_at: DateTime<Utc>,
    row: usize,
}

/// The timeline table rows, in time order.
pub fn rows(
    events: &[(&Record, &Event)],
    crossings: &[Crossing],
    impact: Option<(DateTime<Utc>, Option<DateTime<Utc>>)>,
    fmt: Formatter,
    tz: Tz,
) -> Vec<Row> {
    let mut rows = crossing_rows(crossings, fmt, tz);
    let row = |at: DateTime<Utc>, event: String| Row {
        at,
        time: words::clock(at, tz),
        event,
    };
    if let Some((start, end)) = impact {
        rows.push(row(start, "Impact began.".into()));
        if let Some(end) = end {
            rows.push(row(end, "Impact ended.".into()));
        }
    }
    // Alerts: one row when a name starts firing, one when its last series resolves.
    let mut firing: BTreeMap<&str, usize> = BTreeMap::new();
    let mut steps_row: Option<StepRun> = None;
    for (r, e) in events {
        let text = match e {
            Event::IncidentOpened { title, severity } => {
                format!("Incident opened as {severity}: {title}.")
            }
            Event::SeverityChanged { severity } => format!("Severity set to {severity}."),
            Event::StatusChanged { status } => format!("Status set to {status}."),
            Event::Note { text, .. } => {
                let t = super::facts::strip_tags(text);
                if t.is_empty() {
                    continue;
                }
                t
            }
            Event::AlertFiring { name, .. } => {
                let n = firing.entry(name.as_str()).or_insert(0);
                *n += 1;
                if *n > 1 {
                    continue;
                }
                format!("Alert {name} fired.")
            }
            Event::AlertResolved { name, .. } => {
                let Some(n) = firing.get_mut(name.as_str()) else {
                    continue;
                };
                *n = n.saturating_sub(1);
                if *n > 0 {
                    continue;
                }
                firing.remove(name.as_str());
                format!("Alert {name} resolved.")
            }
            Event::RunbookRun { run, state } => {
                format!("Runbook {} {}.", run.runbook, state_word(*state))
            }
            Event::RunbookStep {
                run,
                step,
                state,
                detail,
            } if *state != StepState::Started => {
                // A run of steps of one runbook with one outcome (a batch restart's pods) is
                // one row: the previous row is widened instead of a new one added.
                if let Some(last) = steps_row.as_mut().filter(|s| {
                    s.runbook == run.runbook
                        && s.state == *state
                        && r.time - s.last_at < COLLAPSE
                        && rows.len() == s.row + 1
                }) {
                    last.count += 1;
                    last.last_at = r.time;
                    rows[last.row].event = format!(
                        "{}: {} steps {}, {} to {}.",
                        run.runbook,
                        last.count,
                        state_word(*state),
                        last.first,
                        step
                    );
                    continue;
                }
                steps_row = Some(StepRun {
                    runbook: run.runbook.clone(),
                    state: *state,
                    first: step.clone(),
                    count: 1,
                    last_at: r.time,
                    row: rows.len(),
                });
                let mut t = format!("{}: step {} {}", run.runbook, step, state_word(*state));
                if let Some(d) = detail.as_deref().filter(|d| !d.trim().is_empty()) {
                    t.push_str(": ");
                    t.push_str(d.trim());
                }
                t.push('.');
                t
            }
            Event::Change {
                repo,
                reference,
                title,
                ..
            } => format!("Change {reference} in {repo}: {title}."),
            Event::SimFault { detail, active, .. } => {
                if *active {
                    format!("Simulated fault: {detail}.")
                } else {
                    format!("Simulated fault cleared: {detail}.")
                }
            }
            _ => continue,
        };
        // A change from GitHub is placed when it happened, not when warroom learned of it.
        let at = match e {
            Event::Change { at: Some(at), .. } => *at,
            _ => r.time,
        };
        rows.push(row(at, text));
    }
    rows.sort_by_key(|r| r.at);
    rows
}

/// One step taken to resolve the incident, in the order it ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub time: String,
    pub runbook: String,
    pub step: String,
    /// `succeeded`, `failed`, `timed out`, …
    pub outcome: String,
    pub detail: Option<String>,
    /// Whether it worked (succeeded).
    pub ok: bool,
    /// When it finished (UTC, RFC 3339 in JSON).
    pub at: DateTime<Utc>,
}

/// The runbook steps that finished (any outcome), in journal order.
pub fn steps(events: &[(&Record, &Event)], tz: Tz) -> Vec<Step> {
    events
        .iter()
        .filter_map(|(r, e)| match e {
            Event::RunbookStep {
                run,
                step,
                state,
                detail,
            } if *state != StepState::Started => Some(Step {
                time: words::clock(r.time, tz),
                runbook: run.runbook.clone(),
                step: step.clone(),
                outcome: state_word(*state).to_string(),
                detail: detail
                    .as_deref()
                    .map(|d| d.trim().to_string())
                    .filter(|d| !d.is_empty()),
                ok: *state == StepState::Succeeded,
                at: r.time,
            }),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incident::Source;

    #[test]
    fn a_change_is_placed_when_it_happened() {
        let record = |seq, time: &str, kind: Event| Record {
            seq,
            time: time.parse().unwrap(),
            source: Source::Github,
            actor: "ana".into(),
            host: String::new(),
            kind,
        };
        let note = record(1, "2026-11-29T10:00:00Z", Event::note("looking"));
        let change = record(
            2,
            "2026-11-29T10:05:00Z",
            Event::Change {
                repo: "acme/api".into(),
                reference: "#42".into(),
                title: "merged: x".into(),
                url: None,
                at: Some("2026-11-29T09:30:00Z".parse().unwrap()),
            },
        );
        let events = [(&note, &note.kind), (&change, &change.kind)];
        let fmt = |_: &str, v: f64| v.to_string();
        let rows = rows(&events, &[], None, &fmt, chrono_tz::UTC);
        let got: Vec<(String, bool)> = rows
            .iter()
            .map(|r| (r.time.clone(), r.event.starts_with("Change")))
            .collect();
        assert_eq!(got.len(), 2);
        assert!(got[0].1, "the change (09:30) comes first: {got:?}");
        assert!(got[0].0.contains("09:30"), "{got:?}");
    }
}
