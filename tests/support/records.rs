//! Journal records for tests, built in one place: a record as the journal writes it, a timeline
//! numbered in order, and a real journal on a clock the test sets (so each record's time is the
//! one the test gives, not the wall clock's).
//!
//! ```ignore
//! use crate::support::records;
//! let timeline = records::numbered([(t0, Source::Operator, "ana", Event::note("pool full"))]);
//! let (mut journal, clock) = records::manual_journal(&store, &id, t0);
//! records::append_at(&mut journal, &clock, entries);
//! ```

#![allow(dead_code)]

use chrono::{DateTime, Utc};
use std::sync::Arc;
use warroom::clock::ManualClock;
use warroom::incident::{Event, IncidentId, Journal, Record, Source, Store};

/// One record as the journal writes it, without a host (as one written before the host field).
pub fn record(seq: u64, time: DateTime<Utc>, source: Source, actor: &str, kind: Event) -> Record {
    Record {
        seq,
        time,
        source,
        actor: actor.into(),
        host: String::new(),
        kind,
    }
}

/// A timeline of `(time, source, actor, event)` entries, numbered from 1 in the order given.
pub fn numbered<A: AsRef<str>>(
    entries: impl IntoIterator<Item = (DateTime<Utc>, Source, A, Event)>,
) -> Vec<Record> {
    entries
        .into_iter()
        .zip(1..)
        .map(|((time, source, actor, kind), seq)| record(seq, time, source, actor.as_ref(), kind))
        .collect()
}

/// The journal of incident `id` in `store`, on a clock set to `start` that the test moves: each
/// record appended takes the clock's time.
pub fn manual_journal(
    store: &Store,
    id: &IncidentId,
    start: DateTime<Utc>,
) -> (Journal, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(start));
    let (journal, _) =
        Journal::open_with(&store.journal_path(id), clock.clone(), |f| Box::new(f)).unwrap();
    (journal, clock)
}

/// Appends each `(time, source, actor, event)` entry at its time, in the order given.
pub fn append_at<A: AsRef<str>>(
    journal: &mut Journal,
    clock: &ManualClock,
    entries: impl IntoIterator<Item = (DateTime<Utc>, Source, A, Event)>,
) {
    for (time, source, actor, event) in entries {
        clock.set(time);
        journal.append(source, actor.as_ref(), event).unwrap();
    }
}
