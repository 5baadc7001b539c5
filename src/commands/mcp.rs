//! `warroom mcp --incident ID | --socket PATH [--prometheus URL]`: serve the incident to an AI
//! assistant over MCP on stdin and stdout (see [`crate::mcp`]).

use super::Context;
use crate::cli::McpArgs;
use crate::mcp::{Which, serve};
use std::process::ExitCode;

/// Run `warroom mcp`.
pub async fn run(ctx: &Context, args: McpArgs) -> color_eyre::Result<ExitCode> {
    let config = ctx.config_or_default().into_owned();
    let which = match (args.socket, args.incident) {
        (Some(path), _) => Which::Socket(path),
        (None, Some(id)) => Which::Local(ctx.store.clone(), id),
        (None, None) => unreachable!("clap requires --incident or --socket"),
    };
    serve(config, which).await?;
    Ok(ExitCode::SUCCESS)
}
