//! The alert intake against mock Prometheus and Alertmanager APIs: each alert fires and resolves
//! once across polls and across a restart, hostile label text never reaches the journal raw,
//! a failing source is reported and backed off without losing what it said last.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use warroom::alerts::{AlertEndpoint, AlertIntake, AlertReport};
use warroom::incident::event::AlertSource;
use warroom::incident::{Event, IncidentId, JournalWriter, Record, Store};
use warroom::metrics::prometheus::Auth;
use warroom::sanitize::{HOSTILE_SAMPLES, is_clean};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const POLL: Duration = Duration::from_millis(50);

fn endpoint(source: AlertSource, url: &str) -> AlertEndpoint {
    AlertEndpoint::new(source, url, Auth::None, &[], Duration::from_secs(2)).expect("endpoint")
}

/// Prometheus's `/api/v1/alerts` answer with `alerts` (name, labels, state).
fn prom_body(alerts: &[(&str, BTreeMap<String, String>, &str)]) -> serde_json::Value {
    let list: Vec<serde_json::Value> = alerts
        .iter()
        .map(|(name, labels, state)| {
            let mut l = labels.clone();
            l.insert("alertname".into(), name.to_string());
            serde_json::json!({"labels": l, "annotations": {"summary": "pool \u{1b}[2J full"},
                "state": state, "activeAt": "2026-11-29T08:00:00Z", "value": "1e+00"})
        })
        .collect();
    serde_json::json!({"status": "success", "data": {"alerts": list}})
}

async fn serve(server: &MockServer, api: &str, body: serde_json::Value) {
    server.reset().await;
    Mock::given(method("GET"))
        .and(path(api))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(server)
        .await;
}

struct Running {
    rx: mpsc::UnboundedReceiver<AlertReport>,
    task: tokio::task::JoinHandle<()>,
    writer: JournalWriter,
}

fn start(store: &Store, id: &IncidentId, intake: AlertIntake) -> Running {
    let (incident, recovery) = store
        .open_incident(id, warroom::incident::store::Role::Recorder)
        .expect("lock");
    let writer = JournalWriter::spawn(incident).expect("writer");
    let (tx, rx) = mpsc::unbounded_channel();
    let task = intake.spawn(writer.clone(), &recovery.records, tx, Some);
    Running { rx, task, writer }
}

