//! Idle means idle (issue 20): the real event loop on a test terminal, over two minutes of
//! tokio's paused time (the model's clock follows it) with no key pressed. It writes a frame
//! only when what is on screen changes: the clock is shown to the minute, the time axis' labels
//! move a few times a minute, and a refresh whose answer draws the same cells writes nothing.
//! A panel whose source stops answering still visibly goes stale. Which change draws when is
//! the pacer's (`app::pacer`'s tests); these count what the whole loop writes.

use chrono::{TimeZone, Utc};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use futures::future::BoxFuture;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use warroom::app::Model;
use warroom::config::Config;
use warroom::metrics::{InstantQuery, Point, QueryAnswer, RangeQuery, Series, Source, SourceError};
use warroom::theme::Theme;

use crate::support::tokio_clock::TokioClock;

/// Answers at once with one flat series over the asked range (the same screen every time),
/// until `down` is set: then it refuses.
struct Flat {
    down: Arc<AtomicBool>,
    calls: Arc<AtomicUsize>,
    /// Each answer's value differs from the one before (every refresh changes the charts).
    varies: bool,
}

fn flat(start: f64, end: f64, step: f64, v: f64) -> Result<QueryAnswer, SourceError> {
    let n = ((end - start) / step.max(1.0)) as usize;
    let points = (0..=n)
        .map(|i| Point {
            t: start + i as f64 * step.max(1.0),
            v,
        })
        .collect();
    Ok(QueryAnswer {
        series: vec![Series {
            labels: [("pod".to_string(), "api-0".to_string())].into(),
            points,
        }],
        ..Default::default()
    })
}

impl Source for Flat {
    fn describe(&self) -> String {
        "flat".into()
    }
    fn query_range(&self, q: RangeQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let v = if self.varies {
            0.25 + (n % 7) as f64 * 0.1
        } else {
            0.25
        };
        let answer = match self.down.load(Ordering::SeqCst) {
            true => Err(SourceError::Unreachable("connection refused".into())),
            false => flat(q.start, q.end, q.step, v),
        };
        Box::pin(async move { answer })
    }
    fn query(&self, q: InstantQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        let t = q.time.unwrap_or(0.0);
        self.query_range(RangeQuery {
            query: q.query,
            start: t,
            end: t,
            step: 1.0,
        })
    }
    fn ready(&self) -> BoxFuture<'static, Result<(), SourceError>> {
        Box::pin(async { Ok(()) })
    }
}

/// Frames written (each between a synchronized update's begin and end), one counter per test
/// (the loop takes a plain `fn`, and the tests run side by side).
static FRAMES: AtomicUsize = AtomicUsize::new(0);
static FRAMES_VARYING: AtomicUsize = AtomicUsize::new(0);

fn count(begin: bool) {
    if begin {
        FRAMES.fetch_add(1, Ordering::SeqCst);
    }
}

fn count_varying(begin: bool) {
    if begin {
        FRAMES_VARYING.fetch_add(1, Ordering::SeqCst);
    }
}

/// The screen's text.
fn screen(term: &Terminal<TestBackend>) -> String {
    let b = term.backend().buffer();
    let area = b.area;
    (0..area.height)
        .map(|y| {
            (0..area.width)
                .map(|x| b[(x, y)].symbol())
                .collect::<String>()
                + "\n"
        })
        .collect()
}

/// What one idle run saw.
struct Run {
    /// Frames written while the source answered, and after it began refusing.
    idle: usize,
    outage: usize,
    /// The screen at the end.
    end: String,
    /// Queries asked, and the panels asking.
    calls: usize,
    panels: usize,
}

