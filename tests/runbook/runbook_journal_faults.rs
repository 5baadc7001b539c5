//! The journal as the run's conscience (RELIABILITY.md, batch restarts and the journal):
//! - cumulative budget through the executor: 80 instances, batches of 8, one instance per batch
//!   never comes back, a failure budget of 2: no third batch starts (15 restarts are sent), and
//!   the journal records that the budget ran out;
//! - a failing sync is not taken for success: when the intent of a request cannot be synced,
//!   the request is never sent and the run goes no further (0 actions).

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use futures::FutureExt;
use futures::future::BoxFuture;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use warroom::incident::event::{Event, RunRef};
use warroom::incident::storage::Faults;
use warroom::incident::store::Store;
use warroom::incident::writer::JournalWriter;
use warroom::metrics::{InstantQuery, Point, QueryAnswer, RangeQuery, Series, Source, SourceError};
use warroom::runbook::batch::Decision;
use warroom::runbook::executor::{Control, Executor};
use warroom::runbook::journal::{JournalIntents, JournalSink};
use warroom::runbook::operator::{AssumeYes, Confirmation, Consent, Operator};
use warroom::runbook::report::{RunEvent, RunOutcome, RunRecord, RunSink};
use warroom::runbook::{http, load, model::Runbook, vars};

/// Restarted pods; a pod whose number is a multiple of 8 never comes back from a restart.
type Restarted = Arc<Mutex<Vec<String>>>;

fn lost(pod: &str) -> bool {
    pod.trim_start_matches("api-")
        .parse::<usize>()
        .is_ok_and(|n| n % 8 == 0)
}

struct Fleet(Restarted);

impl Source for Fleet {
    fn describe(&self) -> String {
        "fleet".into()
    }
    fn query_range(&self, _q: RangeQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        async { Err(SourceError::Malformed("no".into())) }.boxed()
    }
    fn query(&self, q: InstantQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        let pod = q
            .query
            .split("pod=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap_or("")
            .to_string();
        let down = lost(&pod) && self.0.lock().unwrap().contains(&pod);
        // Asked the time, or when its samples were taken (a gate after a change): just now.
        let fresh = q.query.starts_with("min(timestamp(") || q.query == "time()";
        async move {
            Ok(QueryAnswer {
                series: vec![Series {
                    labels: [("pod".to_string(), pod)].into(),
                    points: vec![Point {
                        t: 0.0,
                        v: match (fresh, down) {
                            (true, _) => chrono::Utc::now().timestamp_millis() as f64 / 1000.0,
                            (false, true) => 0.0,
                            (false, false) => 1.0,
                        },
                    }],
                }],
                ..Default::default()
            })
        }
        .boxed()
    }
    fn ready(&self) -> BoxFuture<'static, Result<(), SourceError>> {
        async { Ok(()) }.boxed()
    }
}

/// Confirms everything and, at every pause, continues: only the budget can stop the rollout.
struct ContinueAll;

impl Operator for ContinueAll {
    fn confirm(&self, _c: &Confirmation) -> BoxFuture<'static, Consent> {
        async { Consent::Given }.boxed()
    }
    fn decide(&self, _step: &str, _reason: &str) -> BoxFuture<'static, Decision> {
        async { Decision::Continue }.boxed()
    }
}

async fn restart(State(r): State<Restarted>, Json(body): Json<serde_json::Value>) -> &'static str {
    r.lock()
        .unwrap()
        .push(body["pod"].as_str().unwrap_or("").to_string());
    "{}"
}

fn batch_runbook(base: &str) -> Runbook {
    let targets: Vec<String> = (0..80).map(|i| format!("\"api-{i:02}\"")).collect();
    let src = format!(
        r#"name = "restart"
[[step]]
id = "restart"
kind = "batch"
targets = [{}]
size = 8
failure_budget = 2
soak = "100ms"
settle = "50ms"
instance_deadline = "1s"
deadline = "1m"
[step.action]
method = "POST"
url = "{base}/control/restart"
json = {{ pod = "{{{{target}}}}" }}
[step.instance]
query = 'app_instance_up{{pod="{{{{target}}}}"}}'
above = 0.5
interval = "200ms"
"#,
        targets.join(", ")
    );
    load::parse("restart.toml", Path::new("restart.toml"), &src).unwrap()
}

