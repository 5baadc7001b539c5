//! Discovery against mock servers that answer the way Prometheus-compatible engines do, from
//! their documentation and issue trackers (none of them runs here):
//! - Thanos: `match[]` on label values exists since v0.18 (thanos#3566), but the query
//!   frontend before v0.23 dropped it (thanos#4580) and stores have ignored it since
//!   (thanos#6878): the answer is every name, often with a partial-response warning.
//! - Mimir: behind `/prometheus`, needs `X-Scope-OrgID`, and recommends start/end on label
//!   endpoints (else the whole retention is read).
//! - VictoriaMetrics: cluster paths such as `/select/0/prometheus`, honours `limit`, and
//!   defaults to the last day without start/end.
//! - An engine that refuses the selector (400 bad_data): discovery lists all names instead.

use std::time::Duration;
use warroom::metrics::SourceError;
use warroom::metrics::discover::{DiscoverError, DiscoverOptions, discover, names_selector};
use warroom::metrics::presets::Presets;
use warroom::metrics::prometheus::{ClientOptions, PrometheusClient};
use wiremock::matchers::{
    header, method, path, query_param, query_param_contains, query_param_is_missing,
};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const NOW: f64 = 1_700_000_000.0;

fn list(values: &[&str], warnings: &[&str]) -> serde_json::Value {
    serde_json::json!({"status": "success", "data": values, "warnings": warnings})
}

fn pg_and_haproxy() -> Vec<&'static str> {
    vec![
        "pg_up",
        "pg_stat_activity_count",
        "pg_settings_max_connections",
        "pg_settings_superuser_reserved_connections",
        "haproxy_backend_current_sessions",
        "haproxy_backend_limit_sessions",
        "haproxy_backend_http_responses_total",
    ]
}

fn client(url: String, headers: Vec<(String, String)>) -> PrometheusClient {
    PrometheusClient::new(ClientOptions {
        headers,
        ..ClientOptions::new(url)
    })
    .expect("client")
}

/// Every request the server received, as (path, decoded query pairs).
async fn requests(server: &MockServer) -> Vec<(String, Vec<(String, String)>)> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r: &Request| {
            (
                r.url.path().to_string(),
                r.url
                    .query_pairs()
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect(),
            )
        })
        .collect()
}

#[tokio::test]
async fn prometheus_one_names_request_and_one_probe_per_stack() {
    let server = MockServer::start().await;
    let selector = names_selector(Presets::builtin());
    Mock::given(method("GET"))
        .and(path("/api/v1/label/__name__/values"))
        .and(query_param("match[]", selector.as_str()))
        .and(query_param("start", "1699996400.000"))
        .and(query_param("end", "1700000000.000"))
        .respond_with(ResponseTemplate::new(200).set_body_json(list(&pg_and_haproxy(), &[])))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(path("/api/v1/labels"))
        .and(query_param(
            "match[]",
            "{__name__=\"haproxy_backend_current_sessions\"}",
        ))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(list(&["__name__", "instance", "job", "proxy"], &[])),
        )
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(path("/api/v1/labels"))
        .and(query_param(
            "match[]",
            "{__name__=\"pg_stat_activity_count\"}",
        ))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(list(&["__name__", "datname", "instance", "state"], &[])),
        )
        .expect(1)
        .mount(&server)
        .await;
    let c = client(server.uri(), vec![]);
    let d = discover(&c, Presets::builtin(), &DiscoverOptions::default(), NOW)
        .await
        .expect("discovery");
    assert_eq!(d.dashboard.summary(), "postgres_exporter, HAProxy");
    assert_eq!(d.status_line(), "found postgres_exporter, HAProxy");
    assert_eq!(d.requests, 3, "1 for names + 1 per stack with a choice");
    assert_eq!(requests(&server).await.len(), 3);
    assert!(!d.without_match);
    // The old exporter's labels: no lock-waits panel.
    let pg = d.found.iter().find(|f| f.stack == "postgres").unwrap();
    assert!(!pg.signals.iter().any(|s| s.signal == "lock-waits"));
    assert!(d.bytes > 0);
}

