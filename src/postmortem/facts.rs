//! The facts of an incident, computed from its journal and panel snapshots (a pure function of
//! them and the timezone). The house template, other houses' templates, the status page and
//! `--format json` all read this one structure; nothing here is invented: what is not known is
//! `None` or empty, and the templates put a marked prompt for the author there.

use super::figures;
use super::impact;
use super::signals::{self, Role};
use super::timeline::{self, Row, Step};
use super::words;
use crate::incident::event::{Event, Status, Tag};
use crate::incident::record::Record;
use crate::incident::snapshot::PanelSnapshot;
use crate::incident::summary::summarize;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;

/// An instant, written every way the draft needs it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Moment {
    /// RFC 3339, UTC.
    pub utc: String,
    /// "07:18" local.
    pub clock: String,
    /// "July 17, 2026" local.
    pub date: String,
    /// "Jul 17, 2026, 7:18 AM BST".
    pub status: String,
}

impl Moment {
    pub fn new(at: DateTime<Utc>, tz: Tz) -> Moment {
        Moment {
            utc: at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            clock: words::clock(at, tz),
            date: words::date(at, tz),
            status: words::status_time(at, tz),
        }
    }
}

/// When customers were affected.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Impact {
    pub start: Moment,
    pub end: Option<Moment>,
    pub duration: Option<String>,
    /// Where start and end came from: `journal` (set by a person), `signals` (threshold
    /// crossings) or `journal and signals`.
    pub source: String,
    /// The window the crossings alone give, for comparison.
    pub signal_start: Option<Moment>,
    pub signal_end: Option<Moment>,
}

/// A peak read from a panel snapshot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Peak {
    pub panel: String,
    pub value: f64,
    /// The value as the draft writes it ("81%", "2.6").
    pub text: String,
    pub at: Moment,
}

/// Latency before the impact and at its peak.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Latency {
    pub panel: String,
    pub before: f64,
    pub before_text: String,
    pub peak: f64,
    pub peak_text: String,
    pub at: Moment,
}

/// The figures from the snapshots.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Signals {
    pub error_ratio: Option<Peak>,
    pub pool_saturation: Option<Peak>,
    pub latency: Option<Latency>,
    pub retry_amplification: Option<Peak>,
    /// Estimated failed requests in the impact window (needs a request-rate panel).
    pub failed_requests: Option<Peak>,
}

/// How the incident was noticed.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Detection {
    pub first_crossing: Option<Moment>,
    pub first_crossing_panel: Option<String>,
    pub first_alert: Option<Moment>,
    pub first_alert_name: Option<String>,
    /// "3 minutes": from the first crossing to the first alert.
    pub alert_after: Option<String>,
    pub opened: Option<Moment>,
    /// From the first crossing to the incident being opened.
    pub opened_after: Option<String>,
    /// The incident was opened before any signal crossed a threshold.
    pub opened_before_signals: bool,
}

/// The recovery as the signals show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recovery {
    pub panel: String,
    pub at: Moment,
}

/// An action item row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Action {
    pub id: String,
    pub action: String,
    pub owner: Option<String>,
    pub priority: Option<String>,
    /// "August 14, 2026".
    pub due: Option<String>,
}

/// Tagged notes, the seeds of the judgement sections (tags removed from the text).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Notes {
    pub summary: Vec<String>,
    pub impact: Vec<String>,
    pub root_cause: Vec<String>,
    pub factor: Vec<String>,
    pub detection: Vec<String>,
    pub went_well: Vec<String>,
    pub went_poorly: Vec<String>,
    pub lesson: Vec<String>,
}

/// A chart written beside the draft.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChartRef {
    pub title: String,
    pub slug: String,
    /// Relative to the draft: `charts/<slug>.svg`.
    pub path: String,
}

/// One status-page update.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatusUpdate {
    /// investigating, identified, monitoring, resolved, postmortem.
    pub stage: String,
    pub at: Moment,
}

