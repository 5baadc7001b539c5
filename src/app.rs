//! The console: model, messages, update, effects and the runtime loop.

pub mod logging;

use std::path::Path;
use std::process::ExitCode;

/// Open the console on a live Prometheus.
pub async fn open(
    config: Option<&Path>,
    args: crate::cli::OpenArgs,
) -> color_eyre::Result<ExitCode> {
    let _ = (config, args);
    color_eyre::eyre::bail!("the console is not built yet")
}
