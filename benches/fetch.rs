//! Bytes fetched per refresh over a 1 h range, fetching only the tail vs refetching the whole
//! range, and the time to parse a large matrix.
//!
//! The byte counts come from a local server answering range queries with realistic series
//! (10 series a panel, Prometheus's label and value formatting) for any start, end and step:
//! a real Prometheus started for a benchmark has no hour of history to serve.
//!
//! `cargo bench --bench fetch`

#[path = "support/figure.rs"]
mod figure;

use criterion::{Criterion, criterion_group};
use std::hint::black_box;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;
use warroom::metrics::fetch::{self, Held, Window};
use warroom::metrics::prometheus::{ClientOptions, PrometheusClient, parse_answer};
use warroom::metrics::{RangeQuery, Series, Source};

const SERIES_PER_PANEL: usize = 10;
const PANELS: usize = 8;

/// A matrix answer for `[start, end]` every `step`, shaped like Prometheus's.
fn matrix_body(start: f64, end: f64, step: f64, series: usize) -> String {
    let mut out = String::from(r#"{"status":"success","data":{"resultType":"matrix","result":["#);
    for s in 0..series {
        if s > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            r#"{{"metric":{{"__name__":"db_pool_connections_in_use","instance":"10.0.3.{s}:9187","job":"api","pod":"api-7f9c6d5b8-x2k{s:02}","service":"api"}},"values":["#
        ));
        let mut t = start;
        let mut first = true;
        while t <= end {
            if !first {
                out.push(',');
            }
            first = false;
            // Values with the digits real gauges and ratios have.
            let v = 20.0 + ((t / 60.0).sin() + s as f64).abs() * 3.3333333;
            out.push_str(&format!("[{t},\"{v}\"]"));
            t += step;
        }
        out.push_str("]}");
    }
    out.push_str("]}}");
    out
}

fn param(form: &str, name: &str) -> Option<f64> {
    form.split('&')
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
        .and_then(|v| v.parse().ok())
}

fn serve(mut s: TcpStream) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    let body = loop {
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if got.len() >= end + 4 + len {
                break String::from_utf8_lossy(&got[end + 4..end + 4 + len]).into_owned();
            }
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    };
    let (start, end, step) = match (
        param(&body, "start"),
        param(&body, "end"),
        param(&body, "step"),
    ) {
        (Some(a), Some(b), Some(c)) if c > 0.0 => (a, b, c),
        _ => return,
    };
    let answer = matrix_body(start, end, step, SERIES_PER_PANEL);
    let _ = write!(
        s,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
        answer.len()
    );
}

fn mock_prometheus() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            std::thread::spawn(move || serve(s));
        }
    });
    url
}

/// Ten simulated minutes of 8 panels refreshing every 5 s over 1 h at 120 columns: bytes with
/// tail fetching vs refetching the whole range each time.
fn bytes_per_refresh() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let c = PrometheusClient::new(ClientOptions::new(mock_prometheus())).expect("client");
    let w = Window {
        range: Duration::from_secs(3600),
        columns: 120,
        resolution: Duration::from_secs(15),
    };
    let t0 = 1_800_000_000.0;
    let refreshes = 120;
    let (mut incremental, mut full, mut tail_fetches) = (0usize, 0usize, 0usize);
    let mut held: Vec<(Option<Held>, Vec<Series>)> = vec![(None, Vec::new()); PANELS];
    for r in 0..refreshes {
        let now = t0 + f64::from(r) * 5.0;
        for (h, series) in &mut held {
            if let Some(plan) = fetch::plan("q", &w, h.as_ref(), now) {
                let a = rt
                    .block_on(c.query_range(plan.query.clone()))
                    .expect("answer");
                incremental += a.bytes;
                if plan.extent == fetch::Extent::Tail {
                    tail_fetches += 1;
                }
                *h = Some(fetch::apply(series, &plan, a.series));
            }
            let whole = fetch::plan("q", &w, None, now).expect("a full plan");
            full += rt
                .block_on(c.query_range(whole.query))
                .expect("answer")
                .bytes;
        }
    }
    let n = (refreshes as usize * PANELS) as f64;
    println!(
        "fetch bytes, 1 h range, 120 columns, 15 s resolution, {PANELS} panels x \
         {SERIES_PER_PANEL} series, refresh 5 s, {refreshes} refreshes:"
    );
    println!(
        "  incremental: {:.0} B per panel refresh ({tail_fetches} tail fetches)",
        incremental as f64 / n
    );
    println!("  whole range: {:.0} B per panel refresh", full as f64 / n);
    println!(
        "  ratio: {:.1}x fewer bytes",
        full as f64 / incremental.max(1) as f64
    );
    figure::report(
        "bytes per refresh, whole range / incremental tail",
        full as f64 / incremental.max(1) as f64,
        "x",
        figure::Target::AtLeast(20.0),
    );
}

fn parse_large_matrix(c: &mut Criterion) {
    // 100 series x 1,000 points, and a dashboard panel's 10 x 121.
    for (series, points) in [(100usize, 1000u32), (10, 121)] {
        let body = matrix_body(0.0, f64::from(points - 1) * 15.0, 15.0, series);
        let name = format!("parse {series}x{points} matrix ({} KiB)", body.len() / 1024);
        c.bench_function(&name, |b| {
            b.iter(|| {
                let a = parse_answer(
                    200,
                    Some("application/json"),
                    None,
                    black_box(body.as_bytes()),
                )
                .expect("valid");
                black_box(a.series.len())
            });
        });
    }
    let q = RangeQuery {
        query: "q".into(),
        start: 0.0,
        end: 3600.0,
        step: 30.0,
    };
    c.bench_function("plan a tail", |b| {
        let w = Window {
            range: Duration::from_secs(3600),
            columns: 120,
            resolution: Duration::from_secs(15),
        };
        let held = Held {
            start: q.start,
            end: q.end,
            step: q.step,
        };
        b.iter(|| fetch::plan("q", &w, Some(black_box(&held)), 3675.0));
    });
}

criterion_group!(benches, parse_large_matrix);

fn main() {
    bytes_per_refresh();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
