//! The postmortem draft and GitHub publishing (against the loopback mock GitHub).

#[path = "../support"]
#[allow(dead_code, unused_imports)]
mod support {
    pub mod child;
    #[path = "../fixtures/export/incident.rs"]
    pub mod export_incident;
    pub mod github_mock;
    pub mod prometheus;
    pub mod records;
    pub mod sim;
    pub mod skip;
}

mod export_draft;
mod export_gameday;
mod export_identity;
mod export_output;
mod export_prometheus;
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
