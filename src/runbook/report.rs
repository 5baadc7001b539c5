//! What a run reports and what it must persist: the seam between the executor and the journal
//! (durable records, idempotency keys) and the console (live progress).
//!
//! The executor calls [`RunSink::record`] for every transition and stops the run when it fails
//! (a run that cannot be recorded must not go on changing things). Before the first send of a
//! mutating request it asks [`IntentStore::key`] for the idempotency key of that action: the
//! store creates it once, makes it durable, and returns the same key on every later call for
//! the same scope, including after a restart, so a resumed run re-sends with the same key and
//! the server acts at most once.

use super::batch::{BatchEvent, Decision};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepOutcome {
    Succeeded,
    Failed,
    /// Killed by its timeout (distinct from failed and cancelled).
    TimedOut,
    /// Stopped by the operator (abort) or a signal.
    Cancelled,
    /// The operator declined its confirmation.
    Declined,
    /// Not run: a dry run, or a note.
    Skipped,
}

/// How a run ended; each has its own exit status in the headless CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    Succeeded,
    /// A step failed or timed out and the operator (or `--yes`) aborted.
    Failed,
    /// The operator declined a confirmation or aborted.
    Aborted,
    /// A dry run: nothing was done.
    DryRun,
}

impl StepOutcome {
    /// The outcome in words: "succeeded", "timed out".
    pub fn word(self) -> &'static str {
        match self {
            StepOutcome::Succeeded => "succeeded",
            StepOutcome::Failed => "failed",
            StepOutcome::TimedOut => "timed out",
            StepOutcome::Cancelled => "cancelled",
            StepOutcome::Declined => "declined",
            StepOutcome::Skipped => "skipped",
        }
    }
}

impl RunOutcome {
    /// The outcome in words: "succeeded", "dry run".
    pub fn word(self) -> &'static str {
        match self {
            RunOutcome::Succeeded => "succeeded",
            RunOutcome::Failed => "failed",
            RunOutcome::Aborted => "aborted",
            RunOutcome::DryRun => "dry run",
        }
    }

    /// The process exit status for this outcome.
    pub fn exit_code(self) -> u8 {
        match self {
            RunOutcome::Succeeded | RunOutcome::DryRun => 0,
            RunOutcome::Failed => 1,
            RunOutcome::Aborted => 3,
        }
    }
}

/// One transition of a run. Text in it is sanitized and secrets are masked before it is built.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RunEvent {
    RunStarted {
        runbook: String,
        /// The runbook file's hash; a run can resume only with the same hash.
        hash: String,
        dry_run: bool,
        /// Variable values, secrets masked.
        variables: BTreeMap<String, String>,
    },
    /// The run continues after a crash from step `from_step` (same run id, same keys).
    RunResumed {
        from_step: String,
    },
    StepStarted {
        step: String,
        kind: String,
        title: String,
    },
    Confirmed {
        step: String,
        what: String,
        /// Confirmed by `--yes` or a rehearsal's play, not typed by a person.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        automatic: bool,
    },
    Declined {
        step: String,
        what: String,
    },
    /// One HTTP attempt (status or error).
    Attempt {
        step: String,
        target: Option<String>,
        attempt: u32,
        method: String,
        url: String,
        idempotency_key: Option<String>,
        status: Option<u16>,
        error: Option<String>,
    },
    /// A process was started (argv masked).
    Spawned {
        step: String,
        target: Option<String>,
        argv: Vec<String>,
    },
    /// A line of output (bounded, sanitized, masked).
    Output {
        step: String,
        line: String,
    },
    GateReading {
        step: String,
        reading: String,
        verdict: String,
    },
    Batch {
        step: String,
        batch_event: BatchEvent,
    },
    Paused {
        step: String,
        reason: String,
    },
    Decided {
        step: String,
        decision: Decision,
    },
    StepFinished {
        step: String,
        outcome: StepOutcome,
        detail: String,
    },
    RunFinished {
        outcome: RunOutcome,
    },
}

/// A recorded event with its time and run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub at: DateTime<Utc>,
    pub run_id: String,
    #[serde(flatten)]
    pub event: RunEvent,
}

/// A record or key could not be made durable.
#[derive(Debug, thiserror::Error)]
#[error("cannot record the run in \"{path}\": {source}")]
pub struct RecordError {
    pub path: String,
    #[source]
    pub source: std::io::Error,
}

/// Where a run's events go: the journal (durable), the console (live), a file, memory.
pub trait RunSink: Send + Sync {
    /// Record one event; `Err` stops the run before its next action.
    fn record(&self, record: &RunRecord) -> Result<(), RecordError>;
}

/// Idempotency keys, durable before the first send.
pub trait IntentStore: Send + Sync {
    /// The key for `scope` (run, step, target): created and made durable on the first call,
    /// the same on every later call, before and after a restart.
    fn key(&self, scope: &str) -> Result<String, RecordError>;

