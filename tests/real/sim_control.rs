//! The control API over HTTP on a loopback port: every endpoint, bad bodies, unknown pods,
//! the idempotency rules, concurrent calls.

use serde_json::Value;
use std::sync::Arc;
use warroom::sim::{Scenario, Sim, SimService, server};

struct Server {
    base: String,
    service: Arc<SimService>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The router on 127.0.0.1:0; no clock task, so the model only moves when a test moves it.
async fn start(scenario: &str) -> Server {
    let sim = Sim::new(Scenario::load(scenario).expect("scenario"), 1);
    let service = Arc::new(SimService::new(sim, 1.0));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let app = server::router(service.clone());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Server {
        base,
        service,
        task,
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(10))
        .build()
        .expect("client")
}

async fn post(s: &Server, action: &str, body: &str, key: Option<&str>) -> (u16, Value) {
    let mut req = client()
        .post(format!("{}/control/{action}", s.base))
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(k) = key {
        req = req.header("Idempotency-Key", k);
    }
    let resp = req.send().await.expect("send");
    let status = resp.status().as_u16();
    (status, resp.json().await.expect("JSON body"))
}

async fn state(s: &Server) -> Value {
    client()
        .get(format!("{}/state", s.base))
        .send()
        .await
        .expect("state")
        .json()
        .await
        .expect("json")
}

#[tokio::test]
async fn every_endpoint_acts() {
    let s = start("planner-peak").await;
    s.service.advance_to(1300.0); // past the bad deploy
    let cases = [
        ("retries", r#"{"layer":"gateway","enabled":false}"#),
        ("deploy", r#"{"version":"planner-api-2026.07.17.1"}"#),
        ("rollback", "{}"),
        ("restart", r#"{"pod":"api-3"}"#),
        ("scale", r#"{"replicas":12}"#),
        ("pool", r#"{"size":60}"#),
        ("queue", r#"{"action":"pause"}"#),
        ("load-shedding", r#"{"enabled":true}"#),
        ("idempotency", r#"{"enforced":true}"#),
        ("memory", r#"{"limit_mb":4096}"#),
    ];
    for (action, body) in cases {
        let (status, v) = post(&s, action, body, None).await;
        assert_eq!(status, 200, "{action}: {v}");
        assert_eq!(v["ok"], true);
    }
    let st = state(&s).await;
    assert_eq!(st["retries"]["gateway"], false);
    assert_eq!(st["retries"]["client"], true);
    assert_eq!(st["instances"].as_array().map(Vec::len), Some(12));
    assert_eq!(st["instances"][3]["up"], false, "api-3 is restarting");
    assert_eq!(st["instances"][0]["pool_max"], 60.0);
    assert_eq!(st["queue"]["mode"], "paused");
    assert_eq!(st["settings"]["load_shedding"], true);
    assert_eq!(st["settings"]["idempotency_enforced"], true);
    assert_eq!(st["settings"]["memory_limit_mb"], 4096.0);
    assert_eq!(st["events"].as_array().map(Vec::len), Some(11)); // the fault and ten actions

    let (status, _) = post(&s, "retries", r#"{"layer":"all","enabled":false}"#, None).await;
    assert_eq!(status, 200);
    let metrics = client()
        .get(format!("{}/metrics", s.base))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    for layer in ["client", "gateway", "worker"] {
        assert!(metrics.contains(&format!("app_retry_enabled{{layer=\"{layer}\"}} 0")));
    }
    assert!(metrics.contains("app_load_shedding_enabled 1"));
    let health: Value = client()
        .get(format!("{}/healthz", s.base))
        .send()
        .await
        .expect("healthz")
        .json()
        .await
        .expect("json");
    assert_eq!(health["status"], "ok");
}

#[tokio::test]
async fn bad_requests_name_the_field() {
    let s = start("planner-peak").await;
    let cases: [(&str, &str, u16, &str); 12] = [
        (
            "retries",
            r#"{"layer":"edge","enabled":false}"#,
            400,
            "layer",
        ),
        ("retries", r#"{"layer":"client"}"#, 400, "enabled"),
        (
            "retries",
            r#"{"layer":"client","enabled":"no"}"#,
            400,
            "enabled",
        ),
        ("scale", r#"{"replicas":0}"#, 400, "replicas"),
        ("scale", r#"{"replicas":-3}"#, 400, "replicas"),
        ("pool", r#"{"size":1.5}"#, 400, "size"),
        ("queue", r#"{"action":"flush"}"#, 400, "action"),
        ("memory", r#"{"limit_mb":64,"colour":1}"#, 400, "colour"),
        ("deploy", r#"{"version":"nope"}"#, 404, "version"),
        ("restart", r#"{"pod":"api-10"}"#, 404, "pod"),
        ("restart", "[1,2]", 400, ""),
        ("rollback", "{not json", 400, ""),
    ];
    for (action, body, want, field) in cases {
        let (status, v) = post(&s, action, body, None).await;
        assert_eq!(status, want, "{action} {body}: {v}");
        assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()), "{v}");
        assert_eq!(v["field"].as_str().unwrap_or(""), field, "{action} {body}");
    }
    // Nothing to roll back to before any deploy.
    let (status, v) = post(&s, "rollback", "{}", None).await;
    assert_eq!(status, 409, "{v}");
    // Unknown action and unknown path.
    let (status, _) = post(&s, "reboot-everything", "{}", None).await;
    assert_eq!(status, 404);
    let resp = client()
        .get(format!("{}/nope", s.base))
        .send()
        .await
        .expect("get");
    assert_eq!(resp.status().as_u16(), 404);
    // Nothing was applied by any of them.
    assert_eq!(state(&s).await["events"].as_array().map(Vec::len), Some(0));
}

#[tokio::test]
async fn idempotency_keys_replay_or_refuse() {
    let s = start("planner-peak").await;
    let body = r#"{"pod":"api-2"}"#;
    let (a, first) = post(&s, "restart", body, Some("restart-api-2-once")).await;
    assert_eq!(a, 200);
    s.service.advance_to(60.0); // the pod comes back
    let (b, again) = post(&s, "restart", body, Some("restart-api-2-once")).await;
    assert_eq!(b, 200);
    assert_eq!(first, again, "the stored answer is replayed");
    let restarts = state(&s).await["instances"][2]["restarts"].clone();
    assert_eq!(restarts, 1.0, "the replay did not restart it again");
    assert_eq!(state(&s).await["instances"][2]["up"], true);

    let (c, err) = post(
        &s,
        "restart",
        r#"{"pod":"api-4"}"#,
        Some("restart-api-2-once"),
    )
    .await;
    assert_eq!(c, 422, "{err}");
    assert_eq!(err["field"], "Idempotency-Key");
    let (d, _) = post(&s, "scale", r#"{"replicas":3}"#, Some("restart-api-2-once")).await;
    assert_eq!(d, 422);
    let (e, bad) = post(&s, "restart", body, Some("bad key with spaces")).await;
    assert_eq!(e, 400, "{bad}");
    // Without a key, the same body acts again.
    let (f, _) = post(&s, "restart", body, None).await;
    assert_eq!(f, 200);
    assert_eq!(state(&s).await["instances"][2]["restarts"], 2.0);
}

#[tokio::test]
async fn concurrent_calls_with_one_key_act_once() {
    let s = Arc::new(start("crash-loop").await);
    let mut tasks = Vec::new();
    for i in 0..16 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            // Half share one key; the others each have their own.
            let key = if i % 2 == 0 {
                "shared".to_string()
            } else {
                format!("own-{i}")
            };
            post(&s, "restart", r#"{"pod":"api-1"}"#, Some(&key)).await
        }));
    }
    let mut ok = 0;
    for t in tasks {
        let (status, v) = t.await.expect("task");
        assert_eq!(status, 200, "{v}");
        ok += 1;
    }
    assert_eq!(ok, 16);
    // 8 own keys + 1 shared key acted.
    let st = state(&s).await;
    assert_eq!(
        st["instances"][1]["restarts"], 9.0,
        "{}",
        st["instances"][1]
    );
    assert_eq!(st["events"].as_array().map(Vec::len), Some(9));
}
