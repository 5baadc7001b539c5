//! Incidents and their durable journal (issue 6).

use std::path::Path;

/// Run an `incident` subcommand.
pub fn run_cli(cmd: crate::cli::IncidentCmd, data_dir: &Path) -> color_eyre::Result<()> {
    let _ = (cmd, data_dir);
    color_eyre::eyre::bail!("incidents are not part of this build yet")
}
