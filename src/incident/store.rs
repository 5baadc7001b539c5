//! Incidents on disk: one directory each under `<data dir>/incidents/`, and the lock that keeps
//! a single writer per incident.
//!
//! ```text
//! <data dir>/incidents/2026-11-29-1/
//!     journal.jsonl      the timeline (see `journal`)
//!     journal.tail       the last record acknowledged, so a cut journal is found (see `tail`)
//!     journal.torn-1     torn tails cut off on open, kept for inspection
//!     lock               held (flock) by the one writer; says who and since when
//!     snapshots/         panel series for charts and replay
//!     exports/           postmortem drafts
//! ```
//!
//! Ids are `YYYY-MM-DD-N`: the UTC date the incident was opened and a counter that day. They are
//! short enough to type, sort by date, and do not depend on the title (which changes while
//! people learn what is going on).

mod holder;
mod takeover;

pub use holder::{Holder, Role, process_exists, this_host};
pub use takeover::{TAKEOVER_WAIT, TakeOverError};

use super::journal::{Journal, JournalError, Recovery};
use super::storage::sync_dir;
use chrono::{DateTime, Utc};
use holder::read_holder;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Seek, Write};
use std::path::{Path, PathBuf};

/// The journal's file name inside an incident directory.
pub const JOURNAL_FILE: &str = "journal.jsonl";
const LOCK_FILE: &str = "lock";

/// Problems with incidents on disk.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "\"{0}\" is not an incident id; ids look like \"2026-11-29-1\" (`warroom incident list` \
         shows them)"
    )]
    BadId(String),
    #[error("there is no incident \"{id}\" in \"{root}\"; `warroom incident list` shows them")]
    NotFound { id: String, root: PathBuf },
    #[error("incident \"{id}\" is being written by {holder}; {hint}")]
    Held {
        id: String,
        holder: Holder,
        hint: &'static str,
    },
    #[error("cannot use \"{path}\": {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error(transparent)]
    Journal(#[from] JournalError),
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// An incident id: `YYYY-MM-DD-N`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IncidentId {
    date: String,
    n: u32,
}

impl IncidentId {
    /// Parses an id typed by a person; anything else (paths, `..`) is refused.
    pub fn parse(s: &str) -> Result<IncidentId, StoreError> {
        let bad = || StoreError::BadId(crate::sanitize::line(s).into_owned());
        let (date, n) = s.rsplit_once('-').ok_or_else(bad)?;
        if chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").is_err()
            || date.len() != 10
            || n.is_empty()
            || n.len() > 6
            || !n.bytes().all(|b| b.is_ascii_digit())
            || n.starts_with('0')
        {
            return Err(bad());
        }
        let n = n.parse().map_err(|_| bad())?;
        Ok(IncidentId {
            date: date.to_string(),
            n,
        })
    }
}

impl std::fmt::Display for IncidentId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.date, self.n)
    }
}

/// The held lock of one incident; dropping it releases the lock.
#[derive(Debug)]
pub struct IncidentLock {
    _file: File,
    pub holder: Holder,
}

/// An incident opened for writing: its lock and its journal.
#[derive(Debug)]
pub struct OpenIncident {
    pub id: IncidentId,
    pub dir: PathBuf,
    pub journal: Journal,
    pub lock: IncidentLock,
}

/// The incidents under one data dir.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

