//! The client against local mock servers, for what a real Prometheus will not produce: proxy
//! HTML, text/plain errors, rate limits, odd error types, truncated and oversized bodies, a
//! server that never answers, and the requests themselves (auth, headers, path prefix, slots).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use warroom::metrics::prometheus::{Auth, ClientOptions, MAX_BODY, PrometheusClient};
use warroom::metrics::{InstantQuery, QueryAnswer, RangeQuery, Source, SourceError};
use warroom::secret::Secret;
use wiremock::matchers::{basic_auth, bearer_token, body_string_contains, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const OK_VECTOR: &str = r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"b"},"value":[1,"2"]}]}}"#;
const OK_MATRIX: &str = r#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"b"},"values":[[1,"2"]]}]}}"#;

fn client(url: &str) -> PrometheusClient {
    PrometheusClient::new(ClientOptions::new(url)).expect("client")
}

fn instant(
    c: &PrometheusClient,
) -> futures::future::BoxFuture<'static, Result<QueryAnswer, SourceError>> {
    c.query(InstantQuery {
        query: "up".into(),
        time: Some(1000.0),
    })
}

/// Answer every query on `server` with `resp`.
async fn answer(server: &MockServer, resp: ResponseTemplate) {
    Mock::given(path("/api/v1/query"))
        .respond_with(resp)
        .mount(server)
        .await;
}

async fn outcome(resp: ResponseTemplate) -> Result<QueryAnswer, SourceError> {
    let server = MockServer::start().await;
    answer(&server, resp).await;
    instant(&client(&server.uri())).await
}

