//! The outbox: `<incident dir>/outbox.jsonl`, publishing recorded before it is attempted.
//!
//! One JSON entry a line, appended and synced: a job is `queued` before the first request, each
//! object GitHub created is recorded (`object`) as soon as its answer arrives, a failure is
//! recorded (`failed`) and the job stays pending, and `done` closes it. After a failure, a
//! restart or a laptop that was offline, [`Outbox::pending`] gives the jobs still to do, and the
//! objects already known are updated instead of created again. A torn last line (a crash
//! mid-write) is skipped: the work it described is found again by its marker.

use super::publish::Target;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The outbox's file name inside an incident directory.
pub const OUTBOX_FILE: &str = "outbox.jsonl";

/// One line of the outbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Entry {
    Queued {
        job: u64,
        at: DateTime<Utc>,
        repo: String,
        target: Target,
    },
    Object {
        job: u64,
        at: DateTime<Utc>,
        repo: String,
        /// `postmortem` or `action:AI-2`.
        key: String,
        number: u64,
        url: String,
    },
    Failed {
        job: u64,
        at: DateTime<Utc>,
        error: String,
    },
    Done {
        job: u64,
        at: DateTime<Utc>,
        summary: String,
    },
    /// The incident's global id, kept here when a publication had to give an old journal one
    /// while a console held it (the journal could not take the record then).
    Identity { at: DateTime<Utc>, uid: String },
}

impl Entry {
    fn job(&self) -> u64 {
        match self {
            Entry::Queued { job, .. }
            | Entry::Object { job, .. }
            | Entry::Failed { job, .. }
            | Entry::Done { job, .. } => *job,
            Entry::Identity { .. } => 0,
        }
    }
}

/// A publication still to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub id: u64,
    pub repo: String,
    pub target: Target,
    pub queued_at: DateTime<Utc>,
    /// Failed attempts so far, and the last error.
    pub failures: u32,
    pub last_error: Option<String>,
}

/// Something on GitHub warroom made: its number and web address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Object {
    pub number: u64,
    pub url: String,
}

/// Why the outbox could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error("cannot use the outbox \"{}\": {source}; nothing was sent to GitHub", .path.display())]
pub struct OutboxError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

/// An incident's outbox.
#[derive(Debug, Clone)]
pub struct Outbox {
    path: PathBuf,
}

