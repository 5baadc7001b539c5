//! The executor: a dry run sends and spawns nothing; typed confirmation defaults to no;
//! pause and abort stop new actions; a batch runs end to end against a mock control API.

use futures::FutureExt;
use futures::future::BoxFuture;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use warroom::metrics::{InstantQuery, Point, QueryAnswer, RangeQuery, Series, Source, SourceError};
use warroom::runbook::batch::BatchEvent;
use warroom::runbook::executor::{Control, Executor};
use warroom::runbook::operator::{AssumeYes, LineOperator, Operator};
use warroom::runbook::report::{MemoryIntents, MemorySink, RunEvent, RunOutcome};
use warroom::runbook::{http, load, vars};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A metrics source answering every query with one series of `value`, counting queries.
struct Fixed {
    value: f64,
    queries: Arc<Mutex<Vec<String>>>,
}

impl Source for Fixed {
    fn describe(&self) -> String {
        "fixed".into()
    }
    fn query_range(&self, _q: RangeQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        async { Err(SourceError::Malformed("no".into())) }.boxed()
    }
    fn query(&self, q: InstantQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        self.queries.lock().unwrap().push(q.query.clone());
        // Asked the time, or when its samples were taken (a gate after a change): just now.
        let v = if q.query.starts_with("min(timestamp(") || q.query == "time()" {
            now_secs()
        } else {
            self.value
        };
        let pod = q
            .query
            .split("pod=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap_or("all")
            .to_string();
        async move {
            Ok(QueryAnswer {
                series: vec![Series {
                    labels: [("pod".to_string(), pod)].into(),
                    points: vec![Point { t: 0.0, v }],
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

/// The wall clock in Unix seconds: when a fake's samples are taken.
fn now_secs() -> f64 {
    chrono::Utc::now().timestamp_millis() as f64 / 1000.0
}

fn runbook(base: &str, canary: &Path) -> warroom::runbook::model::Runbook {
    let src = format!(
        r#"name = "t"
[variables]
base_url = {{ default = "{base}" }}

[[step]]
id = "disable"
kind = "http"
method = "POST"
url = "{{{{base_url}}}}/control/retries"
json = {{ layer = "all", enabled = false }}

[[step]]
id = "touch"
kind = "exec"
argv = ["touch", "{canary}"]

[[step]]
id = "restart"
kind = "batch"
targets = ["api-0", "api-1", "api-2", "api-3"]
size = 2
soak = "1ms"
settle = "1ms"
[step.action]
method = "POST"
url = "{{{{base_url}}}}/control/restart"
json = {{ pod = "{{{{target}}}}" }}
[step.instance]
query = 'app_instance_up{{pod="{{{{target}}}}"}}'
above = 0.5
interval = "10ms"
[step.gate]
query = "sum(app_instance_up)"
above = 0.5
consecutive = 1
interval = "10ms"
"#,
        canary = canary.display()
    );
    load::parse("t.toml", Path::new("t.toml"), &src).unwrap()
}

struct Setup {
    exec: Executor,
    sink: Arc<MemorySink>,
    control: watch::Sender<Control>,
}

fn setup(
    rb: warroom::runbook::model::Runbook,
    operator: Arc<dyn Operator>,
    dry_run: bool,
    value: f64,
) -> Setup {
    let vars = vars::resolve(&rb, &[], |_| None).unwrap();
    let sink = Arc::new(MemorySink::default());
    let (control, rx) = watch::channel(Control::Run);
    let exec = Executor {
        runbook: rb,
        vars,
        source: Some(Arc::new(Fixed {
            value,
            queries: Arc::default(),
        })),
        sender: http::Sender::new(
            warroom::backoff::Backoff {
                base: Duration::from_millis(1),
                cap: Duration::from_millis(2),
                max_attempts: 4,
            },
            http::run_retry_budget(),
        )
        .unwrap(),
        sink: sink.clone(),
        intents: Arc::new(MemoryIntents::default()),
        operator,
        control: rx,
        clock: Arc::new(warroom::clock::WallClock),
        run_id: "run-1".into(),
        dry_run,
    };
    Setup {
        exec,
        sink,
        control,
    }
}

async fn mock() -> MockServer {
    let s = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_string("{}"))
        .mount(&s)
        .await;
    s
}

#[tokio::test]
async fn a_dry_run_sends_nothing_and_spawns_nothing() {
    let s = mock().await;
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("spawned");
    let t = setup(runbook(&s.uri(), &canary), Arc::new(AssumeYes), true, 1.0);
    assert_eq!(t.exec.run().await, RunOutcome::DryRun);
    assert_eq!(s.received_requests().await.unwrap().len(), 0);
    assert!(!canary.exists(), "a process ran");
    let events = t.sink.events();
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, RunEvent::Spawned { .. } | RunEvent::Attempt { .. }))
    );
}

#[tokio::test]
async fn a_full_run_acts_once_per_step_and_target_with_recorded_keys() {
    let s = mock().await;
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("spawned");
    let t = setup(runbook(&s.uri(), &canary), Arc::new(AssumeYes), false, 1.0);
    assert_eq!(t.exec.run().await, RunOutcome::Succeeded);
    assert!(canary.exists());
    let reqs = s.received_requests().await.unwrap();
    let paths: Vec<String> = reqs.iter().map(|r| r.url.path().to_string()).collect();
    assert_eq!(
        paths,
        [
            "/control/retries",
            "/control/restart",
            "/control/restart",
            "/control/restart",
            "/control/restart"
        ]
    );
    let bodies: Vec<serde_json::Value> = reqs[1..]
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert_eq!(bodies[0], serde_json::json!({"pod": "api-0"}));
    // Every mutating request carried a distinct key, recorded before the send.
    let keys: std::collections::BTreeSet<_> = reqs
        .iter()
        .map(|r| {
            r.headers
                .get("idempotency-key")
                .unwrap()
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(keys.len(), 5);
    let events = t.sink.events();
    let batches = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                RunEvent::Batch {
                    batch_event: BatchEvent::BatchStarted { .. },
                    ..
                }
            )
        })
        .count();
    assert_eq!(batches, 2);
}

fn scripted(input: &str) -> Arc<dyn Operator> {
    Arc::new(LineOperator::new(
        Box::new(std::io::Cursor::new(input.as_bytes().to_vec())),
        Box::new(std::io::sink()),
    ))
}

#[tokio::test]
async fn anything_but_the_exact_word_confirms_nothing() {
    let mut inputs: Vec<String> = vec![
        "".into(),
        "\n".into(),
        "\r\n".into(),
        " \n".into(),
        "y\n".into(),
        "yes\n".into(),
        "Y\n".into(),
        "YES\n".into(),
        "ok\n".into(),
        "DISABLE\n".into(),
        "Disable\n".into(),
        "disabl\n".into(),
        "disablee\n".into(),
        " disable\n".into(),
        "disable \n".into(),
        "\tdisable\n".into(),
        "dis able\n".into(),
        "\u{3}\n".into(),
        "\u{3}".into(),
        "\u{4}".into(),
        "\u{1b}[8;50;100t\n".into(),
        "\u{1b}[A\n".into(),
        "\u{1b}\n".into(),
        "disable\u{0}\n".into(),
        "\u{200b}disable\n".into(),
        "disable\u{202e}\n".into(),
        "restart\n".into(),
        "batch 1\n".into(),
        "all\n".into(),
        "*\n".into(),
        "d\n".into(),
        "--yes\n".into(),
        "\n\ndisable\n".into(),
        "no\n".into(),
        "n\n".into(),
        "q\n".into(),
        "exit\n".into(),
        "true\n".into(),
        "1\n".into(),
        "disable;\n".into(),
        "'disable'\n".into(),
        "\"disable\"\n".into(),
        "ｄｉｓａｂｌｅ\n".into(),
        "disable\rX\n".into(),
        "\u{7f}disable\n".into(),
        "\u{85}\n".into(),
    ];
    inputs.push("x".repeat(100_000));
    inputs.push("disable".repeat(3));
    inputs.push("\u{1b}[201~disable\n".into());
    inputs.push("dIsAbLe\n".into());
    assert!(inputs.len() >= 50);
    let s = mock().await;
    let dir = tempfile::tempdir().unwrap();
    for input in &inputs {
        let t = setup(
            runbook(&s.uri(), &dir.path().join("c")),
            scripted(input),
            false,
            1.0,
        );
        assert_eq!(t.exec.run().await, RunOutcome::Aborted, "input {input:?}");
    }
    assert_eq!(
        s.received_requests().await.unwrap().len(),
        0,
        "actions taken"
    );
    assert!(!dir.path().join("c").exists());
    // The exact word confirms (then the exec step's word is missing: it stops there).
    let t = setup(
        runbook(&s.uri(), &dir.path().join("c")),
        scripted("disable\n"),
        false,
        1.0,
    );
    assert_eq!(t.exec.run().await, RunOutcome::Aborted);
    assert_eq!(s.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn pause_holds_every_action_and_abort_ends_the_run() {
    let s = mock().await;
    let dir = tempfile::tempdir().unwrap();
    let t = setup(
        runbook(&s.uri(), &dir.path().join("c")),
        Arc::new(AssumeYes),
        false,
        1.0,
    );
    t.control.send(Control::Pause).unwrap();
    let Setup {
        exec,
        sink,
        control,
    } = t;
    let handle = tokio::spawn(async move { exec.run().await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        s.received_requests().await.unwrap().len(),
        0,
        "acted while paused"
    );
    control.send(Control::Abort).unwrap();
    assert_eq!(handle.await.unwrap(), RunOutcome::Aborted);
    assert_eq!(s.received_requests().await.unwrap().len(), 0);
    assert!(matches!(
        sink.events().last(),
        Some(RunEvent::RunFinished {
            outcome: RunOutcome::Aborted
        })
    ));
}

#[tokio::test]
async fn an_unhealthy_fleet_fails_the_gate_and_yes_never_continues() {
    let s = mock().await;
    let dir = tempfile::tempdir().unwrap();
    // Every reading is 0: instances never count healthy, nothing starts beyond the budget,
    // and --yes aborts at the first pause instead of continuing.
    let t = setup(
        runbook(&s.uri(), &dir.path().join("c")),
        Arc::new(AssumeYes),
        false,
        0.0,
    );
    let outcome = t.exec.run().await;
    assert_eq!(outcome, RunOutcome::Aborted);
    let restarts = s
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path() == "/control/restart")
        .count();
    assert_eq!(
        restarts, 0,
        "all four are already unhealthy: over the budget of 2, nothing starts"
    );
    assert!(
        t.sink
            .events()
            .iter()
            .any(|e| matches!(e, RunEvent::Paused { reason, .. } if reason.contains("budget")))
    );
}

#[tokio::test]
async fn abort_during_a_long_gate_wait_takes_effect_at_once() {
    let src = r#"name = "w"
[[step]]
id = "wait"
kind = "wait"
timeout = "1h"
gate = { query = "x", below = 0.5, interval = "1h" }
"#;
    let rb = load::parse("w.toml", Path::new("w.toml"), src).unwrap();
    // The reading (1.0) never satisfies the gate: the executor sleeps for the interval.
    let Setup { exec, control, .. } = setup(rb, Arc::new(AssumeYes), false, 1.0);
    let handle = tokio::spawn(async move { exec.run().await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t = std::time::Instant::now();
    control.send(Control::Abort).unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(5), handle)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome, RunOutcome::Aborted);
    eprintln!("abort took {:?}", t.elapsed());
}

#[tokio::test]
async fn skip_goes_on_without_a_skippable_step_and_refuses_elsewhere() {
    let s = mock().await;
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("c");
    // Where the runbook does not allow it, "skip" is no: nothing acts.
    let t = setup(runbook(&s.uri(), &canary), scripted("skip\n"), false, 1.0);
    assert_eq!(t.exec.run().await, RunOutcome::Aborted);
    assert_eq!(s.received_requests().await.unwrap().len(), 0);
    // The same runbook with its first step skippable: skipped, and the rest runs.
    let mut rb = runbook(&s.uri(), &canary);
    rb.steps[0].skippable = true;
    let t = setup(rb, scripted("skip\ntouch\nbatch 1\nbatch 2\n"), false, 1.0);
    assert_eq!(t.exec.run().await, RunOutcome::Succeeded);
    let paths: Vec<String> = (s.received_requests().await.unwrap().iter())
        .map(|r| r.url.path().to_string())
        .collect();
    assert_eq!(
        paths, ["/control/restart"; 4],
        "the skipped step sent nothing"
    );
    assert!(canary.exists(), "the steps after it ran");
    let events = t.sink.events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RunEvent::StepFinished { step, outcome, .. }
            if step == "disable" && *outcome == warroom::runbook::report::StepOutcome::Skipped)),
        "{events:?}"
    );
}

#[test]
fn skippable_is_refused_where_nothing_asks() {
    let src = r#"name = "t"
[[step]]
id = "look"
kind = "check"
skippable = true
[step.gate]
query = "up"
above = 0.5
"#;
    let err = load::parse("t.toml", Path::new("t.toml"), src).unwrap_err();
    assert!(
        format!("{err:?}").contains("skippable = true applies to a step that asks"),
        "{err:?}"
    );
    let ok = r#"name = "t"
[[step]]
id = "cancel"
kind = "exec"
argv = ["true"]
skippable = true
"#;
    let rb = load::parse("t.toml", Path::new("t.toml"), ok).unwrap();
    assert!(rb.steps[0].skippable);
}
