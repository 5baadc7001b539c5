//! The postmortem draft and GitHub publishing (against the loopback mock GitHub).

#[path = "../support"]
#[allow(dead_code, unused_imports)]
mod support {
    pub mod child;
    #[path = "../fixtures/export/incident.rs"]
    pub mod export_incident;
    pub mod github_mock;
    pub mod prometheus;
    pub mod realstack;
    pub mod records;
    pub mod runbook_run;
    pub mod sim;
    pub mod skip;
}

/// The real-stack test compares the draft's latency with pgbench's log over phases timed in
/// wall time. Run beside the rehearsals at 50× (each a `warroom gameday` process writing its
/// journal) on two cores, it once drafted 0.27 s against pgbench's 0.12 s with its phases
/// stretched from 38 s to 110 s (not explained yet; alone and beside a build it agrees within
/// 3 %). So it runs alone (`write`); rehearsals share (`read`).
pub static HEAVY: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

mod export_draft;
mod export_gameday;
mod export_identity;
mod export_output;
mod export_prometheus;
mod export_realstack;
mod export_rehearsal;
mod export_scenarios;
mod export_suggestions;
mod export_words;
mod github_changes;
mod github_identity;
mod github_limits;
mod github_outbox;
mod github_publish;
mod github_token;
