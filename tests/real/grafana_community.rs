//! Issue 31, point 3: the community dashboards (tests/fixtures/grafana/community/) imported
//! against the real exporters they were written for — PostgreSQL with Debian's
//! postgres_exporter, Redis with redis_exporter, and node_exporter — scraped by a real
//! Prometheus, on a healthy system.
//!
//! For each dashboard the test counts the Prometheus panels, those `warroom import grafana
//! --prometheus` converts, those whose converted queries return data, and those past a level
//! (false when Grafana colours nothing at the same values); and, beside them, the panels that
//! return data when the dashboard's queries are filled in as Grafana fills them in. That side is worked out here from the JSON, independently of the
//! importer: Grafana's variable regex, its `label_values` query form, `MultiValueVariable`'s
//! choice of a value and the Prometheus data source's `interpolateQueryExpr`. Targets:
//! converted ≥ 95 %, the same panels with data as Grafana, no false level.

use crate::support::grafana_json::source_panels;
use crate::support::node_exporter::NodeExporter;
use crate::support::realstack::{self, prometheus};
use crate::support::redis::{Redis, RedisExporter};

use serde_json::Value;
use std::time::{Duration, Instant};
use warroom::config::{BadWhen, PanelConfig};
use warroom::import::grafana::{self, Import, ImportOptions};
use warroom::metrics::prometheus::{ClientOptions, PrometheusClient};
use warroom::metrics::{InstantQuery, Source};

const DASHBOARDS: &[&str] = &[
    "postgres-overview.json",
    "node-exporter-full.json",
    "redis-exporter.json",
];

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/grafana/community/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path}: {e}"))
}

/// The values of each series of an instant query now (`None` when Prometheus refuses it).
fn values(rt: &tokio::runtime::Runtime, c: &PrometheusClient, q: &str) -> Option<Vec<f64>> {
    let a = rt
        .block_on(c.query(InstantQuery {
            query: q.into(),
            time: None,
        }))
        .ok()?;
    Some(
        a.series
            .iter()
            .filter_map(|s| s.points.last().map(|p| p.v))
            .collect(),
    )
}

fn has_data(rt: &tokio::runtime::Runtime, c: &PrometheusClient, q: &str) -> bool {
    values(rt, c, q).is_some_and(|v| !v.is_empty())
}

