//! The embedded engine against a real Prometheus (2.42 here) on a broad corpus of queries.
//!
//! One hour of synthetic series (counters with resets, gauges with NaN and ±Inf, classic
//! histograms, a series with a gap longer than the lookback, series that start and end inside
//! the hour, irregular sample times) is written as OpenMetrics, turned into TSDB blocks by
//! `promtool tsdb create-blocks-from openmetrics` and served by Prometheus; the same samples are
//! appended one by one to the embedded store (no scrape: a gap stays a gap, as in the blocks).
//! Then hand-written queries and queries generated from a small grammar (functions,
//! aggregations, operators, vector matching, offsets, `@`, subqueries; seed `promql_corpus::SEED`, so a
//! failure reproduces) run on both as range queries on two grids and as instant queries at
//! several moments. Any difference beyond 1e-6 relative (NaN equals NaN, labels exact, order
//! compared only where the query sorts) fails the test, naming the query, the time and both
//! answers. A query both refuse (e.g. many-to-many matching) counts as the same answer.
//!
//! Where Prometheus 2.42 and 2.55 (whose semantics the engine follows) differ: the engine is
//! told to extrapolate `rate` as Prometheus did before 2.51 (`with_legacy_extrapolation`; 2.51
//! moved the limit toward a counter's zero point, and new series whose first value is about one
//! interval's increase are common), and no sum cancels 1e100 against -1e100 (2.55 sums with
//! compensation, 2.42 does not). Functions 2.42 lacks (`sort_by_label`, `limitk`,
//! `limit_ratio`, `mad_over_time`) are unit-tested instead.

use crate::support::prometheus;
use crate::support::promql_corpus;

use prometheus::{free_port, http_get, require_binary, wait_ready};
use promql_corpus::{HAND, corpus, dataset, openmetrics, seed};
use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Duration;
use warroom::metrics::embedded::EmbeddedSource;
use warroom::metrics::{InstantQuery, Labels, QueryAnswer, RangeQuery};

type Answer = BTreeMap<Labels, Vec<(i64, f64)>>;

fn num(v: &serde_json::Value) -> f64 {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .expect("a sample value")
}

fn ms(t: f64) -> i64 {
    (t * 1000.0).round() as i64
}