#[tokio::test]
async fn thanos_ignoring_match_with_a_partial_answer() {
    let server = MockServer::start().await;
    let mut all: Vec<String> = (0..3000)
        .map(|i| format!("unrelated_metric_{i}_total"))
        .collect();
    all.extend(
        pg_and_haproxy()
            .iter()
            .map(std::string::ToString::to_string),
    );
    all.sort();
    let all_ref: Vec<&str> = all.iter().map(String::as_str).collect();
    Mock::given(path("/api/v1/label/__name__/values"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(list(&all_ref, &["No StoreAPIs matched for this query"])),
        )
        .mount(&server)
        .await;
    Mock::given(path("/api/v1/labels"))
        .respond_with(ResponseTemplate::new(200).set_body_json(list(&["proxy", "datname"], &[])))
        .mount(&server)
        .await;
    let d = discover(
        &client(server.uri(), vec![]),
        Presets::builtin(),
        &DiscoverOptions::default(),
        NOW,
    )
    .await
    .expect("discovery");
    assert_eq!(d.names_listed, 3007);
    assert_eq!(d.dashboard.summary(), "postgres_exporter, HAProxy");
    assert!(
        d.warnings
            .iter()
            .any(|w| w.contains("No StoreAPIs matched")),
        "{:?}",
        d.warnings
    );
}

#[tokio::test]
async fn mimir_with_its_prefix_and_tenant_header() {
    let server = MockServer::start().await;
    Mock::given(path("/prometheus/api/v1/label/__name__/values"))
        .and(header("X-Scope-OrgID", "team-a"))
        .and(query_param_contains("match[]", "hikaricp_"))
        .respond_with(ResponseTemplate::new(200).set_body_json(list(
            &[
                "hikaricp_connections_active",
                "hikaricp_connections_max",
                "hikaricp_connections_pending",
            ],
            &[],
        )))
        .mount(&server)
        .await;
    // Without the tenant, Mimir says so in plain text.
    Mock::given(path("/prometheus/api/v1/label/__name__/values"))
        .respond_with(ResponseTemplate::new(401).set_body_raw("no org id\n", "text/plain"))
        .mount(&server)
        .await;
    let url = format!("{}/prometheus", server.uri());
    let tenant = vec![("X-Scope-OrgID".to_string(), "team-a".to_string())];
    let d = discover(
        &client(url.clone(), tenant),
        Presets::builtin(),
        &DiscoverOptions::default(),
        NOW,
    )
    .await
    .expect("discovery");
    assert_eq!(d.dashboard.summary(), "HikariCP");
    assert_eq!(d.requests, 1, "HikariCP has nothing to choose by labels");
    let e = discover(
        &client(url, vec![]),
        Presets::builtin(),
        &DiscoverOptions::default(),
        NOW,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            &e,
            DiscoverError::Names {
                error: SourceError::Http { status: 401, .. },
                ..
            }
        ),
        "{e:?}"
    );
    assert!(!e.is_transient());
    assert!(e.to_string().contains("check the credentials"), "{e}");
}

