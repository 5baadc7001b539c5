//! `warroom completions SHELL`: the shell's completion script on stdout.

use clap::CommandFactory;
use std::process::ExitCode;

/// Print the completions of `shell`.
pub fn run(shell: clap_complete::Shell) -> color_eyre::Result<ExitCode> {
    let mut command = crate::cli::Cli::command();
    clap_complete::generate(shell, &mut command, "warroom", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}
