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
        // An idle command runs as a task on the runtime's worker, not on this thread: the
        // worker owns the timers and sockets, so a wakeup (the console's tick, an answer) is
        // handled on the thread that saw it, with no handoff to a thread parked in `block_on`
        // (issue 20).
        Ok(task) => match rt.block_on(rt.spawn(task)) {
            Ok(result) => result,
            // The panic hook has already reported it; end as a panic on this thread would.
            Err(e) => match e.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                Err(e) => Err(e.into()),
            },
        },
        Err((ctx, command)) => rt.block_on(commands::run(&ctx, command)),
    };
    match result {
        Ok(code) => code,
        Err(e) => commands::errors::report(&e, debug),
    }
}

/// The runtime a command needs. An idle one ([`commands::idles`]) gets one worker: its work is
/// I/O, decoding a large answer goes to the blocking pool, and a second worker would only wake
/// to find nothing to do. The others (the simulator serving, a game day, the demo's embedded
/// engine) get tokio's default, a worker per core.
fn runtime(idle: bool) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if idle {
        builder.worker_threads(1);
    }
    builder.enable_all().build()
}

/// One malloc arena for an idle command's few threads. glibc gives each thread that allocates
/// an arena of its own, and each keeps a few hundred KiB resident; these threads take turns
/// rather than allocate at once, so sharing one costs no waiting (issue 20).
fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: a malloc tunable set before any other thread starts.
    unsafe {
        nix::libc::mallopt(nix::libc::M_ARENA_MAX, 1);
    }
}
