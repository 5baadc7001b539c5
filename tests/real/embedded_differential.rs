//! The embedded engine against a real Prometheus on identical samples.
//!
//! Prometheus scrapes `warroom sim serve planner-peak` (a pod restart, a scale-in and finally
//! the simulator's death along the way, so counter resets and staleness markers occur). Then
//! every raw sample Prometheus stored is read back (`metric[10m]`) and replayed into the
//! embedded store scrape by scrape (all samples of one scrape share its timestamp), and every
//! default-dashboard query, every query of the shipped runbooks and a set of extra queries run
//! on both over the same range and step. Each point must agree within 1e-6 relative (or both
//! NaN); a series present on one side only is a difference. Differences name the query.

use crate::support::prometheus;
use crate::support::sim as sim_support;
use sim_support::control;

use prometheus::{PromOptions, free_port, http_get};
use std::collections::BTreeMap;
use std::time::Duration;
use warroom::metrics::embedded::EmbeddedSource;
use warroom::metrics::{InstantQuery, Labels, QueryAnswer, RangeQuery, Source};

/// Queries beyond the dashboard's, for the rest of the engine: matching, set operators,
/// comparisons, offsets, other functions and aggregations, scalars, absent series.
const EXTRA: &[&str] = &[
    "sum(up) / count(up)",
    "sum(rate(app_requests_total{code=~\"5..\"}[1m]))",
    "sum by (pod) (rate(app_requests_total[30s]))",
    "sum without (code) (rate(app_requests_total[1m]))",
    "rate(app_requests_total[5s])",
    "irate(app_requests_total[1m])",
    "increase(process_restarts_total[5m])",
    "resets(process_restarts_total[5m])",
    "changes(app_instance_up[1m])",
    "delta(queue_depth[1m])",
    "idelta(queue_depth[1m])",
    "max_over_time(db_pool_connections_in_use[2m])",
    "avg_over_time(db_pool_connections_in_use[30s])",
    "min_over_time(db_pool_connections_in_use[30s])",
    "sum_over_time(app_instance_up[10s])",
    "count_over_time(app_instance_up[10s])",
    "last_over_time(queue_depth[1m])",
    "quantile_over_time(0.9, db_pool_connections_in_use[1m])",
    "avg by (service) (db_pool_connections_in_use)",
    "min(db_pool_connections_in_use)",
    "stddev(db_pool_connections_in_use)",
    "stdvar(db_pool_connections_in_use)",
    "quantile(0.9, db_pool_connections_in_use)",
    "count by (service) (app_instance_up)",
    "group by (service) (app_instance_up)",
    "db_pool_connections_in_use > 30",
    "30 < db_pool_connections_in_use",
    "db_pool_connections_in_use >= bool 30",
    "app_instance_up == bool 1",
    "count(app_instance_up) - sum(app_instance_up)",
    "db_pool_connections_in_use / on (pod) group_left db_pool_connections_max",
    "db_pool_connections_max / ignoring (service) db_pool_connections_in_use",
    "app_instance_up and on (pod) db_pool_connections_in_use > 20",
    "app_instance_up unless on (pod) db_pool_connections_in_use > 20",
    "db_pool_connections_in_use > 35 or db_pool_connections_max",
    "rate(app_request_duration_seconds_sum[1m]) / rate(app_request_duration_seconds_count[1m])",
    "histogram_quantile(0.5, sum by (le, pod) (rate(app_request_duration_seconds_bucket[30s])))",
    "histogram_quantile(0.9, rate(db_pool_wait_seconds_bucket[1m]))",
    "histogram_quantile(0.99, sum by (le, query) (rate(db_query_duration_seconds_bucket[1m])))",
    "label_replace(app_build_info, \"release\", \"$1\", \"version\", \"(.*)-.*\")",
    "nonexistent_metric or app_build_info",
    "process_resident_memory_bytes offset 10s",
    "-queue_depth + 2 * 3 ^ 2 % 7",
    "abs(delta(queue_depth[30s]))",
    "clamp_max(db_pool_connections_in_use, 25)",
    "clamp_min(db_pool_connections_in_use, 25)",
    "round(rate(app_requests_total{code=\"200\"}[1m]), 0.1)",
    "sqrt(sum(app_instance_up))",
    "scalar(sum(app_instance_up))",
    "sum(app_instance_up) * scalar(count(app_instance_up))",
    "vector(1) + sum(up)",
    "absent(nonexistent_metric{job=\"x\"})",
    "absent(up)",
    "(sum(rate(app_logical_requests_total[5s])) + sum(rate(app_retries_total[5s]))) / sum(rate(app_logical_requests_total[5s]))",
    "min(db_pool_connections_in_use / db_pool_connections_max)",
    "{__name__=~\"app_instance_up|app_retry_enabled\"}",
    // Subqueries and the functions added for issue 21, over series that go stale.
    "max_over_time(rate(app_requests_total[5s])[10s:])",
    "max_over_time(sum(rate(app_requests_total[5s]))[10s:2s])",
    "avg_over_time(db_pool_connections_in_use[6s:1s] offset 2s)",
    "rate(sum(process_restarts_total)[10s:1s])",
    "absent_over_time(app_instance_up{pod=\"api-0\"}[3s])",
    "present_over_time(app_instance_up[3s])",
    "timestamp(app_instance_up)",
    "label_join(app_build_info, \"id\", \"/\", \"service\", \"version\")",
    "deriv(queue_depth[10s])",
    "predict_linear(queue_depth[10s], 60)",
    "stddev_over_time(db_pool_connections_in_use[5s])",
    "stdvar_over_time(db_pool_connections_in_use[5s])",
    "count_values(\"pool\", db_pool_connections_max)",
    "sort_desc(db_pool_connections_in_use)",
    "minute(timestamp(app_instance_up))",
    "sin(queue_depth) + pi()",
];