/// Everything the draft knows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Facts {
    pub incident: String,
    pub title: String,
    pub severity: Option<String>,
    /// "Resolved", "Investigating", …
    pub status: Option<String>,
    pub services: Vec<String>,
    /// The IANA name of the timezone the draft is written in.
    pub timezone: String,
    /// "All times are local." or "All times are in UTC."
    pub times_note: String,
    /// "local time" or "UTC", after a time range.
    pub time_words: String,
    pub date: Option<String>,
    pub duration: Option<String>,
    pub opened: Option<Moment>,
    pub resolved: Option<Moment>,
    pub impact: Option<Impact>,
    pub signals: Signals,
    pub timeline: Vec<Row>,
    pub detection: Detection,
    pub resolution: Vec<Step>,
    pub recovery: Option<Recovery>,
    pub actions: Vec<Action>,
    pub notes: Notes,
    pub charts: Vec<ChartRef>,
    pub status_updates: Vec<StatusUpdate>,
    /// Facts that could not be computed, and why (missing snapshots, …).
    pub missing: Vec<String>,
}

/// The text of a note without its `#tags`, lines joined.
pub fn strip_tags(text: &str) -> String {
    text.split_whitespace()
        .filter(|w| !w.starts_with('#') || Tag::parse_all(w).is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Computes the facts of incident `id` from its records (journal order) and snapshots.
pub fn compute(id: &str, records: &[Record], snaps: &[PanelSnapshot], tz: Tz) -> Facts {
    let summary = summarize(records);
    let events = timeline::effective(records);
    let crossings = timeline::crossings(&events);
    let with_data: Vec<&PanelSnapshot> = snaps.iter().filter(|s| !s.series.is_empty()).collect();
    let role = |r: Role| {
        with_data
            .iter()
            .copied()
            .find(|s| signals::role(s) == Some(r))
    };
    let error_panel = role(Role::ErrorRatio);

    let w = impact::window(&summary, &crossings, error_panel.map(|s| s.title.as_str()));
    let (start, end) = (w.start, w.end);
    let impact = start.map(|s| Impact {
        start: Moment::new(s, tz),
        end: end.map(|e| Moment::new(e, tz)),
        duration: end.map(|e| words::between(s, e)),
        source: w.source.into(),
        signal_start: w.signal_start.map(|t| Moment::new(t, tz)),
        signal_end: w.signal_end.as_ref().map(|e| Moment::new(e.0, tz)),
    });

    let (signals, mut missing) = figures::compute(snaps, &with_data, start, end, tz);
    if impact.is_none() {
        missing.push(
            "the impact window (no threshold crossing and no impact start in the journal)".into(),
        );
    }

    let units: Vec<(&str, crate::config::Unit)> =
        snaps.iter().map(|s| (s.title.as_str(), s.unit())).collect();
    let fmt = |panel: &str, v: f64| match units.iter().find(|(t, _)| *t == panel) {
        Some((_, u)) => words::value(*u, v),
        None => words::number(v, 3),
    };
    let rows = timeline::rows(&events, &crossings, start.map(|s| (s, end)), &fmt, tz);

    let first_bad = crossings.iter().find(|c| c.bad);
    let first_alert = events.iter().find_map(|(r, e)| match e {
        Event::AlertFiring { name, .. } => Some((r.time, name.clone())),
        _ => None,
    });
    let detection = Detection {
        first_crossing: first_bad.map(|c| Moment::new(c.at, tz)),
        first_crossing_panel: first_bad.map(|c| c.panel.clone()),
        first_alert: first_alert.as_ref().map(|a| Moment::new(a.0, tz)),
        first_alert_name: first_alert.as_ref().map(|a| a.1.clone()),
        alert_after: first_bad
            .zip(first_alert.as_ref())
            .filter(|(c, a)| a.0 >= c.at)
            .map(|(c, a)| words::between(c.at, a.0)),
        opened: summary.opened_at.map(|t| Moment::new(t, tz)),
        opened_after: first_bad
            .zip(summary.opened_at)
            .filter(|(c, o)| *o >= c.at)
            .map(|(c, o)| words::between(c.at, o)),
        opened_before_signals: first_bad
            .zip(summary.opened_at)
            .is_some_and(|(c, o)| o < c.at),
    };

    let mut notes = Notes::default();
    for n in &summary.notes {
        let text = strip_tags(&n.text);
        if text.is_empty() {
            continue;
        }
        for tag in &n.tags {
            let list = match tag {
                Tag::Summary => &mut notes.summary,
                Tag::Impact => &mut notes.impact,
                Tag::RootCause => &mut notes.root_cause,
                Tag::Factor => &mut notes.factor,
                Tag::Detection => &mut notes.detection,
                Tag::WentWell => &mut notes.went_well,
                Tag::WentPoorly => &mut notes.went_poorly,
                Tag::Lesson => &mut notes.lesson,
            };
            list.push(text.clone());
        }
    }

    let mut status_updates = vec![];
    if let Some(o) = summary.opened_at {
        status_updates.push(StatusUpdate {
            stage: Status::Investigating.as_str().into(),
            at: Moment::new(o, tz),
        });
    }
    for (r, e) in &events {
        if let Event::StatusChanged { status } = e
            && status_updates
                .last()
                .is_none_or(|u| u.stage != status.as_str())
        {
            status_updates.push(StatusUpdate {
                stage: status.as_str().into(),
                at: Moment::new(r.time, tz),
            });
        }
    }
    if summary.status == Some(Status::Resolved)
        && let Some(last) = summary.last_time
    {
        status_updates.push(StatusUpdate {
            stage: "postmortem".into(),
            at: Moment::new(last, tz),
        });
    }

    let title_case = |s: Status| {
        let w = s.as_str();
        let mut c = w.chars();
        c.next()
            .map(|f| f.to_uppercase().chain(c).collect::<String>())
            .unwrap_or_default()
    };
    let date_at = start
        .or(summary.opened_at)
        .or(records.first().map(|r| r.time));
    let duration = match (start, end) {
        (Some(s), Some(e)) => Some(words::between(s, e)),
        _ => summary
            .opened_at
            .zip(summary.resolved_at)
            .map(|(o, r)| words::between(o, r)),
    };
    let utc = tz == chrono_tz::UTC;
    Facts {
        incident: id.to_string(),
        title: summary.title.clone(),
        severity: summary.severity.map(|s| s.to_string()),
        status: summary.status.map(title_case),
        services: summary.services.clone(),
        timezone: tz.name().to_string(),
        times_note: if utc {
            "All times are in UTC.".into()
        } else {
            format!("All times are local ({}).", tz.name())
        },
        time_words: if utc {
            "UTC".into()
        } else {
            "local time".into()
        },
        date: date_at.map(|d| words::date(d, tz)),
        duration,
        opened: summary.opened_at.map(|t| Moment::new(t, tz)),
        resolved: summary.resolved_at.map(|t| Moment::new(t, tz)),
        impact,
        signals,
        timeline: rows,
        detection,
        resolution: timeline::steps(&events, tz),
        recovery: w.signal_end.map(|(at, panel)| Recovery {
            panel,
            at: Moment::new(at, tz),
        }),
        actions: summary
            .actions
            .iter()
            .map(|a| Action {
                id: a.id.clone(),
                action: a.action.clone(),
                owner: a.owner.clone(),
                priority: a.priority.map(|p| p.to_string()),
                due: a.due.map(|d| d.format("%B %-d, %Y").to_string()),
            })
            .collect(),
        notes,
        charts: with_data
            .iter()
            .map(|s| ChartRef {
                title: s.title.clone(),
                slug: s.slug.clone(),
                path: format!("charts/{}.svg", s.slug),
            })
            .collect(),
        status_updates,
        missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_removed_from_seeded_text() {
        assert_eq!(
            strip_tags("Pool at 100% #impact\nsince 07:18 #lesson #other"),
            "Pool at 100% since 07:18 #other"
        );
        assert_eq!(strip_tags("#root-cause"), "");
    }
}
