//! Drawing a frame only when it differs from the one on screen (issue 20): the frame is built
//! into ratatui's buffer as usual, then compared with the last one written; the same cells
//! write nothing at all (no synchronized-update marks, no colour resets, no cursor hiding, no
//! flush), so an idle console that redraws an unchanged screen costs no write and no wakeup
//! of the terminal.

use ratatui::backend::Backend;
use ratatui::buffer::Buffer;
use ratatui::{Frame, Terminal};

/// The last frame written to a terminal, to compare the next one with: a keyed 64-bit hash of
/// its cells rather than a copy of them (a copy is half a megabyte at 200x60, two at 400x110).
/// Two different screens hash alike once in 2^64 frames, with keys an input cannot choose.
/// The hash is foldhash's: 0.22 ms a frame at 200x60 where the standard library's SipHash,
/// whose cost is per write (a cell is six of them), took 0.55 (`benches/render.rs`).
#[derive(Default)]
pub struct Shown {
    last: Option<u64>,
    keys: foldhash::fast::RandomState,
}

impl Shown {
    /// Forget the frame on screen (the screen was cleared): the next one is written whole.
    pub fn forget(&mut self) {
        self.last = None;
    }

    fn hash(&self, buffer: &Buffer) -> u64 {
        use std::hash::BuildHasher;
        self.keys.hash_one(buffer)
    }

    /// Build a frame with `render`; write it (between `sync(true)` and `sync(false)`) only when
    /// some cell differs from the last one written. Returns whether it was written.
    ///
    /// `render` must not place the cursor: the frame is written with the cursor hidden, as
    /// every front end here draws.
    pub fn draw<B: Backend>(
        &mut self,
        terminal: &mut Terminal<B>,
        sync: fn(bool),
        render: impl FnOnce(&mut Frame),
    ) -> Result<bool, B::Error> {
        terminal.autoresize()?;
        {
            let mut frame = terminal.get_frame();
            render(&mut frame);
        }
        let hash = self.hash(terminal.current_buffer_mut());
        if self.last == Some(hash) {
            // What is on screen already: the buffer is cleared for the next frame, as
            // ratatui's own swap would.
            terminal.current_buffer_mut().reset();
            return Ok(false);
        }
        self.last = Some(hash);
        sync(true);
        let written = terminal
            .flush()
            .and_then(|()| terminal.hide_cursor())
            .map(|()| terminal.swap_buffers())
            .and_then(|()| terminal.backend_mut().flush());
        sync(false);
        written?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::Shown;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::widgets::Paragraph;

    #[test]
    fn an_unchanged_frame_is_not_written() {
        let mut terminal = Terminal::new(TestBackend::new(20, 3)).unwrap();
        let mut shown = Shown::default();
        let text = |t: &'static str| {
            move |f: &mut ratatui::Frame| f.render_widget(Paragraph::new(t), f.area())
        };
        assert!(shown.draw(&mut terminal, |_| {}, text("one")).unwrap());
        assert!(!shown.draw(&mut terminal, |_| {}, text("one")).unwrap());
        assert!(shown.draw(&mut terminal, |_| {}, text("two")).unwrap());
        let row = |t: &Terminal<TestBackend>| {
            let b = t.backend().buffer();
            (0..3)
                .map(|x| b[(x, 0)].symbol().to_string())
                .collect::<String>()
        };
        assert_eq!(row(&terminal), "two");
        // Back to "one": compared with what is on screen, not with the first frame.
        assert!(shown.draw(&mut terminal, |_| {}, text("one")).unwrap());
        assert_eq!(row(&terminal), "one");
        // A cleared screen is redrawn whole.
        shown.forget();
        assert!(shown.draw(&mut terminal, |_| {}, text("one")).unwrap());
        assert_eq!(row(&terminal), "one");
    }
}
