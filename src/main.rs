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
    let idle = commands::idles(&cli.command);
    if idle {
        one_malloc_arena();
    }
    let _log_guard = match warroom::logging::init(cli.log_file.as_deref()) {
        Ok(g) => g,
        Err(e) => return commands::errors::report(&e.into(), debug),
    };
    let ctx = Context::load(&cli);
    let rt = match runtime(idle) {
        Ok(rt) => rt,
        Err(e) => return commands::errors::report(&e.into(), debug),
    };
    let result = match commands::idle_task(ctx, cli.command) {
        // An idle command runs on this thread, which owns the timers and sockets too: a
        // wakeup (the console's tick, an answer) is handled where it was seen (issue 20).
        Ok(task) => rt.block_on(task),
        Err((ctx, command)) => rt.block_on(commands::run(&ctx, command)),
    };
    match result {
        Ok(code) => code,
        Err(e) => commands::errors::report(&e, debug),
    }
}

/// The runtime a command needs. An idle one ([`commands::idles`]) runs on the calling thread
/// alone (a current-thread runtime): its work is I/O and drawing, decoding a large answer goes
/// to the blocking pool, and so does a runbook run, whose journal syncs block. A worker thread
/// would only add a handoff to every wakeup and a thread to the count: the console starts
/// 0.6 ms sooner on it and idles on three threads (issue 20). The others (the simulator
/// serving, a game day, the demo's embedded engine) get tokio's default, a worker per core.
fn runtime(idle: bool) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = if idle {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    builder.enable_all().build()
}

/// One malloc arena for an idle command's few threads. glibc gives each thread that allocates
/// an arena of its own, and each keeps a few hundred KiB resident; these threads take turns
/// rather than allocate at once, so sharing one costs no waiting (issue 20).
fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: a malloc tunable set before any other thread starts.
    #[allow(unsafe_code)]
    unsafe {
        nix::libc::mallopt(nix::libc::M_ARENA_MAX, 1);
    }
}
