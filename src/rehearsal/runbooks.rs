//! The runbooks of a rehearsal, bound to its stage.

use crate::config::Config;
use crate::runbook::setup::RunbookSetup;

/// The runbooks of a rehearsal act on the in-process simulator: its control API is their
/// `base_url` and the scenario's service is their `service`; their gates read the embedded
/// store the dashboard reads. The config's `[runbooks.vars]` fill in the variables the
/// rehearsal does not set itself.
pub fn setup(config: &Config, control_url: &str, service: &str, speed: f64) -> RunbookSetup {
    let dirs: Vec<std::path::PathBuf> = config.runbook_dir.iter().cloned().collect();
    let mut vars = vec![
        ("base_url".into(), control_url.to_string()),
        ("service".into(), service.to_string()),
    ];
    // Gate intervals, soaks and settle times on the simulated clock, as they would be at 1x
    // (a name shared by two runbooks takes the first one's value).
    for entry in crate::runbook::catalog::load(&dirs) {
        if let crate::runbook::catalog::Entry::Ready(rb) = entry {
            for (k, v) in super::plays::simulated_durations(&rb, speed) {
                if !vars.iter().any(|(name, _)| *name == k) {
                    vars.push((k, v));
                }
            }
        }
    }
    RunbookSetup::new(dirs, vars).with_config_vars(config)
}
