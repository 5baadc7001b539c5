//! The journal: the incident's append-only timeline, one checksummed record a line.
//!
//! Durability rule: [`Journal::append`] writes the whole line with one write call, syncs it, and
//! only then returns the record; a caller shows a record as recorded only after that. A failed
//! write or sync is never success: the journal becomes *not durable* ([`Journal::is_durable`]),
//! the unacknowledged bytes are cut off again, and every later append first restores
//! durability (cut back, sync) or fails too. Records acknowledged before the failure were
//! synced already, so they stay durable; the failed record's sequence number is reused, since
//! it was never acknowledged.
//!
//! On open ([`scan`]): an unfinished last line (no newline at its end) is a torn write: it is
//! reported, copied to `journal.torn-<n>`, cut off, and noted in the journal. Damage followed
//! by good records, or a complete last line that does not check, is not a torn write: opening
//! stops with an error naming the line and changes nothing. A journal that ends before the
//! last record its tail marker names ([`super::tail`]) was cut at a record boundary: opening
//! and reading stop with an error too.

use super::event::{Event, Source};
use super::record::{LineError, Record};
use super::storage::{FileStorage, Storage, sync_dir};
use super::tail::{Cut, Tail, TailFile};
use crate::clock::{SharedClock, WallClock};
use chrono::{DateTime, Utc};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why the journal cannot be opened or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("cannot read the journal \"{path}\": {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error(
        "the journal \"{path}\" is damaged at line {line} (byte {offset}): {reason}. \
         It is not a torn write ({good_after} good record(s) follow it), so nothing was \
         changed. Keep a copy of the file, then repair that line or restore the journal from \
         a backup before writing to this incident."
    )]
    Corrupt {
        path: PathBuf,
        line: usize,
        offset: u64,
        reason: String,
        good_after: usize,
    },
    #[error(
        "the journal \"{path}\" skips from record {expected_prev} to {found} at line {line}; \
         records are missing. Nothing was changed; restore the journal from a backup."
    )]
    SequenceGap {
        path: PathBuf,
        line: usize,
        expected_prev: u64,
        found: u64,
    },
    #[error("the journal \"{path}\" was cut: {cut}")]
    Cut { path: PathBuf, cut: Cut },
    #[error("cannot set aside the torn tail of \"{path}\": {source}; nothing was changed")]
    SetAside { path: PathBuf, source: io::Error },
    #[error(
        "the journal \"{path}\" is not durable: {cause}. This record was NOT recorded; \
         destructive steps are refused until the journal can be written and synced again \
         (check the disk: space, permissions, errors in the kernel log)."
    )]
    NotDurable { path: PathBuf, cause: String },
    #[error("{0}")]
    Invalid(#[from] super::event::InvalidEvent),
    #[error("cannot encode the record: {0}")]
    Encode(#[from] serde_json::Error),
}

impl JournalError {
    /// The event itself cannot be recorded (a value the journal cannot carry, an action-item
    /// number past the last): sending it again would fail again, and the journal is as
    /// durable as before. Every other append error is the journal failing.
    pub fn is_refusal(&self) -> bool {
        matches!(self, JournalError::Invalid(_) | JournalError::Encode(_))
    }
}

/// A torn tail found when the journal was opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    /// Line number (1-based) of the torn line.
    pub line: usize,
    /// Byte offset where it starts: the journal was cut back to this length.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
    pub reason: String,
    /// Where its bytes were kept (none when only reading).
    pub kept_at: Option<PathBuf>,
}

/// What opening (or reading) a journal found.
#[derive(Debug, Clone, PartialEq)]
pub struct Recovery {
    /// Every good record, in order (after opening for writing, including the notice about a
    /// torn tail, if there was one).
    pub records: Vec<Record>,
    pub torn: Option<TornTail>,
}

/// A journal's bytes checked line by line (pure, no I/O).
#[derive(Debug, Clone, PartialEq)]
pub struct Scan {
    pub records: Vec<Record>,
    /// Length of the good prefix: the whole input unless there is a torn tail.
    pub good_len: u64,
    pub torn: Option<TornTail>,
}

