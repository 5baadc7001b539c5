//! What the console asks for follows what is on screen (issue 34 point 1): the real event loop
//! on a test backend, over the embedded source holding one series per panel, with every request
//! counted. The chart gets range queries at the plot's resolution, the compact form's rows at
//! most a coarse range for their sparkline, and the panels not on screen no range query at all:
//! their latest values are read in grouped instant queries, so a crossing of a hidden panel is
//! still recorded. Time is tokio's, paused.

use chrono::{DateTime, Utc};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use futures::future::BoxFuture;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use warroom::app::Model;
use warroom::config::{BadWhen, Config, PanelConfig, Unit};
use warroom::incident::Event as Record;
use warroom::metrics::embedded::EmbeddedSource;
use warroom::metrics::{InstantQuery, Labels, QueryAnswer, RangeQuery, Source, SourceError};
use warroom::theme::Theme;
use warroom::ui::layout::Showing;

use crate::support::tokio_clock::TokioClock;

const PANELS: usize = 40;

/// One request as the source saw it: the query, the step when it was a range query, and
/// when (tokio's time since the console started).
#[derive(Debug, Clone)]
struct Asked {
    query: String,
    step: Option<f64>,
    at: Duration,
}

/// The embedded source, counting what it is asked.
struct Counting {
    inner: EmbeddedSource,
    asked: Arc<Mutex<Vec<Asked>>>,
    started: tokio::time::Instant,
}

impl Source for Counting {
    fn describe(&self) -> String {
        "counting embedded".into()
    }
    fn query_range(&self, q: RangeQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        self.asked.lock().unwrap().push(Asked {
            query: q.query.clone(),
            step: Some(q.step),
            at: self.started.elapsed(),
        });
        self.inner.query_range(q)
    }
    fn query(&self, q: InstantQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        self.asked.lock().unwrap().push(Asked {
            query: q.query.clone(),
            step: None,
            at: self.started.elapsed(),
        });
        self.inner.query(q)
    }
    fn ready(&self) -> BoxFuture<'static, Result<(), SourceError>> {
        self.inner.ready()
    }
}

/// Panel 3's query is a scalar: the server refuses it reduced to its worst series, so it is
/// read whole.
const SCALAR: usize = 3;

fn query_of(i: usize) -> String {
    match i {
        SCALAR => format!("scalar(cost_signal{{panel=\"{i}\"}})"),
        _ => format!("cost_signal{{panel=\"{i}\"}}"),
    }
}

fn panel(i: usize) -> PanelConfig {
    PanelConfig {
        title: format!("Signal {i}"),
        query: query_of(i),
        unit: Unit::default(),
        warn: None,
        crit: Some(50.0),
        bad_when: BadWhen::Above,
        legend: None,
        signal: None,
        shape: Default::default(),
    }
}

/// Every panel's series, a sample each 15 s over the hour before `base` and ten minutes after:
/// panel `i` reads `i`, except `jumps`, which reads 99 from `base` + 45 s.
fn source(base: DateTime<Utc>, jumps: usize) -> EmbeddedSource {
    let s = EmbeddedSource::default();
    let t0 = base.timestamp() as f64;
    let samples = (0..PANELS).flat_map(|i| {
        (-240..40).map(move |k| {
            let t = t0 + f64::from(k) * 15.0;
            let mut labels = Labels::new();
            labels.insert("__name__".into(), "cost_signal".into());
            labels.insert("panel".into(), i.to_string());
            let v = if i == jumps && t >= t0 + 45.0 {
                99.0
            } else {
                i as f64
            };
            (labels, t, v)
        })
    });
    s.append(samples);
    s
}

/// The console at 100×30 (the compact form) for `secs` of tokio's time; the model as it ended
/// and every request made.
async fn run(secs: u64, jumps: usize) -> (Model, Vec<Asked>) {
    let panels = (0..PANELS).map(panel).collect();
    run_with(panels, secs, jumps, Vec::new()).await
}

