//! Loading an incident for replay: its journal and its panel snapshots, read without the
//! incident's lock and without writing anything, so a recorder or console may be writing the
//! incident at the same time. A torn last line (a record being written right now) is left out
//! of the replay and left in the file; damage in the middle stops with the journal's message.

use crate::incident::journal::{self, JournalError, TornTail};
use crate::incident::snapshot::{self, PanelSnapshot};
use crate::incident::{IncidentId, Record, Store, StoreError};
use chrono::{DateTime, Utc};
use std::path::PathBuf;

/// How many known incidents an unknown id's message lists.
const KNOWN_SHOWN: usize = 10;

/// Why an incident cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(
        "there is no incident \"{id}\" in \"{root}\"; known incidents: {known} (`warroom \
         incident list` shows them with their titles)"
    )]
    NotFound {
        id: String,
        root: PathBuf,
        known: String,
    },
    #[error(
        "incident \"{id}\" has no records and no panel snapshots: there is nothing to replay \
         yet (`warroom incident timeline {id}` shows its journal)"
    )]
    Nothing { id: String },
    #[error(transparent)]
    Store(StoreError),
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// An incident as replay reads it.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub id: IncidentId,
    /// The title it had at the end of what was read.
    pub title: String,
    /// Every good record, in journal order.
    pub records: Vec<Record>,
    /// The newest record time among the first `i + 1` records (ms): never decreasing even when
    /// a clock stepped back, so "the records up to the cursor" is a binary search.
    reach: Vec<i64>,
    /// A torn last line that was left out (being written right now, or a crash).
    pub torn: Option<TornTail>,
    /// Panel snapshots in dashboard order (empty when none were taken).
    pub snapshots: Vec<PanelSnapshot>,
    /// Why the snapshots could not be read, when they could not.
    pub snapshot_problem: Option<String>,
}

