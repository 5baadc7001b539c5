//! A run recorded on the incident's journal: every transition is a journal record, every
//! idempotency key is a synced `RunbookIntent` before its first send, and a run cut at every
//! journal record (a crash) resumes from the journal alone with 0 duplicate side effects and
//! no completed step run twice.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::watch;
use warroom::incident::event::{Event, RunRef, StepState};
use warroom::incident::record::Record;
use warroom::incident::store::{IncidentId, Store};
use warroom::incident::writer::JournalWriter;
use warroom::runbook::executor::{Control, Executor};
use warroom::runbook::journal::{
    JournalIntents, JournalSink, intents_of, run_records, unfinished_runs,
};
use warroom::runbook::operator::AssumeYes;
use warroom::runbook::report::{IntentStore, RecordError, RunOutcome, RunRecord, RunSink};
use warroom::runbook::resume::{ResumeError, resume_point};
use warroom::runbook::{http, load, model::Runbook, vars};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

const RUN_ID: &str = "run-7";

fn runbook(base: &str) -> Runbook {
    let src = format!(
        r#"name = "r"
[variables]
base_url = {{ default = "{base}" }}
[[step]]
id = "rollback"
kind = "http"
method = "POST"
url = "{{{{base_url}}}}/control/rollback"
[[step]]
id = "note"
kind = "note"
text = "between"
[[step]]
id = "retries"
kind = "http"
method = "POST"
url = "{{{{base_url}}}}/control/retries"
json = {{ layer = "all", enabled = false }}
[[step]]
id = "scale"
kind = "http"
method = "POST"
url = "{{{{base_url}}}}/control/pool"
json = {{ size = 50 }}
"#
    );
    load::parse("r.toml", Path::new("r.toml"), &src).unwrap()
}

/// The process "dies" at journal record number `limit`: from then on nothing is recorded,
/// keys included, so nothing more is sent.
#[derive(Clone)]
struct Death {
    limit: usize,
    count: Arc<AtomicUsize>,
}

impl Death {
    fn pass(&self) -> Result<(), RecordError> {
        if self.count.fetch_add(1, Ordering::SeqCst) >= self.limit {
            return Err(RecordError {
                path: "journal".into(),
                source: std::io::Error::other("killed"),
            });
        }
        Ok(())
    }
}

struct DyingSink(JournalSink, Death);

impl RunSink for DyingSink {
    fn record(&self, r: &RunRecord) -> Result<(), RecordError> {
        self.1.pass()?;
        self.0.record(r)
    }
}

struct DyingIntents(JournalIntents, Death);

impl IntentStore for DyingIntents {
    fn key(&self, scope: &str) -> Result<String, RecordError> {
        self.key_for(scope, "")
    }
    fn key_for(&self, scope: &str, request: &str) -> Result<String, RecordError> {
        self.1.pass()?;
        self.0.key_for(scope, request)
    }
}

fn executor(rb: &Runbook, sink: Arc<dyn RunSink>, intents: Arc<dyn IntentStore>) -> Executor {
    Executor {
        runbook: rb.clone(),
        vars: vars::resolve(rb, &[], |_| None).unwrap(),
        source: None,
        sender: http::Sender::new(
            warroom::backoff::Backoff::default(),
            http::run_retry_budget(),
        )
        .unwrap(),
        sink,
        intents,
        operator: Arc::new(AssumeYes),
        control: watch::channel(Control::Run).1,
        clock: Arc::new(warroom::clock::WallClock),
        run_id: RUN_ID.into(),
        dry_run: false,
    }
}

fn run_ref(rb: &Runbook) -> RunRef {
    RunRef {
        run_id: RUN_ID.into(),
        runbook: rb.name.clone(),
        hash: rb.hash.clone(),
    }
}

/// Open the incident for writing, as a new process would: its lock, its journal's records.
/// The previous writer's thread lets the lock go once its last handle is dropped, a moment
/// later: wait for it (bounded), as a restarted process would find it free.
fn open(store: &Store, id: &IncidentId) -> (JournalWriter, Vec<Record>) {
    for _ in 0..200 {
        if let Ok((incident, recovery)) =
            store.open_incident(id, warroom::incident::store::Role::Runbook)
        {
            return (JournalWriter::spawn(incident).unwrap(), recovery.records);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("the incident's lock was never released");
}

/// A run with the journal behind it, dying at journal record `limit`.
fn journaled(rb: &Runbook, w: &JournalWriter, records: &[Record], limit: usize) -> Executor {
    let death = Death {
        limit,
        count: Arc::new(AtomicUsize::new(0)),
    };
    executor(
        rb,
        Arc::new(DyingSink(
            JournalSink::new(w.clone(), run_ref(rb)),
            death.clone(),
        )),
        Arc::new(DyingIntents(
            JournalIntents::new(w.clone(), RUN_ID, records),
            death,
        )),
    )
}

async fn server() -> MockServer {
    let s = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200))
        .mount(&s)
        .await;
    s
}

/// Distinct idempotency keys the server saw, by path.
async fn keys_by_path(s: &MockServer) -> BTreeMap<String, BTreeSet<String>> {
    let mut keys: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in s.received_requests().await.unwrap() {
        let k = r.headers.get("idempotency-key").unwrap().to_str().unwrap();
        keys.entry(r.url.path().to_string())
            .or_default()
            .insert(k.to_string());
    }
    keys
}

