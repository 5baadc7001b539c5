//! HTTP steps against a local mock: the retry matrix, Retry-After, the deadline, the shared
//! retry budget against a hard-down endpoint, and one idempotency key across retries and
//! restarts.

use std::time::{Duration, Instant};
use warroom::backoff::{Backoff, RetryBudget};
use warroom::runbook::http::{Request, Sender};
use warroom::runbook::model::Method;
use warroom::runbook::report::{IntentStore, JsonlIntents};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn fast_backoff() -> Backoff {
    Backoff {
        base: Duration::from_millis(1),
        cap: Duration::from_millis(5),
        max_attempts: 4,
    }
}

fn post(url: String) -> Request {
    Request {
        method: Method::Post,
        url,
        headers: vec![],
        body: Some(serde_json::json!({"layer": "all", "enabled": false})),
        timeout: Duration::from_secs(2),
        deadline: Duration::from_secs(10),
    }
}

async fn server_answering(status: u16) -> MockServer {
    let s = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(status))
        .mount(&s)
        .await;
    s
}

#[tokio::test]
async fn retry_matrix() {
    // (status, attempts expected with a generous budget)
    let table = [
        (200, 1),
        (400, 1),
        (401, 1),
        (403, 1),
        (404, 1),
        (409, 1),
        (422, 1),
        (500, 1),
        (429, 4),
        (502, 4),
        (503, 4),
        (504, 4),
    ];
    for (status, expected) in table {
        let s = server_answering(status).await;
        let sender = Sender::new(fast_backoff(), RetryBudget::new(0.1, 100.0)).unwrap();
        let r = sender
            .send(
                &post(format!("{}/control/retries", s.uri())),
                Some("k"),
                |_| {},
            )
            .await;
        let received = s.received_requests().await.unwrap().len();
        assert_eq!(received, expected, "status {status}");
        assert_eq!(r.attempts as usize, expected, "status {status}");
        assert_eq!(r.succeeded(), status == 200, "status {status}");
    }
}

#[tokio::test]
async fn connection_refused_is_retried_within_the_limit() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let sender = Sender::new(fast_backoff(), RetryBudget::new(0.1, 100.0)).unwrap();
    let mut seen = Vec::new();
    let r = sender
        .send(
            &post(format!("http://127.0.0.1:{port}/x")),
            Some("k"),
            |a| seen.push(a.clone()),
        )
        .await;
    assert_eq!(r.attempts, 4);
    assert!(!r.succeeded());
    assert!(seen.iter().all(|a| a.error.is_some()));
}

#[tokio::test]
async fn retry_after_is_obeyed_and_never_waits_past_the_deadline() {
    let s = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(503).insert_header("Retry-After", "1"))
        .up_to_n_times(1)
        .mount(&s)
        .await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200))
        .mount(&s)
        .await;
    let sender = Sender::new(fast_backoff(), RetryBudget::new(0.1, 100.0)).unwrap();
    let t = Instant::now();
    let r = sender.send(&post(s.uri()), Some("k"), |_| {}).await;
    assert!(r.succeeded());
    assert_eq!(r.attempts, 2);
    assert!(t.elapsed() >= Duration::from_secs(1), "{:?}", t.elapsed());

    // Retry-After beyond the deadline: no retry, and we return at once.
    let s = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(429).insert_header("Retry-After", "60"))
        .mount(&s)
        .await;
    let t = Instant::now();
    let r = sender.send(&post(s.uri()), Some("k"), |_| {}).await;
    assert_eq!(r.attempts, 1);
    assert!(r.failure.as_deref().unwrap().contains("deadline"), "{r:?}");
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_hard_down_endpoint_costs_at_most_1_1_times_the_attempts() {
    let s = server_answering(503).await;
    let sender = Sender::new(
        Backoff {
            base: Duration::ZERO,
            cap: Duration::ZERO,
            max_attempts: 4,
        },
        warroom::runbook::http::run_retry_budget(),
    )
    .unwrap();
    let actions = 1000u32;
    let mut most = 0;
    for _ in 0..actions {
        let r = sender.send(&post(s.uri()), Some("k"), |_| {}).await;
        most = most.max(r.attempts);
    }
    let attempts = s.received_requests().await.unwrap().len() as f64;
    eprintln!(
        "hard-down: {attempts} attempts for {actions} actions ({:.3}×)",
        attempts / f64::from(actions)
    );
    assert!(attempts <= 1.1 * f64::from(actions), "{attempts}");
    assert!(most <= 4);
}

#[tokio::test]
async fn the_idempotency_key_is_the_same_on_every_retry_and_after_a_restart() {
    let s = server_answering(503).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("intents.jsonl");
    let key = JsonlIntents::open(&path)
        .unwrap()
        .key("run-1/disable")
        .unwrap();
    let sender = Sender::new(fast_backoff(), RetryBudget::new(0.1, 100.0)).unwrap();
    sender.send(&post(s.uri()), Some(&key), |_| {}).await;
    // "Restart": a new store reads the durable key back.
    let again = JsonlIntents::open(&path)
        .unwrap()
        .key("run-1/disable")
        .unwrap();
    assert_eq!(again, key);
    sender.send(&post(s.uri()), Some(&again), |_| {}).await;
    let reqs = s.received_requests().await.unwrap();
    assert_eq!(reqs.len(), 8);
    for r in &reqs {
        assert_eq!(
            r.headers.get("idempotency-key").unwrap().to_str().unwrap(),
            key
        );
    }
    let other = JsonlIntents::open(&path)
        .unwrap()
        .key("run-1/other")
        .unwrap();
    assert_ne!(other, key);
}
