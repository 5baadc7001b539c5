//! The journal off the event loop: one thread owns the open incident (its lock and journal) and
//! does every write and sync; the console, the recorder and the runbook executor send it events
//! and await the record. Appends are done one at a time, in the order they were sent.
//!
//! A record is recorded when its future resolves to `Ok`: only then may the console show it as
//! recorded, and only then may the runbook executor send the request whose intent it holds.

use super::event::{Event, Source};
use super::journal::{Durability, JournalError};
use super::record::Record;
use super::store::OpenIncident;
use std::sync::{Arc, Mutex, mpsc};
use tokio::sync::{broadcast, oneshot};

enum Request {
    Append {
        at: Option<chrono::DateTime<chrono::Utc>>,
        source: Source,
        actor: String,
        /// The author's host when it is not this one (a client of the holder's socket).
        host: Option<String>,
        event: Event,
        reply: oneshot::Sender<Result<Record, JournalError>>,
    },
    Restore {
        reply: oneshot::Sender<Result<(), JournalError>>,
    },
}

/// Why an append through the writer did not happen.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("the journal writer has stopped; nothing more can be recorded for this incident")]
    Stopped,
}

impl WriteError {
    /// See [`JournalError::is_refusal`]: the event was refused, the journal is fine.
    pub fn is_refusal(&self) -> bool {
        matches!(self, WriteError::Journal(e) if e.is_refusal())
    }
}

/// A handle to the incident's journal thread. Cloning it shares the same writer.
#[derive(Debug, Clone)]
pub struct JournalWriter {
    tx: mpsc::Sender<Request>,
    durability: Arc<Mutex<Durability>>,
    /// Every record once it is synced, in order, for whoever follows the journal live (the
    /// holder's socket, the console's own timeline).
    feed: broadcast::Sender<Record>,
    /// Which incident this writes, where, and as whom.
    info: Arc<WriterInfo>,
}

/// What a writer holds, for the holder's socket to say.
#[derive(Debug)]
pub struct WriterInfo {
    pub id: super::store::IncidentId,
    /// The incident's directory.
    pub dir: std::path::PathBuf,
    /// The journal file.
    pub journal: std::path::PathBuf,
    /// The lock's holder: this process.
    pub holder: super::store::Holder,
}

/// How many synced records a slow subscriber may fall behind before it is told it lagged (and
/// reads the journal file to catch up).
pub const FEED_CAPACITY: usize = 4096;

impl JournalWriter {
    /// Starts the writer thread, which holds `incident` (and so its lock) until every handle
    /// is dropped.
    pub fn spawn(incident: OpenIncident) -> std::io::Result<JournalWriter> {
        let (tx, rx) = mpsc::channel::<Request>();
        let durability = Arc::new(Mutex::new(incident.journal.durability().clone()));
        let shared = durability.clone();
        let (feed, _) = broadcast::channel(FEED_CAPACITY);
        let published = feed.clone();
        let info = Arc::new(WriterInfo {
            id: incident.id.clone(),
            dir: incident.dir.clone(),
            journal: incident.journal.path().to_path_buf(),
            holder: incident.lock.holder.clone(),
        });
        std::thread::Builder::new()
            .name(format!("journal {}", incident.id))
            .spawn(move || {
                // Move the whole incident in: a closure would otherwise capture only the fields
                // it names, and the lock would be dropped here, at spawn.
                let mut incident = incident;
                for req in rx {
                    // The caller may have stopped waiting; what was done stands either way.
                    match req {
                        Request::Append {
                            at,
                            source,
                            actor,
                            host,
                            event,
                            reply,
                        } => {
                            let result = match host {
                                Some(host) => incident
                                    .journal
                                    .append_from(at, source, &actor, &host, event),
                                None => incident.journal.append_at(at, source, &actor, event),
                            };
                            publish(&shared, &incident);
                            if let Ok(record) = &result {
                                // No subscriber is fine: nobody follows.
                                let _ = published.send(record.clone());
                            }
                            let _ = reply.send(result);
                        }
                        Request::Restore { reply } => {
                            let result = incident.journal.restore();
                            publish(&shared, &incident);
                            let _ = reply.send(result);
                        }
                    }
                }
            })?;
        Ok(JournalWriter {
            tx,
            durability,
            feed,
            info,
        })
    }

    /// Which incident this writes, where, and as whom.
    pub fn info(&self) -> &WriterInfo {
        &self.info
    }

    /// Every record synced from now on, in order.
    pub fn subscribe(&self) -> broadcast::Receiver<Record> {
        self.feed.subscribe()
    }

    /// Appends `event` by `actor` writing from `host` (a client of the holder's socket);
    /// resolves once it is written and synced.
    pub async fn append_from(
        &self,
        actor: &str,
        host: &str,
        event: Event,
    ) -> Result<Record, WriteError> {
        let answer = self.send(None, Source::Operator, actor, Some(host.to_string()), event)?;
        Ok(answer.await.map_err(|_| WriteError::Stopped)??)
    }

    /// Appends `event`; resolves once it is written and synced (or has failed).
    pub async fn append(
        &self,
        source: Source,
        actor: &str,
        event: Event,
    ) -> Result<Record, WriteError> {
        self.append_when(None, source, actor, event).await
    }

