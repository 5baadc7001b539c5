//! `warroom completions SHELL`: the shell's completion script on stdout. It is clap_complete's
//! dynamic completion: the script asks `warroom` itself at each tab (`COMPLETE=SHELL warroom
//! -- …`, answered in `main` before anything else runs), so scenario names, runbook names and
//! incident ids are the ones that exist when you press tab (see `cli::complete`).

use clap_complete::env::EnvCompleter;
use std::process::ExitCode;

/// The variable the script sets when it asks for completions.
pub const VAR: &str = "COMPLETE";

/// Print the registration script of `shell`.
pub fn run(shell: clap_complete::Shell) -> color_eyre::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    registration(shell, &mut out)?;
    Ok(ExitCode::SUCCESS)
}

/// Write `shell`'s script: it calls the `warroom` on `$PATH` back at each tab.
pub fn registration(
    shell: clap_complete::Shell,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    use clap_complete::env;
    let completer: &dyn EnvCompleter = match shell {
        clap_complete::Shell::Bash => &env::Bash,
        clap_complete::Shell::Elvish => &env::Elvish,
        clap_complete::Shell::Fish => &env::Fish,
        clap_complete::Shell::PowerShell => &env::Powershell,
        clap_complete::Shell::Zsh => &env::Zsh,
        // A shell clap_complete added later: its static script (no dynamic values).
        other => {
            use clap::CommandFactory;
            let mut command = crate::cli::Cli::command();
            clap_complete::generate(other, &mut command, "warroom", out);
            return Ok(());
        }
    };
    completer.write_registration(VAR, "warroom", "warroom", "warroom", out)
}

/// Answer a completion request from the shell's script, if this process is one (then exit).
pub fn answer_if_asked() {
    use clap::CommandFactory;
    clap_complete::CompleteEnv::with_factory(crate::cli::Cli::command)
        .var(VAR)
        .complete();
}