fn get_json(port: u16, path: &str) -> serde_json::Value {
    let (status, body) = http_get(port, path, Duration::from_secs(10))
        .unwrap_or_else(|| panic!("no answer from Prometheus for {path}"));
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"))
}

/// A query's answer, whatever its status (an error is compared too).
fn prom_query(port: u16, path: &str) -> serde_json::Value {
    let (_, body) = http_get(port, path, Duration::from_secs(10))
        .unwrap_or_else(|| panic!("no answer from Prometheus for {path}"));
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"))
}

fn enc(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

fn ms(t: f64) -> i64 {
    (t * 1000.0).round() as i64
}

fn num(v: &serde_json::Value) -> f64 {
    // Prometheus writes values as strings: "1.5", "NaN", "+Inf".
    v.as_str()
        .and_then(|s| s.parse().ok())
        .expect("a sample value")
}

fn labels(m: &serde_json::Value) -> Labels {
    m.as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default()
}

type Answer = BTreeMap<Labels, Vec<(i64, f64)>>;

/// Prometheus's answer (matrix, vector or scalar) as series keyed by labels.
fn prom_answer(data: &serde_json::Value) -> Answer {
    let mut out = Answer::new();
    let result = &data["result"];
    match data["resultType"].as_str() {
        Some("scalar") => {
            out.insert(
                Labels::new(),
                vec![(ms(result[0].as_f64().unwrap_or(0.0)), num(&result[1]))],
            );
        }
        _ => {
            for s in result.as_array().into_iter().flatten() {
                let pts = if let Some(vals) = s["values"].as_array() {
                    vals.iter()
                        .map(|p| (ms(p[0].as_f64().unwrap_or(0.0)), num(&p[1])))
                        .collect()
                } else {
                    vec![(
                        ms(s["value"][0].as_f64().unwrap_or(0.0)),
                        num(&s["value"][1]),
                    )]
                };
                out.insert(labels(&s["metric"]), pts);
            }
        }
    }
    out
}

fn embedded_answer(a: QueryAnswer) -> Answer {
    a.series
        .into_iter()
        .map(|s| (s.labels, s.points.iter().map(|p| (ms(p.t), p.v)).collect()))
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan())
        || a == b
        || (a - b).abs() <= 1e-6 * a.abs().max(b.abs())
        // Summation order differs; values that cancel to zero leave float noise.
        || (a - b).abs() < 1e-12
}

