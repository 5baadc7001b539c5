//! The command line, through the real binary: incident, runbook, export and publish subcommands, their messages and exit codes.

#[path = "../support"]
#[allow(dead_code, unused_imports)]
mod support {
    pub mod alertmanager;
    pub mod child;
    pub mod expositions;
    pub mod github_mock;
    pub mod grafana_json;
    pub mod mcp_client;
    pub mod nats;
    pub mod prometheus;
    pub mod skip;
    pub mod tmux;
}

mod errors;
mod export_cli;
mod github_cli;
mod grafana_community;
mod grafana_import;
mod incident_cli;
mod incident_socket_cli;
mod mcp_cli;
mod runbook_bad;
mod runbook_cli;
mod runbook_journal_cli;
mod runbook_load;
mod runbook_plan;
mod share_cli;
mod share_cluster;
mod share_lease;
mod share_presence;
mod silence_cli;
