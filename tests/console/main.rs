//! The console and replay: the event loop with simulated keys, TestBackend snapshots, and real terminals (tmux).

#[path = "../support"]
#[allow(dead_code, unused_imports)]
mod support {
    pub mod advice;
    pub mod alertmanager;
    pub mod app_instances;
    pub mod big_prometheus;
    pub mod console;
    pub mod faulty_journal;
    #[path = "../../benches/support/figure.rs"]
    pub mod figure;
    pub mod fleet;
    pub mod github_mock;
    pub mod journey;
    pub mod journey_record;
    pub mod mcp_client;
    pub mod procstat;
    pub mod prometheus;
    pub mod realstack;
    pub mod realstack_presets;
    pub mod records;
    pub mod sim;
    pub mod skip;
    pub mod tmux;
    pub mod tokio_clock;
}

mod advice_demo;
mod advice_realstack;
mod alerts_console;
mod big_answers_tmux;
mod big_fleet_snapshots;
mod changes_console;
mod changes_ui;
mod console_runbook;
mod console_tmux;
mod cost_screen;
mod demo_clock;
mod demo_tmux;
mod dialog_input_tmux;
mod gameday_tmux;
mod idle_frames;
mod incident_realstack;
mod journey_tmux;
mod mcp_tmux;
mod modes_snapshots;
mod open_realstack;
mod open_tmux;
mod palette_tmux;
mod publish_console;
mod replay_tmux;
mod replay_view;
mod responders_tmux;
mod runbook_keys_tmux;
mod runtime_loop;
mod silence_tmux;
mod ui_snapshots;
