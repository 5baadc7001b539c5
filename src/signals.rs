//! SIGINT and SIGTERM as one stream of names, for every long-running command (the console,
//! replay, the recorder, a runbook run, a headless game day): each stops the same way, with no
//! new action, its interruption recorded, and the terminal restored.
//!
//! In raw mode Ctrl-C is a key, not a signal; these come from `kill` (a takeover, a service
//! manager, an operator in another shell).

/// The two signals a long-running command stops on.
pub struct Signals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    /// Start listening. Listening is set up at once, so a signal that arrives before the first
    /// [`Signals::next`] is not lost. A signal that cannot be listened for (no runtime support)
    /// simply never arrives.
    pub fn new() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Signals {
                term: signal(SignalKind::terminate()).ok(),
                int: signal(SignalKind::interrupt()).ok(),
            }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    /// The name of the next signal: `"SIGTERM"` or `"SIGINT"`.
    pub async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            async fn one(s: &mut Option<tokio::signal::unix::Signal>) {
                match s.as_mut() {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            }
            tokio::select! {
                _ = one(&mut self.term) => "SIGTERM",
                _ = one(&mut self.int) => "SIGINT",
            }
        }
        #[cfg(not(unix))]
        std::future::pending().await
    }
}

impl Default for Signals {
    fn default() -> Self {
        Signals::new()
    }
}

/// The exit status of a command stopped by `signal` (128 + its number, as shells report it).
pub fn exit_code(signal: &str) -> std::process::ExitCode {
    std::process::ExitCode::from(match signal {
        "SIGTERM" => 143,
        _ => 130,
    })
}
