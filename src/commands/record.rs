//! `warroom record ID`: record an incident headlessly (panels, alerts, changes) until SIGINT
//! or SIGTERM.

use super::Context;
use crate::cli::RecordArgs;
use std::process::ExitCode;

/// Run `warroom record`.
pub async fn run(ctx: &Context, args: RecordArgs) -> color_eyre::Result<ExitCode> {
    Ok(crate::recorder::run(ctx.config()?, &ctx.store, &args.id).await?)
}