/// Checks a journal's bytes: every line a valid record, sequence numbers 1, 2, 3, … without
/// gaps, and at most a torn last line. `path` only names the file in errors.
pub fn scan(bytes: &[u8], path: &Path) -> Result<Scan, JournalError> {
    let mut records = Vec::new();
    let mut bad: Option<(usize, u64, LineError)> = None;
    let mut bad_lines = 0usize;
    let mut good_after = 0usize;
    let mut offset = 0usize;
    let mut line_no = 0usize;
    while offset < bytes.len() {
        line_no += 1;
        let end = bytes[offset..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(bytes.len(), |i| offset + i + 1);
        match Record::decode(&bytes[offset..end]) {
            Ok(record) if bad.is_none() => {
                let expected = records.len() as u64 + 1;
                if record.seq != expected {
                    return Err(JournalError::SequenceGap {
                        path: path.to_path_buf(),
                        line: line_no,
                        expected_prev: expected - 1,
                        found: record.seq,
                    });
                }
                records.push(record);
            }
            Ok(_) => good_after += 1,
            Err(e) => {
                bad_lines += 1;
                if bad.is_none() {
                    bad = Some((line_no, offset as u64, e));
                }
            }
        }
        offset = end;
    }
    let Some((line, start, err)) = bad else {
        return Ok(Scan {
            records,
            good_len: bytes.len() as u64,
            torn: None,
        });
    };
    let tail = &bytes[start as usize..];
    // A torn write is the prefix of ONE record on the last line; anything more is damage. A
    // record is written with one write call and its newline is its last byte, so a last line
    // that has its newline was written whole: if it does not check, it was changed since.
    let complete = err != LineError::Unfinished;
    if good_after > 0 || bad_lines > 1 || complete || Record::count_checksums(tail) > 1 {
        let reason = if complete && bad_lines == 1 && good_after == 0 {
            format!(
                "{err}; the line is complete (it ends with its newline), so it was written \
                 whole and changed afterwards: this is damage, not a torn write"
            )
        } else if bad_lines > 1 && good_after == 0 {
            format!(
                "{err} (and {} more damaged line(s) after it)",
                bad_lines - 1
            )
        } else if good_after == 0 {
            format!("{err} (it holds more than one record)")
        } else {
            err.to_string()
        };
        return Err(JournalError::Corrupt {
            path: path.to_path_buf(),
            line,
            offset: start,
            reason,
            good_after,
        });
    }
    Ok(Scan {
        records,
        good_len: start,
        torn: Some(TornTail {
            line,
            offset: start,
            len: tail.len() as u64,
            reason: err.to_string(),
            kept_at: None,
        }),
    })
}

/// Reads and checks a journal without changing it (for `timeline`, `show`, exports): a torn
/// tail is reported and skipped, damage in the middle is an error. A missing file is empty.
pub fn read(path: &Path) -> Result<Recovery, JournalError> {
    // The marker first: it is written after the journal, so read in this order it never
    // names a record the journal read next does not hold, unless records were lost.
    let marker = super::tail::read(path);
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(source) => {
            return Err(JournalError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let scan = scan(&bytes, path)?;
    check_tail(path, marker, &scan)?;
    Ok(Recovery {
        records: scan.records,
        torn: scan.torn,
    })
}

/// The journal as scanned against its tail marker: an error when it lost acknowledged records.
/// A marker that cannot be read is said in the log and returned, so an opening writer can say
/// so on the timeline; the journal is then taken as it is.
fn check_tail(
    path: &Path,
    marker: Option<Result<Tail, String>>,
    scan: &Scan,
) -> Result<Option<String>, JournalError> {
    match marker {
        None => Ok(None),
        Some(Ok(tail)) => tail
            .check(
                &super::tail::path_for(path),
                scan.records.len() as u64,
                scan.good_len,
            )
            .map(|()| None)
            .map_err(|cut| JournalError::Cut {
                path: path.to_path_buf(),
                cut,
            }),
        Some(Err(why)) => {
            tracing::warn!(path = %path.display(), %why, "the journal's tail marker is unreadable");
            Ok(Some(why))
        }
    }
}

/// Whether records written now are durable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Durability {
    Durable,
    /// A write or sync failed at `since`; `cause` says how.
    NotDurable {
        since: DateTime<Utc>,
        cause: String,
    },
}

/// The writer of one incident's journal. Only one may exist per incident: take the incident's
/// lock first (see `Store::open_incident`).
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    storage: Box<dyn Storage>,
    clock: SharedClock,
    next_seq: u64,
    good_len: u64,
    durability: Durability,
    /// The tail marker, rewritten after each record is synced.
    tail: TailFile,
    /// This machine's name, stamped on the records written here.
    host: String,
    /// The highest `AI-n` action item id recorded so far (ids asked for empty are `n + 1`).
    last_action: u32,
}

impl Journal {
    /// Opens (creating if needed) the journal at `path` for appending, with the wall clock.
    pub fn open(path: &Path) -> Result<(Journal, Recovery), JournalError> {
        Journal::open_with(path, Arc::new(WallClock), |f| Box::new(f))
    }

    /// Stamps the records appended from now on with `clock` (a rehearsal's simulated time).
    pub fn set_clock(&mut self, clock: SharedClock) {
        self.clock = clock;
    }

    /// Opens with a given clock and a wrapper around the file (tests inject faults with
    /// `FaultyStorage`).
    pub fn open_with(
        path: &Path,
        clock: SharedClock,
        wrap: impl FnOnce(FileStorage) -> Box<dyn Storage>,
    ) -> Result<(Journal, Recovery), JournalError> {
        let read_err = |source| JournalError::Read {
            path: path.to_path_buf(),
            source,
        };
        let marker = super::tail::read(path);
        let existed = path.exists();
        if !existed && let Some(Ok(tail)) = marker {
            // The journal is gone but its marker is not: refuse before creating an empty one.
            let cut = tail.check(&super::tail::path_for(path), 0, 0);
            cut.map_err(|cut| JournalError::Cut {
                path: path.to_path_buf(),
                cut,
            })?;
        }
        let file = FileStorage::open(path).map_err(read_err)?;
        if !existed {
            // A new file's directory entry must be durable too, or a crash could lose it.
            sync_dir(path.parent().unwrap_or(Path::new("."))).map_err(read_err)?;
        }
        let bytes = std::fs::read(path).map_err(read_err)?;
        let mut scan = scan(&bytes, path)?;
        let unreadable_marker = check_tail(path, marker, &scan)?;
        let tail = TailFile::open(path).map_err(read_err)?;
        let mut storage = wrap(file);
        if let Some(torn) = &mut scan.torn {
            let kept = set_aside(path, &bytes[torn.offset as usize..]).map_err(|source| {
                JournalError::SetAside {
                    path: path.to_path_buf(),
                    source,
                }
            })?;
            torn.kept_at = Some(kept);
            storage
                .truncate(torn.offset)
                .and_then(|()| storage.sync_data())
                .map_err(|source| JournalError::SetAside {
                    path: path.to_path_buf(),
                    source,
                })?;
        }
        let mut journal = Journal {
            path: path.to_path_buf(),
            storage,
            clock,
            next_seq: scan.records.len() as u64 + 1,
            good_len: scan.good_len,
            durability: Durability::Durable,
            tail,
            host: super::store::this_host(),
            last_action: scan
                .records
                .iter()
                .map(|r| action_number(&r.kind))
                .max()
                .unwrap_or(0),
        };
        if let Some(torn) = &scan.torn {
            let kept = torn
                .kept_at
                .as_ref()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let message = format!(
                "The journal's last line ({} bytes at line {}) was torn ({}); it was cut off and \
                 kept in \"{kept}\". Every record before it is intact.",
                torn.len, torn.line, torn.reason
            );
            let notice =
                journal.append(Source::System, "warroom", Event::JournalNotice { message })?;
            scan.records.push(notice);
        }
        if let Some(why) = unreadable_marker {
            let message = format!(
                "The journal's tail marker was unreadable ({why}), so whether records were cut \
                 from the journal's end before this opening could not be checked. A new marker \
                 was written."
            );
            let notice =
                journal.append(Source::System, "warroom", Event::JournalNotice { message })?;
            scan.records.push(notice);
        }
        // A journal without a marker (new, or from before markers) gets one now.
        journal.write_tail().map_err(read_err)?;
        Ok((
            journal,
            Recovery {
                records: scan.records,
                torn: scan.torn,
            },
        ))
    }

    /// Appends one event and returns the record once it is written and synced. On error the
    /// record is not recorded, and [`Journal::is_durable`] says whether the journal still is.
    pub fn append(
        &mut self,
        source: Source,
        actor: &str,
        event: Event,
    ) -> Result<Record, JournalError> {
        let host = self.host.clone();
        self.append_from(None, source, actor, &host, event)
    }

    /// [`Journal::append`], stamped `at` instead of the clock's now: an event that knows when
    /// it happened (a rehearsal's fault, dated at its simulated second however late the
    /// recorder saw it).
    pub fn append_at(
        &mut self,
        at: Option<DateTime<Utc>>,
        source: Source,
        actor: &str,
        event: Event,
    ) -> Result<Record, JournalError> {
        let host = self.host.clone();
        self.append_from(at, source, actor, &host, event)
    }

    /// [`Journal::append`] for an author on another host (a client of the holder's socket),
    /// stamped `at` when given. An action item gets the next id here, whatever id it came
    /// with: here every writer's records meet in order, so two responders adding one at once
    /// never share an id, and no client can pick one (`AI-4294967295`, or an `AI-1` that would
    /// take over the first item's GitHub issue).
    pub fn append_from(
        &mut self,
        at: Option<DateTime<Utc>>,
        source: Source,
        actor: &str,
        host: &str,
        mut event: Event,
    ) -> Result<Record, JournalError> {
        if let Event::ActionItem { id, .. } = &mut event {
            let next = self.last_action.checked_add(1).ok_or_else(|| {
                super::event::InvalidEvent(format!(
                    "the incident has {} action items, the most it can number; it was not recorded",
                    self.last_action
                ))
            })?;
            *id = format!("AI-{next}");
        }
        let event = event.sanitized();
        event.check()?;
        if let Event::Correction { supersedes, .. } = &event
            && (*supersedes == 0 || *supersedes >= self.next_seq)
        {
            return Err(super::event::InvalidEvent(format!(
                "a correction must supersede an earlier record, and there is no record \
                 #{supersedes} yet (the newest is #{}); it was not recorded",
                self.next_seq - 1
            ))
            .into());
        }
        if let Durability::NotDurable { .. } = self.durability {
            self.restore()?;
        }
        let now = at.unwrap_or_else(|| self.clock.now());
        let time = DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now);
        let record = Record {
            seq: self.next_seq,
            time,
            source,
            actor: crate::sanitize::line(actor).into_owned(),
            host: crate::sanitize::line(host).into_owned(),
            kind: event,
        };
        let line = record.encode()?;
        match self.storage.write_once(&line) {
            Ok(n) if n == line.len() => {}
            Ok(n) => return Err(self.fail(format!("short write ({n} of {} bytes)", line.len()))),
            Err(e) => return Err(self.fail(format!("write failed: {e}"))),
        }
        if let Err(e) = self.storage.sync_data() {
            return Err(self.fail(format!("sync failed: {e}")));
        }
        self.good_len += line.len() as u64;
        self.next_seq += 1;
        if let Err(e) = self.write_tail() {
            // Not acknowledged: the record is cut off again with the rest of the failure.
            self.good_len -= line.len() as u64;
            self.next_seq -= 1;
            return Err(self.fail(format!("writing the tail marker failed: {e}")));
        }
        self.last_action = self.last_action.max(action_number(&record.kind));
        Ok(record)
    }

    /// Says the acknowledged end of the journal in its tail marker.
    fn write_tail(&mut self) -> io::Result<()> {
        self.tail.write(Tail {
            seq: self.next_seq - 1,
            len: self.good_len,
        })
    }

    /// Marks the journal not durable and cuts off whatever part of the failed line got written
    /// (best effort: [`Journal::restore`] tries again before the next append).
    fn fail(&mut self, cause: String) -> JournalError {
        tracing::error!(path = %self.path.display(), %cause, "journal not durable");
        self.durability = Durability::NotDurable {
            since: self.clock.now(),
            cause: cause.clone(),
        };
        let _ = self.storage.truncate(self.good_len);
        JournalError::NotDurable {
            path: self.path.clone(),
            cause,
        }
    }

    /// Tries to make the journal durable again: cut back to the last acknowledged record and
    /// sync. Appends call it themselves; the console may call it to retry (with backoff).
    pub fn restore(&mut self) -> Result<(), JournalError> {
        let result = self
            .storage
            .truncate(self.good_len)
            .and_then(|()| self.storage.sync_data())
            .and_then(|()| self.write_tail());
        match result {
            Ok(()) => {
                tracing::info!(path = %self.path.display(), "journal durable again");
                self.durability = Durability::Durable;
                Ok(())
            }
            Err(e) => {
                let cause = match &self.durability {
                    Durability::NotDurable { cause, .. } => {
                        format!("{cause}; restoring failed too: {e}")
                    }
                    Durability::Durable => format!("restoring failed: {e}"),
                };
                Err(JournalError::NotDurable {
                    path: self.path.clone(),
                    cause,
                })
            }
        }
    }

    /// True while every acknowledged record is on disk and appends are succeeding.
    pub fn is_durable(&self) -> bool {
        self.durability == Durability::Durable
    }

    pub fn durability(&self) -> &Durability {
        &self.durability
    }

    /// The sequence number the next record will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The `n` of an action item `AI-n` (in a correction's replacement too), else 0.
fn action_number(event: &Event) -> u32 {
    match event {
        Event::ActionItem { id, .. } => id
            .strip_prefix("AI-")
            .and_then(|n| n.parse().ok())
            .unwrap_or(0),
        Event::Correction {
            replacement: Some(r),
            ..
        } => action_number(r),
        _ => 0,
    }
}

/// Copies a torn tail to the first free `journal.torn-<n>` beside the journal and syncs it.
fn set_aside(path: &Path, tail: &[u8]) -> io::Result<PathBuf> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "journal".into());
    for n in 1..10_000 {
        let candidate = dir.join(format!("{stem}.torn-{n}"));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(mut file) => {
                io::Write::write_all(&mut file, tail)?;
                file.sync_all()?;
                sync_dir(dir)?;
                return Ok(candidate);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(
        "10,000 torn-tail files already exist beside the journal",
    ))
}
