//! `warroom demo`: the console on a simulated outage, with nothing to install.

use super::Context;
use crate::cli::DemoArgs;
use std::process::ExitCode;

/// Run `warroom demo`.
pub async fn run(ctx: &Context, args: DemoArgs) -> color_eyre::Result<ExitCode> {
    crate::tui::require_terminal("warroom demo")?;
    let mut config = ctx.config()?.clone();
    if let Some(theme) = args.theme {
        config.theme = theme;
    }
    crate::app::demo::run(
        config,
        &ctx.data_dir,
        &args.scenario,
        args.speed,
        args.seed,
        Default::default(),
    )
    .await
}