/// [`run`] with these panels, typing each `(second, text)` of `typed` at its second (`\n`
/// is Enter).
async fn run_with(
    panels: Vec<PanelConfig>,
    secs: u64,
    jumps: usize,
    typed: Vec<(u64, &'static str)>,
) -> (Model, Vec<Asked>) {
    let base = Utc::now();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let counting = Arc::new(Counting {
        inner: source(base, jumps),
        asked: asked.clone(),
        started: tokio::time::Instant::now(),
    });
    let config = Config::default().with_panels(panels);
    let mut model = Model::new(&config, Theme::fallback(), "counting".into(), base);
    (model.width, model.height) = (100, 30);
    model.declarable = true;
    let (tx, rx) = futures::channel::mpsc::unbounded();
    let mut term = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let driver = tokio::spawn(async move {
        let key = |code| Ok(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
        let mut now = 0;
        for (at, text) in typed {
            tokio::time::sleep(Duration::from_secs(at - now)).await;
            now = at;
            for c in text.chars() {
                let code = if c == '\n' {
                    KeyCode::Enter
                } else {
                    KeyCode::Char(c)
                };
                tx.unbounded_send(key(code)).unwrap();
            }
        }
        tokio::time::sleep(Duration::from_secs(secs - now)).await;
        tx.unbounded_send(key(KeyCode::Char('q'))).unwrap();
        tx
    });
    let m = tokio::time::timeout(
        Duration::from_secs(secs + 30),
        warroom::app::runtime::event_loop(
            &mut term,
            model,
            warroom::app::workers::Services::metrics_only(counting),
            Arc::new(TokioClock::starting_at(base)),
            rx,
            |_| {},
        ),
    )
    .await
    .expect("the loop ends")
    .unwrap();
    let _tx = driver.await.unwrap();
    let asked = asked.lock().unwrap().clone();
    (m, asked)
}

/// Whether `a` reads panel `i` (alone or in a group).
fn reads(a: &Asked, i: usize) -> bool {
    let q = query_of(i);
    a.query == q || a.query.contains(&format!("(1, ({q}))"))
}

#[tokio::test(start_paused = true)]
async fn charts_get_ranges_rows_coarse_ones_and_hidden_panels_only_grouped_values() {
    let (m, asked) = run(95, usize::MAX).await;
    let showing = m
        .cost
        .showing
        .clone()
        .expect("the view reported what it shows");
    let of = |s: Showing| -> Vec<usize> { (0..PANELS).filter(|i| showing[*i] == s).collect() };
    let (charts, rows, hidden) = (of(Showing::Chart), of(Showing::Row), of(Showing::Hidden));
    assert_eq!(charts, [0], "the compact form charts the selected panel");
    assert!(rows.len() >= 5 && hidden.len() >= 5, "{rows:?} {hidden:?}");
    assert!(rows.contains(&SCALAR), "{rows:?}");
    assert!(m.cost.solo.contains(&query_of(SCALAR)), "{:?}", m.cost.solo);
    let chart_step = m.window().columns;
    let fine = asked.iter().filter(|a| reads(a, 0) && a.step.is_some());
    assert!(
        fine.count() >= 1,
        "the chart got its range ({chart_step} columns)"
    );
    for &i in &rows {
        let ranges: Vec<f64> = (asked.iter())
            .filter(|a| reads(a, i))
            .filter_map(|a| a.step)
            .collect();
        // A sparkline of 12 cells over the hour: 5-minute steps, not the chart's.
        assert!(ranges.iter().all(|s| *s >= 300.0), "row {i}: {ranges:?}");
        // Its value, every refresh: only its worst series (a scalar's whole answer).
        let worst = match i {
            SCALAR => query_of(i),
            _ => format!("topk(1, ({}))", query_of(i)),
        };
        let instants = (asked.iter()).filter(|a| a.query == worst && a.step.is_none());
        assert!(instants.count() >= 3, "row {i} reads {worst} every refresh");
        assert_eq!(m.panels[i].current(), Some(i as f64), "row {i}'s value");
    }
    let groups: Vec<&Asked> = (asked.iter())
        .filter(|a| a.query.contains("label_replace"))
        .collect();
    for &i in &hidden {
        assert!(
            !asked.iter().any(|a| reads(a, i) && a.step.is_some()),
            "hidden panel {i} got a range query"
        );
        assert!(groups.iter().any(|a| reads(a, i)), "panel {i} never read");
        assert_eq!(m.panels[i].current(), Some(i as f64), "panel {i}'s value");
    }
    // In 95 s at the 30 s cadence: four reads of every hidden panel, a handful of requests.
    let hidden_reads = hidden.len() * 4;
    assert!(
        groups.len() * 5 <= hidden_reads,
        "{} group requests for {} hidden panels",
        groups.len(),
        hidden.len()
    );
    assert_eq!(m.cost.sent.group as usize, groups.len());
}

#[tokio::test(start_paused = true)]
async fn a_hidden_panels_crossing_is_still_recorded() {
    let jumps = PANELS - 2;
    let (m, asked) = run(100, jumps).await;
    assert_eq!(
        m.cost.of(jumps),
        Showing::Hidden,
        "the test's panel is hidden"
    );
    assert!(!asked.iter().any(|a| reads(a, jumps) && a.step.is_some()));
    let crossed: Vec<&str> = (m.pending.iter())
        .filter_map(|(_, _, e)| match e {
            Record::ThresholdCrossed { panel, .. } => Some(panel.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(crossed, [format!("Signal {jumps}")], "{crossed:?}");
}

/// An imported dashboard's shape (issue 34 point 2): the panels of a collapsed row cost
/// nothing (no request reads them, grouped or not) until `:row NAME` opens it, and then they
/// are read at once; a panel whose dashboard refreshes every minute is asked once a minute,
/// not every 5 s; a panel with `maxDataPoints` 20 asks for no more points than that.
#[tokio::test(start_paused = true)]
async fn a_collapsed_row_costs_nothing_until_opened_and_a_dashboards_cadence_holds() {
    const OPENED_AT: u64 = 70;
    let folded = 20..PANELS;
    let mut panels: Vec<PanelConfig> = (0..PANELS).map(panel).collect();
    for (i, p) in panels.iter_mut().enumerate() {
        if folded.contains(&i) {
            p.shape.row = Some("Deep dive".into());
            p.shape.collapsed = true;
        }
    }
    panels[0].shape.max_points = Some(20);
    panels[1].shape.every = Some(Duration::from_secs(60));
    let typed = vec![(OPENED_AT, ":row Deep dive\n")];
    let (m, asked) = run_with(panels, 110, usize::MAX, typed).await;
    assert!(
        m.collapsed.is_empty(),
        "the row was opened: {:?}",
        m.collapsed
    );
    let opened = Duration::from_secs(OPENED_AT);
    for i in folded {
        let first = (asked.iter()).find(|a| reads(a, i)).map(|a| a.at);
        let first = first.unwrap_or_else(|| panic!("panel {i} never read once opened"));
        assert!(
            first >= opened,
            "panel {i} read at {first:?}, before its row was opened"
        );
        assert!(
            first <= opened + Duration::from_secs(1),
            "panel {i} first read at {first:?}: not at once"
        );
        assert_eq!(m.panels[i].current(), Some(i as f64), "panel {i}'s value");
    }
    // The chart's range asks for at most 20 points over the hour: steps of 180 s or more.
    let steps: Vec<f64> = (asked.iter())
        .filter(|a| reads(a, 0))
        .filter_map(|a| a.step)
        .collect();
    assert!(
        !steps.is_empty() && steps.iter().all(|s| *s >= 180.0),
        "{steps:?}"
    );
    // Panel 1 (a row on screen) at its dashboard's minute: reads at 0, 60 and 120 s at most,
    // where panel 2 beside it is read every 5 s.
    let times = |i: usize| -> Vec<u64> {
        (asked.iter())
            .filter(|a| reads(a, i) || a.query == format!("topk(1, ({}))", query_of(i)))
            .map(|a| a.at.as_secs())
            .collect()
    };
    let (slow, usual) = (times(1), times(2));
    assert!(
        !slow.is_empty() && slow.windows(2).all(|w| w[1] - w[0] >= 59),
        "panel 1 read at {slow:?}"
    );
    assert!(usual.len() >= 20, "panel 2 read at {usual:?}");
    // Read 50 s ago at a minute's cadence, its value is current, not stale.
    assert_eq!(m.value_age(1), None, "{:?}", m.panel_state(1));
}

/// The collapsed row is on screen as one line naming it and what opens it; its panels are
/// not, and `:row NAME` opens it (and collapses it again).
#[test]
fn a_collapsed_row_is_one_line_until_opened() {
    let mut panels: Vec<PanelConfig> = (0..12).map(panel).collect();
    for p in &mut panels[6..] {
        p.shape.row = Some("Deep dive".into());
        p.shape.collapsed = true;
    }
    let config = Config::default().with_panels(panels);
    let mut m = Model::new(&config, Theme::fallback(), "t".into(), Utc::now());
    (m.width, m.height) = (120, 40);
    let screen = |m: &Model| crate::ui_snapshots::render(m).to_string();
    let folded = screen(&m);
    assert!(folded.contains("0 of 6 panels answered"), "{folded}");
    assert!(
        folded.contains("1 row collapsed, not queried: Deep dive (6)  (:row NAME opens one)"),
        "{folded}"
    );
    assert!(
        folded.contains("Signal 5") && !folded.contains("Signal 6"),
        "{folded}"
    );
    let typed = |m: &mut Model, text: &str| {
        for c in text.chars() {
            let code = if c == '\n' {
                KeyCode::Enter
            } else {
                KeyCode::Char(c)
            };
            let key = KeyEvent::new(code, KeyModifiers::NONE);
            warroom::app::update(m, warroom::app::Msg::Key(key));
        }
    };
    typed(&mut m, ":row Deep dive\n");
    let open = screen(&m);
    assert!(
        open.contains("Signal 6") && !open.contains("row collapsed"),
        "{open}"
    );
    typed(&mut m, ":row Deep dive\n");
    let again = screen(&m);
    assert!(
        again.contains("row \"Deep dive\" collapsed: its 6 panel(s) are not queried")
            && !again.contains("Signal 6"),
        "{again}"
    );
    typed(&mut m, ":row Nope\n");
    assert!(screen(&m).contains("no row \"Nope\""), "{}", screen(&m));
}
