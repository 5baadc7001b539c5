//! Writing a note in `$VISUAL` or `$EDITOR`: the console lends the terminal to the editor and
//! takes it back. The terminal input stream is dropped first (crossterm's reader thread would
//! otherwise take the editor's first keystrokes) and made anew afterwards.

use super::gated::WakeGated;
use crossterm::event::{Event, EventStream};
use futures::Stream;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

#[derive(Default)]
struct Shared {
    /// Gated: an idle console's other wakeups do not poll crossterm (see [`WakeGated`]).
    stream: Option<WakeGated<EventStream>>,
    /// An editor has the terminal: no stream until [`Suspend::resume`].
    lent: bool,
    waker: Option<Waker>,
}

/// The terminal's input, which can be set aside while an editor has the terminal.
pub struct Input(Arc<Mutex<Shared>>);

impl Stream for Input {
    type Item = std::io::Result<Event>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let Ok(mut shared) = self.0.lock() else {
            return Poll::Ready(None);
        };
        if shared.stream.is_none() && !shared.lent {
            // Made when first asked for, after the first frame: crossterm starts its reader
            // thread and its poller here, and they took the first frame's core (issue 20).
            shared.stream = Some(WakeGated::new(EventStream::new()));
        }
        match shared.stream.as_mut() {
            Some(s) => Pin::new(s).poll_next(cx),
            None => {
                shared.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// The handle that suspends the terminal for an editor.
pub struct Suspend(Arc<Mutex<Shared>>);

/// The terminal's input and its suspend handle. Crossterm's stream is made on the first poll.
pub fn input() -> (Input, Suspend) {
    let shared = Arc::new(Mutex::new(Shared::default()));
    (Input(shared.clone()), Suspend(shared))
}

/// The editor to run: `$VISUAL`, then `$EDITOR`, then `vi`; split on whitespace so
/// `EDITOR="code --wait"` works (no shell is involved).
pub fn editor_command() -> Vec<String> {
    let chosen = std::env::var("VISUAL")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .or_else(|| {
            std::env::var("EDITOR")
                .ok()
                .filter(|s| !s.trim().is_empty())
        })
        .unwrap_or_else(|| "vi".into());
    chosen.split_whitespace().map(String::from).collect()
}

/// What to keep of the file the editor wrote: the text without the instruction lines (those
/// starting with `#!`) and without surrounding blank lines.
pub fn note_text(file: &str) -> String {
    file.lines()
        .filter(|l| !l.starts_with("#!"))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// The first text in the editor: how to use it.
pub const TEMPLATE: &str = "\n#! Write the note above. Lines starting with #! are dropped; an empty note records nothing.\n#! Tags such as #root-cause #impact #factor #lesson are kept.\n";

impl Suspend {
    /// Leave the alternate screen and raw mode, run the editor on a temporary file, come back
    /// on a cleared screen (then forget the last frame and call [`Suspend::resume`]). Returns
    /// the note's text, or why there is none.
    pub async fn edit(&mut self) -> Result<String, String> {
        if let Ok(mut s) = self.0.lock() {
            s.stream = None;
            s.lent = true;
        }
        crate::tui::restore();
        let result = tokio::task::spawn_blocking(run_editor)
            .await
            .map_err(|e| format!("the editor task failed: {e}"))
            .and_then(|r| r);
        // Back to the console's terminal whatever happened.
        let _ = crossterm::terminal::enable_raw_mode();
        let _ = crossterm::execute!(
            std::io::stdout(),
            crossterm::terminal::EnterAlternateScreen,
            crossterm::terminal::Clear(crossterm::terminal::ClearType::All)
        );
        crate::tui::recapture_mouse();
        result
    }

    /// Take input again.
    pub fn resume(&mut self) {
        if let Ok(mut s) = self.0.lock() {
            s.stream = Some(WakeGated::new(EventStream::new()));
            s.lent = false;
            if let Some(w) = s.waker.take() {
                w.wake();
            }
        }
    }
}

fn run_editor() -> Result<String, String> {
    use std::io::Write;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let path = std::env::temp_dir().join(format!("warroom-note-{}-{nanos}.md", std::process::id()));
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        // The note may say things about the incident that others on the machine should not read.
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let written = opts
        .open(&path)
        .and_then(|mut f| f.write_all(TEMPLATE.as_bytes()))
        .map_err(|e| {
            format!(
                "cannot create the note's temporary file \"{}\": {e}",
                path.display()
            )
        });
    let result = written.and_then(|_| {
        let argv = editor_command();
        let (program, args) = argv.split_first().ok_or("no editor: set $EDITOR")?;
        let status = std::process::Command::new(program)
            .args(args)
            .arg(&path)
            .status()
            .map_err(|e| format!("cannot start the editor \"{program}\": {e}; set $EDITOR"))?;
        if !status.success() {
            return Err(format!(
                "the editor \"{program}\" exited with {status}; nothing was recorded"
            ));
        }
        std::fs::read_to_string(&path)
            .map(|t| note_text(&t))
            .map_err(|e| format!("cannot read the note back: {e}"))
    });
    let _ = std::fs::remove_file(&path);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_lines_and_blank_edges_are_dropped() {
        assert_eq!(
            note_text(&format!("pool full #root-cause\nsecond line\n{TEMPLATE}")),
            "pool full #root-cause\nsecond line"
        );
        assert_eq!(note_text(TEMPLATE), "");
    }
}
