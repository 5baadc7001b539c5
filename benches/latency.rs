//! Key-to-frame latency while the metrics source hangs: keys go into the real event loop, and
//! the time until the frame that shows them is finished is measured (target: p99 under 16 ms).
//!
//! Run: `cargo bench --bench latency`

#[path = "support/figure.rs"]
mod figure;

use chrono::Utc;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use futures::future::BoxFuture;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use warroom::app::Model;
use warroom::clock::WallClock;
use warroom::config::Config;
use warroom::metrics::{InstantQuery, QueryAnswer, RangeQuery, Source, SourceError};
use warroom::theme::Theme;

static FRAMES: Mutex<Vec<Instant>> = Mutex::new(Vec::new());

fn frame_done(begin: bool) {
    if !begin {
        FRAMES.lock().unwrap().push(Instant::now());
    }
}

struct Hanging;

impl Source for Hanging {
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

// The runtime `warroom open` has: one thread for the loop, the keys and the hanging queries.
#[tokio::main(flavor = "current_thread")]
async fn main() {
    let (w, h) = (200u16, 60u16);
    let mut model = Model::new(
        &Config::default().with_panels(warroom::metrics::presets::sim_panels()),
        Theme::builtin("default").unwrap(),
        "hanging".into(),
        Utc::now(),
    );
    model.width = w;
    model.height = h;
    let (tx, rx) = futures::channel::mpsc::unbounded();
    let looped = tokio::spawn(async move {
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        warroom::app::runtime::event_loop(
            &mut term,
            model,
            warroom::app::workers::Services::metrics_only(Arc::new(Hanging)),
            Arc::new(WallClock),
            rx,
            frame_done,
        )
        .await
        .unwrap()
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut latencies = Vec::new();
    for _ in 0..300 {
        let before = FRAMES.lock().unwrap().len();
        let sent = Instant::now();
        tx.unbounded_send(Ok(Event::Key(KeyEvent::new(
            KeyCode::Tab,
            KeyModifiers::NONE,
        ))))
        .unwrap();
        let deadline = sent + Duration::from_secs(1);
        loop {
            if let Some(t) = FRAMES.lock().unwrap().get(before).copied() {
                latencies.push((t - sent).as_secs_f64() * 1e3);
                break;
            }
            if Instant::now() > deadline {
                latencies.push(1000.0);
                break;
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        // Keys arrive at human speed, not faster than the render cap.
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    tx.unbounded_send(Ok(Event::Key(KeyEvent::new(
        KeyCode::Char('q'),
        KeyModifiers::NONE,
    ))))
    .unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(5), looped).await;
    latencies.sort_by(f64::total_cmp);
    let median = latencies[latencies.len() / 2];
    let p99 = latencies[latencies.len() * 99 / 100];
    println!(
        "key-to-frame while the source hangs, {w}x{h}, {} keys: median {median:.3} ms, p99 {p99:.3} ms",
        latencies.len()
    );
    figure::report(
        &format!("key to frame while Prometheus hangs, {w}x{h}, p99"),
        p99,
        "ms",
        figure::Target::Under(16.0),
    );
}
