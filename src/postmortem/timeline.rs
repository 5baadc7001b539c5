//! The draft's timeline table: one row per event an author keeps, or the full record.
//!
//! Folded (the default), a row is: the fault or change; the first crossing of each signal, its
//! warning and critical thresholds in one row (a signal already past its threshold when the
//! record began says so once); each alert's first firing; notes, status and severity changes
//! (the people's decisions); each mitigation, once when it is quick and at its start and end
//! when it lasts, with what its own plan did (restarts during a batch restart are the step's,
//! not signals); a run that failed or was stopped; the impact's start and end; the resolution.
//! Everything else (back-and-forth crossings, second rises after the recovery, gate waits,
//! alert resolutions, intents) is folded. [`Mode::Full`] lists every record instead.

use super::phrases::{self, Crossed};
use super::steps::StepRun;
use super::words;
use crate::config::Unit;
use crate::incident::event::{Direction, Event, Level, Severity, Status, StepState};
use crate::incident::record::Record;
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use serde::Serialize;
use std::collections::BTreeMap;

/// Warn and crit crossings of one panel this close together share a row.
pub const TOGETHER: Duration = Duration::seconds(60);
/// A step that lasts longer than this gets a row at its start and one at its end.
pub const LASTING: Duration = Duration::seconds(60);

/// How much of the record the timeline shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// One row per event that matters.
    #[default]
    Folded,
    /// Every record.
    Full,
}

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
    /// True when the value went the bad way.
    pub bad: bool,
    /// True when high values are the bad ones (the panel's `bad_when`; without a snapshot,
    /// the way its first crossing went: the detector starts from normal).
    pub bad_above: bool,
    pub value: f64,
    pub threshold: f64,
}

impl Crossing {
    /// Its level, value and threshold, as the phrases take them.
    pub fn crossed(&self) -> Crossed {
        Crossed {
            level: self.level,
            value: self.value,
            threshold: self.threshold,
        }
    }
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

/// Every threshold crossing, in time order. `bad_above` gives a panel's bad side when a
/// snapshot knows it.
pub fn crossings(
    events: &[(&Record, &Event)],
    bad_above: &dyn Fn(&str) -> Option<bool>,
) -> Vec<Crossing> {
    let mut raw: Vec<&Event> = events
        .iter()
        .map(|(_, e)| *e)
        .filter(|e| matches!(e, Event::ThresholdCrossed { .. }))
        .collect();
    raw.sort_by_key(|e| match e {
        Event::ThresholdCrossed { at, .. } => *at,
        _ => DateTime::<Utc>::MIN_UTC,
    });
    let mut first_way: BTreeMap<String, Direction> = BTreeMap::new();
    let mut out = Vec::new();
    for e in raw {
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
        let first = *first_way.entry(panel.clone()).or_insert(*direction);
        let above = bad_above(panel).unwrap_or(first == Direction::Up);
        out.push(Crossing {
            at: *at,
            panel: panel.clone(),
            level: *level,
            bad: (*direction == Direction::Up) == above,
            bad_above: above,
            value: *value,
            threshold: *threshold,
        });
    }
    out
}

/// What a step's own plan did to a signal (a batch restart takes instances down): shown on the
/// step's row, not as a signal.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    /// Index of the step in the steps list.
    pub step: usize,
    pub panel: String,
    /// "instances up fell to 70%".
    pub text: String,
}

/// The impact window as the timeline marks it.
#[derive(Debug, Clone, PartialEq)]
pub struct ImpactMarks {
    pub start: DateTime<Utc>,
    /// The panel whose crossing began it, when the signals gave the start.
    pub start_panel: Option<String>,
    pub end: Option<DateTime<Utc>>,
    /// The back crossing that ended it, when the signals gave the end.
    pub end_crossing: Option<Crossing>,
}