fn finished_ok(records: &[Record], step: &str) -> usize {
    records
        .iter()
        .filter(|r| {
            matches!(&r.kind, Event::RunbookStep { step: s, state: StepState::Succeeded, .. } if s == step)
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_run_is_on_the_timeline_with_each_intent_before_its_answer() {
    let s = server().await;
    let rb = runbook(&s.uri());
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let (w, records) = open(&store, &id);
    let outcome = journaled(&rb, &w, &records, usize::MAX).run().await;
    assert_eq!(outcome, RunOutcome::Succeeded);
    drop(w);
    let journal = store.read(&id).unwrap().records;
    for step in ["rollback", "note", "retries", "scale"] {
        assert_eq!(finished_ok(&journal, step), 1, "{step}");
    }
    // Every key: its intent, then at least one answer with the same key, later in the journal.
    let intents = intents_of(&journal, RUN_ID);
    assert_eq!(intents.len(), 3, "{intents:?}");
    for key in intents.values() {
        let intent = journal
            .iter()
            .position(|r| matches!(&r.kind, Event::RunbookIntent { idempotency_key, .. } if idempotency_key == key))
            .unwrap();
        let ack = journal
            .iter()
            .position(|r| matches!(&r.kind, Event::RunbookAck { idempotency_key, .. } if idempotency_key == key))
            .unwrap_or_else(|| panic!("no answer recorded for {key}"));
        assert!(intent < ack);
    }
    // The keys the server saw are the journal's.
    let seen: BTreeSet<String> = keys_by_path(&s).await.into_values().flatten().collect();
    let recorded: BTreeSet<String> = intents.into_values().collect();
    assert_eq!(seen, recorded);
    // The run reads back as finished: it cannot resume, and is not offered.
    let back = run_records(&journal, RUN_ID);
    assert!(matches!(
        resume_point(&rb, &back),
        Err(ResumeError::Finished(_, RunOutcome::Succeeded))
    ));
    assert!(unfinished_runs(&journal).is_empty());
    // The timeline says it in words.
    let lines: Vec<String> = journal
        .iter()
        .map(|r| warroom::incident::timeline::describe(&r.kind))
        .collect();
    assert!(
        lines.iter().any(|l| l.contains("step retries succeeded")),
        "{lines:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_at_every_journal_record_then_resume_from_the_journal_acts_once() {
    let full = {
        let s = server().await;
        let rb = runbook(&s.uri());
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let id = store.create(chrono::Utc::now()).unwrap();
        let (w, records) = open(&store, &id);
        let e = journaled(&rb, &w, &records, usize::MAX);
        assert_eq!(e.run().await, RunOutcome::Succeeded);
        drop(w);
        store.read(&id).unwrap().records.len()
    };
    assert!(full > 15, "{full} records");
    let mut in_doubt_seen = 0;
    for limit in 0..full {
        let s = server().await;
        let rb = runbook(&s.uri());
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let id = store.create(chrono::Utc::now()).unwrap();
        let (w, records) = open(&store, &id);
        journaled(&rb, &w, &records, limit).run().await;
        drop(w);
        // A new process: the journal is all it knows.
        let (w, records) = open(&store, &id);
        let back = run_records(&records, RUN_ID);
        let again = journaled(&rb, &w, &records, usize::MAX);
        let outcome = match resume_point(&rb, &back) {
            Err(ResumeError::NoRun) => again.run().await,
            // Only the last record was lost: the run finished its work.
            Err(ResumeError::Finished(..)) => RunOutcome::Succeeded,
            Err(e) => panic!("limit {limit}: {e}"),
            Ok(p) => {
                // The same journal with another version of the runbook: refused.
                let changed = runbook(&format!("{}/", s.uri()));
                assert!(matches!(
                    resume_point(&changed, &back),
                    Err(ResumeError::Changed { .. })
                ));
                assert_eq!(
                    unfinished_runs(&records).len(),
                    1,
                    "limit {limit}: the cut run is offered for resuming"
                );
                let from = match &p.in_doubt {
                    Some(step) => {
                        in_doubt_seen += 1;
                        rb.steps.iter().position(|s| &s.id == step).unwrap()
                    }
                    None => p.next_step,
                };
                again.run_from(Some(from)).await
            }
        };
        assert_eq!(outcome, RunOutcome::Succeeded, "limit {limit}");
        drop(again);
        drop(w);
        let keys = keys_by_path(&s).await;
        assert_eq!(keys.len(), 3, "limit {limit}: every action happened");
        for (path, k) in &keys {
            assert_eq!(k.len(), 1, "limit {limit}: {path} under {} keys", k.len());
        }
        let journal = store.read(&id).unwrap().records;
        for step in ["rollback", "note", "retries", "scale"] {
            assert_eq!(
                finished_ok(&journal, step),
                1,
                "limit {limit}: step {step} completed once"
            );
        }
    }
    eprintln!("{full} journal records; {in_doubt_seen} cuts left a step in doubt");
    assert!(
        in_doubt_seen > 0,
        "no cut left a step in doubt: the test did not exercise resume"
    );
}