/// Reads incident `id` under `store`, changing nothing.
pub fn load(store: &Store, id: &str) -> Result<Loaded, ReplayError> {
    let id = store.find(id).map_err(|e| match e {
        StoreError::NotFound { id, root } => ReplayError::NotFound {
            id,
            known: known(store),
            root,
        },
        other => ReplayError::Store(other),
    })?;
    let recovery = journal::read(&store.journal_path(&id))?;
    let (snapshots, snapshot_problem) = match snapshot::read_all(&store.snapshots_dir(&id)) {
        Ok(s) => (s, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    let loaded = Loaded::new(id, recovery.records, recovery.torn, snapshots);
    match loaded.span() {
        Some(_) => Ok(Loaded {
            snapshot_problem,
            ..loaded
        }),
        None => Err(ReplayError::Nothing {
            id: loaded.id.to_string(),
        }),
    }
}

/// The incidents under the store, newest last, for a message.
fn known(store: &Store) -> String {
    match store.list() {
        Ok(ids) if ids.is_empty() => "none yet".into(),
        Ok(ids) => {
            let skip = ids.len().saturating_sub(KNOWN_SHOWN);
            let shown: Vec<String> = ids[skip..].iter().map(|i| format!("\"{i}\"")).collect();
            let more = if skip > 0 {
                format!(" and {skip} older")
            } else {
                String::new()
            };
            format!("{}{more}", shown.join(", "))
        }
        Err(e) => format!("none readable ({e})"),
    }
}

impl Loaded {
    /// An incident from its parts (tests and the benchmark build them in memory).
    pub fn new(
        id: IncidentId,
        records: Vec<Record>,
        torn: Option<TornTail>,
        snapshots: Vec<PanelSnapshot>,
    ) -> Loaded {
        let mut newest = i64::MIN;
        let reach = records
            .iter()
            .map(|r| {
                newest = newest.max(r.time.timestamp_millis());
                newest
            })
            .collect();
        let title = crate::incident::summary::summarize(&records).title;
        Loaded {
            id,
            title,
            records,
            reach,
            torn,
            snapshots,
            snapshot_problem: None,
        }
    }

    /// How many records (a prefix in journal order) happened at or before `at`.
    pub fn records_until(&self, at: DateTime<Utc>) -> usize {
        let at = at.timestamp_millis();
        self.reach.partition_point(|t| *t <= at)
    }

    /// What the cursor travels: from the first record (or the snapshots' start when there are
    /// no records) to the last record or the snapshots' end, whichever is later.
    pub fn span(&self) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
        let records = self.records.iter().map(|r| r.time);
        let start = match self.records.first() {
            Some(_) => records.clone().min(),
            None => self.snapshots.iter().map(|s| s.window.from).min(),
        }?;
        let end = records
            .chain(self.snapshots.iter().map(|s| s.window.to))
            .max()
            .unwrap_or(start)
            .max(start);
        Some((start, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incident::Event;
    use crate::incident::Source;

    pub(crate) fn record(seq: u64, time: &str, text: &str) -> Record {
        Record {
            seq,
            time: time.parse().unwrap(),
            source: Source::Operator,
            actor: "ana".into(),
            host: String::new(),
            kind: Event::note(text),
        }
    }

    /// A store in a temporary directory with one incident made at 14:00.
    fn made() -> (tempfile::TempDir, Store, IncidentId) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let made = store
            .create("2026-11-29T14:00:00Z".parse().unwrap())
            .unwrap();
        (dir, store, made)
    }

    fn id() -> IncidentId {
        IncidentId::parse("2026-11-29-1").unwrap()
    }

    #[test]
    fn records_up_to_the_cursor_even_when_the_clock_stepped_back() {
        let records = vec![
            record(1, "2026-11-29T14:00:00Z", "a"),
            record(2, "2026-11-29T14:05:00Z", "b"),
            // The clock stepped back: this record still comes after b in the replay.
            record(3, "2026-11-29T14:04:00Z", "c"),
            record(4, "2026-11-29T14:10:00Z", "d"),
        ];
        let l = Loaded::new(id(), records, None, vec![]);
        let at = |s: &str| l.records_until(s.parse().unwrap());
        assert_eq!(at("2026-11-29T13:59:59Z"), 0);
        assert_eq!(at("2026-11-29T14:00:00Z"), 1);
        assert_eq!(at("2026-11-29T14:04:30Z"), 1);
        assert_eq!(at("2026-11-29T14:05:00Z"), 3);
        assert_eq!(at("2026-11-29T14:10:00Z"), 4);
        assert_eq!(
            l.span(),
            Some((
                "2026-11-29T14:00:00Z".parse().unwrap(),
                "2026-11-29T14:10:00Z".parse().unwrap()
            ))
        );
    }

    #[test]
    fn an_unknown_id_lists_the_known_ones() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let err = load(&store, "2026-11-29-1").unwrap_err().to_string();
        assert!(err.contains("none yet"), "{err}");
        let made = store
            .create("2026-11-29T14:00:00Z".parse().unwrap())
            .unwrap();
        let err = load(&store, "2026-11-29-9").unwrap_err().to_string();
        assert!(err.contains(&format!("\"{made}\"")), "{err}");
        assert!(err.contains("warroom incident list"), "{err}");
        let err = load(&store, "../etc").unwrap_err().to_string();
        assert!(err.contains("not an incident id"), "{err}");
        // An incident with nothing in it yet has nothing to replay, and says so.
        let err = load(&store, &made.to_string()).unwrap_err().to_string();
        assert!(err.contains("nothing to replay"), "{err}");
    }

    #[test]
    fn a_torn_last_line_is_left_out_and_left_in_the_file() {
        let (_dir, store, made) = made();
        let mut bytes = Vec::new();
        for (i, t) in ["14:00:00", "14:01:00"].iter().enumerate() {
            let r = record(i as u64 + 1, &format!("2026-11-29T{t}Z"), "note");
            bytes.extend(r.encode().unwrap());
        }
        let third = record(3, "2026-11-29T14:02:00Z", "being written")
            .encode()
            .unwrap();
        bytes.extend(&third[..third.len() / 2]);
        let path = store.journal_path(&made);
        std::fs::write(&path, &bytes).unwrap();
        let l = load(&store, &made.to_string()).unwrap();
        assert_eq!(l.records.len(), 2);
        assert!(l.torn.is_some());
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "nothing was cut off");
        assert!(
            store.holder(&made).unwrap().is_none(),
            "no lock is left held"
        );
    }

    #[test]
    fn damage_in_the_middle_stops_with_the_journal_message() {
        let (_dir, store, made) = made();
        let mut bytes = Vec::new();
        for i in 1..=3u64 {
            bytes.extend(record(i, "2026-11-29T14:00:00Z", "note").encode().unwrap());
        }
        let first_len = bytes.iter().position(|b| *b == b'\n').unwrap();
        bytes[first_len / 2] ^= 0x20;
        std::fs::write(store.journal_path(&made), &bytes).unwrap();
        let err = load(&store, &made.to_string()).unwrap_err();
        assert!(matches!(
            err,
            ReplayError::Journal(JournalError::Corrupt { line: 1, .. })
        ));
        assert!(err.to_string().contains("is damaged at line 1"), "{err}");
    }
}
