//! SIGINT, SIGTERM and SIGHUP as one stream of names, for every long-running command (the
//! console, replay, the recorder, a runbook run, a game day, publish): each stops the same
//! way, with no new action, its children stopped, its interruption recorded, the journal
//! synced, the socket removed and the terminal restored.
//!
//! SIGHUP is how a responder's terminal goes away (an ssh session dropping): it is treated as
//! SIGTERM. In raw mode Ctrl-C is a key, not a signal; the others come from `kill` (a takeover,
//! a service manager, an operator in another shell).

/// The signals a long-running command stops on.
pub struct Signals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
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
                hup: signal(SignalKind::hangup()).ok(),
            }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    /// The name of the next signal: `"SIGTERM"`, `"SIGINT"` or `"SIGHUP"`.
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
                _ = one(&mut self.hup) => "SIGHUP",
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
        "SIGHUP" => 129,
        _ => 130,
    })
}