/// Prometheus's answer as series keyed by labels, and the order of an instant vector.
fn prom_answer(data: &serde_json::Value) -> (Answer, Vec<(Labels, f64)>) {
    let mut out = Answer::new();
    let mut order = Vec::new();
    let result = &data["result"];
    if data["resultType"].as_str() == Some("scalar") {
        out.insert(
            Labels::new(),
            vec![(ms(result[0].as_f64().unwrap_or(0.0)), num(&result[1]))],
        );
        return (out, order);
    }
    for s in result.as_array().into_iter().flatten() {
        let l: Labels = s["metric"]
            .as_object()
            .map(|o| {
                o.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let pts: Vec<(i64, f64)> = if let Some(vals) = s["values"].as_array() {
            vals.iter()
                .map(|p| (ms(p[0].as_f64().unwrap_or(0.0)), num(&p[1])))
                .collect()
        } else {
            vec![(
                ms(s["value"][0].as_f64().unwrap_or(0.0)),
                num(&s["value"][1]),
            )]
        };
        order.push((l.clone(), pts[0].1));
        out.insert(l, pts);
    }
    (out, order)
}

fn embedded_answer(a: &QueryAnswer) -> (Answer, Vec<(Labels, f64)>) {
    let order = a
        .series
        .iter()
        .map(|s| (s.labels.clone(), s.points.first().map_or(f64::NAN, |p| p.v)))
        .collect();
    let map = a
        .series
        .iter()
        .map(|s| {
            (
                s.labels.clone(),
                s.points.iter().map(|p| (ms(p.t), p.v)).collect(),
            )
        })
        .collect();
    (map, order)
}

fn close(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan())
        || a == b
        || (a - b).abs() <= 1e-6 * a.abs().max(b.abs())
        // Values that cancel to about zero leave float noise whose size depends on the order
        // of summation.
        || (a - b).abs() < 1e-9
}

fn diff(prom: &Answer, emb: &Answer) -> Vec<String> {
    let mut out = Vec::new();
    for (l, p) in prom {
        let Some(e) = emb.get(l) else {
            out.push(format!("series {l:?} only in Prometheus: {p:?}"));
            continue;
        };
        let em: BTreeMap<i64, f64> = e.iter().copied().collect();
        let pm: BTreeMap<i64, f64> = p.iter().copied().collect();
        for (t, pv) in &pm {
            match em.get(t) {
                None => out.push(format!("{l:?} at {t}: Prometheus {pv}, embedded none")),
                Some(ev) if !close(*pv, *ev) => {
                    out.push(format!("{l:?} at {t}: Prometheus {pv}, embedded {ev}"));
                }
                _ => {}
            }
        }
        for (t, ev) in &em {
            if !pm.contains_key(t) {
                out.push(format!("{l:?} at {t}: Prometheus none, embedded {ev}"));
            }
        }
    }
    for (l, e) in emb {
        if !prom.contains_key(l) {
            out.push(format!("series {l:?} only in embedded: {e:?}"));
        }
    }
    out
}

/// Whether the query's result order is defined (its outermost call sorts).
fn sorts(q: &str) -> bool {
    let q = q.trim();
    (q.starts_with("sort(") || q.starts_with("sort_desc(")) && q.ends_with(')')
}

fn enc(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

fn get(port: u16, path: &str) -> serde_json::Value {
    let (_, body) = http_get(port, path, Duration::from_secs(20))
        .unwrap_or_else(|| panic!("no answer from Prometheus for {path}"));
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"))
}

#[test]
fn a_broad_corpus_answers_as_prometheus_does() {
    let Some(bin) = require_binary("prometheus") else {
        return;
    };
    let Some(promtool) = require_binary("promtool") else {
        return;
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    // An hour that ended at least an hour ago, on the hour (so subquery steps and date
    // functions meet round times too).
    let t0 = now - now % 3600 - 2 * 3600;
    let data = dataset(t0);

    let dir = tempfile::tempdir().expect("temp dir");
    let om = dir.path().join("hour.om");
    std::fs::write(&om, openmetrics(&data)).expect("write OpenMetrics");
    let blocks = dir.path().join("data");
    let out = Command::new(promtool)
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(&om)
        .arg(&blocks)
        .stdout(Stdio::null())
        .output()
        .expect("run promtool");
    assert!(
        out.status.success(),
        "promtool could not create blocks: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let port = free_port();
    let cfg = dir.path().join("prometheus.yml");
    // evaluation_interval is the step of subqueries written without one, as in the engine.
    std::fs::write(
        &cfg,
        "global:\n  scrape_interval: 15s\n  evaluation_interval: 1m\n",
    )
    .expect("write config");
    let log = std::fs::File::create(dir.path().join("prometheus.log")).expect("log");
    let mut child = Command::new(bin)
        .arg(format!("--config.file={}", cfg.display()))
        .arg(format!("--storage.tsdb.path={}", blocks.display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start prometheus");
    struct Kill<'a>(&'a mut std::process::Child);
    impl Drop for Kill<'_> {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _kill = Kill(&mut child);
    assert!(
        wait_ready(port, "/-/ready", Duration::from_secs(60)),
        "prometheus did not become ready: {}",
        std::fs::read_to_string(dir.path().join("prometheus.log")).unwrap_or_default()
    );

    let store = EmbeddedSource::new(Duration::from_secs(100 * 3600)).with_legacy_extrapolation();
    let mut appended = 0;
    for (l, pts) in &data {
        appended += store.append(pts.iter().map(|(t, v)| (l.clone(), *t as f64 / 1000.0, *v)));
    }
    let written: usize = data.iter().map(|s| s.1.len()).sum();
    assert_eq!(appended, written, "the store took every sample");
    // Prometheus holds what it was given.
    let count = get(
        port,
        &format!(
            "/api/v1/query?query={}&time={}",
            enc("count({__name__=~\".+\"})"),
            t0 + 1800
        ),
    );
    assert_eq!(count["status"], "success", "{count}");

    let t0 = t0 as f64;
    // Whole minutes across the hour and past its end, an odd start and step, and the
    // samples' own step around the gap of `sparse`.
    let grids = [
        (t0 - 120.0, t0 + 3660.0, 60.0),
        (t0 + 601.3, t0 + 2400.0, 37.0),
        (t0 + 1140.0, t0 + 1980.0, 15.0),
    ];
    // Before the first sample, inside the hour, in the gap, and after the last sample.
    let instants = [
        t0 - 30.0,
        t0 + 1023.0,
        t0 + 1500.0,
        t0 + 1700.0,
        t0 + 2107.5,
        t0 + 3600.0,
        t0 + 3720.0,
    ];
    let queries = corpus();
    let mut failures = Vec::new();
    let (mut compared, mut answered) = (0usize, 0usize);
    let started = std::time::Instant::now();
    for q in &queries {
        let mut problems = Vec::new();
        let mut ok = false;
        for (start, end, step) in grids {
            let p = get(
                port,
                &format!(
                    "/api/v1/query_range?query={}&start={start:.3}&end={end:.3}&step={step}",
                    enc(q)
                ),
            );
            let e = store.range_now(&RangeQuery {
                query: q.clone(),
                start,
                end,
                step,
            });
            match (p["status"].as_str(), e) {
                (Some("success"), Ok(e)) => {
                    let (pa, _) = prom_answer(&p["data"]);
                    compared += pa.values().map(Vec::len).sum::<usize>();
                    ok |= !pa.is_empty();
                    for d in diff(&pa, &embedded_answer(&e).0) {
                        problems.push(format!("range {start}..{end} step {step}: {d}"));
                    }
                }
                (Some("error"), Err(_)) => {}
                (_, e) => problems.push(format!(
                    "range {start}..{end} step {step}: Prometheus {} {}, embedded {:?}",
                    p["status"], p["error"], e
                )),
            }
        }
        for t in instants {
            let p = get(port, &format!("/api/v1/query?query={}&time={t:.3}", enc(q)));
            let e = store.instant_now(&InstantQuery {
                query: q.clone(),
                time: Some(t),
            });
            match (p["status"].as_str(), e) {
                (Some("success"), Ok(e)) => {
                    let (pa, po) = prom_answer(&p["data"]);
                    let (ea, eo) = embedded_answer(&e);
                    compared += pa.len();
                    for d in diff(&pa, &ea) {
                        problems.push(format!("instant at {t}: {d}"));
                    }
                    // Sorted results: the same values in the same order (ties may swap
                    // labels, so only the values' order is compared; the labels above).
                    if sorts(q) {
                        let pv: Vec<f64> = po.iter().map(|x| x.1).collect();
                        let ev: Vec<f64> = eo.iter().map(|x| x.1).collect();
                        if pv.len() != ev.len() || pv.iter().zip(&ev).any(|(a, b)| !close(*a, *b)) {
                            problems.push(format!(
                                "instant at {t}: order differs: Prometheus {pv:?}, embedded {ev:?}"
                            ));
                        }
                    }
                }
                (Some("error"), Err(_)) => {}
                (_, e) => problems.push(format!(
                    "instant at {t}: Prometheus {} {}, embedded {:?}",
                    p["status"], p["error"], e
                )),
            }
        }
        answered += usize::from(ok);
        if !problems.is_empty() {
            let n = problems.len();
            problems.truncate(4);
            failures.push(format!("{q}\n    {n} differences, first: {problems:#?}"));
        }
    }
    eprintln!(
        "{} queries ({} hand-written, seed {:#x}), {answered} with data, {compared} Prometheus points compared in {:.1?}",
        queries.len(),
        HAND.len(),
        seed(),
        started.elapsed()
    );
    assert!(
        answered * 10 >= queries.len() * 7,
        "too few queries returned data ({answered} of {}): the corpus proves little",
        queries.len()
    );
    assert!(compared > 100_000, "too few points compared: {compared}");
    assert!(
        failures.is_empty(),
        "{} of {} queries differ from Prometheus:\n{}",
        failures.len(),
        queries.len(),
        failures.join("\n")
    );
}