/// `round` queries, with the expression they round and the step they round to. Where the
/// unrounded value sits on a half step (52.15), a last-bit difference in it (which `close`
/// allows) decides which way it rounds; one step apart is then the same answer.
const ROUNDED: &[(&str, &str, f64)] = &[(
    "round(rate(app_requests_total{code=\"200\"}[1m]), 0.1)",
    "rate(app_requests_total{code=\"200\"}[1m])",
    0.1,
)];

/// Whether `a` and `b` are the two roundings of `unrounded` to `to` and `unrounded` lies on
/// a half step within the tolerance of `close`: only then may they differ.
fn half_step_tie(a: f64, b: f64, unrounded: f64, to: f64) -> bool {
    let x = unrounded / to;
    let (down, up) = (x.floor() * to, x.ceil() * to);
    let on_half = ((x - x.floor()) - 0.5).abs() <= 1e-6 * x.abs().max(1.0);
    let is = |v: f64, r: f64| (v - r).abs() <= 1e-9 * r.abs().max(1.0);
    on_half && ((is(a, down) && is(b, up)) || (is(a, up) && is(b, down)))
}

/// For a `round` query (`rounded` is its inner expression and step), whether the point of
/// `labels` at `t` is a half-step tie by the embedded engine's unrounded value there.
fn tie(
    unrounded: &Option<Answer>,
    rounded: Option<(&str, f64)>,
    labels: &Labels,
    t: i64,
    a: f64,
    b: f64,
) -> bool {
    let (Some(unrounded), Some((_, to))) = (unrounded, rounded) else {
        return false;
    };
    unrounded
        .get(labels)
        .and_then(|pts| pts.iter().find(|(pt, _)| *pt == t))
        .is_some_and(|&(_, u)| half_step_tie(a, b, u, to))
}

#[test]
fn only_a_half_step_tie_may_round_either_way() {
    assert!(half_step_tie(73.1, 73.2, 73.15 + 1e-12, 0.1));
    assert!(half_step_tie(73.2, 73.1, 73.15 - 1e-12, 0.1));
    // Not on a half step: the rounding is decided and must agree.
    assert!(!half_step_tie(73.1, 73.2, 73.12, 0.1));
    // Two steps apart is never a tie.
    assert!(!half_step_tie(73.1, 73.3, 73.15, 0.1));
    // Equal roundings are not a tie (`close` already accepts them).
    assert!(!half_step_tie(73.1, 73.1, 73.15, 0.1));
}

