//! The recorder's panel watch: a crossing the journal cannot take (failing syncs) is kept and
//! recorded once, in order, with the time of the reading that crossed, when the journal is
//! durable again; a restarted watch does not record again a crossing the journal holds.

use futures::future::BoxFuture;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use warroom::config::{BadWhen, PanelConfig, Unit};
use warroom::incident::event::{Direction, Level};
use warroom::incident::journal::Journal;
use warroom::incident::storage::{Faults, FaultyStorage};
use warroom::incident::store::OpenIncident;
use warroom::incident::{Event, IncidentId, JournalWriter, Record, Store};
use warroom::metrics::series::{Point, Series};
use warroom::metrics::{InstantQuery, QueryAnswer, RangeQuery, Source, SourceError};
use warroom::recorder::panel_watch::{PanelReport, PanelWatch};

/// Answers every instant query with one series at the current value.
struct Gauge(Arc<Mutex<f64>>);

impl Source for Gauge {
    fn describe(&self) -> String {
        "gauge".into()
    }
    fn query_range(&self, _q: RangeQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        Box::pin(async { Err(SourceError::Malformed("not used".into())) })
    }
    fn query(&self, q: InstantQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        let v = *self.0.lock().unwrap();
        Box::pin(async move {
            Ok(QueryAnswer {
                series: vec![Series {
                    labels: Default::default(),
                    points: vec![Point {
                        t: q.time.unwrap_or(0.0),
                        v,
                    }],
                }],
                ..Default::default()
            })
        })
    }
    fn ready(&self) -> BoxFuture<'static, Result<(), SourceError>> {
        Box::pin(async { Ok(()) })
    }
}

fn panel() -> PanelConfig {
    PanelConfig {
        title: "Pool saturation".into(),
        query: "pool".into(),
        unit: Unit::Percent,
        warn: Some(0.8),
        crit: None,
        bad_when: BadWhen::Above,
        legend: None,
        signal: None,
        shape: Default::default(),
    }
}

fn writer(store: &Store, id: &IncidentId, faults: &Faults) -> (JournalWriter, Vec<Record>) {
    let lock = store
        .lock(id, warroom::incident::store::Role::Recorder)
        .unwrap();
    let f = faults.clone();
    let (journal, recovery) = Journal::open_with(
        &store.journal_path(id),
        Arc::new(warroom::clock::WallClock),
        move |file| Box::new(FaultyStorage::new(file, f)),
    )
    .unwrap();
    let incident = OpenIncident {
        id: id.clone(),
        dir: store.dir(id),
        journal,
        lock,
    };
    (JournalWriter::spawn(incident).unwrap(), recovery.records)
}

fn crossings(store: &Store, id: &IncidentId) -> Vec<Record> {
    store
        .read(id)
        .unwrap()
        .records
        .into_iter()
        .filter(|r| matches!(r.kind, Event::ThresholdCrossed { .. }))
        .collect()
}

