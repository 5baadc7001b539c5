//! What can stop a rehearsal from starting or being recorded: each says what is wrong and
//! what to do; `commands/` turns them into the one line the user reads.

use std::io;

#[derive(Debug, thiserror::Error)]
pub enum RehearsalError {
    /// The scenario file (or built-in name) does not load.
    #[error("{0}")]
    Scenario(String),
    /// A `--play RUNBOOK@WHEN` that does not parse or cannot be placed in the scenario.
    #[error("{0}")]
    Play(String),
    #[error("the scenario's start_clock \"{0}\" is not HH:MM; write it as e.g. \"07:00\"")]
    StartClock(String),
    #[error(transparent)]
    Speed(#[from] crate::clock::BadSpeed),
    #[error("cannot listen on \"{addr}\": {source}; pick another address with --listen")]
    Listen { addr: String, source: io::Error },
    #[error("cannot listen on a loopback port for the rehearsal: {0}")]
    Loopback(io::Error),
    #[error(transparent)]
    Source(#[from] crate::metrics::from_config::SourceConfigError),
    #[error("cannot record the rehearsal into its incident: {0}")]
    Lock(#[from] crate::incident::store::StoreError),
    #[error("cannot record the rehearsal into its incident: {0}")]
    Open(#[from] crate::incident::open::OpenError),
}
