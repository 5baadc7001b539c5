//! End to end through a real Prometheus: a batch restart of a small fake fleet, with targets
//! from a query, health read through Prometheus, a gate between batches, and the budget
//! checked afterwards in Prometheus' own history.

use crate::support::prometheus;

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use warroom::metrics::prometheus::{ClientOptions, PrometheusClient};
use warroom::runbook::executor::{Control, Executor};
use warroom::runbook::operator::AssumeYes;
use warroom::runbook::report::{MemoryIntents, MemorySink, RunOutcome};
use warroom::runbook::{http, load, vars};

const PODS: usize = 8;
const DOWN_FOR: Duration = Duration::from_millis(1500);

#[derive(Default)]
struct Fleet {
    down_until: Vec<Option<Instant>>,
    restarts: usize,
    most_down: usize,
}

type Shared = Arc<Mutex<Fleet>>;

fn down_now(f: &Fleet) -> usize {
    let now = Instant::now();
    f.down_until
        .iter()
        .filter(|d| d.is_some_and(|d| d > now))
        .count()
}

async fn metrics(State(f): State<Shared>) -> String {
    let f = f.lock().unwrap();
    let now = Instant::now();
    let mut out = String::from("# TYPE app_instance_up gauge\n");
    for (i, d) in f.down_until.iter().enumerate() {
        let up = if d.is_some_and(|d| d > now) { 0 } else { 1 };
        out += &format!("app_instance_up{{service=\"api\",pod=\"api-{i}\"}} {up}\n");
    }
    out
}

async fn restart(State(f): State<Shared>, Json(body): Json<serde_json::Value>) -> &'static str {
    let mut f = f.lock().unwrap();
    let pod = body["pod"].as_str().unwrap_or("");
    if let Some(i) = pod
        .strip_prefix("api-")
        .and_then(|n| n.parse::<usize>().ok())
        && i < f.down_until.len()
    {
        f.down_until[i] = Some(Instant::now() + DOWN_FOR);
        f.restarts += 1;
        let d = down_now(&f);
        f.most_down = f.most_down.max(d);
    }
    "{}"
}

const RUNBOOK: &str = r#"name = "restart"
[variables]
base_url = { default = "http://127.0.0.1:1" }

[[step]]
id = "restart"
kind = "batch"
targets_query = 'app_instance_up{service="api"}'
target_label = "pod"
size = 2
max_unavailable = 2
soak = "1500ms"
settle = "1s"
instance_deadline = "30s"
deadline = "2m"
[step.action]
method = "POST"
url = "{{base_url}}/control/restart"
json = { pod = "{{target}}" }
[step.instance]
query = 'app_instance_up{service="api",pod="{{target}}"}'
above = 0.5
interval = "500ms"
[step.gate]
query = 'sum(app_instance_up{service="api"})'
above = 7.5
consecutive = 1
interval = "1s"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_restart_through_prometheus_stays_within_its_budget() {
    let fleet: Shared = Arc::new(Mutex::new(Fleet {
        down_until: vec![None; PODS],
        ..Default::default()
    }));
    let app = Router::new()
        .route("/metrics", get(metrics))
        .route("/control/restart", post(restart))
        .with_state(fleet.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let Some(prom) = prometheus::start(prometheus::PromOptions {
        targets: vec![addr.to_string()],
        scrape_interval: "500ms",
        ..Default::default()
    }) else {
        return;
    };
    let source = Arc::new(PrometheusClient::new(ClientOptions::new(prom.url.clone())).unwrap());
    // Wait until Prometheus has every pod.
    let t = Instant::now();
    loop {
        let a = warroom::metrics::Source::query(
            &*source,
            warroom::metrics::InstantQuery {
                query: "count(app_instance_up)".into(),
                time: None,
            },
        )
        .await;
        if a.is_ok_and(|a| {
            a.series
                .first()
                .and_then(warroom::metrics::Series::last)
                .is_some_and(|p| p.v == PODS as f64)
        }) {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "prometheus never scraped the fleet"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let rb = load::parse(
        "restart.toml",
        std::path::Path::new("restart.toml"),
        RUNBOOK,
    )
    .unwrap();
    let vars = vars::resolve(&rb, &[format!("base_url=http://{addr}")], |_| None).unwrap();
    let sink = Arc::new(MemorySink::default());
    let exec = Executor {
        runbook: rb,
        vars,
        source: Some(source.clone()),
        sender: http::Sender::new(
            warroom::backoff::Backoff::default(),
            http::run_retry_budget(),
        )
        .unwrap(),
        sink: sink.clone(),
        intents: Arc::new(MemoryIntents::default()),
        operator: Arc::new(AssumeYes),
        control: watch::channel(Control::Run).1,
        clock: Arc::new(warroom::clock::WallClock),
        run_id: "e2e".into(),
        dry_run: false,
    };
    let started = Instant::now();
    let outcome = tokio::time::timeout(Duration::from_secs(60), exec.run())
        .await
        .unwrap();
    eprintln!(
        "batch restart of {PODS} through Prometheus took {:?}",
        started.elapsed()
    );
    assert_eq!(outcome, RunOutcome::Succeeded, "{:#?}", sink.events());
    let (restarts, most_down) = {
        let f = fleet.lock().unwrap();
        (f.restarts, f.most_down)
    };
    assert_eq!(restarts, PODS);
    assert!(most_down <= 2, "{most_down} down at once");
    // The same through Prometheus' history: never more than 2 down at any scrape.
    let secs = started.elapsed().as_secs() + 5;
    let q = format!("max_over_time((count(app_instance_up == 0) or vector(0))[{secs}s:500ms])");
    let a = warroom::metrics::Source::query(
        &*source,
        warroom::metrics::InstantQuery {
            query: q,
            time: None,
        },
    )
    .await
    .unwrap();
    let seen = a.series[0].points[0].v;
    eprintln!("most instances down at once, seen by Prometheus: {seen}");
    assert!(
        seen >= 1.0,
        "Prometheus never saw a restart: the check would be vacuous"
    );
    assert!(seen <= 2.0, "{seen}");
}