#[tokio::test]
async fn html_text_and_odd_error_types() {
    let html =
        "<html><head><title>502 Bad Gateway</title></head><body><h1>nginx</h1></body></html>";
    let e = outcome(ResponseTemplate::new(502).set_body_raw(html, "text/html")).await;
    assert_eq!(
        e,
        Err(SourceError::Http {
            status: 502,
            summary: "HTML page \"502 Bad Gateway\"".into()
        })
    );
    let e = outcome(ResponseTemplate::new(401).set_body_raw("Unauthorized\n", "text/plain")).await;
    match e {
        Err(SourceError::Http {
            status: 401,
            summary,
        }) => {
            assert!(summary.starts_with("Unauthorized"), "{summary}");
        }
        other => panic!("{other:?}"),
    }
    let e = outcome(ResponseTemplate::new(503).set_body_raw("", "text/plain")).await;
    assert!(
        matches!(e, Err(SourceError::Http { status: 503, .. })),
        "{e:?}"
    );
    let vm = r#"{"status":"error","errorType":"422","error":"error when executing query=\"up\": cannot find tag filter"}"#;
    let e = outcome(ResponseTemplate::new(422).set_body_raw(vm, "application/json")).await;
    match e {
        Err(SourceError::Api {
            error_type,
            message,
        }) => {
            assert_eq!(error_type, "422");
            assert!(message.contains("cannot find tag filter"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn rate_limits_and_warnings() {
    let e = outcome(ResponseTemplate::new(429).insert_header("Retry-After", "7")).await;
    assert_eq!(
        e,
        Err(SourceError::RateLimited {
            retry_after: Some(Duration::from_secs(7))
        })
    );
    let date = (chrono::Utc::now() + chrono::Duration::seconds(90)).to_rfc2822();
    let date = date.replace("+0000", "GMT");
    let e = outcome(ResponseTemplate::new(503).insert_header("Retry-After", date.as_str())).await;
    let wait = e.expect_err("rate limited").retry_after().expect("a wait");
    assert!((85..=90).contains(&wait.as_secs()), "{wait:?} from {date}");
    let partial = r#"{"status":"success","warnings":["store-2 unreachable"],"data":{"resultType":"vector","result":[]}}"#;
    let a = outcome(ResponseTemplate::new(200).set_body_raw(partial, "application/json"))
        .await
        .expect("partial answer");
    assert_eq!(a.warnings, vec!["store-2 unreachable".to_string()]);
}

#[tokio::test]
async fn redirects_are_reported_not_followed() {
    let e =
        outcome(ResponseTemplate::new(302).insert_header("Location", "https://sso.example/login"))
            .await;
    match e {
        Err(SourceError::Http {
            status: 302,
            summary,
        }) => {
            assert!(summary.contains("sso.example/login"), "{summary}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn auth_extra_headers_path_prefix_and_form_parameters_are_sent() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/prom/api/v1/query_range"))
        .and(basic_auth("ops", "pw-1"))
        .and(header("X-Scope-OrgID", "tenant-1"))
        .and(body_string_contains("query=rate%28x%5B5m%5D%29"))
        .and(body_string_contains("step=15.000"))
        .and(body_string_contains("timeout=9000ms"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(OK_MATRIX, "application/json"))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/prom/api/v1/query"))
        .and(bearer_token("tok-2"))
        .and(wiremock::matchers::query_param("query", "up"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(OK_VECTOR, "application/json"))
        .expect(1)
        .mount(&server)
        .await;
    let basic = PrometheusClient::new(ClientOptions {
        auth: Auth::Basic {
            user: "ops".into(),
            password: Secret::new("pw-1"),
        },
        headers: vec![("X-Scope-OrgID".into(), "tenant-1".into())],
        ..ClientOptions::new(format!("{}/prom", server.uri()))
    })
    .expect("client");
    let a = basic
        .query_range(RangeQuery {
            query: "rate(x[5m])".into(),
            start: 0.0,
            end: 60.0,
            step: 15.0,
        })
        .await
        .expect("range answer");
    assert_eq!(a.series.len(), 1);
    let bearer = PrometheusClient::new(ClientOptions {
        auth: Auth::Bearer(Secret::new("tok-2")),
        post: false,
        ..ClientOptions::new(format!("{}/prom/", server.uri()))
    })
    .expect("client");
    instant(&bearer).await.expect("instant answer");
    server.verify().await;
}

/// A raw loopback server: each connection is handed to `serve` on its own thread.
fn raw_server(serve: impl Fn(TcpStream) + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let serve = Arc::new(serve);
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            let serve = serve.clone();
            std::thread::spawn(move || serve(s));
        }
    });
    url
}

/// Read a request head and its body (by Content-Length), bounded.
fn read_request(s: &mut TcpStream) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Some(head_end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..head_end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if got.len() >= head_end + 4 + len {
                return;
            }
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
        if got.len() > 1 << 20 {
            return;
        }
    }
}

#[tokio::test]
async fn truncated_bodies() {
    // Fewer bytes than Content-Length promised, then the connection closes.
    let url = raw_server(|mut s| {
        read_request(&mut s);
        let _ = s.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"status\":\"success\",\"data\":{\"resultT",
        );
    });
    match instant(&client(&url)).await {
        Err(SourceError::Unreachable(m)) => assert!(m.contains("reading the answer"), "{m}"),
        other => panic!("{other:?}"),
    }
    // No length, cut JSON, closed: the body is complete as HTTP goes, but not as JSON.
    let url = raw_server(|mut s| {
        read_request(&mut s);
        let _ = s.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"status\":\"success\",\"data\":{\"resultT",
        );
    });
    match instant(&client(&url)).await {
        Err(SourceError::Malformed(m)) => assert!(m.contains("truncated"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn oversized_bodies_are_cut_off() {
    // Announced by Content-Length: refused before reading.
    let big = vec![b'x'; MAX_BODY + 1];
    let e = outcome(ResponseTemplate::new(200).set_body_raw(big, "application/json")).await;
    assert_eq!(e, Err(SourceError::TooLarge(MAX_BODY)));
    // Streamed without a length: refused as soon as the cap is passed, before the end.
    let sent = Arc::new(AtomicUsize::new(0));
    let counter = sent.clone();
    let url = raw_server(move |mut s| {
        read_request(&mut s);
        let _ = s.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n",
        );
        let chunk = vec![b' '; 1 << 20];
        for _ in 0..128 {
            if s.write_all(&chunk).is_err() {
                return;
            }
            counter.fetch_add(chunk.len(), Ordering::SeqCst);
        }
    });
    let e = instant(&client(&url)).await;
    assert_eq!(e, Err(SourceError::TooLarge(MAX_BODY)));
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        sent.load(Ordering::SeqCst) < 128 << 20,
        "the whole body was read"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let url = raw_server(|mut s| {
        read_request(&mut s);
        std::thread::sleep(Duration::from_secs(5));
    });
    let c = PrometheusClient::new(ClientOptions {
        timeout: Duration::from_millis(300),
        ..ClientOptions::new(url)
    })
    .expect("client");
    let started = Instant::now();
    let e = instant(&c).await;
    assert_eq!(e, Err(SourceError::Timeout(Duration::from_millis(300))));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn connection_refused_is_unreachable() {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let c = client(&format!("http://127.0.0.1:{port}"));
    match instant(&c).await {
        Err(e @ SourceError::Unreachable(_)) => {
            assert!(e.to_string().to_lowercase().contains("refused"), "{e}");
            assert!(e.is_transient());
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(c.ready().await, Err(SourceError::Unreachable(_))));
}

#[tokio::test]
async fn at_most_four_requests_are_in_flight() {
    let active = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let served = Arc::new(AtomicUsize::new(0));
    let (a, m, n) = (active.clone(), most.clone(), served.clone());
    let url = raw_server(move |mut s| {
        read_request(&mut s);
        let now = a.fetch_add(1, Ordering::SeqCst) + 1;
        m.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(150));
        a.fetch_sub(1, Ordering::SeqCst);
        n.fetch_add(1, Ordering::SeqCst);
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{OK_VECTOR}",
            OK_VECTOR.len()
        );
    });
    let c = client(&url);
    let all = futures::future::join_all((0..10).map(|_| instant(&c))).await;
    assert!(all.iter().all(Result::is_ok), "{all:?}");
    assert_eq!(served.load(Ordering::SeqCst), 10);
    let most = most.load(Ordering::SeqCst);
    assert!(
        (2..=4).contains(&most),
        "{most} requests were in flight at once"
    );
}

/// With the server down, 8 panels refreshing every second for a simulated minute send their
/// requests through `Health`: after the first wave only one probe at a time goes, never before
/// the backoff allows it.
#[tokio::test]
async fn a_down_server_is_asked_only_on_the_backoff_schedule() {
    use chrono::TimeZone;
    use rand::SeedableRng;
    use warroom::metrics::health::{Health, HealthState};

    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let c = client(&format!("http://127.0.0.1:{port}"));
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let mut health = Health::default();
    let t0 = chrono::Utc
        .with_ymd_and_hms(2026, 11, 29, 12, 0, 0)
        .unwrap();
    let (panels, ticks) = (8u32, 60i64);
    let mut sent_at = Vec::new();
    for tick in 0..ticks {
        let now = t0 + chrono::Duration::seconds(tick);
        let allowed_from = health.retry_at();
        // Every panel asks; those admitted send together, as the runtime would.
        let passes: Vec<_> = (0..panels).filter_map(|_| health.admit(now)).collect();
        if let Some(at) = allowed_from {
            assert!(passes.is_empty() || now >= at, "sent at {now} before {at}");
        }
        if tick > 0 {
            assert!(
                passes.len() <= 1,
                "{} requests at tick {tick}",
                passes.len()
            );
        }
        let answers = futures::future::join_all(passes.iter().map(|_| instant(&c))).await;
        for (pass, a) in passes.into_iter().zip(answers) {
            let e = a.expect_err("the server is down");
            health.report(pass, Err(&e), now, &mut rng);
            sent_at.push(tick);
        }
    }
    let HealthState::Down { failures, .. } = health.state().clone() else {
        panic!("{:?}", health.state())
    };
    let unguarded = u64::from(panels) * ticks as u64;
    let sent = sent_at.len() as u64;
    eprintln!("{sent} requests in a simulated minute (unguarded: {unguarded}) at {sent_at:?}");
    assert_eq!(failures as u64, sent - u64::from(panels) + 1);
    assert!(sent * 20 <= unguarded, "{sent} requests");
    // The backoff grows: the second half of the minute has fewer probes than the first.
    let late = sent_at.iter().filter(|&&t| t >= 30).count();
    assert!(late * 2 < sent_at.len(), "{sent_at:?}");
}

/// A range query answered with a vector (a proxy, or an engine that ignored the range) is an
/// error the panel shows as failing, never data drawn as live; an instant query's vector is
/// its answer.
#[tokio::test]
async fn a_range_query_answered_with_a_vector_is_an_error() {
    let server = MockServer::start().await;
    Mock::given(path("/api/v1/query_range"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(OK_VECTOR, "application/json"))
        .mount(&server)
        .await;
    answer(
        &server,
        ResponseTemplate::new(200).set_body_raw(OK_VECTOR, "application/json"),
    )
    .await;
    let c = client(&server.uri());
    let e = c
        .query_range(RangeQuery {
            query: "up".into(),
            start: 0.0,
            end: 60.0,
            step: 15.0,
        })
        .await;
    match e {
        Err(SourceError::Malformed(m)) => assert!(m.contains("vector, not a matrix"), "{m}"),
        other => panic!("{other:?}"),
    }
    let ok = instant(&c).await.expect("an instant vector is an answer");
    assert_eq!(ok.series.len(), 1);
    assert_eq!(ok.result_type, Some(warroom::metrics::ResultType::Vector));
}