/// What the timeline is built from.
pub struct Input<'a> {
    pub events: &'a [(&'a Record, &'a Event)],
    pub crossings: &'a [Crossing],
    pub steps: &'a [StepRun],
    pub planned: &'a [Planned],
    pub impact: Option<ImpactMarks>,
    /// A panel's unit (`Count` when no snapshot names it).
    pub unit: &'a dyn Fn(&str) -> Unit,
    /// True for a crossing that only shows the value was already past the threshold when the
    /// record began (the detector starts from normal).
    pub standing: &'a dyn Fn(&Crossing) -> bool,
    /// The journal's last record: where a step that never ended stops.
    pub last: DateTime<Utc>,
    pub tz: Tz,
}

/// The timeline rows, in time order.
pub fn rows(input: &Input, mode: Mode) -> Vec<Row> {
    let mut rows = match mode {
        Mode::Folded => folded(input),
        Mode::Full => full(input),
    };
    rows.sort_by_key(|r| r.at);
    rows
}

fn row(at: DateTime<Utc>, event: String, tz: Tz) -> Row {
    Row {
        at,
        time: words::clock(at, tz),
        event,
    }
}

fn severity_row(before: Option<Severity>, now: Severity) -> String {
    match before {
        Some(b) if now < b => format!("Severity raised to {now}."),
        Some(b) if now > b => format!("Severity lowered to {now}."),
        _ => format!("Severity set to {now}."),
    }
}

fn status_row(s: Status) -> String {
    match s {
        Status::Resolved => "Incident resolved.".into(),
        other => format!("Status set to {other}."),
    }
}

/// A fault that began or a change that was made, at its own instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub at: DateTime<Utc>,
    /// In the journal's words ("planner-api-2026.07.17.1 deployed", "change #42 in acme/api:
    /// merged: x").
    pub what: String,
    /// How a chart labels it (the fault's name, "change #42").
    pub mark: String,
}

/// The faults that began and the changes made, by when they happened.
pub fn causes(events: &[(&Record, &Event)]) -> Vec<Recorded> {
    let mut out: Vec<Recorded> = events
        .iter()
        .filter_map(|(r, e)| match e {
            Event::SimFault {
                fault,
                active: true,
                at,
                ..
            } => Some(Recorded {
                at: at.unwrap_or(r.time),
                what: fault.clone(),
                mark: fault.clone(),
            }),
            Event::Change {
                repo,
                reference,
                title,
                at,
                ..
            } => Some(Recorded {
                at: at.unwrap_or(r.time),
                what: format!("change {reference} in {repo}: {title}"),
                mark: format!("change {reference}"),
            }),
            _ => None,
        })
        .collect();
    out.sort_by_key(|c| c.at);
    out
}

/// Rows for the events people and systems recorded (everything but crossings and steps). A
/// record written after a rehearsal ended is marked as `incident timeline` marks it.
fn record_rows(input: &Input, full: bool) -> Vec<Row> {
    let tz = input.tz;
    let ended = input
        .events
        .iter()
        .find(|(_, e)| matches!(e, Event::RehearsalEnded { .. }))
        .map(|(r, _)| r.seq);
    let mut out = Vec::new();
    let mut severity: Option<Severity> = None;
    let mut fired: BTreeMap<&str, usize> = BTreeMap::new();
    for (r, e) in input.events {
        let (at, text) = match e {
            Event::IncidentOpened { severity: s, .. } => {
                severity = Some(*s);
                (r.time, format!("Incident opened as {s}."))
            }
            Event::SeverityChanged { severity: s } => {
                let t = severity_row(severity, *s);
                severity = Some(*s);
                (r.time, t)
            }
            Event::StatusChanged { status } => (r.time, status_row(*status)),
            Event::TitleChanged { title } if full => {
                (r.time, words::closed(&format!("Title: {title}")))
            }
            Event::ServicesChanged { services } if full => (
                r.time,
                words::closed(&format!("Affected services: {}", services.join(", "))),
            ),
            Event::Note { text, .. } => {
                let t = super::facts::strip_tags(text);
                if t.is_empty() {
                    continue;
                }
                (r.time, words::as_sentence(&t))
            }
            Event::AlertFiring { name, .. } => {
                let n = fired.entry(name.as_str()).or_insert(0);
                *n += 1;
                if *n > 1 && !full {
                    continue;
                }
                (r.time, format!("Alert {name} fired."))
            }
            Event::AlertResolved { name, .. } if full => {
                (r.time, format!("Alert {name} resolved."))
            }
            Event::Change {
                repo,
                reference,
                title,
                at,
                ..
            } => (
                at.unwrap_or(r.time),
                words::closed(&format!("Change {reference} in {repo}: {title}")),
            ),
            Event::SimFault {
                fault, active, at, ..
            } => (
                at.unwrap_or(r.time),
                if *active {
                    words::as_sentence(fault)
                } else {
                    words::closed(&format!("Fault cleared: {fault}"))
                },
            ),
            Event::ImpactStart { at } if full => (*at, "Impact start set by hand.".into()),
            Event::ImpactEnd { at } if full => (*at, "Impact end set by hand.".into()),
            Event::Interrupted { signal } if full => {
                (r.time, format!("warroom was interrupted ({signal})."))
            }
            Event::Silence(s) => (r.time, words::closed(&s.sentence(tz))),
            Event::Responder { who, change, .. } if full => (
                r.time,
                words::closed(&crate::incident::timeline::presence(who, *change)),
            ),
            _ => continue,
        };
        let text = match ended {
            Some(end) if r.seq > end => format!(
                "{text} {}",
                crate::incident::timeline::ADDED_AFTER_REHEARSAL
            ),
            _ => text,
        };
        out.push(row(at, text, tz));
    }
    out
}

