//! Several responders on one incident, as the console sees it (issue 18): whether this console
//! holds the incident and serves it, or follows the one that does; what the socket workers
//! report; and how a follower finds its holder.

use crate::incident::serve::Client;
use crate::incident::store::{Holder, IncidentId, Store};
use crate::incident::{JournalWriter, Record};
use std::collections::BTreeMap;

/// How this console shares its incident.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Sharing {
    /// Not shared (no incident, a replay, a test).
    #[default]
    Alone,
    /// This console holds the incident and serves it; `followers` follow it.
    Holding { followers: usize },
    /// Another process holds it; this console shows its journal and records through it.
    Following {
        holder: Holder,
        followers: usize,
        /// Set once the holder went away: why.
        gone: Option<String>,
    },
}

impl Sharing {
    /// True while this console follows another holder (gone or not).
    pub fn following(&self) -> bool {
        matches!(self, Sharing::Following { .. })
    }
}

/// What the socket workers report to `update`.
#[derive(Debug, Clone)]
pub enum ShareMsg {
    /// A record synced by the holder (this console's own writer, or the one followed).
    Record(Box<Record>),
    /// Following began: who holds the incident and how many follow.
    Welcome { holder: Holder, followers: usize },
    /// The number of followers changed.
    Followers(usize),
    /// A responder proposes a run (this console holds the incident); `record` is its note.
    Proposal {
        run: RunProposal,
        record: Box<Record>,
    },
    /// A responder asks this console's operator to record `text` as its note; `record` is the
    /// proposal's note.
    NoteProposal { text: String, record: Box<Record> },
    /// This console's proposal reached the holder (its note), or did not.
    Proposed(Result<Box<Record>, String>),
    /// The followed holder went away (or could not be reached): why.
    HolderGone(String),
    /// Taking over after the holder went: this console's writer and the journal, or why not.
    TookOver(Result<TookOver, String>),
    /// What the sync with the engine says (issue 36).
    Engine(crate::share::session::News),
}

/// What a responder proposes to the holder's operator.
#[derive(Debug, Clone, PartialEq)]
pub enum Proposed {
    /// A run of a runbook.
    Run(RunProposal),
    /// This note, in the proposer's name.
    Note(String),
}

/// A run a responder proposes: the runbook, and the values it asks for (an agent's, through
/// `warroom mcp`; a follower console proposes none).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunProposal {
    pub runbook: String,
    pub variables: BTreeMap<String, String>,
}

/// A proposed run the operator accepted: its run dialog opens with the proposed values, which
/// the run takes over every other source; starting it records who proposed and who accepted.
#[derive(Debug, Clone, PartialEq)]
pub struct AcceptedRun {
    pub proposer: String,
    /// The proposal's record.
    pub seq: u64,
    pub run: RunProposal,
}

/// An incident this console now holds after its holder went away.
#[derive(Debug, Clone)]
pub struct TookOver {
    pub writer: JournalWriter,
    pub records: Vec<Record>,
}

/// How a follower reaches its holder, and where the incident is on disk when it is on this
/// host (a follower through a forwarded socket has no incident directory to take over).
#[derive(Debug, Clone)]
pub struct FollowSetup {
    pub client: Client,
    pub incident: String,
    /// Who is at this console: the actor of a takeover.
    pub actor: String,
    pub local: Option<(Store, IncidentId)>,
}
