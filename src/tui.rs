//! The terminal, for both front ends (the console and replay): entering and restoring it (a
//! panic hook restores it too, installed by `ratatui::init`), frames wrapped in synchronized
//! updates so terminals over ssh show them whole, the start-to-first-frame figure, and lending
//! the terminal to `$EDITOR` ([`editor`]).

pub mod editor;
pub mod frames;
pub mod gated;

use std::sync::OnceLock;
use std::time::Instant;

/// When the process started, for the start-to-first-frame figure (set by `main`).
pub static STARTED: OnceLock<Instant> = OnceLock::new();

/// Why the terminal cannot be used.
#[derive(Debug, thiserror::Error)]
#[error(
    "{0} needs a terminal, and its input or output is not one: run it in a terminal (over ssh, `ssh -t`), or use the headless commands (`warroom record`, `warroom incident`, `warroom gameday --headless`)"
)]
pub struct NoTerminal(pub &'static str);

/// Check that both standard input and output are a terminal, before anything is done that a
/// console would then have to undo (an incident created, a lock taken).
pub fn require_terminal(what: &'static str) -> Result<(), NoTerminal> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        Ok(())
    } else {
        Err(NoTerminal(what))
    }
}

/// Raw mode, the alternate screen, and a panic hook that restores both.
pub fn enter(what: &'static str) -> Result<ratatui::DefaultTerminal, NoTerminal> {
    require_terminal(what)?;
    Ok(ratatui::init())
}

/// Leave raw mode and the alternate screen.
pub fn restore() {
    ratatui::restore();
}

/// Begin (`true`) or end (`false`) a synchronized update: the terminal shows the frame drawn
/// between the two at once, not torn.
pub fn synchronized(begin: bool) {
    use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
    let mut out = std::io::stdout();
    let _ = if begin {
        crossterm::execute!(out, BeginSynchronizedUpdate)
    } else {
        crossterm::execute!(out, EndSynchronizedUpdate)
    };
}

/// Log how long the process took to its first frame (`what` names the front end).
pub fn first_frame(what: &str) {
    if let Some(started) = STARTED.get() {
        tracing::info!(
            micros = started.elapsed().as_micros() as u64,
            "{what}: first frame drawn"
        );
    }
}