impl Outbox {
    /// The outbox of the incident in `incident_dir` (created on first use).
    pub fn new(incident_dir: &Path) -> Outbox {
        Outbox {
            path: incident_dir.join(OUTBOX_FILE),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, source: std::io::Error) -> OutboxError {
        OutboxError {
            path: self.path.clone(),
            source,
        }
    }

    /// Every readable entry, in order.
    pub fn entries(&self) -> Result<Vec<Entry>, OutboxError> {
        let text = match std::fs::read(&self.path) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.err(e)),
        };
        Ok(text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect())
    }

    /// Appends one entry and syncs it before returning.
    pub fn append(&self, entry: &Entry) -> Result<(), OutboxError> {
        let mut line = serde_json::to_vec(entry).map_err(|e| self.err(e.into()))?;
        line.push(b'\n');
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&self.path)
            .map_err(|e| self.err(e))?;
        // A torn last line (a crash mid-write) must not swallow this entry: start a new line.
        if ends_torn(&mut file).map_err(|e| self.err(e))? {
            line.insert(0, b'\n');
        }
        file.write_all(&line).map_err(|e| self.err(e))?;
        file.sync_data().map_err(|e| self.err(e))
    }

    /// Records a new job (synced) and returns its id.
    pub fn queue(&self, repo: &str, target: Target, at: DateTime<Utc>) -> Result<u64, OutboxError> {
        let job = self.entries()?.iter().map(Entry::job).max().unwrap_or(0) + 1;
        self.append(&Entry::Queued {
            job,
            at,
            repo: repo.to_string(),
            target,
        })?;
        Ok(job)
    }

    /// Jobs queued and not done, oldest first. A newer job for the same repository and form
    /// supersedes an older one (publishing again replaces an older attempt), done or not.
    pub fn pending(&self) -> Result<Vec<Job>, OutboxError> {
        let entries = self.entries()?;
        let mut jobs: BTreeMap<u64, Job> = BTreeMap::new();
        let mut newest: BTreeMap<(String, Target), u64> = BTreeMap::new();
        let mut done = Vec::new();
        for e in &entries {
            match e {
                Entry::Queued {
                    job,
                    at,
                    repo,
                    target,
                } => {
                    let id = newest.entry((repo.clone(), *target)).or_insert(*job);
                    *id = (*id).max(*job);
                    jobs.insert(
                        *job,
                        Job {
                            id: *job,
                            repo: repo.clone(),
                            target: *target,
                            queued_at: *at,
                            failures: 0,
                            last_error: None,
                        },
                    );
                }
                Entry::Failed { job, error, .. } => {
                    if let Some(j) = jobs.get_mut(job) {
                        j.failures += 1;
                        j.last_error = Some(error.clone());
                    }
                }
                Entry::Done { job, .. } => done.push(*job),
                Entry::Object { .. } | Entry::Identity { .. } => {}
            }
        }
        Ok(jobs
            .into_values()
            .filter(|j| !done.contains(&j.id))
            .filter(|j| newest.get(&(j.repo.clone(), j.target)) == Some(&j.id))
            .collect())
    }

    /// Jobs that `pending` left out because a newer one supersedes them.
    pub fn superseded_by(&self, newest: &Job) -> Result<Vec<u64>, OutboxError> {
        let open: Vec<u64> = self
            .entries()?
            .iter()
            .filter_map(|e| match e {
                Entry::Queued {
                    job, repo, target, ..
                } if *job < newest.id && *repo == newest.repo && *target == newest.target => {
                    Some(*job)
                }
                _ => None,
            })
            .collect();
        let done: Vec<u64> = self
            .entries()?
            .iter()
            .filter_map(|e| match e {
                Entry::Done { job, .. } => Some(*job),
                _ => None,
            })
            .collect();
        Ok(open.into_iter().filter(|j| !done.contains(j)).collect())
    }

    /// What warroom already made in `repo` for this incident: key → object (the latest wins).
    pub fn known(&self, repo: &str) -> Result<BTreeMap<String, Object>, OutboxError> {
        let mut known = BTreeMap::new();
        for e in self.entries()? {
            if let Entry::Object {
                repo: r,
                key,
                number,
                url,
                ..
            } = e
                && r == repo
            {
                known.insert(key, Object { number, url });
            }
        }
        Ok(known)
    }
}

fn ends_torn(file: &mut std::fs::File) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_stay_pending_until_done_and_newer_ones_supersede() {
        let dir = tempfile::tempdir().unwrap();
        let outbox = Outbox::new(dir.path());
        let t = Utc::now();
        let a = outbox.queue("acme/pm", Target::Pr, t).unwrap();
        outbox
            .append(&Entry::Failed {
                job: a,
                at: t,
                error: "down".into(),
            })
            .unwrap();
        let p = outbox.pending().unwrap();
        assert_eq!((p.len(), p[0].failures), (1, 1));
        let b = outbox.queue("acme/pm", Target::Pr, t).unwrap();
        let p = outbox.pending().unwrap();
        assert_eq!(p.iter().map(|j| j.id).collect::<Vec<_>>(), vec![b]);
        assert_eq!(outbox.superseded_by(&p[0]).unwrap(), vec![a]);
        outbox
            .append(&Entry::Object {
                job: b,
                at: t,
                repo: "acme/pm".into(),
                key: "action:AI-1".into(),
                number: 7,
                url: "u".into(),
            })
            .unwrap();
        // A torn last line is skipped, not fatal.
        std::fs::OpenOptions::new()
            .append(true)
            .open(outbox.path())
            .unwrap()
            .write_all(b"{\"op\":\"done\",\"jo")
            .unwrap();
        assert_eq!(outbox.known("acme/pm").unwrap()["action:AI-1"].number, 7);
        assert!(outbox.known("acme/other").unwrap().is_empty());
        assert_eq!(outbox.pending().unwrap().len(), 1);
        outbox
            .append(&Entry::Done {
                job: b,
                at: t,
                summary: "ok".into(),
            })
            .unwrap();
        assert!(
            outbox.pending().unwrap().is_empty(),
            "an entry after a torn line is kept"
        );
    }
}
