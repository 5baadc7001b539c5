//! The incident as its journal says it stands now: a pure fold over the records, with
//! corrections applied. `show`, the console's header and the postmortem read this.

use super::event::{Event, Priority, Severity, Status, Tag};
use super::record::Record;
use chrono::{DateTime, NaiveDate, Utc};
use std::collections::BTreeMap;

/// A note as it stands after corrections.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteItem {
    pub seq: u64,
    pub time: DateTime<Utc>,
    pub actor: String,
    pub text: String,
    pub tags: Vec<Tag>,
}

/// An action item as it stands after corrections.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionItem {
    pub seq: u64,
    pub id: String,
    pub action: String,
    pub owner: Option<String>,
    pub priority: Option<Priority>,
    pub due: Option<NaiveDate>,
}

/// The incident's current state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    pub title: String,
    pub severity: Option<Severity>,
    pub status: Option<Status>,
    pub services: Vec<String>,
    pub opened_at: Option<DateTime<Utc>>,
    /// When the status last became `resolved` (none if it is not resolved now).
    pub resolved_at: Option<DateTime<Utc>>,
    /// Impact window overrides set by the operator.
    pub impact_start: Option<DateTime<Utc>>,
    pub impact_end: Option<DateTime<Utc>>,
    pub notes: Vec<NoteItem>,
    pub actions: Vec<ActionItem>,
    /// Records superseded by a correction: superseded seq → correcting seq.
    pub corrected: BTreeMap<u64, u64>,
    pub records: usize,
    pub last_time: Option<DateTime<Utc>>,
    /// The incident's globally unique id ([`Event::IncidentUid`]; the first one recorded wins),
    /// `None` for a journal older than the id that was never published.
    pub uid: Option<String>,
}

/// The record a correction ultimately targets: a correction of a correction targets the same
/// record as the one it corrects.
fn target(records: &[Record], mut seq: u64) -> u64 {
    for _ in 0..records.len() {
        match records.get((seq as usize).wrapping_sub(1)).map(|r| &r.kind) {
            Some(Event::Correction { supersedes, .. }) if *supersedes < seq => seq = *supersedes,
            _ => break,
        }
    }
    seq
}

/// Folds the records (in sequence order, as the journal gives them) into a summary.
pub fn summarize(records: &[Record]) -> Summary {
    // The latest correction for each target wins.
    let mut replaced: BTreeMap<u64, (u64, Option<&Event>)> = BTreeMap::new();
    for r in records {
        if let Event::Correction {
            supersedes,
            replacement,
            ..
        } = &r.kind
            && *supersedes < r.seq
        {
            let t = target(records, *supersedes);
            replaced.insert(t, (r.seq, replacement.as_deref()));
        }
    }
    let mut s = Summary {
        records: records.len(),
        last_time: records.last().map(|r| r.time),
        ..Summary::default()
    };
    for r in records {
        if matches!(r.kind, Event::Correction { .. }) {
            continue;
        }
        let event = match replaced.get(&r.seq) {
            Some((by, replacement)) => {
                s.corrected.insert(r.seq, *by);
                match replacement {
                    Some(e) => *e,
                    None => continue,
                }
            }
            None => &r.kind,
        };
        apply(&mut s, r, event);
    }
    s
}

fn apply(s: &mut Summary, r: &Record, event: &Event) {
    match event {
        Event::IncidentOpened { title, severity } => {
            s.title = title.clone();
            s.severity = Some(*severity);
            s.status.get_or_insert(Status::Investigating);
            s.opened_at.get_or_insert(r.time);
        }
        Event::SeverityChanged { severity } => s.severity = Some(*severity),
        Event::StatusChanged { status } => {
            s.status = Some(*status);
            s.resolved_at = (*status == Status::Resolved).then_some(r.time);
        }
        Event::TitleChanged { title } => s.title = title.clone(),
        Event::ServicesChanged { services } => s.services = services.clone(),
        Event::Note { text, tags } => s.notes.push(NoteItem {
            seq: r.seq,
            time: r.time,
            actor: r.actor.clone(),
            text: text.clone(),
            tags: tags.clone(),
        }),
        Event::ActionItem {
            id,
            action,
            owner,
            priority,
            due,
        } => s.actions.push(ActionItem {
            seq: r.seq,
            id: id.clone(),
            action: action.clone(),
            owner: owner.clone(),
            priority: *priority,
            due: *due,
        }),
        Event::ImpactStart { at } => s.impact_start = Some(*at),
        Event::ImpactEnd { at } => s.impact_end = Some(*at),
        Event::IncidentUid { uid } => {
            s.uid.get_or_insert_with(|| uid.clone());
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incident::event::Source;

    fn rec(seq: u64, kind: Event) -> Record {
        Record {
            seq,
            time: DateTime::from_timestamp(1_800_000_000 + seq as i64 * 60, 0).unwrap(),
            source: Source::Operator,
            actor: "ana".into(),
            host: String::new(),
            kind,
        }
    }

    #[test]
    fn corrections_replace_and_retract_without_rewriting() {
        let records = vec![
            rec(
                1,
                Event::IncidentOpened {
                    title: "db".into(),
                    severity: Severity::Sev2,
                },
            ),
            rec(2, Event::note("pool at 100% #impact")),
            rec(3, Event::note("typo")),
            rec(
                4,
                Event::Correction {
                    supersedes: 2,
                    reason: "wrong figure".into(),
                    replacement: Some(Box::new(Event::note("pool at 95% #impact"))),
                },
            ),
            rec(
                5,
                Event::Correction {
                    supersedes: 3,
                    reason: "noise".into(),
                    replacement: None,
                },
            ),
            rec(
                6,
                Event::Correction {
                    supersedes: 4,
                    reason: "again".into(),
                    replacement: Some(Box::new(Event::note("pool at 97%"))),
                },
            ),
            rec(
                7,
                Event::StatusChanged {
                    status: Status::Resolved,
                },
            ),
        ];
        let s = summarize(&records);
        assert_eq!(s.notes.len(), 1);
        assert_eq!(s.notes[0].text, "pool at 97%");
        assert_eq!(s.notes[0].seq, 2);
        assert_eq!(s.corrected, BTreeMap::from([(2, 6), (3, 5)]));
        assert_eq!(s.status, Some(Status::Resolved));
        assert_eq!(s.resolved_at, Some(records[6].time));
        assert_eq!(s.severity, Some(Severity::Sev2));
    }
}
