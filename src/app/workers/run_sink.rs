//! A run in the console reports to two places: the incident's journal (durable, through the
//! runbook domain's `JournalSink` and `JournalIntents` over the one `JournalWriter`, so a run
//! started here resumes with `warroom runbook run --resume` like any other) and the model
//! (live, as `Msg::Run`). Each transition is appended and synced first and only then shown; a
//! record that cannot be made durable stops the run before its next action. Idempotency keys
//! are journaled (`RunbookIntent`) before the first send. Without an incident (the demo) the
//! run is shown but not recorded.

use crate::app::msg::Msg;
use crate::incident::JournalWriter;
use crate::incident::event::RunRef;
use crate::runbook::journal;
use crate::runbook::report::{IntentStore, RecordError, RunRecord, RunSink, new_key};
use std::collections::BTreeMap;
use std::sync::Mutex;
use tokio::sync::mpsc;

/// The console's sink for one run.
pub struct ConsoleSink {
    journal: Option<journal::JournalSink>,
    tx: mpsc::UnboundedSender<Msg>,
}

impl ConsoleSink {
    pub fn new(run: RunRef, writer: Option<JournalWriter>, tx: mpsc::UnboundedSender<Msg>) -> Self {
        ConsoleSink {
            journal: writer.map(|w| journal::JournalSink::new(w, run)),
            tx,
        }
    }
}

impl RunSink for ConsoleSink {
    fn record(&self, record: &RunRecord) -> Result<(), RecordError> {
        let journaled = match &self.journal {
            Some(j) => j.append(record)?,
            None => None,
        };
        // The console may have gone; the record stands either way.
        let _ = self.tx.send(Msg::Run {
            record: Box::new(record.clone()),
            journaled: journaled.map(Box::new),
        });
        Ok(())
    }
}

/// Idempotency keys journaled as `RunbookIntent` before they are returned; without an incident
/// they are kept in memory (a rehearsal).
pub struct ConsoleIntents {
    journal: Option<journal::JournalIntents>,
    tx: mpsc::UnboundedSender<Msg>,
    keys: Mutex<BTreeMap<String, String>>,
}

impl ConsoleIntents {
    pub fn new(
        run_id: &str,
        writer: Option<JournalWriter>,
        tx: mpsc::UnboundedSender<Msg>,
        records: &[crate::incident::Record],
    ) -> Self {
        ConsoleIntents {
            // A new run finds no keys of its own in `records`; a resumed one its intents.
            journal: writer.map(|w| journal::JournalIntents::new(w, run_id, records)),
            tx,
            keys: Mutex::default(),
        }
    }
}

impl IntentStore for ConsoleIntents {
    fn key(&self, scope: &str) -> Result<String, RecordError> {
        self.key_for(scope, "")
    }

    fn key_for(&self, scope: &str, request: &str) -> Result<String, RecordError> {
        if let Some(j) = &self.journal {
            let (key, record) = j.key_recorded(scope, request)?;
            if let Some(r) = record {
                let _ = self.tx.send(Msg::Journaled(Box::new(r)));
            }
            return Ok(key);
        }
        let mut keys = self.keys.lock().map_err(|_| RecordError {
            path: "the run's keys".into(),
            source: std::io::Error::other("poisoned"),
        })?;
        Ok(keys
            .entry(scope.to_string())
            .or_insert_with(new_key)
            .clone())
    }
}
