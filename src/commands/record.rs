//! `warroom record ID`: record an incident headlessly (panels, alerts, changes) until SIGINT
//! or SIGTERM.

use super::Context;
use crate::cli::RecordArgs;
use std::process::ExitCode;

/// Run `warroom record`.
pub async fn run(ctx: &Context, args: RecordArgs) -> color_eyre::Result<ExitCode> {
    let engine = ctx.engine(&args.share)?;
    super::incident::join_if_shared(ctx, &args.id, &args.share).await?;
    Ok(crate::recorder::run(ctx.config()?, &ctx.store, &args.id, engine).await?)
}