impl Store {
    /// The store under `data_dir` (`<data_dir>/incidents`); nothing is created until needed.
    pub fn new(data_dir: &Path) -> Store {
        Store {
            root: data_dir.join("incidents"),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn dir(&self, id: &IncidentId) -> PathBuf {
        self.root.join(id.to_string())
    }

    pub fn journal_path(&self, id: &IncidentId) -> PathBuf {
        self.dir(id).join(JOURNAL_FILE)
    }

    pub fn snapshots_dir(&self, id: &IncidentId) -> PathBuf {
        self.dir(id).join("snapshots")
    }

    pub fn exports_dir(&self, id: &IncidentId) -> PathBuf {
        self.dir(id).join("exports")
    }

    /// Reserves a new incident directory (with `snapshots/` and `exports/`) for the UTC date of
    /// `now`. `create_dir` is atomic, so two processes creating at once get different ids.
    pub fn create(&self, now: DateTime<Utc>) -> Result<IncidentId, StoreError> {
        std::fs::create_dir_all(&self.root).map_err(io_at(&self.root))?;
        let date = now.format("%Y-%m-%d").to_string();
        let last = self
            .list()?
            .iter()
            .filter(|id| id.date == date)
            .map(|id| id.n)
            .max()
            .unwrap_or(0);
        for n in last + 1..last + 1000 {
            let id = IncidentId {
                date: date.clone(),
                n,
            };
            if self.make(&id)? {
                return Ok(id);
            }
        }
        Err(io_at(&self.root)(io::Error::other(
            "1,000 incidents already exist for today",
        )))
    }

    /// Makes the directory of `id` (with `snapshots/` and `exports/`); false when it exists.
    fn make(&self, id: &IncidentId) -> Result<bool, StoreError> {
        let dir = self.dir(id);
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                for sub in ["snapshots", "exports"] {
                    let p = dir.join(sub);
                    std::fs::create_dir(&p).map_err(io_at(&p))?;
                }
                sync_dir(&dir).map_err(io_at(&dir))?;
                sync_dir(&self.root).map_err(io_at(&self.root))?;
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(io_at(&dir)(e)),
        }
    }

    /// Makes a place on this machine for an incident begun on another (joining a shared
    /// incident): its directory under its own id, with an empty journal. Nothing is done when
    /// it is here already.
    pub fn adopt(&self, id: &IncidentId) -> Result<(), StoreError> {
        std::fs::create_dir_all(&self.root).map_err(io_at(&self.root))?;
        self.make(id).map(drop)
    }

    /// Every incident id, oldest first. Directories that are not incidents are ignored.
    pub fn list(&self) -> Result<Vec<IncidentId>, StoreError> {
        let entries = match std::fs::read_dir(&self.root) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_at(&self.root)(e)),
        };
        let mut ids: Vec<IncidentId> = entries
            .filter_map(std::result::Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| IncidentId::parse(&e.file_name().to_string_lossy()).ok())
            .collect();
        ids.sort();
        Ok(ids)
    }

    /// Parses `id` and checks that the incident exists.
    pub fn find(&self, id: &str) -> Result<IncidentId, StoreError> {
        let parsed = IncidentId::parse(id)?;
        if !self.dir(&parsed).is_dir() {
            return Err(StoreError::NotFound {
                id: parsed.to_string(),
                root: self.root.clone(),
            });
        }
        Ok(parsed)
    }

    /// Takes the incident's lock for `role`, or says who holds it.
    pub fn lock(&self, id: &IncidentId, role: Role) -> Result<IncidentLock, StoreError> {
        let mut file = self.try_take(id)?;
        let holder = Holder::me(role);
        // The lock is what excludes; the file's text only tells the next one who we are, so a
        // failure to write it is not fatal (the message then says "another process").
        let text = serde_json::to_string(&holder).unwrap_or_default();
        let _ = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(text.as_bytes()));
        Ok(IncidentLock {
            _file: file,
            holder,
        })
    }

    /// Who holds the incident's lock right now, if anyone (takes and drops it to find out,
    /// without writing anything).
    pub fn holder(&self, id: &IncidentId) -> Result<Option<Holder>, StoreError> {
        match self.try_take(id) {
            Ok(_file) => Ok(None),
            Err(StoreError::Held { holder, .. }) => Ok(Some(holder)),
            Err(e) => Err(e),
        }
    }

    /// Opens the lock file and takes the (advisory, `flock`) lock. The kernel drops it when the
    /// holder exits in any way, `kill -9` included, so a lock is never stale; only the text in
    /// the file can be, and it is rewritten by each new holder.
    fn try_take(&self, id: &IncidentId) -> Result<File, StoreError> {
        let path = self.dir(id).join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_at(&path))?;
        match file.try_lock() {
            Ok(()) => Ok(file),
            Err(TryLockError::WouldBlock) => {
                let holder = read_holder(&mut file);
                let hint = match holder.role {
                    Role::Console => "add notes in its console, or close it and try again",
                    Role::Recorder => {
                        "`warroom open --incident ID` offers to take it over (notes are then \
                         added in the console), or stop the recorder (SIGTERM) and try again"
                    }
                    _ => "wait for it to finish and try again",
                };
                Err(StoreError::Held {
                    id: id.to_string(),
                    holder,
                    hint,
                })
            }
            Err(TryLockError::Error(e)) => Err(io_at(&path)(e)),
        }
    }

    /// Locks the incident and opens its journal for writing (recovering a torn tail).
    pub fn open_incident(
        &self,
        id: &IncidentId,
        role: Role,
    ) -> Result<(OpenIncident, Recovery), StoreError> {
        let lock = self.lock(id, role)?;
        let (journal, recovery) = Journal::open(&self.journal_path(id))?;
        Ok((
            OpenIncident {
                id: id.clone(),
                dir: self.dir(id),
                journal,
                lock,
            },
            recovery,
        ))
    }

    /// Reads an incident's journal without locking or changing it.
    pub fn read(&self, id: &IncidentId) -> Result<Recovery, StoreError> {
        Ok(super::journal::read(&self.journal_path(id))?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_and_refuse_paths() {
        let id = IncidentId::parse("2026-11-29-12").unwrap();
        assert_eq!(id.to_string(), "2026-11-29-12");
        for bad in [
            "",
            "../x",
            "2026-11-29",
            "2026-11-29-0",
            "2026-13-01-1",
            "2026-11-29-1/..",
            "a-1",
        ] {
            assert!(IncidentId::parse(bad).is_err(), "{bad:?}");
        }
        assert!(
            IncidentId::parse("2026-11-29-2").unwrap()
                < IncidentId::parse("2026-11-29-10").unwrap()
        );
    }

    #[test]
    fn create_counts_up_within_a_day() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let now: DateTime<Utc> = "2026-11-29T08:42:00Z".parse().unwrap();
        let a = store.create(now).unwrap();
        let b = store.create(now).unwrap();
        assert_eq!(
            (a.to_string(), b.to_string()),
            ("2026-11-29-1".into(), "2026-11-29-2".into())
        );
        assert!(store.snapshots_dir(&b).is_dir() && store.exports_dir(&b).is_dir());
        assert_eq!(store.list().unwrap(), vec![a, b]);
    }
}
