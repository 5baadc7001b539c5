//! Resume after a crash: the run is cut at every record boundary, resumed from what was
//! recorded, and the control API sees exactly one idempotency key per action (0 duplicate side
//! effects); completed steps are never re-run; a changed runbook cannot resume.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use warroom::runbook::executor::{Control, Executor};
use warroom::runbook::operator::AssumeYes;
use warroom::runbook::report::{
    IntentStore, MemoryIntents, RecordError, RunEvent, RunOutcome, RunRecord, RunSink,
};
use warroom::runbook::resume::{ResumeError, resume_point};
use warroom::runbook::{http, load, model::Runbook, vars};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

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

/// A journal that "crashes" (refuses) from record number `limit` on.
struct Crashing {
    limit: usize,
    records: Arc<Mutex<Vec<RunRecord>>>,
}

impl RunSink for Crashing {
    fn record(&self, r: &RunRecord) -> Result<(), RecordError> {
        let mut v = self.records.lock().unwrap();
        if v.len() >= self.limit {
            return Err(RecordError {
                path: "journal".into(),
                source: std::io::Error::other("killed"),
            });
        }
        v.push(r.clone());
        Ok(())
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
        run_id: "run-7".into(),
        dry_run: false,
    }
}

#[tokio::test]
async fn a_crash_at_every_record_then_resume_gives_no_duplicate_side_effects() {
    let full_len = {
        let s = MockServer::start().await;
        Mock::given(any())
            .respond_with(ResponseTemplate::new(200))
            .mount(&s)
            .await;
        let records = Arc::new(Mutex::new(Vec::new()));
        let rb = runbook(&s.uri());
        let sink = Arc::new(Crashing {
            limit: usize::MAX,
            records: records.clone(),
        });
        assert_eq!(
            executor(&rb, sink, Arc::new(MemoryIntents::default()))
                .run()
                .await,
            RunOutcome::Succeeded
        );
        records.lock().unwrap().len()
    };
    assert!(full_len > 10);
    for limit in 0..full_len {
        let s = MockServer::start().await;
        Mock::given(any())
            .respond_with(ResponseTemplate::new(200))
            .mount(&s)
            .await;
        let rb = runbook(&s.uri());
        let intents: Arc<dyn IntentStore> = Arc::new(MemoryIntents::default());
        let records = Arc::new(Mutex::new(Vec::new()));
        let crashed = executor(
            &rb,
            Arc::new(Crashing {
                limit,
                records: records.clone(),
            }),
            intents.clone(),
        );
        let first = crashed.run().await;
        // Only the final record may be lost after every step succeeded.
        let expected = if limit == full_len - 1 {
            RunOutcome::Succeeded
        } else {
            RunOutcome::Failed
        };
        assert_eq!(first, expected, "limit {limit}");
        // Restart: whatever was recorded is all we know.
        let recorded = records.lock().unwrap().clone();
        let resumed_sink = Arc::new(Crashing {
            limit: usize::MAX,
            records: records.clone(),
        });
        let again = executor(&rb, resumed_sink, intents.clone());
        let outcome = match resume_point(&rb, &recorded) {
            Err(ResumeError::NoRun) => again.run().await,
            Err(e) => panic!("limit {limit}: {e}"),
            Ok(p) => {
                // An in-doubt step is retried (same key: the server replays, never acts twice).
                let from = match &p.in_doubt {
                    Some(step) => rb.steps.iter().position(|s| &s.id == step).unwrap(),
                    None => p.next_step,
                };
                for done in &p.completed {
                    let i = rb.steps.iter().position(|s| &s.id == done).unwrap();
                    assert!(
                        i < from,
                        "limit {limit}: completed step {done} would re-run"
                    );
                }
                again.run_from(Some(from)).await
            }
        };
        assert_eq!(outcome, RunOutcome::Succeeded, "limit {limit}");
        let mut keys: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for r in s.received_requests().await.unwrap() {
            let k = r
                .headers
                .get("idempotency-key")
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            keys.entry(r.url.path().to_string()).or_default().insert(k);
        }
        assert_eq!(keys.len(), 3, "limit {limit}: every action happened");
        for (path, k) in &keys {
            assert_eq!(
                k.len(),
                1,
                "limit {limit}: {path} acted under {} keys",
                k.len()
            );
        }
        let finished = records
            .lock()
            .unwrap()
            .iter()
            .filter(|r| matches!(r.event, RunEvent::RunFinished { .. }))
            .count();
        assert!(finished >= 1);
    }
}

#[tokio::test]
async fn a_changed_or_finished_runbook_cannot_resume() {
    let s = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200))
        .mount(&s)
        .await;
    let rb = runbook(&s.uri());
    let records = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::new(Crashing {
        limit: 6,
        records: records.clone(),
    });
    executor(&rb, sink, Arc::new(MemoryIntents::default()))
        .run()
        .await;
    let recorded = records.lock().unwrap().clone();
    let p = resume_point(&rb, &recorded).unwrap();
    assert_eq!(p.completed, vec!["rollback".to_string()]);
    // Records 0..6: started, rollback started/confirmed/attempt/finished, note started.
    assert_eq!(p.in_doubt.as_deref(), Some("note"));
    let other = runbook(&format!("{}/", s.uri()));
    assert!(matches!(
        resume_point(&other, &recorded),
        Err(ResumeError::Changed { .. })
    ));
    let mut done = recorded.clone();
    done.push(RunRecord {
        at: recorded[0].at,
        run_id: "run-7".into(),
        event: RunEvent::RunFinished {
            outcome: RunOutcome::Succeeded,
        },
    });
    assert!(matches!(
        resume_point(&rb, &done),
        Err(ResumeError::Finished(..))
    ));
}
