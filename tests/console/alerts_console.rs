//! The console reuses the recorder's alert intake: the real event loop (test backend) with an
//! incident open records an alert from a mock Prometheus once, and the record reaches the
//! console's timeline as soon as it is durable. An alert already in the journal is not
//! recorded again when the console opens.

use crate::support::console;
use console::{Silent, quit_when, run_console};

use std::sync::Arc;
use std::time::Duration;
use warroom::alerts::{AlertEndpoint, AlertIntake};
use warroom::app::Model;
use warroom::app::model::IncidentHeader;
use warroom::app::workers::Services;
use warroom::config::Config;
use warroom::incident::event::AlertSource;
use warroom::incident::{Event, JournalWriter, Store};
use warroom::metrics::prometheus::Auth;
use warroom::theme::Theme;
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn alert_count(store: &Store, id: &warroom::incident::IncidentId) -> usize {
    store
        .read(id)
        .unwrap()
        .records
        .iter()
        .filter(|r| matches!(r.kind, Event::AlertFiring { .. }))
        .count()
}

/// Runs the console loop on `id` until the journal holds one alert and a few more polls have
/// passed; returns the final model.
async fn console(store: &Store, id: &warroom::incident::IncidentId, url: &str) -> Model {
    let (incident, recovery) = store
        .open_incident(id, warroom::incident::store::Role::Console)
        .unwrap();
    let journal = JournalWriter::spawn(incident).unwrap();
    let mut model = Model::new(
        &Config::default().with_panels(warroom::metrics::presets::sim_panels()),
        Theme::fallback(),
        "silent".into(),
        chrono::Utc::now(),
    );
    model.incident = Some(IncidentHeader {
        id: id.to_string(),
        title: "t".into(),
    });
    model.timeline = recovery.records;
    let endpoint = AlertEndpoint::new(
        AlertSource::Prometheus,
        url,
        Auth::None,
        &[],
        Duration::from_secs(2),
    )
    .unwrap();
    let services = Services {
        journal: Some(journal),
        alerts: Some(AlertIntake::new(vec![endpoint], Duration::from_millis(50))),
        ..Services::metrics_only(Arc::new(Silent))
    };
    let (store2, id2) = (store.clone(), id.clone());
    // Several more polls of the same alert once it is recorded.
    run_console(model, services, 100, Duration::from_secs(15), |tx| {
        quit_when(tx, 100, Duration::from_millis(400), move || {
            alert_count(&store2, &id2) > 0
        })
    })
    .await
}

#[tokio::test]
async fn the_console_records_alerts_through_the_shared_intake() {
    let server = MockServer::start().await;
    Mock::given(path("/api/v1/alerts"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "status": "success",
            "data": {"alerts": [{"labels": {"alertname": "PoolSaturated", "pod": "api-1\u{1b}[2J"},
                "annotations": {}, "state": "firing"}]}
        })))
        .mount(&server)
        .await;
    let data = tempfile::tempdir().unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();

    let model = console(&store, &id, &server.uri()).await;
    assert_eq!(alert_count(&store, &id), 1, "recorded once");
    let shown: Vec<&Event> = model
        .timeline
        .iter()
        .map(|r| &r.kind)
        .filter(|k| matches!(k, Event::AlertFiring { .. }))
        .collect();
    assert_eq!(shown.len(), 1, "the console's timeline holds it");
    let Event::AlertFiring { labels, .. } = shown[0] else {
        unreachable!()
    };
    assert_eq!(labels["pod"], "api-1\\e[2J");
    assert!(model.journal_error.is_none());

    // Opened again while it still fires: nothing new.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while store.holder(&id).unwrap().is_some() {
        assert!(
            std::time::Instant::now() < deadline,
            "the console kept the lock"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let before = server.received_requests().await.unwrap().len();
    let model = console(&store, &id, &server.uri()).await;
    assert!(server.received_requests().await.unwrap().len() > before + 2);
    assert_eq!(
        alert_count(&store, &id),
        1,
        "not recorded again on reopening"
    );
    assert_eq!(
        model
            .timeline
            .iter()
            .filter(|r| matches!(r.kind, Event::AlertFiring { .. }))
            .count(),
        1
    );
}