/// The sentence of a step's end: "Restart planner-api in batches: succeeded after acting on
/// 10 instances (api-0 to api-9); as planned, instances up fell to 70%."
fn step_end(input: &Input, i: usize, s: &StepRun) -> String {
    let mut t = format!("{}: {}", s.title, s.ended());
    let planned: Vec<String> = input
        .planned
        .iter()
        .filter(|p| p.step == i)
        .map(|p| p.text.clone())
        .collect();
    if !planned.is_empty() {
        t.push_str("; as planned, ");
        t.push_str(&words::and_list(&planned));
    }
    words::closed(&t)
}

fn manual_text(s: &StepRun) -> String {
    let how = if s.declined {
        "was not confirmed".to_string()
    } else if s.auto_confirmed {
        "was confirmed automatically (no one checked)".to_string()
    } else if s.confirmed {
        "was confirmed by the operator".to_string()
    } else {
        s.outcome()
    };
    words::closed(&format!("{}: {how}", s.title))
}

fn step_rows(input: &Input, full: bool) -> Vec<Row> {
    let tz = input.tz;
    let mut out = Vec::new();
    for (i, s) in input.steps.iter().enumerate() {
        let until = s.until(input.last);
        if s.manual() {
            if full || (s.confirmed && !s.auto_confirmed) || s.declined {
                out.push(row(s.started, manual_text(s), tz));
            }
            continue;
        }
        if !s.acting() {
            if full {
                out.push(row(s.started, format!("{}: started.", s.title), tz));
                if s.state.is_some() {
                    out.push(row(
                        until,
                        words::closed(&format!("{}: {}", s.title, s.outcome())),
                        tz,
                    ));
                }
            }
            continue;
        }
        if until - s.started > LASTING || full {
            out.push(row(s.started, format!("{}: started.", s.title), tz));
            out.push(row(until, step_end(input, i, s), tz));
        } else {
            out.push(row(s.started, step_end(input, i, s), tz));
        }
    }
    // A run that did not succeed, unless its last step's own row already says how it ended.
    let mut runs: Vec<&str> = Vec::new();
    for s in input.steps {
        if runs.contains(&s.run_id.as_str()) {
            continue;
        }
        runs.push(&s.run_id);
        let Some((at, state)) = s.run_end else {
            continue;
        };
        if state == StepState::Succeeded && !full {
            continue;
        }
        let last = input.steps.iter().rfind(|x| x.run_id == s.run_id);
        let said = last
            .is_some_and(|l| (l.acting() || l.manual()) && l.state != Some(StepState::Succeeded));
        if said && !full {
            continue;
        }
        let how = match state {
            StepState::Succeeded => "succeeded".to_string(),
            StepState::Cancelled => "was stopped".to_string(),
            StepState::Failed => "failed".to_string(),
            StepState::TimedOut => "timed out".to_string(),
            _ => "ended".to_string(),
        };
        let at_step = last
            .filter(|_| state != StepState::Succeeded)
            .map(|l| format!(" at “{}”", l.title))
            .unwrap_or_default();
        out.push(row(
            at,
            format!("Runbook {} {how}{at_step}.", s.runbook),
            tz,
        ));
    }
    out
}

