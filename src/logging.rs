//! Tracing to a log file, never to the screen.

use std::path::Path;
use tracing_appender::non_blocking::{NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::EnvFilter;

/// Lines queued for the log thread at most (issue 20). tracing-appender's default, 128,000,
/// is allocated up front and held 4 MiB resident for a log written every 15 to 30 s. The log
/// thread sleeps until a line comes and drains the queue in one go, so a burst fills at most a
/// few hundred; past this bound lines are dropped (and counted by tracing-appender), never
/// waited for: the console's thread must not block on its log.
pub const BUFFERED_LINES: usize = 1024;

/// Crates whose debug and trace lines carry what they send (statements, URLs, headers).
const QUIET_AT_DEBUG: &[&str] = &[
    "tokio_postgres",
    "postgres_protocol",
    "hyper",
    "hyper_util",
    "h2",
    "reqwest",
    "octocrab",
    "tower_http",
];

/// Start logging to `file` (or the default log file). Keep the guard alive until exit so the
/// last lines are flushed. Filter with `WARROOM_LOG_LEVEL` (default `info`).
pub fn init(file: Option<&Path>) -> std::io::Result<WorkerGuard> {
    let path = file.map_or_else(crate::paths::default_log_file, Path::to_path_buf);
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().unwrap_or_else(|| "warroom.log".as_ref());
    let appender = tracing_appender::rolling::never(dir, name);
    let (writer, guard) = NonBlockingBuilder::default()
        .buffered_lines_limit(BUFFERED_LINES)
        .thread_name("warroom log")
        .finish(appender);
    let mut filter =
        EnvFilter::try_from_env("WARROOM_LOG_LEVEL").unwrap_or_else(|_| EnvFilter::new("info"));
    // Libraries that write what they send at debug level (a SQL statement with a secret in
    // it, request URLs and headers) stay at info whatever the level asked for.
    for quiet in QUIET_AT_DEBUG {
        if let Ok(d) = format!("{quiet}=info").parse() {
            filter = filter.add_directive(d);
        }
    }
    // A second init (tests) is harmless: the first subscriber stays.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .try_init();
    Ok(guard)
}