/// Runs a watch for at least `at_least` and until `stop` holds for the reports so far
/// (bounded); returns them.
async fn watch(
    writer: JournalWriter,
    records: Vec<Record>,
    value: Arc<Mutex<f64>>,
    at_least: Duration,
    stop: impl Fn(&[PanelReport]) -> bool,
) -> Vec<PanelReport> {
    let w = PanelWatch {
        source: Arc::new(Gauge(value)),
        panels: vec![panel()],
        refresh: Duration::from_millis(30),
        clock: std::sync::Arc::new(warroom::clock::WallClock),
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(w.run(writer, records, tx, Some));
    let mut reports = Vec::new();
    let started = tokio::time::Instant::now();
    let deadline = started + Duration::from_secs(5);
    while started.elapsed() < at_least || !stop(&reports) {
        let until = if stop(&reports) {
            started + at_least
        } else {
            deadline
        };
        match tokio::time::timeout_at(until, rx.recv()).await {
            Ok(Some(r)) => reports.push(r),
            Ok(None) => break,
            Err(_) if tokio::time::Instant::now() >= deadline => break,
            Err(_) => {}
        }
    }
    drop(rx);
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("the watch stops when its channel closes")
        .unwrap();
    reports
}

fn recorded(reports: &[PanelReport]) -> usize {
    reports
        .iter()
        .filter(|r| matches!(r, PanelReport::Recorded(_)))
        .count()
}

#[tokio::test]
async fn a_crossing_the_journal_cannot_take_is_kept_and_recorded_once_later() {
    let data = tempfile::tempdir().unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let faults = Faults::default();
    let (w, records) = writer(&store, &id, &faults);
    faults.fail_syncs(3);
    let value = Arc::new(Mutex::new(0.9));
    let reports = watch(w, records, value.clone(), Duration::ZERO, |r| {
        recorded(r) > 0
    })
    .await;
    let failed = reports
        .iter()
        .filter(|r| matches!(r, PanelReport::NotRecorded { .. }))
        .count();
    assert!(failed >= 1, "the failing syncs were reported: {reports:?}");
    let found = crossings(&store, &id);
    assert_eq!(found.len(), 1, "{found:?}");
    let Event::ThresholdCrossed {
        level,
        direction,
        at,
        value: v,
        ..
    } = &found[0].kind
    else {
        unreachable!()
    };
    assert_eq!((*level, *direction, *v), (Level::Warn, Direction::Up, 0.9));
    assert!(
        *at < found[0].time,
        "the crossing keeps the time of its reading ({at}), not of its late record ({})",
        found[0].time
    );

    // Restarted while still above: nothing new.
    let settle_free = Faults::default();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while store.holder(&id).unwrap().is_some() {
        assert!(std::time::Instant::now() < deadline, "the lock was kept");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (w, records) = writer(&store, &id, &settle_free);
    // About ten rounds at 30 ms, every one reading the value above the threshold.
    let reports = watch(w, records, value, Duration::from_millis(300), |r| {
        r.iter().any(|x| matches!(x, PanelReport::SourceUp))
    })
    .await;
    assert_eq!(recorded(&reports), 0, "{reports:?}");
    assert_eq!(crossings(&store, &id).len(), 1, "not recorded again");
}

/// A console opened on an incident whose journal already holds a crossing (a recorder's, before
/// a takeover) starts its detector there: the same crossing is not recorded twice.
#[tokio::test]
async fn a_console_continues_from_the_recorders_crossings() {
    let data = tempfile::tempdir().unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let config =
        warroom::config::Config::default().with_panels(warroom::metrics::presets::sim_panels());
    let title = config.panels[0].title.clone();
    let warn = config.panels[0]
        .warn
        .expect("the first default panel has a warn threshold");
    // Past warn, short of crit.
    let mid = config.panels[0]
        .crit
        .map_or(warn * 1.1, |c| (warn + c) / 2.0);
    let t0 = chrono::Utc::now() - chrono::Duration::seconds(30);
    {
        let (mut incident, _) = store
            .open_incident(&id, warroom::incident::store::Role::Recorder)
            .unwrap();
        incident
            .journal
            .append(
                warroom::incident::Source::Metric,
                &title,
                Event::ThresholdCrossed {
                    panel: title.clone(),
                    level: Level::Warn,
                    direction: Direction::Up,
                    value: mid,
                    threshold: warn,
                    at: t0,
                },
            )
            .unwrap();
    }
    let fresh = || {
        warroom::app::Model::new(
            &config,
            warroom::theme::Theme::fallback(),
            "test".into(),
            chrono::Utc::now(),
        )
    };
    let mut model = fresh();
    let locked = warroom::incident::open::lock(
        &warroom::incident::Store::new(data.path()),
        warroom::incident::open::Which::Existing(&id.to_string()),
        warroom::incident::store::Role::Console,
    )
    .unwrap();
    let writer = warroom::app::runtime::open_incident(&mut model, locked, Default::default(), None)
        .await
        .unwrap();
    let still_above = model.detectors[0].feed(t0 + chrono::Duration::seconds(20), mid);
    assert!(still_above.is_empty(), "{still_above:?}");
    // Without the journal, a console would record it again.
    assert_eq!(
        fresh().detectors[0]
            .feed(t0 + chrono::Duration::seconds(20), mid)
            .len(),
        1
    );
    drop(writer);
}
