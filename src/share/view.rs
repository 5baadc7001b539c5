//! The merged view of an incident: every writer's records, each once, in one order.

use super::wire::{Refused, Shared, WriterId};
use crate::incident::Record;
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, BTreeSet};

/// The records of all writers, ordered by (time, writer, sequence): the same set gives the same
/// order on every machine, whatever order the records arrived in.
#[derive(Debug, Default)]
pub struct View {
    records: BTreeMap<(DateTime<Utc>, WriterId, u64), Record>,
    seen: BTreeSet<(WriterId, u64)>,
    /// The writers of `seen`, kept as they come (asked after every merge).
    writers: BTreeSet<WriterId>,
    refused: Vec<Refused>,
}

/// What merging one message did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merged {
    New,
    /// This (writer, sequence) is already in the view: dropped.
    Twice,
    Refused,
}

impl View {
    /// Merges one message of the stream (or one of our own records).
    pub fn merge(&mut self, message: Result<Shared, Refused>) -> Merged {
        let shared = match message {
            Ok(s) => s,
            Err(why) => {
                tracing::warn!(%why, "refused a shared record");
                self.refused.push(why);
                return Merged::Refused;
            }
        };
        if !self.seen.insert((shared.writer.clone(), shared.record.seq)) {
            return Merged::Twice;
        }
        if !self.writers.contains(&shared.writer) {
            self.writers.insert(shared.writer.clone());
        }
        let key = (shared.record.time, shared.writer, shared.record.seq);
        self.records.insert(key, shared.record);
        Merged::New
    }

    /// The records in the view's order.
    pub fn records(&self) -> impl Iterator<Item = &Record> {
        self.records.values()
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The writers seen so far.
    pub fn writers(&self) -> &BTreeSet<WriterId> {
        &self.writers
    }

    /// The messages refused, in arrival order.
    pub fn refused(&self) -> &[Refused] {
        &self.refused
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incident::{Event, Source};

    fn shared(writer: &str, seq: u64, ms: i64) -> Shared {
        Shared {
            writer: WriterId::parse(writer).unwrap(),
            record: Record {
                seq,
                time: DateTime::from_timestamp_millis(ms).unwrap(),
                source: Source::Operator,
                actor: writer.into(),
                host: String::new(),
                kind: Event::note(format!("{writer} {seq}")),
            },
        }
    }

    #[test]
    fn the_order_is_the_same_whatever_the_arrival_and_doubles_are_dropped() {
        let all = [
            shared("b", 1, 10),
            shared("a", 1, 10),
            shared("a", 2, 5),
            shared("c", 1, 20),
        ];
        let (mut one, mut two) = (View::default(), View::default());
        for s in &all {
            assert_eq!(one.merge(Ok(s.clone())), Merged::New);
        }
        for s in all.iter().rev().chain(&all) {
            two.merge(Ok(s.clone()));
        }
        assert_eq!(two.merge(Ok(all[0].clone())), Merged::Twice);
        let texts = |v: &View| v.records().map(|r| r.actor.clone()).collect::<Vec<_>>();
        assert_eq!(texts(&one), ["a", "a", "b", "c"]);
        assert_eq!(texts(&one), texts(&two));
        assert_eq!(two.len(), 4);
    }
}
