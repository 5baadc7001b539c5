//! The console's real event loop on a test terminal, for tests about something other than
//! panels (alerts, GitHub changes, publishing): a metrics source that never answers (the
//! panels stay loading), the loop run until it quits, and a driver that quits once a
//! condition holds.

// Each test binary uses part of it.
#![allow(dead_code)]

use crossterm::event::{Event as Input, KeyCode, KeyEvent, KeyModifiers};
use futures::channel::mpsc::UnboundedSender;
use futures::future::BoxFuture;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use warroom::app::Model;
use warroom::app::runtime::event_loop;
use warroom::app::workers::Services;
use warroom::clock::WallClock;
use warroom::metrics::{InstantQuery, QueryAnswer, RangeQuery, Source, SourceError};

pub struct Silent;

impl Source for Silent {
    fn describe(&self) -> String {
        "silent".into()
    }
    fn query_range(&self, _q: RangeQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        Box::pin(futures::future::pending())
    }
    fn query(&self, _q: InstantQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        Box::pin(futures::future::pending())
    }
    fn ready(&self) -> BoxFuture<'static, Result<(), SourceError>> {
        Box::pin(async { Ok(()) })
    }
}

/// The console's key input, as a test types it.
pub type Keys = UnboundedSender<std::io::Result<Input>>;

/// Runs the console's real event loop on a `width`×30 test terminal until it quits (within
/// `limit`), with `drive` typing the keys; returns the model as the loop left it.
pub async fn run_console<F>(
    model: Model,
    services: Services,
    width: u16,
    limit: Duration,
    drive: impl FnOnce(Keys) -> F,
) -> Model
where
    F: Future<Output = Keys> + Send + 'static,
{
    let (tx, rx) = futures::channel::mpsc::unbounded();
    let driver = tokio::spawn(drive(tx));
    let mut term = Terminal::new(TestBackend::new(width, 30)).unwrap();
    let model = tokio::time::timeout(
        limit,
        event_loop(&mut term, model, services, Arc::new(WallClock), rx, |_| {}),
    )
    .await
    .expect("the loop quit")
    .unwrap();
    let _tx = driver.await.unwrap();
    model
}

/// Waits (every 50 ms, at most `rounds` times) until `done`, lets the console run `settle`
/// longer (more polls of the same things), then presses ctrl-c.
pub async fn quit_when(
    tx: Keys,
    rounds: u32,
    settle: Duration,
    done: impl Fn() -> bool + Send + 'static,
) -> Keys {
    for _ in 0..rounds {
        if done() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(settle).await;
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    tx.unbounded_send(Ok(Input::Key(ctrl_c))).unwrap();
    tx
}
