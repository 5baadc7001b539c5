//! For benchmarks that run the console's real event loop: a source that never answers, and a
//! test terminal that says when a finished frame first showed a text.

use futures::future::BoxFuture;
use ratatui::backend::{Backend, ClearType, TestBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use warroom::metrics::{InstantQuery, QueryAnswer, RangeQuery, SourceError};

/// A metrics source whose every request hangs.
pub struct Hanging;

impl warroom::metrics::Source for Hanging {
    fn describe(&self) -> String {
        "hanging".into()
    }
    fn query_range(&self, _q: RangeQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        Box::pin(futures::future::pending())
    }
    fn query(&self, _q: InstantQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        Box::pin(futures::future::pending())
    }
    fn ready(&self) -> BoxFuture<'static, Result<(), SourceError>> {
        Box::pin(futures::future::pending())
    }
}

/// The text a probe waits for, and when a finished frame first showed it.
pub type Wanted = Arc<Mutex<Option<(String, Option<Instant>)>>>;

/// A test terminal that, on each finished frame, says when the text it waits for is on screen.
pub struct Probe {
    pub inner: TestBackend,
    pub wanted: Wanted,
}

impl Backend for Probe {
    type Error = <TestBackend as Backend>::Error;
    fn draw<'a, I: Iterator<Item = (u16, u16, &'a Cell)>>(
        &mut self,
        c: I,
    ) -> Result<(), Self::Error> {
        self.inner.draw(c)
    }
    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.hide_cursor()
    }
    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.show_cursor()
    }
    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.inner.get_cursor_position()
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, p: P) -> Result<(), Self::Error> {
        self.inner.set_cursor_position(p)
    }
    fn clear(&mut self) -> Result<(), Self::Error> {
        self.inner.clear()
    }
    fn clear_region(&mut self, t: ClearType) -> Result<(), Self::Error> {
        self.inner.clear_region(t)
    }
    fn size(&self) -> Result<Size, Self::Error> {
        self.inner.size()
    }
    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.inner.flush()?;
        if let Ok(mut w) = self.wanted.lock()
            && let Some((text, seen @ None)) = w.as_mut()
        {
            let screen: String = self
                .inner
                .buffer()
                .content
                .iter()
                .map(ratatui::buffer::Cell::symbol)
                .collect();
            if screen.contains(text.as_str()) {
                *seen = Some(Instant::now());
            }
        }
        Ok(())
    }
}
