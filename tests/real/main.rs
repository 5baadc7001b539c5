//! Metrics and the simulator against real components: Prometheus, the embedded engine, the simulator, headless game days.

#[path = "../support"]
#[allow(dead_code, unused_imports)]
mod support {
    pub mod expect;
    pub mod expected_presets;
    pub mod expositions;
    pub mod grafana_json;
    pub mod journey;
    pub mod node_exporter;
    pub mod prometheus;
    pub mod promql_corpus;
    pub mod realstack;
    pub mod realstack_presets;
    pub mod redis;
    pub mod sim;
    pub mod skip;
    pub mod tmux;
}

mod embedded_conformance;
mod embedded_differential;
mod embedded_http;
mod embedded_source;
mod gameday_headless;
mod gameday_prometheus;
mod gameday_seed;
mod grafana_community;
mod hostile_labels;
mod journey_gameday;
mod presets_engines;
mod presets_fixtures;
mod presets_realstack;
mod prometheus_body_memory;
mod prometheus_fuzz;
mod prometheus_mock;
mod prometheus_real;
mod realstack_smoke;
mod rehearsal_clock;
mod sim_control;
mod sim_fidelity;
mod sim_prometheus;
mod sim_scenarios;
mod sim_signatures;
mod support_smoke;
