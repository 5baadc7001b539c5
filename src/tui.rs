//! The terminal, for both front ends (the console and replay): entering and restoring it (a
//! panic hook restores it too), each frame written in one piece inside a synchronized update
//! so terminals over ssh show it whole ([`FrameOut`]), the start-to-first-frame figure, and
//! lending the terminal to `$EDITOR` ([`editor`]).

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

/// The terminal both front ends draw on.
pub type Term = ratatui::Terminal<ratatui::backend::CrosstermBackend<FrameOut>>;

/// Raw mode, the alternate screen, and a panic hook that restores both (as `ratatui::init`
/// does, on a [`FrameOut`] instead of the bare standard output).
pub fn enter(what: &'static str) -> Result<Term, NoTerminal> {
    require_terminal(what)?;
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        hook(info);
    }));
    let entered = crossterm::terminal::enable_raw_mode().and_then(|()| {
        crossterm::execute!(std::io::stdout(), crossterm::terminal::EnterAlternateScreen)
    });
    let terminal = entered.and_then(|()| {
        ratatui::Terminal::new(ratatui::backend::CrosstermBackend::new(FrameOut::default()))
    });
    // What `ratatui::init` does when the terminal refuses: there is nothing to draw on.
    Ok(terminal.unwrap_or_else(|e| panic!("failed to initialize the terminal: {e}")))
}

/// Put `text` on the terminal's clipboard with OSC 52 (`ESC ] 52 ; c ; BASE64 BEL`), which
/// terminals and tmux (`set-clipboard on`) carry to the user's own machine, over ssh too.
/// Written straight to the terminal between frames (a frame is written whole at its flush).
pub fn copy(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(osc52(text).as_bytes())?;
    out.flush()
}

/// The OSC 52 sequence that sets the clipboard to `text`.
pub fn osc52(text: &str) -> String {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    format!("\x1b]52;c;{encoded}\x07")
}

/// Whether the console captures the mouse (`mouse = true` in the config).
static MOUSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Capture clicks and the wheel (the terminal's own selection then needs shift, or tmux's
/// copy mode); undone by [`restore`].
pub fn capture_mouse() {
    MOUSE.store(true, std::sync::atomic::Ordering::Relaxed);
    recapture_mouse();
}

/// Capture the mouse again after the terminal was lent (to `$EDITOR`), when it was captured.
pub fn recapture_mouse() {
    if MOUSE.load(std::sync::atomic::Ordering::Relaxed) {
        let _ = crossterm::execute!(std::io::stdout(), crossterm::event::EnableMouseCapture);
    }
}

/// Leave raw mode and the alternate screen (and the mouse capture).
pub fn restore() {
    if MOUSE.load(std::sync::atomic::Ordering::Relaxed) {
        let _ = crossterm::execute!(std::io::stdout(), crossterm::event::DisableMouseCapture);
    }
    ratatui::restore();
}

/// The console's standard output. What a frame writes is gathered here and goes to the
/// terminal at the frame's flush in one `write`, between the marks of a synchronized update:
/// the terminal (or tmux, or ssh) never sees half a frame, and a frame costs one system call
/// instead of one per KiB of standard output's own buffer (issue 20).
pub struct FrameOut<W: std::io::Write = std::io::Stdout> {
    /// The begin mark, then what is waiting to be written.
    pending: Vec<u8>,
    out: W,
}

/// Begin and end a synchronized update (`CSI ? 2026 h` / `l`).
const BEGIN_SYNC: &[u8] = b"\x1b[?2026h";
const END_SYNC: &[u8] = b"\x1b[?2026l";
/// Above this, the buffer a large frame needed is given back after it.
const KEEP: usize = 256 * 1024;

impl Default for FrameOut {
    fn default() -> Self {
        FrameOut::new(std::io::stdout())
    }
}

impl<W: std::io::Write> FrameOut<W> {
    pub fn new(out: W) -> Self {
        FrameOut {
            pending: BEGIN_SYNC.to_vec(),
            out,
        }
    }
}

impl<W: std::io::Write> std::io::Write for FrameOut<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.pending.len() == BEGIN_SYNC.len() {
            return Ok(());
        }
        self.pending.extend_from_slice(END_SYNC);
        let written = (self.out.write_all(&self.pending)).and_then(|()| self.out.flush());
        self.pending.truncate(BEGIN_SYNC.len());
        if self.pending.capacity() > KEEP {
            self.pending.shrink_to(KEEP);
        }
        written
    }
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

#[cfg(test)]
mod tests {
    use super::FrameOut;
    use std::io::Write;

    /// A writer that keeps each `write` it is given apart.
    #[derive(Default)]
    struct Writes(Vec<Vec<u8>>);

    impl Write for Writes {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.push(bytes.to_vec());
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_frame_is_one_write_inside_a_synchronized_update() {
        let mut out = FrameOut::new(Writes::default());
        for _ in 0..3000 {
            out.write_all(b"\x1b[1;1Hx").unwrap();
        }
        out.flush().unwrap();
        assert_eq!(out.out.0.len(), 1, "one write for the whole frame");
        let frame = &out.out.0[0];
        assert!(frame.starts_with(b"\x1b[?2026h\x1b[1;1Hx"));
        assert!(frame.ends_with(b"x\x1b[?2026l"));
        assert_eq!(frame.len(), 8 + 3000 * 7 + 8);
        // Nothing pending: nothing written, not even the marks.
        out.flush().unwrap();
        assert_eq!(out.out.0.len(), 1);
        out.write_all(b"y").unwrap();
        out.flush().unwrap();
        assert_eq!(out.out.0[1], b"\x1b[?2026hy\x1b[?2026l");
    }
}
