//! The client against a real Prometheus scraping a small exporter this test serves itself.

use crate::support::prometheus;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use warroom::metrics::fetch::{self, Extent, MAX_POINTS, Window};
use warroom::metrics::prometheus::{ClientOptions, PrometheusClient};
use warroom::metrics::{InstantQuery, RangeQuery, Series, Source, SourceError};

/// Serve `/metrics` on a loopback port from a thread: two gauges and a counter that grows by
/// 5 on every scrape. Returns `host:port`.
fn exporter() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind exporter");
    let addr = listener.local_addr().expect("exporter address").to_string();
    let scrapes = Arc::new(AtomicU64::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = [0u8; 4096];
            let mut got = Vec::new();
            while !got.windows(4).any(|w| w == b"\r\n\r\n") && got.len() < 64 * 1024 {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            let n = scrapes.fetch_add(1, Ordering::SeqCst);
            let body = format!(
                "# TYPE test_gauge gauge\n\
                 test_gauge{{pod=\"a\"}} 1\n\
                 test_gauge{{pod=\"b\"}} 2.5\n\
                 # TYPE test_requests_total counter\n\
                 test_requests_total{{pod=\"a\"}} {}\n",
                n * 5
            );
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    addr
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Wait (bounded) until `query` returns at least `n` series with data.
fn wait_for_data(rt: &tokio::runtime::Runtime, c: &PrometheusClient, query: &str, points: u64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        let t = now();
        let q = RangeQuery {
            query: query.into(),
            start: t - 60.0,
            end: t,
            step: 1.0,
        };
        if let Ok(a) = rt.block_on(c.query_range(q))
            && a.series.iter().any(|s| s.points.len() as u64 >= points)
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    panic!("no data for {query} within 20 s");
}

fn by_pod(series: &[Series], pod: &str) -> Series {
    series
        .iter()
        .find(|s| s.labels.get("pod").map(String::as_str) == Some(pod))
        .cloned()
        .unwrap_or_else(|| panic!("no series for pod {pod} in {series:?}"))
}

#[test]
fn answers_match_a_real_prometheus() {
    let target = exporter();
    let Some(prom) = prometheus::start(prometheus::PromOptions {
        targets: vec![target],
        ..Default::default()
    }) else {
        return;
    };
    let rt = runtime();
    let c = PrometheusClient::new(ClientOptions::new(prom.url.clone())).expect("client");
    rt.block_on(c.ready()).expect("ready");
    let info = rt.block_on(c.buildinfo()).expect("buildinfo");
    assert!(info.version.starts_with("2."), "{info:?}");

    wait_for_data(&rt, &c, "test_requests_total", 9);

    // Instant query: both gauges with their values.
    let a = rt
        .block_on(c.query(InstantQuery {
            query: "test_gauge".into(),
            time: None,
        }))
        .expect("instant query");
    assert_eq!(a.series.len(), 2, "{a:?}");
    assert_eq!(by_pod(&a.series, "b").points[0].v, 2.5);
    assert!(a.warnings.is_empty());

    // Range query: the counter grows, one point per step, on the step grid.
    let t = now().floor() - 1.0;
    let a = rt
        .block_on(c.query_range(RangeQuery {
            query: "test_requests_total".into(),
            start: t - 5.0,
            end: t,
            step: 1.0,
        }))
        .expect("range query");
    let s = by_pod(&a.series, "a");
    assert_eq!(s.points.len(), 6, "{s:?}");
    assert!(s.points.windows(2).all(|w| w[1].v >= w[0].v), "{s:?}");
    assert!(s.points.windows(2).all(|w| w[1].t - w[0].t == 1.0));
    assert!(s.points.last().unwrap().v > s.points[0].v, "{s:?}");

    // A broken query is the server's bad_data, with its message.
    match rt.block_on(c.query(InstantQuery {
        query: "sum(".into(),
        time: None,
    })) {
        Err(SourceError::Api {
            error_type,
            message,
        }) => {
            assert_eq!(error_type, "bad_data");
            assert!(message.contains("parse error"), "{message}");
        }
        other => panic!("{other:?}"),
    }

    // Over the point limit: Prometheus's own refusal maps to a clear error. (It refuses when
    // (end - start) / step exceeds 11,000, so 11,001 points still pass; ask for 12,001.)
    let t = now();
    let over = RangeQuery {
        query: "test_gauge".into(),
        start: t - 12_000.0,
        end: t,
        step: 1.0,
    };
    assert!(fetch::points_in(&over) > MAX_POINTS);
    match rt.block_on(c.query_range(over)) {
        Err(SourceError::Api {
            error_type,
            message,
        }) => {
            assert_eq!(error_type, "bad_data");
            assert!(message.contains("11,000 points"), "{message}");
        }
        other => panic!("{other:?}"),
    }

    // Plans for every range and width stay under the limit, and Prometheus accepts them.
    let mut plans = 0;
    for range_min in [5u64, 15, 60, 360, 1440] {
        for columns in [0u16, 1, 20, 80, 200, 1000, u16::MAX] {
            for res in [1u64, 15] {
                let w = Window {
                    range: Duration::from_secs(range_min * 60),
                    columns,
                    resolution: Duration::from_secs(res),
                };
                let p = fetch::plan("test_gauge", &w, None, now()).expect("a first plan");
                let points = fetch::points_in(&p.query);
                assert!(points <= MAX_POINTS, "{w:?}: {points}");
                assert!(
                    points <= 2 * u64::from(columns.max(1)) + 1,
                    "{w:?}: {points}"
                );
                assert_eq!(p.query.step % res as f64, 0.0);
                rt.block_on(c.query_range(p.query))
                    .unwrap_or_else(|e| panic!("{w:?}: {e}"));
                plans += 1;
            }
        }
    }
    assert_eq!(plans, 70);

    // Incremental fetching gives the same series as fetching the whole window again. Plans
    // run 3 s behind the wall clock so the compared points have all their samples.
    let w = Window {
        range: Duration::from_secs(20),
        columns: 10,
        resolution: Duration::from_secs(1),
    };
    let query = "test_requests_total";
    let first = fetch::plan(query, &w, None, now() - 3.0).expect("first plan");
    let mut held_series = rt
        .block_on(c.query_range(first.query.clone()))
        .expect("first fetch")
        .series;
    let mut held = fetch::apply(&mut Vec::new(), &first, held_series.clone());
    std::thread::sleep(Duration::from_secs(3));
    let at = now() - 3.0;
    let tail = fetch::plan(query, &w, Some(&held), at).expect("a tail plan");
    assert_eq!(tail.extent, Extent::Tail);
    let tail_answer = rt
        .block_on(c.query_range(tail.query.clone()))
        .expect("tail");
    held = fetch::apply(&mut held_series, &tail, tail_answer.series);
    let full = fetch::plan(query, &w, None, at).expect("full plan");
    assert_eq!(full.after, held);
    let full_answer = rt
        .block_on(c.query_range(full.query.clone()))
        .expect("full");
    assert_eq!(held_series, full_answer.series);
    assert!(tail_answer.bytes < full_answer.bytes);
}

#[test]
fn a_tiny_query_timeout_maps_to_timeout() {
    let Some(prom) = prometheus::start(prometheus::PromOptions {
        extra_args: vec!["--query.timeout=1ms".into()],
        ..Default::default()
    }) else {
        return;
    };
    let rt = runtime();
    let c = PrometheusClient::new(ClientOptions::new(prom.url.clone())).expect("client");
    // A subquery of 1,800,000 steps (time-dependent, so not evaluated once) needs far more
    // than 1 ms.
    match rt.block_on(c.query(InstantQuery {
        query: "count_over_time(vector(time())[30m:1ms])".into(),
        time: None,
    })) {
        Err(e @ SourceError::Api { .. }) => {
            let SourceError::Api { error_type, .. } = &e else {
                unreachable!()
            };
            assert_eq!(error_type, "timeout", "{e}");
            assert!(e.is_transient());
        }
        other => panic!("{other:?}"),
    }
}