    /// Appends `event` stamped `at` (an event that knows when it happened) instead of the
    /// journal clock's now.
    pub async fn append_at(
        &self,
        at: chrono::DateTime<chrono::Utc>,
        source: Source,
        actor: &str,
        event: Event,
    ) -> Result<Record, WriteError> {
        self.append_when(Some(at), source, actor, event).await
    }

    async fn append_when(
        &self,
        at: Option<chrono::DateTime<chrono::Utc>>,
        source: Source,
        actor: &str,
        event: Event,
    ) -> Result<Record, WriteError> {
        let answer = self.send(at, source, actor, None, event)?;
        Ok(answer.await.map_err(|_| WriteError::Stopped)??)
    }

    /// Appends from a thread that is not async (blocks until synced).
    pub fn append_blocking(
        &self,
        source: Source,
        actor: &str,
        event: Event,
    ) -> Result<Record, WriteError> {
        let answer = self.send(None, source, actor, None, event)?;
        Ok(answer.blocking_recv().map_err(|_| WriteError::Stopped)??)
    }

    /// Hand an append to the writer thread; the receiver yields its outcome.
    fn send(
        &self,
        at: Option<chrono::DateTime<chrono::Utc>>,
        source: Source,
        actor: &str,
        host: Option<String>,
        event: Event,
    ) -> Result<oneshot::Receiver<Result<Record, JournalError>>, WriteError> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send(Request::Append {
                at,
                source,
                actor: actor.to_string(),
                host,
                event,
                reply,
            })
            .map_err(|_| WriteError::Stopped)?;
        Ok(answer)
    }

    /// Tries to make a not-durable journal durable again without appending (the console retries
    /// this with backoff while it shows "not durable").
    pub async fn restore(&self) -> Result<(), WriteError> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send(Request::Restore { reply })
            .map_err(|_| WriteError::Stopped)?;
        Ok(answer.await.map_err(|_| WriteError::Stopped)??)
    }

    /// Durability after the last append finished: the console shows "not durable" and refuses
    /// destructive steps while this is not [`Durability::Durable`].
    pub fn durability(&self) -> Durability {
        self.durability
            .lock()
            .map(|d| d.clone())
            .unwrap_or_else(|_| Durability::NotDurable {
                since: chrono::Utc::now(),
                cause: "the journal writer panicked".into(),
            })
    }

    pub fn is_durable(&self) -> bool {
        self.durability() == Durability::Durable
    }
}

fn publish(shared: &Mutex<Durability>, incident: &OpenIncident) {
    if let Ok(mut d) = shared.lock() {
        *d = incident.journal.durability().clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incident::store::Store;

    #[tokio::test]
    async fn appends_from_many_tasks_are_recorded_once_each_in_sequence() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let id = store.create(chrono::Utc::now()).unwrap();
        let (incident, _) = store
            .open_incident(&id, crate::incident::store::Role::Console)
            .unwrap();
        let writer = JournalWriter::spawn(incident).unwrap();
        let tasks: Vec<_> = (0..20)
            .map(|i| {
                let w = writer.clone();
                tokio::spawn(async move {
                    w.append(Source::Operator, "ana", Event::note(format!("n{i}")))
                        .await
                })
            })
            .collect();
        let mut seqs = Vec::new();
        for t in tasks {
            seqs.push(t.await.unwrap().unwrap().seq);
        }
        seqs.sort();
        assert_eq!(seqs, (1..=20).collect::<Vec<u64>>());
        assert!(writer.is_durable());
        // The writer holds the lock while any handle lives.
        assert!(store.holder(&id).unwrap().is_some());
        drop(writer);
        let freed = (0..100).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            store.holder(&id).unwrap().is_none()
        });
        assert!(
            freed,
            "the lock is released when the last handle is dropped"
        );
        assert_eq!(store.read(&id).unwrap().records.len(), 20);
    }

    #[tokio::test]
    async fn a_failed_sync_shows_as_not_durable_until_restored() {
        use crate::incident::journal::Journal;
        use crate::incident::storage::{Faults, FaultyStorage};
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let id = store.create(chrono::Utc::now()).unwrap();
        let lock = store
            .lock(&id, crate::incident::store::Role::Console)
            .unwrap();
        let faults = Faults::default();
        let f = faults.clone();
        let (journal, _) = Journal::open_with(
            &store.journal_path(&id),
            std::sync::Arc::new(crate::clock::WallClock),
            move |file| Box::new(FaultyStorage::new(file, f)),
        )
        .unwrap();
        let writer = JournalWriter::spawn(OpenIncident {
            id: id.clone(),
            dir: store.dir(&id),
            journal,
            lock,
        })
        .unwrap();
        faults.fail_syncs(1);
        let err = writer
            .append(Source::Runbook, "run-1", Event::note("intent"))
            .await
            .unwrap_err();
        assert!(
            matches!(err, WriteError::Journal(JournalError::NotDurable { .. })),
            "{err}"
        );
        assert!(!writer.is_durable());
        writer.restore().await.unwrap();
        assert!(writer.is_durable());
        let r = writer
            .append(Source::Runbook, "run-1", Event::note("intent"))
            .await
            .unwrap();
        assert_eq!(
            r.seq, 1,
            "the failed record's number is reused: it was never acknowledged"
        );
    }
}
