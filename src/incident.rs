//! Incidents and their durable journal (issue 6).
//!
//! An incident is a directory under the data dir ([`store`]) holding its journal
//! ([`journal`]): one checksummed JSON [`record::Record`] a line, each carrying an
//! [`event::Event`]. The journal is the incident's single source of truth; the console, the
//! headless recorder, runbook runs, the postmortem and replay all read or append through it.

pub mod event;
pub mod journal;
pub mod record;
pub mod storage;
pub mod store;

pub use event::{Event, Source};
pub use journal::{Journal, JournalError, Recovery};
pub use record::Record;

use std::path::Path;

/// Run an `incident` subcommand.
pub fn run_cli(cmd: crate::cli::IncidentCmd, data_dir: &Path) -> color_eyre::Result<()> {
    let _ = (cmd, data_dir);
    color_eyre::eyre::bail!("incidents are not part of this build yet")
}
