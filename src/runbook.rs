//! Runbooks: format, loading with diagnostics, gates, batches, execution (issue 5).

pub mod batch;
pub mod exec;
pub mod gate;
pub mod http;
pub mod load;
pub mod mask;
pub mod model;
pub mod record;
pub mod template;

mod format;

use std::path::Path;
use std::process::ExitCode;

/// Run a `runbook` subcommand.
pub async fn run_cli(cmd: crate::cli::RunbookCmd, data_dir: &Path) -> color_eyre::Result<ExitCode> {
    let _ = (cmd, data_dir);
    color_eyre::eyre::bail!("runbooks are not part of this build yet")
}