fn executor(rb: &Runbook, w: &JournalWriter, source: Option<Arc<dyn Source>>) -> Executor {
    let run = RunRef {
        run_id: "run-1".into(),
        runbook: rb.name.clone(),
        hash: rb.hash.clone(),
    };
    Executor {
        runbook: rb.clone(),
        vars: vars::resolve(rb, &[], |_| None).unwrap(),
        source,
        sender: http::Sender::new(
            warroom::backoff::Backoff::default(),
            http::run_retry_budget(),
        )
        .unwrap(),
        sink: Arc::new(JournalSink::new(w.clone(), run)),
        intents: Arc::new(JournalIntents::new(w.clone(), "run-1", &[])),
        operator: Arc::new(AssumeYes),
        control: watch::channel(Control::Run).1,
        clock: Arc::new(warroom::clock::WallClock),
        run_id: "run-1".into(),
        dry_run: false,
    }
}

fn details(records: &[warroom::incident::record::Record]) -> Vec<String> {
    records
        .iter()
        .filter_map(|r| match &r.kind {
            Event::RunbookStep {
                detail: Some(d), ..
            } => Some(d.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cumulative_budget_stops_the_third_batch_and_the_journal_says_so() {
    let restarted: Restarted = Arc::default();
    let app = Router::new()
        .route("/control/restart", post(restart))
        .with_state(restarted.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let (incident, _) = store
        .open_incident(&id, warroom::incident::store::Role::Runbook)
        .unwrap();
    let w = JournalWriter::spawn(incident).unwrap();
    let rb = batch_runbook(&format!("http://{addr}"));
    let mut exec = executor(&rb, &w, Some(Arc::new(Fleet(restarted.clone()))));
    exec.operator = Arc::new(ContinueAll);
    let outcome = tokio::time::timeout(std::time::Duration::from_secs(30), exec.run())
        .await
        .expect("the run ends");
    drop(exec);
    drop(w);
    let sent = restarted.lock().unwrap().clone();
    // Batch 1 is 8; the instance it lost stays unavailable and counts against the room of 8,
    // so batch 2 is 7.
    assert_eq!(sent.len(), 8 + (8 - 1), "two batches: {sent:?}");
    let gone: BTreeSet<&String> = sent.iter().filter(|p| lost(p)).collect();
    assert_eq!(gone.len(), 2, "{gone:?}");
    let journal = store.read(&id).unwrap().records;
    let d = details(&journal);
    let started = d
        .iter()
        .filter(|x| x.starts_with("rollout:") && x.contains("batch_started"))
        .count();
    assert_eq!(started, 2, "no third batch starts: {d:#?}");
    assert!(
        d.iter().any(|x| x.contains("failure budget spent: 2")),
        "the journal records that the budget ran out: {d:#?}"
    );
    // The step failed; the operator's "continue" is recorded and ends the run.
    assert!(d.iter().any(|x| x == "decision: continue"), "{d:#?}");
    assert_eq!(outcome, RunOutcome::Succeeded);
}

/// Arms the journal's faults once the confirmation before the send is recorded, so the sync
/// that fails is the intent's.
struct ArmAfterConfirm(JournalSink, Faults);

impl RunSink for ArmAfterConfirm {
    fn record(&self, r: &RunRecord) -> Result<(), warroom::runbook::report::RecordError> {
        self.0.record(r)?;
        if matches!(r.event, RunEvent::Confirmed { .. }) {
            self.1.fail_syncs(1);
        }
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_sync_of_the_intent_means_the_request_is_never_sent() {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::any())
        .respond_with(wiremock::ResponseTemplate::new(200))
        .mount(&server)
        .await;
    let src = format!(
        r#"name = "r"
[[step]]
id = "rollback"
kind = "http"
method = "POST"
url = "{0}/control/rollback"
[[step]]
id = "retries"
kind = "http"
method = "POST"
url = "{0}/control/retries"
"#,
        server.uri()
    );
    let rb = load::parse("r.toml", Path::new("r.toml"), &src).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let (id, w, faults) =
        crate::support::faulty_journal::writer(&store, warroom::incident::store::Role::Runbook);
    let mut exec = executor(&rb, &w, None);
    let run = RunRef {
        run_id: "run-1".into(),
        runbook: rb.name.clone(),
        hash: rb.hash.clone(),
    };
    exec.sink = Arc::new(ArmAfterConfirm(
        JournalSink::new(w.clone(), run),
        faults.clone(),
    ));
    let outcome = exec.run().await;
    assert_eq!(outcome, RunOutcome::Failed);
    let got = server.received_requests().await.unwrap();
    assert!(got.is_empty(), "0 requests after a failed sync: {got:?}");
    assert!(
        !w.is_durable(),
        "the journal says it is not durable, for the console to show"
    );
    drop(exec);
    drop(w);
    let journal = store.read(&id).unwrap().records;
    assert!(
        !journal
            .iter()
            .any(|r| matches!(r.kind, Event::RunbookIntent { .. })),
        "an unsynced intent is not recorded: {journal:#?}"
    );
}
