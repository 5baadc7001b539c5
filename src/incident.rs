//! Incidents and their durable journal (issue 6).
//!
//! An incident is a directory under the data dir ([`store`]) holding its journal
//! ([`journal`]): one checksummed JSON [`record::Record`] a line, each carrying an
//! [`event::Event`]. The journal is the incident's single source of truth; the console, the
//! headless recorder, runbook runs, the postmortem and replay all read or append through it.
//! [`summary`] folds the records into the incident's current state and [`timeline`] puts them
//! into words. Whoever holds an incident serves it on a unix socket ([`serve`]), so the
//! whole team records through its one writer and follows the journal live.

pub mod actor;
pub mod crossing;
pub mod event;
pub mod journal;
pub mod open;
pub mod record;
pub mod serve;
pub mod silence;
pub mod snapshot;
pub mod storage;
pub mod store;
pub mod summary;
pub mod tail;
pub mod timeline;
pub mod vocabulary;
pub mod writer;

pub use event::{Event, Source};
pub use journal::{Durability, Journal, JournalError, Recovery};
pub use record::Record;
pub use store::{IncidentId, OpenIncident, Store, StoreError};
pub use writer::{JournalWriter, WriteError};
