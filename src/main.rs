use clap::Parser;
use std::process::ExitCode;
use warroom::cli::Cli;
use warroom::commands::{self, Context};

fn main() -> ExitCode {
    let _ = warroom::tui::STARTED.set(std::time::Instant::now());
    // The shell's completion script asking for candidates: answered, then exit.
    commands::completions::answer_if_asked();
    // A closed pipe (`warroom incident timeline ID | head`) ends the process quietly, as it
    // does for every other command-line tool, instead of a panic on the next write.
    commands::errors::default_sigpipe();
    let debug = commands::errors::debug_wanted();
    commands::errors::install(debug);
    let cli = Cli::parse();
    let _log_guard = match warroom::logging::init(cli.log_file.as_deref()) {
        Ok(g) => g,
        Err(e) => return commands::errors::report(&e.into(), debug),
    };
    let ctx = Context::load(&cli);
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => return commands::errors::report(&e.into(), debug),
    };
    match rt.block_on(commands::run(&ctx, cli.command)) {
        Ok(code) => code,
        Err(e) => commands::errors::report(&e, debug),
    }
}