/// Runs the loop `idle` with no key, then `down` more with the source refusing.
async fn idle_console(idle: Duration, down: Duration, varies: bool) -> Run {
    let (frames, sync): (&'static AtomicUsize, fn(bool)) = match varies {
        false => (&FRAMES, count),
        true => (&FRAMES_VARYING, count_varying),
    };
    let base = Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 7).unwrap();
    let clock = Arc::new(TokioClock::starting_at(base));
    let mut model = Model::new(
        &Config::default().with_panels(warroom::metrics::presets::sim_panels()),
        Theme::fallback(),
        "flat".into(),
        base,
    );
    model.width = 200;
    model.height = 60;
    let refusing = Arc::new(AtomicBool::new(false));
    let calls = Arc::new(AtomicUsize::new(0));
    let panels = model.panels.len();
    let source = Arc::new(Flat {
        down: refusing.clone(),
        calls: calls.clone(),
        varies,
    });
    let (tx, rx) = futures::channel::mpsc::unbounded::<std::io::Result<Event>>();
    let mut term = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let (seen_tx, mut seen_rx) = tokio::sync::mpsc::unbounded_channel::<usize>();
    let driver = tokio::spawn(async move {
        tokio::time::sleep(idle).await;
        let _ = seen_tx.send(frames.load(Ordering::SeqCst));
        refusing.store(true, Ordering::SeqCst);
        tokio::time::sleep(down).await;
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        tx.unbounded_send(Ok(Event::Key(ctrl_c))).unwrap();
        tx
    });
    frames.store(0, Ordering::SeqCst);
    let m = tokio::time::timeout(
        idle + down + Duration::from_secs(60),
        warroom::app::runtime::event_loop(
            &mut term,
            model,
            warroom::app::workers::Services::metrics_only(source),
            clock,
            rx,
            sync,
        ),
    )
    .await
    .expect("the loop quit")
    .unwrap();
    let _tx = driver.await.unwrap();
    assert!(m.quit.is_some());
    assert!(calls.load(Ordering::SeqCst) > 0, "the source was asked");
    let first = seen_rx.recv().await.expect("the idle part ended");
    let all = frames.load(Ordering::SeqCst);
    Run {
        idle: first,
        outage: all - first,
        end: screen(&term),
        calls: calls.load(Ordering::SeqCst),
        panels,
    }
}

#[tokio::test(start_paused = true)]
async fn an_idle_console_writes_a_few_frames_a_minute_and_still_shows_staleness() {
    // Two minutes idle, then half a minute with the source refusing.
    let Run {
        idle, outage, end, ..
    } = idle_console(Duration::from_secs(120), Duration::from_secs(30), false).await;
    println!("frames: {idle} in 2 idle minutes, {outage} in 30 s of outage");
    // Before: one each second for the clock's seconds alone (120 in 2 minutes). Now: the first
    // frames, the minute clock (2), the time axis' labels (a few), nothing for refreshes that
    // draw the same cells.
    assert!(
        idle <= 16,
        "{idle} frames written in 2 idle minutes (120 or more when every clock second drew)"
    );
    assert!(idle >= 2, "the first frame and the minute clock: {idle}");
    // The outage shows: panels go failing, the source down, and the screen says so.
    assert!(outage >= 1, "the outage drew nothing");
    assert!(
        end.contains("failing") || end.contains("stale"),
        "the panels do not say they are not live:\n{end}"
    );
}

/// With every refresh changing the charts, the idle console draws once per refresh and no
/// more: the minute clock's change waits (at most `HOLD`) for the next refresh's frame instead
/// of drawing one of its own. The frames are counted from the sequences the loop wrote, the
/// refreshes from the queries the source answered.
#[tokio::test(start_paused = true)]
async fn a_clock_change_is_drawn_with_the_next_refresh() {
    // Two simulated minutes from 10:00:07: the clock turns to 10:01 and to 10:02.
    let run = idle_console(Duration::from_secs(120), Duration::from_millis(100), true).await;
    // Every refresh asks each panel once; the last may be cut short by the end of the run.
    let refreshes = run.calls.div_ceil(run.panels.max(1));
    println!(
        "frames: {} for {refreshes} refreshes ({} queries, {} panels)",
        run.idle, run.calls, run.panels
    );
    // One each 5 s.
    assert!(refreshes >= 20, "too few refreshes to count: {refreshes}");
    // The loading frame, then one per refresh: on paused time a refresh's answers all land
    // before its gather ends, so none is split in two. Drawn on their own, the two minute
    // changes make it two more.
    assert!(
        run.idle <= refreshes + 1,
        "{} frames for {refreshes} refreshes: a clock change drew a frame of its own",
        run.idle
    );
}