/// The differences between two answers, described for a person. A point for which
/// `tie(labels, t, prometheus, embedded)` holds is the same.
fn diff_with(
    prom: &Answer,
    emb: &Answer,
    tie: impl Fn(&Labels, i64, f64, f64) -> bool,
) -> Vec<String> {
    let mut out = Vec::new();
    for (l, p) in prom {
        let Some(e) = emb.get(l) else {
            out.push(format!(
                "series {l:?} only in Prometheus ({} points)",
                p.len()
            ));
            continue;
        };
        let pm: BTreeMap<i64, f64> = p.iter().copied().collect();
        let em: BTreeMap<i64, f64> = e.iter().copied().collect();
        for (t, pv) in &pm {
            match em.get(t) {
                None => out.push(format!("{l:?} at {t}: Prometheus {pv}, embedded none")),
                Some(ev) if !close(*pv, *ev) && !tie(l, *t, *pv, *ev) => {
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
            out.push(format!(
                "series {l:?} only in embedded ({} points)",
                e.len()
            ));
        }
    }
    out
}

/// `query` strings of the shipped runbooks (`runbooks/*.toml`, any table or array), with each
/// runbook's variables at their defaults and a batch's `{{target}}` as `api-0`, so they select
/// real series (a template left in would match nothing on both sides and prove nothing).
fn runbook_queries() -> Vec<String> {
    fn walk(v: &toml::Value, key: &str, out: &mut Vec<String>) {
        match v {
            toml::Value::String(s) if key == "query" || key.ends_with("_query") => {
                out.push(s.clone());
            }
            toml::Value::Table(t) => t.iter().for_each(|(k, v)| walk(v, k, out)),
            toml::Value::Array(a) => a.iter().for_each(|v| walk(v, key, out)),
            _ => {}
        }
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("runbooks");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&p).expect("read runbook");
            let v: toml::Value = toml::from_str(&text).expect("runbook is TOML");
            let mut found = Vec::new();
            walk(&v, "", &mut found);
            let defaults: Vec<(String, String)> = v
                .get("variables")
                .and_then(|t| t.as_table())
                .map(|t| {
                    t.iter()
                        .filter_map(|(k, d)| {
                            let d = d.get("default")?;
                            let d = d
                                .as_str()
                                .map(String::from)
                                .unwrap_or_else(|| d.to_string());
                            Some((k.clone(), d))
                        })
                        .collect()
                })
                .unwrap_or_default();
            for mut q in found {
                for (k, d) in &defaults {
                    q = q.replace(&format!("{{{{{k}}}}}"), d);
                }
                q = q.replace("{{target}}", "api-0");
                assert!(
                    !q.contains("{{"),
                    "{}: a template is left in {q}",
                    p.display()
                );
                out.push(q);
            }
        }
    }
    out.sort();
    out.dedup();
    assert!(!out.is_empty(), "the shipped runbooks have queries");
    out
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_dashboard_and_runbook_query_matches_prometheus() {
    let sim_port = free_port();
    let Some(prom) = prometheus::start(PromOptions {
        targets: vec![format!("127.0.0.1:{sim_port}")],
        scrape_interval: "1s",
        ..PromOptions::default()
    }) else {
        return;
    };
    let sim = sim_support::serve(
        sim_port,
        "planner-peak",
        &["--speed", "30", "--seed", "1", "--start-at", "1100"],
    );
    let began = now();
    // The fault develops; a restart (a counter reset) and a scale-in (series that leave)
    // happen on the way; then the simulator dies and every series goes stale.
    let script = [
        (8.0, "restart", r#"{"pod":"api-0"}"#),
        (14.0, "scale", r#"{"replicas":8}"#),
    ];
    for (at, action, body) in script {
        tokio::time::sleep(Duration::from_secs_f64((began + at - now()).max(0.0))).await;
        control(sim_port, action, body);
    }
    tokio::time::sleep(Duration::from_secs_f64((began + 22.0 - now()).max(0.0))).await;
    drop(sim);
    tokio::time::sleep(Duration::from_secs(4)).await;
    // Scrapes after `end` may still be landing; nothing at or before it changes any more.
    let end = ((now() - 2.0) * 1000.0).round() / 1000.0;

    // Every raw sample Prometheus holds, replayed scrape by scrape.
    let names = get_json(prom.port, "/api/v1/label/__name__/values");
    let mut scrapes: BTreeMap<i64, Vec<(Labels, f64)>> = BTreeMap::new();
    for name in names["data"].as_array().into_iter().flatten() {
        let name = name.as_str().expect("a metric name");
        let v = get_json(
            prom.port,
            &format!(
                "/api/v1/query?query={}&time={end}",
                enc(&format!("{name}[10m]"))
            ),
        );
        for (l, pts) in prom_answer(&v["data"]) {
            for (t, v) in pts {
                scrapes.entry(t).or_default().push((l.clone(), v));
            }
        }
    }
    let first = *scrapes.keys().next().expect("Prometheus scraped something") as f64 / 1000.0;
    // This Prometheus's evaluation_interval (the step of `x[10s:]`) is its scrape interval;
    // it is 2.42, which extrapolates rate() as before 2.51 (new 5xx series start small).
    let store = EmbeddedSource::default()
        .with_subquery_step(Duration::from_secs(1))
        .with_legacy_extrapolation();
    for (t, samples) in scrapes {
        store.ingest_series(t as f64 / 1000.0, samples);
    }
    eprintln!(
        "replayed {:?} (series, points) from {first} to {end}",
        store.size()
    );

    let mut queries: Vec<String> = warroom::metrics::presets::sim_panels()
        .into_iter()
        .map(|p| p.query)
        .collect();
    let n_dashboard = queries.len();
    queries.extend(runbook_queries());
    queries.extend(EXTRA.iter().map(std::string::ToString::to_string));

    // Two grids: whole seconds from before the first sample, and an odd start and step.
    let grids = [((first - 5.0).floor(), 1.0), (first + 0.377, 0.731)];
    let mut failures = Vec::new();
    let mut compared_points = 0usize;
    for (i, q) in queries.iter().enumerate() {
        let mut problems = Vec::new();
        let rounded = ROUNDED
            .iter()
            .find(|(outer, _, _)| outer == q)
            .map(|&(_, inner, to)| (inner, to));
        for (start, step) in grids {
            let path = format!(
                "/api/v1/query_range?query={}&start={start:.3}&end={end:.3}&step={step}",
                enc(q)
            );
            let p = prom_query(prom.port, &path);
            let e = store
                .query_range(RangeQuery {
                    query: q.clone(),
                    start,
                    end,
                    step,
                })
                .await;
            match (p["status"].as_str(), e) {
                (Some("success"), Ok(e)) => {
                    let pa = prom_answer(&p["data"]);
                    compared_points += pa.values().map(Vec::len).sum::<usize>();
                    let unrounded = match rounded {
                        Some((inner, _)) => store
                            .query_range(RangeQuery {
                                query: inner.to_string(),
                                start,
                                end,
                                step,
                            })
                            .await
                            .map(embedded_answer)
                            .ok(),
                        None => None,
                    };
                    problems.extend(diff_with(&pa, &embedded_answer(e), |l, t, a, b| {
                        tie(&unrounded, rounded, l, t, a, b)
                    }));
                }
                // Both refuse (e.g. many-to-many matching): the same answer.
                (Some("error"), Err(_)) => {}
                (_, e) => problems.push(format!("Prometheus {}, embedded {e:?}", p["error"])),
            }
        }
        // Instant queries at a few moments, including after the simulator died.
        for t in [first + 3.5, first + 12.25, end - 1.0, end] {
            let p = prom_query(
                prom.port,
                &format!("/api/v1/query?query={}&time={t:.3}", enc(q)),
            );
            let e = store
                .query(InstantQuery {
                    query: q.clone(),
                    time: Some(t),
                })
                .await;
            match (p["status"].as_str(), e) {
                (Some("success"), Ok(e)) => {
                    let unrounded = match rounded {
                        Some((inner, _)) => store
                            .query(InstantQuery {
                                query: inner.to_string(),
                                time: Some(t),
                            })
                            .await
                            .map(embedded_answer)
                            .ok(),
                        None => None,
                    };
                    problems.extend(diff_with(
                        &prom_answer(&p["data"]),
                        &embedded_answer(e),
                        |l, t, a, b| tie(&unrounded, rounded, l, t, a, b),
                    ));
                }
                (Some("error"), Err(_)) => {}
                (_, e) => problems.push(format!(
                    "instant at {t}: Prometheus {}, embedded {e:?}",
                    p["error"]
                )),
            }
        }
        let kind = if i < n_dashboard {
            "dashboard"
        } else {
            "query"
        };
        if problems.is_empty() {
            eprintln!("same: {kind} {q}");
        } else {
            let n = problems.len();
            problems.truncate(5);
            failures.push(format!("{kind} {q}: {n} differences, first: {problems:#?}"));
        }
    }
    eprintln!(
        "{} queries, {compared_points} Prometheus points compared",
        queries.len()
    );
    assert!(
        compared_points > 1000,
        "too little data to compare: {compared_points}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