/// A panel's shown PromQL queries, with their JSON paths.
fn shown_targets<'a>(path: &str, p: &'a Value) -> Vec<(String, &'a str)> {
    p["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, t)| t["hide"] != true)
        .filter_map(|(i, t)| {
            let e = t["expr"].as_str().filter(|e| !e.trim().is_empty())?;
            Some((format!("{path}.targets[{i}]"), e))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Grafana's side, from the JSON.

/// A variable's value as Grafana holds it.
#[derive(Debug, Clone)]
enum Held {
    One(String),
    List(Vec<String>),
    All {
        options: Vec<String>,
        custom: Option<String>,
    },
}

#[derive(Debug, Clone)]
struct GrafanaVar {
    name: String,
    /// Multi-value or include-all: values are regex-escaped.
    regex: bool,
    held: Held,
}

/// `prometheusRegularEscape` (with `prometheusSpecialCharsInLabelValues`).
fn regular_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// `prometheusSpecialRegexEscape`.
fn special_regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\\\\\"),
            '$' | '^' | '*' | '{' | '}' | '[' | ']' | '\'' | '+' | '?' | '.' | '(' | ')' | '|' => {
                out.push_str("\\\\");
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `interpolateQueryExpr`.
fn query_expr(v: &GrafanaVar) -> String {
    let list = |vs: &[String]| {
        let e: Vec<String> = vs.iter().map(|s| special_regex_escape(s)).collect();
        if e.len() == 1 {
            e[0].clone()
        } else {
            format!("({})", e.join("|"))
        }
    };
    match &v.held {
        Held::All {
            custom: Some(c), ..
        } => c.clone(),
        Held::All { options, .. } => list(options),
        Held::One(s) if !v.regex => regular_escape(s),
        Held::One(s) => special_regex_escape(s),
        Held::List(vs) => list(vs),
    }
}

/// Grafana's built-in intervals for these dashboards: `$__interval` for 24 h on a panel about
/// 1,000 points wide is 86 s, which `rangeUtil.roundInterval` makes 1 m; `$__rate_interval`
/// is max(`$__interval` + scrape, 4 × scrape) with the data source's default 15 s scrape.
fn builtin(name: &str) -> Option<&'static str> {
    match name {
        "__interval" => Some("1m"),
        "__rate_interval" => Some("75s"),
        _ => None,
    }
}

/// `templateSrv.replace` with the Prometheus data source's formatter; names it does not know
/// are left as written, as Grafana leaves them.
fn replace(text: &str, vars: &[GrafanaVar]) -> String {
    let re = regex::Regex::new(
        r"\$(\w+)|\[\[(\w+?)(?::(\w+))?\]\]|\$\{(\w+)(?:\.([^:^\}]+))?(?::([^\}]+))?\}",
    )
    .expect("Grafana's variable regex");
    re.replace_all(text, |c: &regex::Captures<'_>| {
        let name = c
            .get(1)
            .or_else(|| c.get(2))
            .or_else(|| c.get(4))
            .map_or("", |m| m.as_str());
        assert!(
            c.get(3).is_none() && c.get(6).is_none(),
            "a format these dashboards do not use: {}",
            &c[0]
        );
        if let Some(b) = builtin(name) {
            return b.to_string();
        }
        match vars.iter().find(|v| v.name == name) {
            Some(v) => query_expr(v),
            None => c[0].to_string(),
        }
    })
    .into_owned()
}

/// `MultiValueVariable`'s choice given the options found.
fn choose(v: &Value, options: Vec<String>) -> Held {
    let multi = v["multi"] == true;
    let include_all = v["includeAll"] == true;
    let custom = v["allValue"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let current: Vec<String> = match &v["current"]["value"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    let Some(first) = options.first().cloned() else {
        return if include_all {
            Held::All { options, custom }
        } else if multi {
            Held::List(Vec::new())
        } else {
            Held::One(String::new())
        };
    };
    let one = |s: String| {
        if multi {
            Held::List(vec![s])
        } else {
            Held::One(s)
        }
    };
    if current.iter().any(|c| c == "$__all") {
        return if include_all {
            Held::All { options, custom }
        } else {
            one(first)
        };
    }
    let valid: Vec<String> = current
        .into_iter()
        .filter(|c| options.contains(c))
        .collect();
    match valid.first() {
        None => one(first),
        Some(_) if multi => Held::List(valid),
        Some(c) => Held::One(c.clone()),
    }
}

/// The dashboard's variables as Grafana resolves them against `c`.
fn grafana_variables(
    rt: &tokio::runtime::Runtime,
    c: &PrometheusClient,
    json: &Value,
) -> Vec<GrafanaVar> {
    let label_values =
        regex::Regex::new(r"^label_values\((?:(.+),\s*)?([a-zA-Z_$][a-zA-Z0-9_]*)\)\s*$")
            .expect("Grafana's label_values regex");
    let mut vars: Vec<GrafanaVar> = Vec::new();
    for v in json["templating"]["list"].as_array().into_iter().flatten() {
        let name = v["name"].as_str().unwrap_or_default().to_string();
        let query = match &v["query"] {
            Value::String(s) => s.clone(),
            q => q["query"].as_str().unwrap_or_default().to_string(),
        };
        let held = match v["type"].as_str() {
            Some("datasource") => continue,
            Some("query") => {
                // Declared after the variables they use in these dashboards.
                let q = replace(&query, &vars);
                let m = label_values
                    .captures(&q)
                    .unwrap_or_else(|| panic!("${name}: not label_values: {q}"));
                let matchers: Vec<String> = m
                    .get(1)
                    .map(|s| s.as_str().to_string())
                    .into_iter()
                    .collect();
                let mut options = rt
                    .block_on(c.label_values(&m[2], &matchers, None, None, 4 << 20))
                    .unwrap_or_else(|e| panic!("${name}: {e}"))
                    .values;
                assert!(
                    v["regex"].as_str().unwrap_or("").is_empty(),
                    "${name}: a regex these dashboards do not use"
                );
                match v["sort"].as_u64().unwrap_or(0) {
                    0 => {}
                    1 => options.sort(),
                    other => panic!("${name}: sort {other}, which these dashboards do not use"),
                }
                choose(v, options)
            }
            other => panic!("${name}: a {other:?} variable, which these dashboards do not have"),
        };
        let regex = v["multi"] == true || v["includeAll"] == true;
        vars.push(GrafanaVar { name, regex, held });
    }
    vars
}

// ---------------------------------------------------------------------------------------------
// The figures.

#[derive(Debug, Default)]
struct Figures {
    prometheus_panels: usize,
    converted: usize,
    data: usize,
    grafana_data: usize,
    past_a_level: Vec<String>,
    /// Of those, the panels Grafana does not colour as past a threshold: false levels.
    false_levels: Vec<String>,
    /// Panels with data on one side only: `path: title`.
    differ: Vec<String>,
}

/// Whether Grafana colours any of `values` (of its own query) with a threshold step that is
/// not the base or green: the step a value falls in is the last whose value it reaches.
fn grafana_alarms(p: &Value, values: &[f64]) -> bool {
    let steps = p["fieldConfig"]["defaults"]["thresholds"]["steps"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    values.iter().any(|v| {
        let at = steps
            .iter()
            .rposition(|s| s["value"].as_f64().is_none_or(|t| *v >= t))
            .unwrap_or(0);
        at > 0 && steps[at]["color"] != "green"
    })
}

/// Whether a warroom panel's values are past its warn or crit.
fn past_level(p: &PanelConfig, values: &[f64]) -> bool {
    let Some(level) = p.warn.or(p.crit) else {
        return false;
    };
    values.iter().any(|v| match p.bad_when {
        BadWhen::Above => *v >= level,
        BadWhen::Below => *v <= level,
    })
}

fn figures(
    rt: &tokio::runtime::Runtime,
    c: &PrometheusClient,
    json: &Value,
    import: &Import,
) -> Figures {
    let vars = grafana_variables(rt, c, json);
    let skipped = |at: &str| import.skipped.iter().any(|f| f.path == at);
    let mut converted = import.panels.iter();
    let mut f = Figures::default();
    for (path, p) in source_panels(json) {
        let targets = shown_targets(&path, p);
        if targets.is_empty() || skipped(&path) {
            continue;
        }
        f.prometheus_panels += 1;
        // The importer makes one panel per converted query, in this order.
        let ours: Vec<&PanelConfig> = targets
            .iter()
            .filter(|(at, _)| !skipped(at))
            .map(|_| converted.next().expect("a converted panel for each query"))
            .collect();
        let title = p["title"].as_str().unwrap_or("");
        for o in &ours {
            let head = title.split('$').next().unwrap_or("").trim();
            assert!(
                o.title.starts_with(head),
                "{path}: {:?} for {title:?}",
                o.title
            );
        }
        let grafana = targets
            .iter()
            .any(|(_, e)| has_data(rt, c, &replace(e, &vars)));
        let data = ours.iter().any(|o| has_data(rt, c, &o.query));
        f.converted += usize::from(!ours.is_empty());
        f.data += usize::from(data);
        f.grafana_data += usize::from(grafana);
        if data != grafana {
            f.differ.push(format!(
                "{path}: {title} (warroom {data}, Grafana {grafana})"
            ));
        }
        let grafana_values: Vec<f64> = targets
            .iter()
            .flat_map(|(_, e)| values(rt, c, &replace(e, &vars)).unwrap_or_default())
            .collect();
        for o in ours {
            if past_level(o, &values(rt, c, &o.query).unwrap_or_default()) {
                f.past_a_level.push(format!("{path}: {}", o.title));
                if !grafana_alarms(p, &grafana_values) {
                    f.false_levels.push(format!("{path}: {}", o.title));
                }
            }
        }
    }
    assert!(
        converted.next().is_none(),
        "more panels than converted queries"
    );
    f
}

#[test]
fn community_dashboards_against_the_real_exporters() {
    let Some(pg) = realstack::Postgres::start() else {
        return;
    };
    let Some(pg_exporter) = realstack::Exporter::postgres(&pg) else {
        return;
    };
    let Some(redis) = Redis::start() else { return };
    let Some(redis_exporter) = RedisExporter::start(&redis, &["queue"]) else {
        return;
    };
    let Some(node) = NodeExporter::start() else {
        return;
    };
    // A little of everything the Redis dashboard counts: keys with and without expiry, hits
    // and misses, a list.
    let mut r = redis.connect().expect("redis");
    for (k, v) in [("a", "1"), ("b", "2")] {
        r.command(&["SET", k, v]).expect("SET");
    }
    r.command(&["SET", "session", "x", "EX", "3600"])
        .expect("SET EX");
    r.command(&["GET", "a"]).expect("GET");
    r.command(&["GET", "missing"]).expect("GET");
    r.command(&["RPUSH", "queue", "job"]).expect("RPUSH");
    let Some(prom) = prometheus::start(prometheus::PromOptions {
        targets: vec![pg_exporter.target(), redis_exporter.target(), node.target()],
        scrape_interval: "1s",
        ..Default::default()
    }) else {
        return;
    };
    let rt = runtime();
    let c = PrometheusClient::new(ClientOptions::new(prom.url.clone())).expect("client");
    // Until every target has been scraped a few times (rates need two samples), bounded.
    let deadline = Instant::now() + Duration::from_secs(60);
    while values(&rt, &c, "count(count_over_time(up[1m]) >= 5)") != Some(vec![3.0]) {
        assert!(
            Instant::now() < deadline,
            "Prometheus did not scrape the three exporters"
        );
        std::thread::sleep(Duration::from_millis(500));
    }

    let mut report = Vec::new();
    for name in DASHBOARDS {
        let text = fixture(name);
        let json: Value = serde_json::from_str(&text).expect("JSON");
        let import = rt
            .block_on(grafana::import(&text, Some(&c), ImportOptions::default()))
            .expect("a dashboard");
        for p in &import.panels {
            assert!(!p.query.contains('$'), "{name}: {:?}", p.query);
        }
        let f = figures(&rt, &c, &json, &import);
        let line = format!(
            "{name}: {} Prometheus panels, {} converted ({:.0} %), {} with data (Grafana's rules: {}), {} past a level ({} where Grafana colours none)",
            f.prometheus_panels,
            f.converted,
            100.0 * f.converted as f64 / f.prometheus_panels as f64,
            f.data,
            f.grafana_data,
            f.past_a_level.len(),
            f.false_levels.len()
        );
        eprintln!("{line}");
        report.push((name, line, f, import));
    }
    for (name, line, f, import) in &report {
        assert!(
            f.converted * 100 >= f.prometheus_panels * 95,
            "{line}\n{:#?}",
            import.skipped
        );
        assert!(
            f.differ.is_empty(),
            "{name}: data differs from Grafana's: {:#?}",
            f.differ
        );
        // A level reached here is a false one only where Grafana, at the same values,
        // colours nothing (this machine may well be busy or its disk full).
        assert!(
            f.false_levels.is_empty(),
            "{name}: past a level Grafana does not show: {:#?}",
            f.false_levels
        );
    }
}
