//! The runbooks of a rehearsal, bound to its stage.

use crate::config::Config;
use crate::runbook::setup::RunbookSetup;

/// The runbooks of a rehearsal act on the in-process simulator: its control API is their
/// `base_url` and the scenario's service is their `service`; their gates read the embedded
/// store the dashboard reads. The config's `[runbooks.vars]` fill in the variables the
/// rehearsal does not set itself. Their durations need no change: they run on the rehearsal's
/// clock, so every one of them (literal or variable) is simulated time.
pub fn setup(config: &Config, control_url: &str, service: &str) -> RunbookSetup {
    let dirs = RunbookSetup::config_dirs(config);
    let vars = vec![
        ("base_url".into(), control_url.to_string()),
        ("service".into(), service.to_string()),
    ];
    RunbookSetup::new(dirs, vars).with_config_vars(config)
}