impl Running {
    /// Reports until `n` records arrived or `within` passed.
    async fn records(&mut self, n: usize, within: Duration) -> Vec<Record> {
        let deadline = tokio::time::Instant::now() + within;
        let mut out = Vec::new();
        while out.len() < n {
            match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Some(AlertReport::Recorded(r))) => out.push(r),
                Ok(Some(_)) => {}
                _ => break,
            }
        }
        out
    }

    /// Stops the intake and releases the lock (bounded).
    async fn stop(self, store: &Store, id: &IncidentId) {
        drop(self.rx);
        tokio::time::timeout(Duration::from_secs(5), self.task)
            .await
            .expect("the intake stops when its channel closes")
            .expect("the intake did not panic");
        drop(self.writer);
        let deadline = Instant::now() + Duration::from_secs(5);
        while store.holder(id).unwrap().is_some() {
            assert!(Instant::now() < deadline, "the lock was not released");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

fn alert_events(store: &Store, id: &IncidentId) -> Vec<Event> {
    store
        .read(id)
        .unwrap()
        .records
        .into_iter()
        .map(|r| r.kind)
        .filter(|k| matches!(k, Event::AlertFiring { .. } | Event::AlertResolved { .. }))
        .collect()
}

fn label(pod: &str) -> BTreeMap<String, String> {
    [("pod".to_string(), pod.to_string())].into()
}

/// Waits until the mock has served `n` more requests than `before` (bounded).
async fn polls(server: &MockServer, before: usize, n: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let seen = server.received_requests().await.unwrap_or_default().len();
        if seen >= before + n || Instant::now() > deadline {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn prometheus_alerts_fire_and_resolve_once_across_polls_and_a_restart() {
    let data = tempfile::tempdir().unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let server = MockServer::start().await;
    // A long hostile value: sanitizing it twice (here and in the journal) must give one key.
    let long = "\u{1b}[31m".repeat(1500);
    let mut hostile = label("api-1");
    for (i, s) in HOSTILE_SAMPLES.iter().enumerate() {
        hostile.insert(format!("h{i}{s}"), s.to_string());
    }
    hostile.insert("long".into(), long);
    serve(
        &server,
        "/api/v1/alerts",
        prom_body(&[
            ("DBPoolSaturated\u{1b}]0;x\u{7}", hostile.clone(), "firing"),
            ("Slow", label("api-2"), "pending"),
        ]),
    )
    .await;
    let intake = || AlertIntake::new(vec![endpoint(AlertSource::Prometheus, &server.uri())], POLL);

    let mut run = start(&store, &id, intake());
    let fired = run.records(1, Duration::from_secs(5)).await;
    assert_eq!(fired.len(), 1, "the firing alert is recorded");
    let seen = server.received_requests().await.unwrap().len();
    polls(&server, seen, 5).await;
    assert!(
        run.records(1, POLL * 4).await.is_empty(),
        "five more polls of the same alert record nothing"
    );
    run.stop(&store, &id).await;

    let events = alert_events(&store, &id);
    assert_eq!(events.len(), 1, "{events:?}");
    let Event::AlertFiring {
        name,
        labels,
        source,
    } = &events[0]
    else {
        panic!("{events:?}")
    };
    assert_eq!(*source, AlertSource::Prometheus);
    assert!(is_clean(name, false), "{name}");
    assert_eq!(labels.len(), hostile.len());
    for (k, v) in labels {
        assert!(is_clean(k, false) && is_clean(v, false), "{k:?} = {v:?}");
    }

    // A restart while it still fires records nothing new; its disappearance resolves it once.
    let mut run = start(&store, &id, intake());
    let seen = server.received_requests().await.unwrap().len();
    polls(&server, seen, 3).await;
    assert!(
        run.records(1, POLL * 2).await.is_empty(),
        "not new after a restart"
    );
    serve(&server, "/api/v1/alerts", prom_body(&[])).await;
    let resolved = run.records(1, Duration::from_secs(5)).await;
    assert_eq!(resolved.len(), 1);
    polls(&server, 0, 3).await;
    assert!(run.records(1, POLL * 2).await.is_empty());
    run.stop(&store, &id).await;

    let events = alert_events(&store, &id);
    assert_eq!(events.len(), 2, "{events:?}");
    let Event::AlertResolved {
        name: n2,
        labels: l2,
        ..
    } = &events[1]
    else {
        panic!("{events:?}")
    };
    assert_eq!((n2, l2), (name, labels), "the same alert resolved");
}

#[tokio::test]
async fn alertmanager_alerts_and_both_sources_together() {
    let data = tempfile::tempdir().unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let prom = MockServer::start().await;
    let am = MockServer::start().await;
    let future = (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339();
    let past = (chrono::Utc::now() - chrono::Duration::minutes(1)).to_rfc3339();
    let am_alert = |name: &str, pod: &str, ends: &str| {
        serde_json::json!({"labels": {"alertname": name, "pod": pod},
            "annotations": {"description": "\u{202e}gnp.exe"}, "endsAt": ends,
            "startsAt": "2026-11-29T08:00:00Z", "fingerprint": "x",
            "status": {"state": "suppressed", "silencedBy": ["s"], "inhibitedBy": []}})
    };
    // Prometheus reports A; Alertmanager reports A (the same alert) and B.
    serve(
        &prom,
        "/api/v1/alerts",
        prom_body(&[("A", label("api-1"), "firing")]),
    )
    .await;
    serve(
        &am,
        "/api/v2/alerts",
        serde_json::json!([
            am_alert("A", "api-1", &future),
            am_alert("B\u{7}", "api-2", &future)
        ]),
    )
    .await;
    let intake = AlertIntake::new(
        vec![
            endpoint(AlertSource::Prometheus, &prom.uri()),
            endpoint(AlertSource::Alertmanager, &am.uri()),
        ],
        POLL,
    );
    let mut run = start(&store, &id, intake);
    let fired = run.records(2, Duration::from_secs(5)).await;
    assert_eq!(fired.len(), 2, "A once and B once");
    // Prometheus stops reporting A: Alertmanager still does, so it is not resolved.
    serve(&prom, "/api/v1/alerts", prom_body(&[])).await;
    polls(&prom, 0, 3).await;
    assert!(run.records(1, POLL * 2).await.is_empty());
    // Alertmanager marks B as ended and stops reporting A: both resolve, once.
    serve(
        &am,
        "/api/v2/alerts",
        serde_json::json!([am_alert("B\u{7}", "api-2", &past)]),
    )
    .await;
    let resolved = run.records(2, Duration::from_secs(5)).await;
    assert_eq!(resolved.len(), 2);
    polls(&am, 0, 3).await;
    assert!(run.records(1, POLL * 2).await.is_empty());
    run.stop(&store, &id).await;

    let names: Vec<String> = alert_events(&store, &id)
        .iter()
        .map(|e| match e {
            Event::AlertFiring { name, source, .. } => format!("+{name} {source:?}"),
            Event::AlertResolved { name, source, .. } => format!("-{name} {source:?}"),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(
        names,
        [
            "+A Prometheus",
            "+B\\x07 Alertmanager",
            "-A Alertmanager",
            "-B\\x07 Alertmanager"
        ]
    );
}

#[tokio::test]
async fn a_failing_source_is_reported_and_what_it_said_last_stands() {
    let data = tempfile::tempdir().unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let server = MockServer::start().await;
    serve(
        &server,
        "/api/v1/alerts",
        prom_body(&[("A", label("api-1"), "firing")]),
    )
    .await;
    let intake = AlertIntake::new(vec![endpoint(AlertSource::Prometheus, &server.uri())], POLL);
    let mut run = start(&store, &id, intake);
    assert_eq!(run.records(1, Duration::from_secs(5)).await.len(), 1);
    server.reset().await;
    Mock::given(path("/api/v1/alerts"))
        .respond_with(ResponseTemplate::new(503).set_body_string("<html><title>down</title>"))
        .mount(&server)
        .await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let down = loop {
        match tokio::time::timeout_at(deadline, run.rx.recv()).await {
            Ok(Some(AlertReport::SourceDown { error, .. })) => break error,
            Ok(Some(AlertReport::Recorded(r))) => panic!("recorded while down: {r:?}"),
            Ok(Some(_)) => {}
            _ => panic!("no report of the failing source"),
        }
    };
    assert!(down.contains("503"), "{down}");
    // Back with the alert still firing: nothing new is recorded.
    serve(
        &server,
        "/api/v1/alerts",
        prom_body(&[("A", label("api-1"), "firing")]),
    )
    .await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::time::timeout_at(deadline, run.rx.recv()).await {
            Ok(Some(AlertReport::SourceUp { firing, .. })) => {
                assert_eq!(firing, 1);
                break;
            }
            Ok(Some(AlertReport::Recorded(r))) => panic!("recorded again: {r:?}"),
            Ok(Some(_)) => {}
            _ => panic!("the source did not come back"),
        }
    }
    run.stop(&store, &id).await;
    assert_eq!(alert_events(&store, &id).len(), 1);
}

#[tokio::test]
async fn requests_carry_auth_headers_and_the_path_prefix_and_debug_hides_secrets() {
    use wiremock::matchers::{bearer_token, header};
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/prom/api/v1/alerts"))
        .and(bearer_token("tok-canary-1"))
        .and(header("X-Scope-OrgID", "tenant-1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(prom_body(&[(
            "A",
            label("api-1"),
            "firing",
        )])))
        .mount(&server)
        .await;
    let e = AlertEndpoint::new(
        AlertSource::Prometheus,
        &format!("{}/prom", server.uri()),
        Auth::Bearer(warroom::secret::Secret::new("tok-canary-1")),
        &[("X-Scope-OrgID".into(), "tenant-1".into())],
        Duration::from_secs(2),
    )
    .unwrap();
    let alerts = e.poll(chrono::Utc::now()).await.expect("authorized poll");
    assert_eq!(alerts.len(), 1);
    assert!(!format!("{e:?}").contains("canary"), "{e:?}");
    // Credentials in the URL are refused, and not echoed.
    let bad = AlertEndpoint::new(
        AlertSource::Alertmanager,
        "http://u:pw-canary@127.0.0.1:9093",
        Auth::None,
        &[],
        Duration::from_secs(2),
    )
    .unwrap_err();
    assert!(!bad.to_string().contains("pw-canary"), "{bad}");
    // A server that never answers costs one deadline, not a hang.
    let silent = MockServer::start().await;
    Mock::given(path("/api/v2/alerts"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(30)))
        .mount(&silent)
        .await;
    let e = AlertEndpoint::new(
        AlertSource::Alertmanager,
        &silent.uri(),
        Auth::None,
        &[],
        Duration::from_millis(300),
    )
    .unwrap();
    let started = Instant::now();
    let r = e.poll(chrono::Utc::now()).await;
    assert!(
        matches!(r, Err(warroom::metrics::SourceError::Timeout(_))),
        "{r:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}
