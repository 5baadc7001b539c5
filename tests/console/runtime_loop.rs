//! The real event loop, driven with a test backend and scripted keys: it keeps answering keys
//! while the metrics source hangs, and it does not hammer a source that fails. Time is tokio's,
//! paused (the model's clock follows it): the seconds these tests script pass in no wall time,
//! and when the loop draws is the pacer's business (`app::pacer`'s tests).

use chrono::Utc;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use futures::future::BoxFuture;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use warroom::app::model::Quit;
use warroom::app::{Model, PanelState};
use warroom::config::Config;
use warroom::keymap::Mode;
use warroom::metrics::{InstantQuery, QueryAnswer, RangeQuery, Source, SourceError};
use warroom::theme::Theme;

use crate::support::tokio_clock::TokioClock;

/// A source that either never answers or always fails at once, counting what it is asked.
struct FakeSource {
    hang: bool,
    calls: Arc<AtomicUsize>,
}

impl Source for FakeSource {
    fn describe(&self) -> String {
        "fake".into()
    }
    fn query_range(&self, _q: RangeQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.hang {
            Box::pin(futures::future::pending())
        } else {
            Box::pin(async { Err(SourceError::Unreachable("connection refused".into())) })
        }
    }
    fn query(&self, _q: InstantQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        self.query_range(RangeQuery {
            query: String::new(),
            start: 0.0,
            end: 0.0,
            step: 1.0,
        })
    }
    fn ready(&self) -> BoxFuture<'static, Result<(), SourceError>> {
        Box::pin(async { Ok(()) })
    }
}

fn key(c: KeyCode) -> std::io::Result<Event> {
    Ok(Event::Key(KeyEvent::new(c, KeyModifiers::NONE)))
}

fn model() -> Model {
    let mut m = Model::new(
        &Config::default().with_panels(warroom::metrics::presets::sim_panels()),
        Theme::fallback(),
        "fake".into(),
        Utc::now(),
    );
    m.width = 100;
    m.height = 30;
    m
}

fn seeded() -> Model {
    use rand::SeedableRng;
    let mut m = model();
    m.rng = rand::rngs::StdRng::seed_from_u64(7);
    m
}

#[tokio::test(start_paused = true)]
async fn keys_are_answered_while_the_source_hangs() {
    let calls = Arc::new(AtomicUsize::new(0));
    let source = Arc::new(FakeSource {
        hang: true,
        calls: calls.clone(),
    });
    let (tx, rx) = futures::channel::mpsc::unbounded();
    let mut term = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let driver = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        tx.unbounded_send(key(KeyCode::Char('?'))).unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        tx.unbounded_send(key(KeyCode::Char('q'))).unwrap(); // closes help
        tx.unbounded_send(key(KeyCode::Char('?'))).unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        tx.unbounded_send(Ok(Event::Key(KeyEvent::new(
            KeyCode::Char('c'),
            KeyModifiers::CONTROL,
        ))))
        .unwrap();
        tx
    });
    let m = tokio::time::timeout(
        Duration::from_secs(10),
        warroom::app::runtime::event_loop(
            &mut term,
            model(),
            warroom::app::workers::Services::metrics_only(source),
            Arc::new(TokioClock::starting_at(Utc::now())),
            rx,
            |_| {},
        ),
    )
    .await
    .expect("the loop answered the quit key")
    .unwrap();
    let _tx = driver.await.unwrap();
    assert_eq!(m.quit, Some(Quit::User));
    assert_eq!(m.mode, Mode::Help);
    // Hung queries hold their slots: never more than the in-flight limit was asked.
    assert_eq!(
        calls.load(Ordering::SeqCst),
        warroom::app::model::MAX_IN_FLIGHT
    );
    let screen = term.backend().to_string();
    assert!(screen.contains("Help"), "{screen}");
    assert!(matches!(m.panel_state(0), PanelState::Loading));
}

#[tokio::test(start_paused = true)]
async fn a_failing_source_is_probed_on_the_backoff_schedule() {
    let calls = Arc::new(AtomicUsize::new(0));
    let source = Arc::new(FakeSource {
        hang: false,
        calls: calls.clone(),
    });
    let (tx, rx) = futures::channel::mpsc::unbounded();
    let mut term = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let driver = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(4)).await;
        tx.unbounded_send(key(KeyCode::Char('q'))).unwrap();
        tx
    });
    let m = tokio::time::timeout(
        Duration::from_secs(15),
        warroom::app::runtime::event_loop(
            &mut term,
            seeded(),
            warroom::app::workers::Services::metrics_only(source),
            Arc::new(TokioClock::starting_at(Utc::now())),
            rx,
            |_| {},
        ),
    )
    .await
    .expect("loop ends")
    .unwrap();
    let _tx = driver.await.unwrap();
    let n = calls.load(Ordering::SeqCst);
    // The first wave is the in-flight limit (4); after it, one probe at a time with a jittered
    // backoff from 1 s doubling to 30 s. Refreshing 8 panels at every 250 ms tick would be 128
    // requests in 4 s.
    assert!(
        (5..=10).contains(&n),
        "{n} requests in 4 s against a dead source"
    );
    for i in 0..m.panels.len() {
        assert!(
            matches!(m.panel_state(i), PanelState::Failing { .. }),
            "panel {i}"
        );
    }
    let screen = term.backend().to_string();
    assert!(screen.contains("✖ failing"), "{screen}");
    assert!(screen.contains("connection refused"), "{screen}");
}

/// The real loop with the runbook pane: the list loads off the loop, and without a terminal to
/// lend an editor the console says so instead of hanging.
#[tokio::test(start_paused = true)]
async fn the_runbook_pane_loads_off_the_loop_and_an_editor_without_a_terminal_is_refused() {
    let source = Arc::new(FakeSource {
        hang: true,
        calls: Arc::new(AtomicUsize::new(0)),
    });
    let (tx, rx) = futures::channel::mpsc::unbounded();
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let driver = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        tx.unbounded_send(key(KeyCode::Char('e'))).unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        tx.unbounded_send(key(KeyCode::Char('b'))).unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
        tx.unbounded_send(key(KeyCode::Char('q'))).unwrap();
        tx
    });
    let mut m = model();
    m.incident = Some(warroom::app::model::IncidentHeader {
        id: "2026-07-17-1".into(),
        title: "t".into(),
    });
    let m = tokio::time::timeout(
        Duration::from_secs(10),
        warroom::app::runtime::event_loop(
            &mut term,
            m,
            warroom::app::workers::Services::metrics_only(source),
            Arc::new(TokioClock::starting_at(Utc::now())),
            rx,
            |_| {},
        ),
    )
    .await
    .expect("the loop answered the quit key")
    .unwrap();
    let _tx = driver.await.unwrap();
    assert_eq!(m.quit, Some(Quit::User));
    assert_eq!(m.mode, Mode::Runbooks);
    let entries = m.runbooks.entries.as_ref().expect("the list loaded");
    assert!(entries.iter().any(|e| e.name() == "pool-exhaustion"));
    let screen = term.backend().to_string();
    assert!(screen.contains("pool-exhaustion"), "{screen}");
    assert!(
        m.notice
            .as_ref()
            .is_some_and(|n| n.text.contains("no terminal")),
        "{:?}",
        m.notice
    );
}
