//! `warroom demo`: the console on a simulated outage, with nothing to install.

use super::Context;
use crate::cli::DemoArgs;
use std::process::ExitCode;

/// Run `warroom demo`.
pub async fn run(ctx: &Context, args: DemoArgs) -> color_eyre::Result<ExitCode> {
    crate::tui::require_terminal("warroom demo")?;
    crate::app::demo::run(
        ctx.config()?.clone(),
        &ctx.data_dir,
        &args.scenario,
        args.speed,
        args.seed,
        Default::default(),
    )
    .await
}