    /// The same, naming the request about to be sent (as the plan shows it, secrets masked),
    /// for stores that record it with the key (the incident journal's `RunbookIntent`).
    fn key_for(&self, scope: &str, request: &str) -> Result<String, RecordError> {
        let _ = request;
        self.key(scope)
    }
}

/// A fresh random key (128 bits, hex).
pub fn new_key() -> String {
    let v: u128 = rand::random();
    format!("wr-{v:032x}")
}

/// Events kept in memory (tests; the console's live view beside the journal).
#[derive(Debug, Default)]
pub struct MemorySink(pub Mutex<Vec<RunRecord>>);

impl MemorySink {
    pub fn events(&self) -> Vec<RunEvent> {
        self.0
            .lock()
            .map(|v| v.iter().map(|r| r.event.clone()).collect())
            .unwrap_or_default()
    }
}

impl RunSink for MemorySink {
    fn record(&self, record: &RunRecord) -> Result<(), RecordError> {
        if let Ok(mut v) = self.0.lock() {
            v.push(record.clone());
        }
        Ok(())
    }
}

/// Several sinks at once (the journal and the screen); the first error wins.
pub struct Tee(pub Vec<Box<dyn RunSink>>);

impl RunSink for Tee {
    fn record(&self, record: &RunRecord) -> Result<(), RecordError> {
        for s in &self.0 {
            s.record(record)?;
        }
        Ok(())
    }
}

/// Keys in memory (tests).
#[derive(Debug, Default)]
pub struct MemoryIntents(pub Mutex<BTreeMap<String, String>>);

impl IntentStore for MemoryIntents {
    fn key(&self, scope: &str) -> Result<String, RecordError> {
        let mut m = self.0.lock().map_err(|_| RecordError {
            path: "memory".into(),
            source: std::io::Error::other("poisoned"),
        })?;
        Ok(m.entry(scope.to_string()).or_insert_with(new_key).clone())
    }
}

/// An append-only JSONL file, each line written with one call and synced: the headless CLI's
/// record of a run made without `--incident` (with one, the incident's journal records it).
#[derive(Debug)]
pub struct JsonlFile {
    path: PathBuf,
    file: Mutex<std::fs::File>,
}

impl JsonlFile {
    pub fn open(path: &Path) -> Result<Self, RecordError> {
        let err = |source| RecordError {
            path: path.display().to_string(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        // A run's records hold its commands and answers: readable by its owner only.
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(path).map_err(err)?;
        Ok(JsonlFile {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    fn append(&self, value: &impl Serialize) -> Result<(), RecordError> {
        let err = |source| RecordError {
            path: self.path.display().to_string(),
            source,
        };
        let mut line = serde_json::to_vec(value).map_err(|e| err(std::io::Error::other(e)))?;
        line.push(b'\n');
        let mut f = self
            .file
            .lock()
            .map_err(|_| err(std::io::Error::other("poisoned")))?;
        f.write_all(&line).map_err(err)?;
        f.sync_data().map_err(err)
    }
}

impl RunSink for JsonlFile {
    fn record(&self, record: &RunRecord) -> Result<(), RecordError> {
        self.append(record)
    }
}

#[derive(Serialize, Deserialize)]
struct IntentLine {
    scope: String,
    key: String,
}

/// Idempotency keys in a JSONL file, synced before the key is returned.
#[derive(Debug)]
pub struct JsonlIntents {
    file: JsonlFile,
    keys: Mutex<BTreeMap<String, String>>,
}

impl JsonlIntents {
    /// Open (or create) the file and read the keys already recorded.
    pub fn open(path: &Path) -> Result<Self, RecordError> {
        let mut keys = BTreeMap::new();
        if let Ok(f) = std::fs::File::open(path) {
            // A torn last line (a crash mid-write) is ignored: its key was never returned.
            for line in std::io::BufReader::new(f).lines().map_while(Result::ok) {
                if let Ok(l) = serde_json::from_str::<IntentLine>(&line) {
                    keys.insert(l.scope, l.key);
                }
            }
        }
        Ok(JsonlIntents {
            file: JsonlFile::open(path)?,
            keys: Mutex::new(keys),
        })
    }
}

impl IntentStore for JsonlIntents {
    fn key(&self, scope: &str) -> Result<String, RecordError> {
        let mut keys = self.keys.lock().map_err(|_| RecordError {
            path: self.file.path.display().to_string(),
            source: std::io::Error::other("poisoned"),
        })?;
        if let Some(k) = keys.get(scope) {
            return Ok(k.clone());
        }
        let key = new_key();
        self.file.append(&IntentLine {
            scope: scope.to_string(),
            key: key.clone(),
        })?;
        keys.insert(scope.to_string(), key.clone());
        Ok(key)
    }
}
