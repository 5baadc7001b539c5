//! `warroom replay ID [--speed N]`: the dashboard and timeline of an incident as they were.

use super::Context;
use crate::cli::ReplayArgs;
use std::process::ExitCode;

/// Run `warroom replay`.
pub async fn run(ctx: &Context, args: ReplayArgs) -> color_eyre::Result<ExitCode> {
    crate::replay::run(ctx.config()?, &ctx.store, &args.id, args.speed).await
}