/// The sentence of a panel's first bad crossings (`warn`, `crit`, either may be missing).
pub fn first_crossing_text(
    unit: Unit,
    panel: &str,
    warn: Option<&Crossing>,
    crit: Option<&Crossing>,
    tz: Tz,
) -> String {
    let text = match (warn, crit) {
        (Some(w), Some(c)) if (c.at - w.at).abs() <= TOGETHER => {
            phrases::crossed_both(unit, w.bad_above, w.crossed(), c.crossed())
        }
        (Some(w), Some(c)) => format!(
            "{}, then at {} {}",
            phrases::crossed(unit, w.bad_above, true, w.crossed()),
            words::clock(c.at, tz),
            phrases::crossed(unit, c.bad_above, true, c.crossed())
        ),
        (Some(one), None) | (None, Some(one)) => {
            phrases::crossed(unit, one.bad_above, true, one.crossed())
        }
        (None, None) => String::new(),
    };
    format!("{panel} {text}.")
}

fn standing_text(unit: Unit, c: &Crossing) -> String {
    let side = if c.bad_above { "above" } else { "below" };
    format!(
        "{} was already {side} its {} threshold of {} when the record began (reading {}).",
        c.panel,
        phrases::level_word(c.level),
        words::value(unit, c.threshold),
        words::reading(unit, c.value, c.threshold)
    )
}

fn folded(input: &Input) -> Vec<Row> {
    let tz = input.tz;
    let mut rows = record_rows(input, false);
    rows.extend(step_rows(input, false));
    // First crossings, one row per panel.
    let mut panels: Vec<&str> = Vec::new();
    for c in input.crossings {
        if !panels.contains(&c.panel.as_str()) {
            panels.push(&c.panel);
        }
    }
    let mut impact_started = false;
    for panel in panels {
        if input.planned.iter().any(|p| p.panel == panel) {
            continue;
        }
        let unit = (input.unit)(panel);
        let first = |l: Level| {
            input
                .crossings
                .iter()
                .find(|c| c.panel == panel && c.level == l && c.bad)
        };
        let (warn, crit) = (first(Level::Warn), first(Level::Crit));
        let Some(lead) = [warn, crit].into_iter().flatten().min_by_key(|c| c.at) else {
            continue;
        };
        if (input.standing)(lead) {
            // Past both at once: say the worse one. "When the record began" comes after the
            // opening: a first reading taken a moment before the incident's record was written
            // would otherwise go above it, or below, by how busy the machine was.
            let worst = crit
                .filter(|c| (c.at - lead.at).abs() <= TOGETHER)
                .unwrap_or(lead);
            let opened = (input.events.iter())
                .find(|(_, e)| matches!(e, Event::IncidentOpened { .. }))
                .map(|(r, _)| r.time);
            let at = opened.map_or(lead.at, |o| lead.at.max(o));
            rows.push(row(at, standing_text(unit, worst), tz));
            continue;
        }
        let mut text = first_crossing_text(unit, panel, warn, crit, tz);
        if let Some(i) = &input.impact
            && i.start_panel.as_deref() == Some(panel)
            && [warn, crit]
                .into_iter()
                .flatten()
                .any(|c| (c.at - i.start).abs() <= TOGETHER)
        {
            text.push_str(" Impact began.");
            impact_started = true;
        }
        rows.push(row(lead.at, text, tz));
    }
    if let Some(i) = &input.impact {
        if !impact_started {
            rows.push(row(i.start, "Impact began.".into(), tz));
        }
        if let Some(end) = i.end {
            let text = match &i.end_crossing {
                Some(c) => format!(
                    "{} {}. Impact ended.",
                    c.panel,
                    phrases::crossed((input.unit)(&c.panel), c.bad_above, false, c.crossed())
                ),
                None => "Impact ended.".into(),
            };
            rows.push(row(end, text, tz));
        }
    }
    rows
}

