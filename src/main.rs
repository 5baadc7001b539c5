use clap::Parser;
use std::process::ExitCode;
use warroom::cli::Cli;
use warroom::commands::{self, Context};

fn main() -> color_eyre::Result<ExitCode> {
    let _ = warroom::tui::STARTED.set(std::time::Instant::now());
    color_eyre::install()?;
    let cli = Cli::parse();
    let _log_guard = warroom::logging::init(cli.log_file.as_deref())?;
    let ctx = Context::load(&cli);
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(commands::run(&ctx, cli.command))
}