#[tokio::test]
async fn victoriametrics_cluster_path_with_dotted_otel_names() {
    let server = MockServer::start().await;
    Mock::given(path("/select/0/prometheus/api/v1/label/__name__/values"))
        .and(query_param_contains("match[]", "db\\\\.client\\\\."))
        .respond_with(ResponseTemplate::new(200).set_body_json(list(
            &[
                "db.client.connection.count",
                "db.client.connection.max",
                "db.client.connection.pending_requests",
            ],
            &[],
        )))
        .mount(&server)
        .await;
    Mock::given(path("/select/0/prometheus/api/v1/labels"))
        .and(query_param("limit", "1000"))
        .respond_with(ResponseTemplate::new(200).set_body_json(list(&["job"], &[])))
        .mount(&server)
        .await;
    let d = discover(
        &client(format!("{}/select/0/prometheus", server.uri()), vec![]),
        Presets::builtin(),
        &DiscoverOptions::default(),
        NOW,
    )
    .await
    .expect("discovery");
    assert_eq!(d.dashboard.summary(), "OpenTelemetry");
    let sat = &d.dashboard.panels[0];
    assert_eq!(sat.signal, "saturation");
    assert!(
        sat.panel
            .query
            .contains(r#"{"db.client.connection.count", "db.client.connection.state"="used"}"#),
        "{}",
        sat.panel.query
    );
    assert_eq!(
        sat.empty_hint(),
        "no series for db.client.connection.count · warroom discover"
    );
}

#[tokio::test]
async fn an_engine_refusing_the_selector_gets_the_plain_list() {
    let server = MockServer::start().await;
    Mock::given(path("/api/v1/label/__name__/values"))
        .and(query_param_is_missing("match[]"))
        .respond_with(ResponseTemplate::new(200).set_body_json(list(
            &[
                "go_sql_in_use_connections",
                "go_sql_max_open_connections",
                "up",
            ],
            &[],
        )))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(path("/api/v1/label/__name__/values"))
        .respond_with(ResponseTemplate::new(400).set_body_json(serde_json::json!({
            "status": "error", "errorType": "bad_data", "error": "match[] is not supported"
        })))
        .expect(1)
        .mount(&server)
        .await;
    let d = discover(
        &client(server.uri(), vec![]),
        Presets::builtin(),
        &DiscoverOptions::default(),
        NOW,
    )
    .await
    .expect("discovery");
    assert!(d.without_match);
    assert_eq!(d.requests, 2);
    assert_eq!(d.dashboard.summary(), "Go database/sql");
}

#[tokio::test]
async fn bounded_in_bytes_and_time_and_honest_when_down() {
    let server = MockServer::start().await;
    let many: Vec<String> = (0..50_000)
        .map(|i| format!("some_rather_long_metric_name_{i}"))
        .collect();
    let many_ref: Vec<&str> = many.iter().map(String::as_str).collect();
    Mock::given(path("/api/v1/label/__name__/values"))
        .respond_with(ResponseTemplate::new(200).set_body_json(list(&many_ref, &[])))
        .mount(&server)
        .await;
    let opts = DiscoverOptions {
        max_names_bytes: 64 * 1024,
        ..DiscoverOptions::default()
    };
    let e = discover(
        &client(server.uri(), vec![]),
        Presets::builtin(),
        &opts,
        NOW,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(e, DiscoverError::TooManyNames { limit: 65536, .. }),
        "{e:?}"
    );

    let slow = MockServer::start().await;
    Mock::given(path("/api/v1/label/__name__/values"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_delay(Duration::from_secs(5))
                .set_body_json(list(&[], &[])),
        )
        .mount(&slow)
        .await;
    let opts = DiscoverOptions {
        deadline: Duration::from_millis(300),
        ..DiscoverOptions::default()
    };
    let e = discover(&client(slow.uri(), vec![]), Presets::builtin(), &opts, NOW)
        .await
        .unwrap_err();
    assert!(matches!(e, DiscoverError::TimedOut { .. }), "{e:?}");
    assert!(e.is_transient());

    // Nothing listens: unreachable, transient, said with the URL.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("port");
    let e = discover(
        &client(format!("http://127.0.0.1:{port}"), vec![]),
        Presets::builtin(),
        &DiscoverOptions::default(),
        NOW,
    )
    .await
    .unwrap_err();
    assert!(e.is_transient(), "{e:?}");
    assert!(e.to_string().contains(&format!("127.0.0.1:{port}")), "{e}");

    // An empty server: no stack, an honest line, not an error.
    let empty = MockServer::start().await;
    Mock::given(path("/api/v1/label/__name__/values"))
        .respond_with(ResponseTemplate::new(200).set_body_json(list(&["up", "node_load1"], &[])))
        .mount(&empty)
        .await;
    let d = discover(
        &client(empty.uri(), vec![]),
        Presets::builtin(),
        &DiscoverOptions::default(),
        NOW,
    )
    .await
    .expect("discovery");
    assert!(d.dashboard.is_empty());
    assert_eq!(
        d.status_line(),
        "no known exporter among 2 metric names · warroom discover"
    );
}

#[tokio::test]
async fn a_failed_probe_keeps_the_stack_with_its_first_group() {
    let server = MockServer::start().await;
    Mock::given(path("/api/v1/label/__name__/values"))
        .respond_with(ResponseTemplate::new(200).set_body_json(list(&pg_and_haproxy(), &[])))
        .mount(&server)
        .await;
    Mock::given(path("/api/v1/labels"))
        .respond_with(ResponseTemplate::new(503).set_body_raw("overloaded", "text/plain"))
        .mount(&server)
        .await;
    let d = discover(
        &client(server.uri(), vec![]),
        Presets::builtin(),
        &DiscoverOptions::default(),
        NOW,
    )
    .await
    .expect("discovery");
    assert_eq!(d.dashboard.summary(), "postgres_exporter, HAProxy");
    assert!(
        d.warnings
            .iter()
            .any(|w| w.contains("label names for HAProxy failed")),
        "{:?}",
        d.warnings
    );
    let h = d.found.iter().find(|f| f.stack == "haproxy").unwrap();
    assert!(h.signals[0].panel.query.contains("by (proxy)"));
}