fn full(input: &Input) -> Vec<Row> {
    let tz = input.tz;
    let mut rows = record_rows(input, true);
    rows.extend(step_rows(input, true));
    for c in input.crossings {
        let unit = (input.unit)(&c.panel);
        rows.push(row(
            c.at,
            format!(
                "{} {}.",
                c.panel,
                phrases::crossed(unit, c.bad_above, c.bad, c.crossed())
            ),
            tz,
        ));
    }
    if let Some(i) = &input.impact {
        rows.push(row(i.start, "Impact began.".into(), tz));
        if let Some(end) = i.end {
            rows.push(row(end, "Impact ended.".into(), tz));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incident::Source;

    fn record(seq: u64, time: &str, kind: Event) -> Record {
        Record {
            seq,
            time: time.parse().unwrap(),
            source: Source::Github,
            actor: "ana".into(),
            host: String::new(),
            kind,
        }
    }

    fn input<'a>(
        events: &'a [(&'a Record, &'a Event)],
        crossings: &'a [Crossing],
        impact: Option<ImpactMarks>,
    ) -> Input<'a> {
        Input {
            events,
            crossings,
            steps: &[],
            planned: &[],
            impact,
            unit: &|_| Unit::Percent,
            standing: &|_| false,
            last: "2026-11-29T11:00:00Z".parse().unwrap(),
            tz: chrono_tz::UTC,
        }
    }

    /// A batch its budget refused before restarting anything: its row says why it stopped, in
    /// the words its response gives, not only that it was cancelled.
    #[test]
    fn a_batch_refused_by_its_budget_says_why_on_its_row() {
        let steps = crate::postmortem::steps::tests::refused_batch();
        let mut i = input(&[], &[], None);
        i.steps = &steps;
        let rows = rows(&i, Mode::Folded);
        let said = "Restart api one at a time: was cancelled: unavailability budget exhausted: 3 \
                    unavailable (3 unhealthy before the start), budget 1; nothing started.";
        assert!(rows.iter().any(|r| r.event == said), "{rows:#?}");
    }

    #[test]
    fn a_change_is_placed_when_it_happened() {
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
        let rows = rows(&input(&events, &[], None), Mode::Folded);
        assert_eq!(rows.len(), 2);
        assert!(rows[0].event.starts_with("Change"), "{rows:?}");
        assert_eq!(rows[0].time, "09:30");
    }

    #[test]
    fn warn_and_crit_of_a_panel_share_a_row_and_the_impact_joins_it() {
        let c = |s: &str, level, bad, value, threshold| Crossing {
            at: s.parse().unwrap(),
            panel: "Error ratio".into(),
            level,
            bad,
            bad_above: true,
            value,
            threshold,
        };
        let all = [
            c("2026-11-29T10:00:10Z", Level::Warn, true, 0.02, 0.01),
            c("2026-11-29T10:00:40Z", Level::Crit, true, 0.0503, 0.05),
            c("2026-11-29T10:05:00Z", Level::Crit, false, 0.03, 0.05),
            c("2026-11-29T10:06:00Z", Level::Crit, true, 0.06, 0.05),
            c("2026-11-29T10:20:00Z", Level::Crit, false, 0.04, 0.05),
        ];
        let impact = ImpactMarks {
            start: all[1].at,
            start_panel: Some("Error ratio".into()),
            end: Some(all[4].at),
            end_crossing: Some(all[4].clone()),
        };
        let folded = rows(&input(&[], &all, Some(impact.clone())), Mode::Folded);
        let text: Vec<&str> = folded.iter().map(|r| r.event.as_str()).collect();
        assert_eq!(
            text,
            [
                "Error ratio rose above its warning (1%) and critical (5%) thresholds (reading 5.03%). Impact began.",
                "Error ratio returned below its critical threshold of 5% (reading 4%). Impact ended."
            ]
        );
        let full = rows(&input(&[], &all, Some(impact)), Mode::Full);
        assert_eq!(full.len(), all.len() + 2);
    }
}
