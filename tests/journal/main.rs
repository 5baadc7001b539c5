//! Incidents and their journal: durability, locks, crash recovery, and the headless recorder writing them.

#[path = "../support"]
#[allow(dead_code, unused_imports)]
mod support {
    pub mod alertmanager;
    pub mod expositions;
    pub mod github_mock;
    pub mod nats;
    pub mod prometheus;
    pub mod sim;
    pub mod skip;
    pub mod tmux;
}

mod alerts_intake;
mod changes_record;
mod incident_crossing;
mod incident_lock;
mod journal_durability;
mod journal_fidelity;
mod journal_kill;
mod journal_recovery;
mod record_panels;
mod record_real;
mod record_takeover;
mod record_variables;
mod responders_socket;
mod share_failover;
mod share_nats;
