//! `import::grafana`: Grafana dashboards (classic, the V1 resource, V2) to warroom panels.
//! Fixtures are written for these tests (tests/fixtures/grafana/); the resolver test runs a
//! real Prometheus scraping a loopback exposition so `label_values` answers come from
//! Prometheus itself, and every converted query is sent to it.

use crate::support::prometheus;

use futures::FutureExt;
use futures::future::BoxFuture;
use std::sync::Mutex;
use warroom::config::panels::Shape;
use warroom::config::{BadWhen, PanelConfig, Unit};
use warroom::import::grafana::{
    self, Finding, GrafanaError, Import, ImportOptions, Model, ResolveError, VariableResolver,
};

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/grafana/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path}: {e}"))
}

fn offline(text: &str) -> Import {
    grafana::parse(text, ImportOptions::default())
        .expect("a dashboard")
        .convert()
}

/// The queries a console sends for an offline import: its TOML read back as `warroom.toml`,
/// the `[[variable]]` entries resolved against `c` by Grafana's rules, the panels' queries
/// filled in (none may keep a variable without a value).
fn console_queries(
    rt: &tokio::runtime::Runtime,
    c: &warroom::metrics::prometheus::PrometheusClient,
    import: &Import,
) -> Vec<String> {
    let text = format!(
        "{}\n{}",
        warroom::config::panels::render_toml(&import.panels),
        warroom::config::variables::render_toml(&import.variables)
    );
    let cfg = warroom::config::Config::parse("import.toml", &text)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let opts = warroom::variables::Options::default();
    let (bindings, _) = rt.block_on(warroom::variables::Bindings::resolve_all(
        &cfg.variables,
        &opts,
        c,
    ));
    (cfg.panels.iter())
        .map(|p| {
            bindings
                .apply(&p.query, &opts)
                .unwrap_or_else(|e| panic!("{e}"))
        })
        .collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn panel(
    title: &str,
    query: &str,
    unit: Unit,
    warn: Option<f64>,
    crit: Option<f64>,
    bad_when: BadWhen,
    legend: Option<&str>,
) -> PanelConfig {
    PanelConfig {
        title: title.into(),
        query: query.into(),
        unit,
        warn,
        crit,
        bad_when,
        legend: legend.map(str::to_string),
        signal: None,
        shape: Default::default(),
    }
}

/// `panels` in the open rows `rows` (none when empty), with their dashboard's refresh of
/// `every_s` seconds.
fn shaped(mut panels: Vec<PanelConfig>, rows: &[Option<&str>], every_s: u64) -> Vec<PanelConfig> {
    for (i, p) in panels.iter_mut().enumerate() {
        p.shape = Shape {
            row: rows.get(i).copied().flatten().map(str::to_string),
            collapsed: false,
            every: Some(std::time::Duration::from_secs(every_s)),
            max_points: None,
        };
    }
    panels
}

/// Findings match `(path, words the message must contain)`, in order and number.
#[track_caller]
fn assert_findings(found: &[Finding], expected: &[(&str, &str)]) {
    let shown: Vec<String> = found.iter().map(std::string::ToString::to_string).collect();
    assert_eq!(
        found.len(),
        expected.len(),
        "findings differ:\n{}",
        shown.join("\n")
    );
    for (f, (path, words)) in found.iter().zip(expected) {
        assert_eq!(f.path, *path, "finding paths differ:\n{}", shown.join("\n"));
        assert!(
            f.message.contains(words),
            "{f} does not say {words:?}:\n{}",
            shown.join("\n")
        );
    }
}

/// The classic fixture's panels when `$service`, `$replica` and `$instance` are not resolved.
fn classic_panels(service: &str, replica: &str, instance: &str) -> Vec<PanelConfig> {
    use BadWhen::{Above, Below};
    use Unit::*;
    let mut panels = vec![
        // As Grafana computes it: range 6 h over the panel's 960 pixels (12 of 24 columns of
        // 1920) is 22.5 s, rounded to 20 s; $__rate_interval is max(20 s + 15 s scrape,
        // 4 × 15 s) = 1m.
        panel(
            "Request rate (payments)",
            &format!(
                "sum by (pod) ( rate(app_requests_total{{service=\"{service}\", pod=~\".*\"}}[1m]) )"
            ),
            PerSecond,
            None,
            // Green, red from 1000 on a time series whose "Show thresholds" is off: Grafana
            // draws no line and colours nothing, so no level (it was crit 1000).
            None,
            Above,
            Some("{{pod}}"),
        ),
        panel(
            "Latency · p50",
            &format!(
                "(1000 * histogram_quantile(0.5, sum by (le) (rate(app_request_duration_seconds_bucket{{service=\"{service}\"}}[5m])))) / 1000"
            ),
            Seconds,
            Some(0.25),
            Some(1.0),
            Above,
            Some("p50"),
        ),
        panel(
            "Latency · p99",
            &format!(
                "(1000 * histogram_quantile(0.99, sum by (le, pod) (rate(app_request_duration_seconds_bucket{{service=\"{service}\", pod=~\"{replica}\"}}[5m])))) / 1000"
            ),
            Seconds,
            Some(0.25),
            Some(1.0),
            Above,
            Some("{{pod}} p99"),
        ),
        panel(
            "Instances up",
            &format!(
                "sum(app_instance_up{{service=\"{service}\"}}) / count(app_instance_up{{service=\"{service}\"}})"
            ),
            Percent,
            Some(0.9),
            Some(0.7),
            Below,
            None,
        ),
        panel(
            "Pool saturation",
            &format!(
                "(100 * max(db_pool_connections_in_use{{service=\"{service}\"}} / db_pool_connections_max{{service=\"{service}\"}})) / 100"
            ),
            Percent,
            Some(0.8),
            Some(0.95),
            Above,
            None,
        ),
        panel(
            "Memory",
            &format!("process_resident_memory_bytes{{instance=\"{instance}\"}}"),
            Bytes,
            None,
            None,
            Above,
            Some("{{pod}}"),
        ),
        panel(
            "Queue depth",
            "sum by (queue) (queue_depth)",
            Count,
            None,
            None,
            Above,
            Some("{{queue}}"),
        ),
        // The escape sequence and NUL of the title, and the bidi override of the legend, are
        // shown escaped.
        panel(
            "Retries \\e[31m\\x00 per layer",
            &format!("sum by (layer) (rate(app_retries_total{{service=\"{service}\"}}[20s]))"),
            Count,
            None,
            None,
            Above,
            Some("{{layer}} \\u{202e}evil"),
        ),
        panel(
            "Query time (old graph)",
            "sum(rate(db_query_duration_seconds_sum[5m])) / sum(rate(db_query_duration_seconds_count[5m]))",
            Seconds,
            Some(0.5),
            Some(2.0),
            Above,
            Some("mean"),
        ),
        panel(
            "Restarts over the range",
            &format!(
                "sum by (pod) (increase(process_restarts_total{{service=\"{service}\", cluster=\"$cluster\"}}[6h]))"
            ),
            Count,
            None,
            None,
            Above,
            Some("{{pod}}"),
        ),
    ];
    // Its rows: Traffic open, Details collapsed (only the panels inside it); the panels after
    // the collapsed row are in none. Every panel keeps the dashboard's 30 s refresh.
    let rows = [Some(("Traffic", false)); 5]
        .into_iter()
        .chain([Some(("Details", true))])
        .chain([None; 4]);
    for (p, row) in panels.iter_mut().zip(rows) {
        p.shape = Shape {
            row: row.map(|(r, _)| r.to_string()),
            collapsed: row.is_some_and(|(_, c)| c),
            every: Some(std::time::Duration::from_secs(30)),
            max_points: None,
        };
    }
    panels
}

/// The queries of the classic fixture that use variables, and the variables they use.
const CLASSIC_USES: &[(&str, &[&str])] = &[
    ("panels[1].targets[0]", &["service", "pod"]),
    ("panels[2].targets[0]", &["service"]),
    ("panels[2].targets[1]", &["service", "replica"]),
    ("panels[3].targets[0]", &["service"]),
    ("panels[4].targets[0]", &["service"]),
    ("panels[6].panels[2].targets[0]", &["instance"]),
    ("panels[9].targets[0]", &["service"]),
    // `$cluster` is no variable of the dashboard: never converted.
    ("panels[12].targets[0]", &["service", "cluster"]),
];

/// The classic fixture's panels that can be converted when the variables `unbound` have no
/// value: those whose query holds no `$` once the rest are filled in.
fn converted(panels: Vec<PanelConfig>) -> Vec<PanelConfig> {
    panels
        .into_iter()
        .filter(|p| !p.query.contains('$'))
        .collect()
}

/// What the classic fixture skips when the variables `unbound` have no value, in order.
fn classic_skipped(unbound: &[&str]) -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&str, &str)> = vec![
        ("panels[5]", "\"text\" panel"),
        ("panels[6].panels[0]", "logs or traces"),
        ("panels[6].panels[1]", "data source \"loki\""),
        ("panels[6].panels[2].targets[1]", "hidden"),
        (
            "panels[6].panels[3].targets[0]",
            "PromQL parser rejects the expression after substitution",
        ),
        ("panels[7]", "no queries"),
        ("panels[11]", "library panel \"SLO burn rate\""),
    ];
    for (path, uses) in CLASSIC_USES {
        if uses.iter().any(|u| *u == "cluster" || unbound.contains(u)) {
            let why = if unbound.iter().any(|u| uses.contains(u)) {
                "has no value (see templating.list["
            } else {
                "$cluster is not a variable of this dashboard"
            };
            out.push((path, why));
        }
    }
    // Traversal order: by the indices along the path.
    let order = |p: &str| {
        p.replace("panels[", "")
            .split(|c: char| !c.is_ascii_digit())
            .filter(|n| !n.is_empty())
            .map(|n| n.parse::<usize>().unwrap_or(0))
            .collect::<Vec<_>>()
    };
    out.sort_by_key(|(p, _)| order(p));
    out
}

/// The panels' own warnings, the thresholds of panels[1] only when it is converted.
fn classic_panel_warnings(request_rate: bool) -> Vec<(&'static str, &'static str)> {
    let mut out = Vec::new();
    if request_rate {
        out.push((
            "panels[1].fieldConfig.defaults.thresholds",
            "thresholds (crit 1000, bad above) not imported as levels: Grafana does not draw them \
             on this panel, \"Show thresholds\" (custom.thresholdsStyle.mode) is off",
        ));
    }
    out.extend([
        (
            "panels[8].targets[0]",
            "unit \"lengthm\" has no warroom equivalent",
        ),
        ("panels[8].targets[0]", "thresholds mark a band"),
    ]);
    out
}

#[test]
fn classic_dashboard_without_a_prometheus() {
    let import = offline(&fixture("classic.json"));
    assert_eq!(import.model, Model::Classic);
    assert_eq!(import.title.as_deref(), Some("Checkout service"));
    // Nothing looked up: every query using a query variable keeps it, for the console to
    // resolve (issue 31 point 2: it used to be refused, and 2 of 10 panels were converted).
    // Only the query using `$cluster`, no variable of the dashboard, is not converted.
    let mut panels = classic_panels("$service", "$replica", "$instance");
    let cluster = panels.pop().unwrap();
    assert!(cluster.query.contains("$cluster"));
    panels[0].query = panels[0].query.replace("pod=~\".*\"", "pod=~\"$pod\"");
    assert_eq!(panels.len(), 9);
    assert_eq!(import.panels, panels);
    // The variables they use, chained ones included, with the dashboard's current values.
    let names: Vec<&str> = import.variables.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["service", "pod", "replica", "instance"]);
    assert_eq!(import.variables[0].current, ["checkout"]);
    assert_eq!(import.variables[1].current, ["$__all"]);
    assert_eq!(
        import.variables[2].query.as_deref(),
        Some("label_values(app_requests_total{service=~\"$service\"}, pod)")
    );
    let needs = "needs a Prometheus to look up its values, and none was given (--prometheus URL)";
    let mut warnings = vec![
        ("templating.list[4]", needs),
        ("templating.list[5]", needs),
        ("templating.list[6]", needs),
        ("templating.list[7]", needs),
        (
            "templating.list[9]",
            "ad hoc filter variable $Filters has 1 filter",
        ),
        (
            "templating.list[11]",
            "$version (query_result(app_build_info)) needs a Prometheus",
        ),
    ];
    warnings.extend(classic_panel_warnings(true));
    assert_findings(&import.warnings, &warnings);
    assert_findings(&import.skipped, &classic_skipped(&[]));
    for f in import.warnings.iter().chain(&import.skipped) {
        assert!(warroom::sanitize::is_clean(&f.message, false), "{f}");
    }
}

#[test]
fn the_v1_resource_and_the_api_answer_wrap_the_same_dashboard() {
    let classic: serde_json::Value = serde_json::from_str(&fixture("classic.json")).unwrap();
    let plain = offline(&classic.to_string());
    for (wrapped, prefix, model) in [
        (
            serde_json::json!({
                "apiVersion": "dashboard.grafana.app/v1beta1",
                "kind": "Dashboard",
                "metadata": {"name": "checkout"},
                "spec": classic.clone(),
            }),
            "spec.",
            Model::V1Resource,
        ),
        (
            serde_json::json!({"dashboard": classic.clone(), "meta": {"slug": "checkout"}}),
            "dashboard.",
            Model::Classic,
        ),
    ] {
        let import = offline(&wrapped.to_string());
        assert_eq!(import.model, model);
        assert_eq!(import.panels, plain.panels);
        let paths = |fs: &[Finding]| fs.iter().map(|f| f.path.clone()).collect::<Vec<_>>();
        let prefixed = |fs: &[Finding]| {
            fs.iter()
                .map(|f| format!("{prefix}{}", f.path))
                .collect::<Vec<_>>()
        };
        assert_eq!(paths(&import.skipped), prefixed(&plain.skipped));
        assert_eq!(paths(&import.warnings), prefixed(&plain.warnings));
    }
}

#[test]
fn v1_resource_fixture() {
    let import = offline(&fixture("v1.json"));
    assert_eq!(import.model, Model::V1Resource);
    assert_eq!(import.title.as_deref(), Some("PgBouncer pools"));
    let db = "(orders_db|billing_db)";
    assert_eq!(
        import.panels,
        shaped(
            vec![
                panel(
                    "Clients waiting on orders_db + billing_db · waiting",
                    &format!(
                        "sum by (database) (pgbouncer_pools_client_waiting_connections{{database=~\"{db}\"}})"
                    ),
                    Unit::Count,
                    Some(5.0),
                    Some(20.0),
                    BadWhen::Above,
                    Some("{{database}} waiting"),
                ),
                // Query B has its own unit and thresholds (a byFrameRefID override).
                panel(
                    "Clients waiting on orders_db + billing_db · longest wait",
                    &format!(
                        "max by (database) (pgbouncer_pools_client_maxwait_seconds{{database=~\"{db}\"}})"
                    ),
                    Unit::Seconds,
                    None,
                    Some(1.0),
                    BadWhen::Above,
                    Some("{{database}} longest wait"),
                ),
                panel(
                    "Mixed sources",
                    "sum(rate(pgbouncer_stats_queries_pooled_total[1m]))",
                    Unit::PerSecond,
                    None,
                    None,
                    BadWhen::Above,
                    None,
                ),
                // Percentage thresholds of min 0 .. max 40: red below 25 % is below 10.
                panel(
                    "Free pool slots",
                    "min(pgbouncer_pools_server_idle_connections)",
                    Unit::Count,
                    None,
                    Some(10.0),
                    BadWhen::Below,
                    None,
                ),
            ],
            &[],
            60,
        )
    );
    assert_findings(&import.warnings, &[]);
    assert_findings(
        &import.skipped,
        &[
            ("spec.panels[1].targets[1]", "data source \"elasticsearch\""),
            ("spec.panels[1].targets[2]", "server-side expression"),
            (
                "spec.panels[3]",
                "a copy Grafana made when repeating panel 1",
            ),
        ],
    );
}

#[test]
fn grafana_4_rows() {
    let import = offline(&fixture("rows.json"));
    assert_eq!(import.model, Model::Classic);
    assert_eq!(
        import.panels,
        shaped(
            vec![
                // Range 3 h over the panel's 960 pixels is 11.25 s, rounded to 10 s, at least the
                // 15 s scrape: 15 s (Grafana's rule).
                // singlestat colours red, orange, green: bad below.
                panel(
                    "Success ratio",
                    "sum(rate(app_requests_total{code!~\"5..\"}[15s])) / sum(rate(app_requests_total[15s]))",
                    Unit::Percent,
                    Some(0.99),
                    Some(0.95),
                    BadWhen::Below,
                    None,
                ),
                panel(
                    "Requests",
                    "(sum(rate(app_requests_total[1m])) * 60) / 60",
                    Unit::PerSecond,
                    None,
                    None,
                    BadWhen::Above,
                    Some("all"),
                ),
            ],
            &[Some("Availability"), Some("Load")],
            10,
        )
    );
    assert_findings(&import.warnings, &[]);
    assert_findings(
        &import.skipped,
        &[("rows[1].panels[1]", "the panel is a string")],
    );
}

#[test]
fn v2_resource_fixture() {
    // `$service` keeps its saved value, which Prometheus gives.
    let resolver = Fixed {
        answers: vec![(
            "service",
            Some("db_pool_connections_in_use"),
            Ok(vec!["checkout"]),
        )],
        asked: Mutex::new(Vec::new()),
    };
    let import = runtime()
        .block_on(grafana::import(
            &fixture("v2.json"),
            Some(&resolver),
            ImportOptions::default(),
        ))
        .unwrap();
    assert_eq!(import.model, Model::V2Resource);
    assert_eq!(import.title.as_deref(), Some("Database pools (V2)"));
    assert_eq!(
        import.panels,
        shaped(
            vec![
                // In layout order. Range 30 m over 960 pixels is 1.9 s, rounded to 2 s, at least
                // the 30 s minimum interval: 30 s; $__rate_interval is max(30 + 30, 4 × 30) s = 2 m.
                panel(
                    "Pool wait",
                    "(histogram_quantile(0.99, sum by (le) (rate(db_pool_wait_seconds_bucket{service=\"checkout\"}[2m])))) / 1000000",
                    Unit::Seconds,
                    None,
                    None,
                    BadWhen::Above,
                    Some("p99"),
                ),
                panel(
                    "Pool saturation",
                    "max by (pod) (db_pool_connections_in_use{service=\"checkout\", pod=~\"checkout-.+\"} / db_pool_connections_max{service=\"checkout\", pod=~\"checkout-.+\"})",
                    Unit::Percent,
                    Some(0.8),
                    Some(0.95),
                    BadWhen::Above,
                    Some("{{pod}}"),
                ),
            ],
            &[Some("Pools"), Some("Pools")],
            15,
        )
    );
    assert_findings(&import.warnings, &[]);
    assert_findings(
        &import.skipped,
        &[
            ("spec.elements.panel-2.spec.data.spec.queries[1]", "hidden"),
            ("spec.elements.panel-5", "data source \"loki\""),
            ("spec.elements.panel-3", "\"text\" panel"),
            ("spec.elements.panel-4", "library panel \"Fleet overview\""),
        ],
    );
}

/// `(label, selector, values or error)`.
type Answer = (
    &'static str,
    Option<&'static str>,
    Result<Vec<&'static str>, &'static str>,
);

/// A resolver with fixed answers that records what it was asked.
struct Fixed {
    answers: Vec<Answer>,
    asked: Mutex<Vec<(String, Option<String>)>>,
}

impl VariableResolver for Fixed {
    fn describe(&self) -> String {
        "fixed answers".into()
    }

    fn label_values(
        &self,
        label: &str,
        selector: Option<&str>,
    ) -> BoxFuture<'static, Result<Vec<String>, ResolveError>> {
        self.asked
            .lock()
            .unwrap()
            .push((label.to_string(), selector.map(str::to_string)));
        let answer = self
            .answers
            .iter()
            .find(|(l, s, _)| *l == label && *s == selector)
            .map(|(_, _, a)| a.clone())
            .unwrap_or(Err("no such series"));
        async move {
            answer
                .map(|v| v.into_iter().map(str::to_string).collect())
                .map_err(|e| ResolveError(e.to_string()))
        }
        .boxed()
    }

    /// Answered as the label `query_result` with the expression as selector.
    fn query_result(&self, expr: &str) -> BoxFuture<'static, Result<Vec<String>, ResolveError>> {
        self.label_values("query_result", Some(expr))
    }
}

#[test]
fn label_values_are_resolved_in_order_through_the_resolver() {
    let resolver = Fixed {
        answers: vec![
            (
                "service",
                Some("app_requests_total"),
                Ok(vec!["checkout", "cart"]),
            ),
            (
                "pod",
                Some("app_requests_total{service=\"checkout\"}"),
                Ok(vec!["checkout-1", "checkout-0"]),
            ),
            (
                "pod",
                Some("app_requests_total{service=~\"checkout\"}"),
                Ok(vec!["checkout-0", "checkout-1"]),
            ),
            ("instance", None, Err("connection refused")),
            (
                "query_result",
                Some("app_build_info"),
                Ok(vec!["app_build_info{version=\"1.4.3\"} 1 1700000000000"]),
            ),
        ],
        asked: Mutex::new(Vec::new()),
    };
    let import = runtime()
        .block_on(grafana::import(
            &fixture("classic.json"),
            Some(&resolver),
            ImportOptions::default(),
        ))
        .unwrap();
    // Each variable after the ones its query uses: `$pod` and `$replica` use the `$service`
    // just resolved, formatted as each is (`=` single, `=~` a regex).
    let asked = |l: &str, s: Option<&str>| (l.to_string(), s.map(str::to_string));
    assert_eq!(
        *resolver.asked.lock().unwrap(),
        vec![
            asked("service", Some("app_requests_total")),
            asked("pod", Some("app_requests_total{service=\"checkout\"}")),
            asked("pod", Some("app_requests_total{service=~\"checkout\"}")),
            asked("instance", None),
            asked("query_result", Some("app_build_info")),
        ]
    );
    // `$pod` is "All" without a custom all value: every value, as Grafana spells it (in
    // the order found: the variable has no sort). `$replica` (multi, saved "retired-7", gone)
    // takes the first value, as Grafana does.
    let all = classic_panels("checkout", "checkout-0", "$instance");
    assert_eq!(
        all[0].query,
        "sum by (pod) ( rate(app_requests_total{service=\"checkout\", pod=~\".*\"}[1m]) )"
    );
    let mut expected = all.clone();
    expected[0].query =
        "sum by (pod) ( rate(app_requests_total{service=\"checkout\", pod=~\"(checkout-1|checkout-0)\"}[1m]) )"
            .into();
    assert_eq!(import.panels, converted(expected));
    let mut warnings = vec![
        (
            "templating.list[6]",
            "$replica: its saved value \"retired-7\" is not among the 2 found; the panels use the first, \"checkout-0\"",
        ),
        (
            "templating.list[7]",
            "$instance (label_values(instance)) could not be looked up in fixed answers: connection refused; queries using $instance are not converted",
        ),
        ("templating.list[9]", "ad hoc filter"),
        // query_result's text through the variable's regex.
        (
            "templating.list[11]",
            "$version: its saved value \"1.4.2\" is not among the 1 found; the panels use the first, \"1.4.3\"",
        ),
    ];
    warnings.extend(classic_panel_warnings(true));
    assert_findings(&import.warnings, &warnings);
    assert_findings(&import.skipped, &classic_skipped(&["instance"]));
}

// ---------------------------------------------------------------------------------------------
// Hostile input.

#[test]
fn files_that_are_not_dashboards_are_errors_that_say_so() {
    let big = format!(
        "{{\"title\": \"{}\"}}",
        "x".repeat(grafana::MAX_INPUT_BYTES)
    );
    assert!(matches!(
        grafana::parse(&big, ImportOptions::default()),
        Err(GrafanaError::TooLarge { .. })
    ));
    // Nested far past serde_json's depth limit: an error, not a stack overflow.
    let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    let e = grafana::parse(&deep, ImportOptions::default()).unwrap_err();
    assert!(matches!(e, GrafanaError::Json { .. }), "{e}");
    let deep_panels = format!(
        "{{\"panels\": {}{}}}",
        "[{\"type\":\"row\",\"panels\":".repeat(5_000),
        "[]}]".repeat(5_000)
    );
    assert!(grafana::parse(&deep_panels, ImportOptions::default()).is_err());
    for (text, says) in [
        ("[1, 2]", "the top level is a list"),
        ("{}", "an empty object"),
        ("{\"foo\": 1, \"bar\": 2}", "keys \"bar\", \"foo\""),
        ("{\"panels\": [", "not valid JSON at line 1"),
        ("\"\\u001b[2J\"", "the top level is a string"),
    ] {
        let e = grafana::parse(text, ImportOptions::default()).unwrap_err();
        assert!(e.to_string().contains(says), "{text}: {e}");
        assert!(warroom::sanitize::is_clean(&e.to_string(), false), "{e}");
    }
}

#[test]
fn wrong_types_cost_only_their_own_panel() {
    let text = serde_json::json!({
        "title": 5,
        "refresh": [],
        "time": "now",
        "templating": {"list": "nope"},
        "__inputs": {"a": 1},
        "panels": [
            5,
            "text",
            null,
            {"type": "row", "panels": "nope"},
            {"type": "timeseries", "title": "targets object", "targets": {"expr": "up"}},
            {"type": "timeseries", "title": ["x"], "id": 7,
             "targets": [5, {"expr": 7, "refId": "B"}, {"expr": "up", "legendFormat": 9, "hide": "yes"}]},
            {"type": "timeseries", "title": "bad field config",
             "fieldConfig": {"defaults": {"unit": 5, "thresholds": {"steps": "x"}}, "overrides": "x"},
             "targets": [{"expr": "up", "refId": "A"}]},
            {"type": "timeseries", "title": "bad step",
             "fieldConfig": {"defaults": {"thresholds": {"steps": [{"color": "red", "value": "high"}]}}},
             "targets": [{"expr": "up", "refId": "A"}]},
            {"type": {"x": 1}, "title": "odd type", "datasource": 17, "targets": [{"expr": "sum(up)"}]},
            {"type": "timeseries", "title": "empty expr", "targets": [{"expr": "  ", "refId": "A"}]},
        ],
        "rows": "old"
    })
    .to_string();
    let import = offline(&text);
    use BadWhen::Above;
    assert_eq!(
        import.panels,
        vec![
            panel("Panel 7", "up", Unit::Count, None, None, Above, None),
            panel(
                "bad field config",
                "up",
                Unit::Count,
                None,
                None,
                Above,
                None
            ),
            panel("bad step", "up", Unit::Count, None, None, Above, None),
            panel("odd type", "sum(up)", Unit::Count, None, None, Above, None),
        ]
    );
    assert_findings(
        &import.warnings,
        &[
            ("templating.list", "\"templating.list\" is a string"),
            ("panels[6].targets[0]", "\"unit\" is a number"),
            ("panels[6].targets[0]", "\"thresholds.steps\" is a string"),
            (
                "panels[7].targets[0]",
                "threshold step 0 has value \"high\"",
            ),
        ],
    );
    assert_findings(
        &import.skipped,
        &[
            ("panels[0]", "the panel is a number"),
            ("panels[1]", "the panel is a string"),
            ("panels[2]", "the panel is null"),
            ("panels[3]", "the row's \"panels\" is a string"),
            ("panels[4]", "\"targets\" is an object"),
            ("panels[5].targets[0]", "the query is a number"),
            ("panels[5].targets[1]", "no PromQL expression"),
            ("panels[9].targets[0]", "no PromQL expression"),
            ("rows", "\"rows\" is a string"),
        ],
    );
}

#[test]
fn hostile_text_never_reaches_the_panels_raw() {
    for sample in warroom::sanitize::HOSTILE_SAMPLES {
        let text = serde_json::json!({
            "title": sample,
            "templating": {"list": [
                {"name": "v", "type": "constant", "query": sample},
                {"name": "c", "type": "custom", "query": format!("a,{sample}"),
                 "current": {"value": [sample]}, "multi": true},
            ]},
            "panels": [{
                "type": sample,
                "title": sample,
                "datasource": {"type": sample, "uid": sample},
                "fieldConfig": {"defaults": {"unit": sample,
                    "thresholds": {"steps": [{"color": sample, "value": null}, {"color": "red", "value": 1}]}}},
                "targets": [
                    {"expr": format!("up{{a=\"$v\", b=~\"$c\", c=\"{}\"}}", sample.replace('\\', "\\\\").replace('"', "\\\"")),
                     "legendFormat": format!("{sample} {{{{pod}}}}"), "refId": sample},
                    {"expr": format!("up{{a=\"$v\"}} {sample}"), "refId": "B"},
                ],
            }],
        })
        .to_string();
        let import = offline(&text);
        for p in &import.panels {
            for field in [&p.title, &p.query] {
                assert!(
                    warroom::sanitize::is_clean(field, false),
                    "{sample:?}: {field:?}"
                );
            }
            if let Some(l) = &p.legend {
                assert!(warroom::sanitize::is_clean(l, false), "{sample:?}: {l:?}");
            }
            assert!(
                promql_parser::parser::parse(&p.query).is_ok(),
                "{sample:?}: {}",
                p.query
            );
        }
        for f in import.warnings.iter().chain(&import.skipped) {
            assert!(warroom::sanitize::is_clean(&f.message, false), "{f}");
            assert!(warroom::sanitize::is_clean(&f.path, false), "{f}");
        }
    }
}

#[test]
fn a_huge_unitless_interval_is_refused_not_a_panic() {
    // Found by the fuzz below: promql-parser 0.11 panics on `x[1.7976931348623157e308]`.
    let text = serde_json::json!({
        "templating": {"list": [{"name": "w", "type": "interval", "current": {"value": f64::MAX}}]},
        "panels": [{"type": "timeseries", "title": "t",
            "targets": [{"expr": "rate(x[$w])", "refId": "A"}, {"expr": "x offset $w", "refId": "B"}]}],
    })
    .to_string();
    let import = offline(&text);
    assert!(import.panels.is_empty());
    assert_findings(
        &import.skipped,
        &[
            (
                "panels[0].targets[0]",
                "is beyond any range Prometheus can hold",
            ),
            (
                "panels[0].targets[1]",
                "is beyond any range Prometheus can hold",
            ),
        ],
    );
}

#[test]
fn huge_dashboards_are_capped_with_a_finding() {
    let panels: Vec<serde_json::Value> = (0..6000)
        .map(|i| {
            serde_json::json!({"type": "stat", "title": format!("p{i}"),
                "targets": [{"expr": format!("up{{n=\"{i}\"}}"), "refId": "A"}]})
        })
        .collect();
    let import = offline(&serde_json::json!({ "panels": panels }).to_string());
    assert_eq!(import.panels.len(), grafana::MAX_PANELS);
    assert_eq!(import.panels[0].title, "p0");
    assert_eq!(
        import.panels[grafana::MAX_PANELS - 1].title,
        format!("p{}", grafana::MAX_PANELS - 1)
    );
    assert_findings(
        &import.skipped,
        &[(
            &format!("panels[{}]", grafana::MAX_PANELS),
            "500 panels were imported",
        )],
    );
    // Panels that are all skipped are examined up to a limit, then one finding says so.
    let texts: Vec<serde_json::Value> = (0..6000)
        .map(|i| serde_json::json!({"type": "text", "title": format!("t{i}")}))
        .collect();
    let import = offline(&serde_json::json!({ "panels": texts }).to_string());
    assert!(import.panels.is_empty());
    assert_eq!(import.skipped.len(), grafana::MAX_EXAMINED + 1);
    let last = import.skipped.last().unwrap();
    assert_eq!(last.path, format!("panels[{}]", grafana::MAX_EXAMINED));
    assert!(
        last.message.contains("only the first 5000 are examined"),
        "{last}"
    );
}

// ---------------------------------------------------------------------------------------------
// A real Prometheus.

/// `(service, pod)` of the loopback exposition.
const PODS: &[(&str, &str)] = &[
    ("checkout", "checkout-0"),
    ("checkout", "checkout-1"),
    // A value that needs regex and PromQL string escaping on its way into a query.
    ("checkout", "checkout.\"canary\"\\x"),
    ("cart", "cart-0"),
];

/// A label value as the text exposition format writes it.
fn exposed(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"")
}

fn exposition() -> String {
    let mut m = String::new();
    m += "# TYPE app_requests_total counter\n";
    for (s, p) in PODS.iter().map(|(s, p)| (s, exposed(p))) {
        m += &format!("app_requests_total{{service=\"{s}\",pod=\"{p}\",code=\"200\"}} {{N}}\n");
    }
    m += "# TYPE app_request_duration_seconds histogram\n";
    for (s, p) in PODS.iter().map(|(s, p)| (s, exposed(p))) {
        for le in ["0.1", "0.5", "+Inf"] {
            m += &format!(
                "app_request_duration_seconds_bucket{{service=\"{s}\",pod=\"{p}\",le=\"{le}\"}} {{N}}\n"
            );
        }
        m += &format!("app_request_duration_seconds_sum{{service=\"{s}\",pod=\"{p}\"}} {{N}}\n");
        m += &format!("app_request_duration_seconds_count{{service=\"{s}\",pod=\"{p}\"}} {{N}}\n");
    }
    for (name, v) in [
        ("app_instance_up", "1"),
        ("db_pool_connections_in_use", "12"),
        ("db_pool_connections_max", "40"),
        ("process_resident_memory_bytes", "1.5e+08"),
    ] {
        m += &format!("# TYPE {name} gauge\n");
        for (s, p) in PODS.iter().map(|(s, p)| (s, exposed(p))) {
            m += &format!("{name}{{service=\"{s}\",pod=\"{p}\"}} {v}\n");
        }
    }
    m += "# TYPE process_restarts_total counter\n";
    for (s, p) in PODS.iter().map(|(s, p)| (s, exposed(p))) {
        m += &format!("process_restarts_total{{service=\"{s}\",pod=\"{p}\"}} 0\n");
    }
    m += "# TYPE app_retries_total counter\n";
    m += "app_retries_total{service=\"checkout\",layer=\"client\"} {N}\n";
    m += "# TYPE queue_depth gauge\nqueue_depth{queue=\"emails\"} 3\n";
    m += "# TYPE db_query_duration_seconds summary\n";
    m += "db_query_duration_seconds_sum {N}\ndb_query_duration_seconds_count {N}\n";
    m += "# TYPE pgbouncer_pools_client_waiting_connections gauge\n";
    m += "pgbouncer_pools_client_waiting_connections{database=\"orders_db\"} 2\n";
    m += "# TYPE db_pool_wait_seconds histogram\n";
    m += "db_pool_wait_seconds_bucket{service=\"checkout\",le=\"+Inf\"} {N}\n";
    m
}

/// Serve the exposition on loopback from a thread (counters grow by ten a scrape);
/// returns `host:port`.
fn exporter() -> String {
    let template = exposition();
    crate::support::expositions::serve_with(move |n| template.replace("{N}", &(n * 10).to_string()))
}

fn client(
    url: &str,
    timeout: std::time::Duration,
) -> warroom::metrics::prometheus::PrometheusClient {
    let mut o = warroom::metrics::prometheus::ClientOptions::new(url);
    o.timeout = timeout;
    warroom::metrics::prometheus::PrometheusClient::new(o).expect("client")
}

/// The series an instant query returns, or the error (a `bad_data` means the query is wrong).
fn instant(
    rt: &tokio::runtime::Runtime,
    c: &warroom::metrics::prometheus::PrometheusClient,
    q: &str,
) -> Result<Vec<warroom::metrics::Series>, warroom::metrics::SourceError> {
    use warroom::metrics::{InstantQuery, Source};
    rt.block_on(c.query(InstantQuery {
        query: q.to_string(),
        time: None,
    }))
    .map(|a| a.series)
}

#[test]
fn label_values_come_from_a_real_prometheus_and_every_query_runs_there() {
    let target = exporter();
    let Some(prom) = prometheus::start(prometheus::PromOptions {
        targets: vec![target.clone()],
        ..Default::default()
    }) else {
        return;
    };
    let rt = runtime();
    let c = client(&prom.url, std::time::Duration::from_secs(5));
    // Until Prometheus has scraped twice (rates need two samples), bounded.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(40);
    loop {
        let ready = instant(&rt, &c, "count(rate(app_requests_total[1m]))")
            .ok()
            .and_then(|s| s.first().and_then(|s| s.points.last()).map(|p| p.v))
            == Some(PODS.len() as f64);
        if ready {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "Prometheus did not scrape the exposition twice within 40 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(250));
    }

    let import = rt
        .block_on(grafana::import(
            &fixture("classic.json"),
            Some(&c),
            ImportOptions::default(),
        ))
        .unwrap();
    // What Prometheus must have answered, from the exposition itself: `$service` keeps its
    // saved "checkout"; `$pod` ("All") becomes every checkout pod and `$replica` (saved
    // "retired-7", gone) the first, in the order Prometheus sorts label values; `$instance`
    // becomes the only target there is.
    let mut replicas: Vec<&str> = PODS
        .iter()
        .filter(|(s, _)| *s == "checkout")
        .map(|(_, p)| *p)
        .collect();
    replicas.sort();
    // Regex-escaped, then escaped for a PromQL string.
    let regex: Vec<String> = replicas
        .iter()
        .map(|p| {
            let escaped: String = p
                .chars()
                .flat_map(|c| {
                    let special = "\\^$.|?*+()[]{}".contains(c);
                    special.then_some('\\').into_iter().chain([c])
                })
                .collect();
            escaped.replace('\\', "\\\\").replace('"', "\\\"")
        })
        .collect();
    let mut expected = classic_panels("checkout", &regex[0], &target);
    expected[0].query = expected[0]
        .query
        .replace("pod=~\".*\"", &format!("pod=~\"({})\"", regex.join("|")));
    assert_eq!(import.panels, converted(expected));
    let picked = format!(
        "$instance: its saved value \"old-host:9100\" is not among the 1 found; the panels use the first, \"{target}\""
    );
    let first = format!(
        "$replica: its saved value \"retired-7\" is not among the {} found; the panels use the first, \"{}\"",
        replicas.len(),
        replicas[0]
    );
    let mut warnings = vec![
        ("templating.list[6]", first.as_str()),
        ("templating.list[7]", picked.as_str()),
        ("templating.list[9]", "ad hoc filter"),
    ];
    warnings.extend(classic_panel_warnings(true));
    assert_findings(&import.warnings, &warnings);
    assert_findings(&import.skipped, &classic_skipped(&[]));

    // The resolved variables select the series they should.
    let by_title = |t: &str| {
        import
            .panels
            .iter()
            .find(|p| p.title == t)
            .unwrap_or_else(|| panic!("no panel {t}"))
    };
    let pods_of = |q: &str| {
        let mut pods: Vec<String> = instant(&rt, &c, q)
            .unwrap_or_else(|e| panic!("{q}: {e}"))
            .iter()
            .filter_map(|s| s.labels.get("pod").cloned())
            .collect();
        pods.sort();
        pods
    };
    assert_eq!(pods_of(&by_title("Latency · p99").query), replicas[..1]);
    assert_eq!(
        pods_of(&by_title("Request rate (payments)").query),
        replicas
    );
    let mut all: Vec<&str> = PODS.iter().map(|(_, p)| *p).collect();
    all.sort();
    assert_eq!(pods_of(&by_title("Memory").query), all);

    // Every query of every fixture, with or without a Prometheus, is PromQL Prometheus
    // accepts, with no `$` left in it. Imported offline, the queries keep their variables;
    // resolved as the console resolves them (its `[[variable]]` entries read back from the
    // TOML, against the same Prometheus), they are the queries `--prometheus` gives.
    let mut checked = 0;
    for name in ["classic.json", "v1.json", "rows.json", "v2.json"] {
        let with = rt
            .block_on(grafana::import(
                &fixture(name),
                Some(&c),
                ImportOptions::default(),
            ))
            .unwrap();
        let opened = console_queries(&rt, &c, &offline(&fixture(name)));
        let queries: Vec<&str> = with.panels.iter().map(|p| p.query.as_str()).collect();
        assert_eq!(opened, queries, "{name}");
        for q in queries
            .iter()
            .chain(&opened.iter().map(String::as_str).collect::<Vec<_>>())
        {
            assert!(!q.contains('$'), "{name}: {q:?}");
            if let Err(e) = instant(&rt, &c, q) {
                panic!("{name}: Prometheus refuses {q:?}: {e}");
            }
            checked += 1;
        }
    }
    // All but the `$cluster` query of classic, with and without a Prometheus at import.
    assert_eq!(checked, (9 + 4 + 2 + 2) * 2);
}

#[test]
fn a_prometheus_that_is_down_leaves_the_variables_with_warnings() {
    let port = prometheus::free_port();
    let c = client(
        &format!("http://127.0.0.1:{port}"),
        std::time::Duration::from_secs(2),
    );
    let started = std::time::Instant::now();
    let import = runtime()
        .block_on(grafana::import(
            &fixture("classic.json"),
            Some(&c),
            ImportOptions::default(),
        ))
        .unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let unbound = ["service", "pod", "replica", "instance"];
    assert_eq!(
        import.panels,
        converted(classic_panels("$service", "$replica", "$instance"))
    );
    let refused =
        format!("could not be looked up in prometheus http://127.0.0.1:{port}/: unreachable");
    let mut warnings = vec![
        ("templating.list[4]", refused.as_str()),
        (
            "templating.list[5]",
            "depends on $service, which has no value, so it was not looked up; queries using $pod are not converted",
        ),
        ("templating.list[6]", "depends on $service"),
        ("templating.list[7]", refused.as_str()),
        ("templating.list[9]", "ad hoc filter"),
        ("templating.list[11]", refused.as_str()),
    ];
    warnings.extend(classic_panel_warnings(false));
    assert_findings(&import.warnings, &warnings);
    assert_findings(&import.skipped, &classic_skipped(&unbound));
}

/// A resolver that never answers.
struct Hung;

impl VariableResolver for Hung {
    fn describe(&self) -> String {
        "a hung server".into()
    }

    fn label_values(
        &self,
        _: &str,
        _: Option<&str>,
    ) -> BoxFuture<'static, Result<Vec<String>, ResolveError>> {
        futures::future::pending().boxed()
    }
}

#[test]
fn a_hung_resolver_costs_the_budget_and_no_more() {
    let options = ImportOptions {
        resolve_budget: std::time::Duration::from_millis(300),
        ..ImportOptions::default()
    };
    let started = std::time::Instant::now();
    let import = runtime()
        .block_on(grafana::import(
            &fixture("classic.json"),
            Some(&Hung),
            options,
        ))
        .unwrap();
    let took = started.elapsed();
    assert!(took >= std::time::Duration::from_millis(300), "{took:?}");
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    let mut warnings = vec![
        (
            "templating.list[4]",
            "could not be looked up: no answer within 0.3s; queries using $service are not converted",
        ),
        ("templating.list[5]", "depends on $service"),
        ("templating.list[6]", "depends on $service"),
        (
            "templating.list[7]",
            "was not looked up: the 0.3s for all look-ups ran out; queries using $instance are not converted",
        ),
        ("templating.list[9]", "ad hoc filter"),
        ("templating.list[11]", "ran out"),
    ];
    warnings.extend(classic_panel_warnings(false));
    assert_findings(&import.warnings, &warnings);
    assert_eq!(
        import.panels,
        converted(classic_panels("$service", "$replica", "$instance"))
    );
}

// ---------------------------------------------------------------------------------------------
// Fuzz-ish: mutated fixtures never panic, and whatever comes out is a valid, clean panel.

mod fuzz {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

    const FIXTURES: &[&str] = &["classic.json", "v1.json", "rows.json", "v2.json"];

    /// Every JSON pointer in `v`, parents before children.
    fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
        out.push(at.clone());
        match v {
            Value::Object(o) => {
                for (k, c) in o {
                    let k = k.replace('~', "~0").replace('/', "~1");
                    pointers(c, format!("{at}/{k}"), out);
                }
            }
            Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    pointers(c, format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }

    /// Strings that poke at the converter's corners.
    const NASTY: &[&str] = &[
        "$__rate_interval",
        "${__interval}",
        "[[__range]]",
        "$service",
        "${service:regex}",
        "${",
        "[[",
        "{{",
        "}}",
        "label_values(",
        "label_values(up{a=\"$x\"}, pod)",
        "$__all",
        "sum(rate(x[5m]))",
        "up{a=\"\\",
        "`",
        "# comment",
        "-- Mixed --",
        "${DS_PROMETHEUS}",
        "percent",
        "ms",
        "red",
        "row",
        "text",
        "/(.*)/",
        "(",
        "",
    ];

    fn replacement(kind: u8, seed: usize, donor: &Value) -> Value {
        let hostile = warroom::sanitize::HOSTILE_SAMPLES;
        match kind % 10 {
            0 => Value::Null,
            1 => Value::from(seed as f64 - 1e6),
            2 => Value::from(NASTY[seed % NASTY.len()]),
            3 => Value::from(hostile[seed % hostile.len()]),
            4 => Value::Bool(seed.is_multiple_of(2)),
            5 => Value::Array(Vec::new()),
            6 => Value::Object(serde_json::Map::new()),
            7 => donor.clone(),
            8 => Value::Array(vec![donor.clone(), donor.clone()]),
            _ => Value::from(f64::MAX),
        }
    }

    fn mutate(mut v: Value, edits: &[(usize, u8, usize)]) -> Value {
        for &(at, kind, seed) in edits {
            let mut all = Vec::new();
            pointers(&v, String::new(), &mut all);
            let target = all[at % all.len()].clone();
            let donor = v
                .pointer(&all[seed % all.len()])
                .cloned()
                .unwrap_or(Value::Null);
            if kind % 13 == 12 {
                // Delete a key or element.
                if let Some((parent, key)) = target.rsplit_once('/')
                    && let Some(p) = v.pointer_mut(parent)
                {
                    match p {
                        Value::Object(o) => {
                            o.remove(&key.replace("~1", "/").replace("~0", "~"));
                        }
                        Value::Array(a) => {
                            if let Ok(i) = key.parse::<usize>()
                                && i < a.len()
                            {
                                a.remove(i);
                            }
                        }
                        _ => {}
                    }
                }
                continue;
            }
            let new = replacement(kind, seed, &donor);
            if let Some(slot) = v.pointer_mut(&target) {
                *slot = new;
            }
        }
        v
    }

    /// Answers every look-up with values that need escaping.
    struct Nasty;

    impl VariableResolver for Nasty {
        fn describe(&self) -> String {
            "nasty".into()
        }

        fn label_values(
            &self,
            label: &str,
            _: Option<&str>,
        ) -> BoxFuture<'static, Result<Vec<String>, ResolveError>> {
            let values = if label.len().is_multiple_of(3) {
                Err(ResolveError("\u{1b}[2Jrefused".into()))
            } else {
                Ok(vec![
                    "a\"b".to_string(),
                    "back\\slash".to_string(),
                    "\u{1b}]0;title\u{7}".to_string(),
                    ".*(".to_string(),
                    "10.0.0.1:9100".to_string(),
                ])
            };
            async move { values }.boxed()
        }
    }

    #[track_caller]
    fn check(import: &Import, resolved: bool) {
        assert!(import.panels.len() <= grafana::MAX_PANELS);
        for p in &import.panels {
            assert!(!p.title.trim().is_empty(), "{p:?}");
            for text in [&p.title, &p.query] {
                assert!(warroom::sanitize::is_clean(text, false), "{p:?}");
            }
            if let Some(l) = &p.legend {
                assert!(warroom::sanitize::is_clean(l, false), "{p:?}");
            }
            // A query that still names a variable is kept for the console or the recorder to
            // resolve (issue 31): it need parse only once its variables have values.
            assert!(
                promql_parser::parser::parse(&p.query).is_ok()
                    || (!resolved && p.query.contains('$')),
                "unparsable query in {p:?}"
            );
            for t in [p.warn, p.crit].into_iter().flatten() {
                assert!(t.is_finite(), "{p:?}");
            }
            if let (Some(w), Some(c)) = (p.warn, p.crit) {
                match p.bad_when {
                    BadWhen::Above => assert!(w <= c, "{p:?}"),
                    BadWhen::Below => assert!(w >= c, "{p:?}"),
                }
            }
        }
        for f in import.warnings.iter().chain(&import.skipped) {
            assert!(warroom::sanitize::is_clean(&f.message, false), "{f}");
            assert!(warroom::sanitize::is_clean(&f.path, false), "{f}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

        #[test]
        fn mutated_dashboards_import_cleanly(
            which in 0..FIXTURES.len(),
            edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<usize>()), 1..8),
        ) {
            let base: Value = serde_json::from_str(&fixture(FIXTURES[which])).unwrap();
            let text = mutate(base, &edits).to_string();
            let rt = runtime();
            match grafana::parse(&text, ImportOptions::default()) {
                Err(e) => prop_assert!(matches!(e, GrafanaError::NotADashboard { .. }), "{e}"),
                Ok(mut d) => {
                    check(&d.convert(), false);
                    rt.block_on(d.resolve(&Nasty));
                    check(&d.convert(), true);
                }
            }
        }

        #[test]
        fn damaged_bytes_never_panic(
            which in 0..FIXTURES.len(),
            cuts in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        ) {
            let mut bytes = fixture(FIXTURES[which]).into_bytes();
            for (at, b) in cuts {
                let i = at % bytes.len();
                bytes[i] = b;
            }
            let text = String::from_utf8_lossy(&bytes);
            if let Ok(d) = grafana::parse(&text, ImportOptions::default()) {
                check(&d.convert(), false);
            }
        }
    }
}

#[test]
fn repeated_titles_take_their_row_then_a_number() {
    let target = |e: &str| serde_json::json!([{"expr": e, "refId": "A"}]);
    let classic = serde_json::json!({"panels": [
        {"type": "row", "title": "Primary", "collapsed": false, "panels": []},
        {"type": "timeseries", "title": "Connections", "targets": target("pg_up")},
        {"type": "row", "title": "Replica", "collapsed": true, "panels": [
            {"type": "timeseries", "title": "Connections", "targets": target("pg_up")},
            {"type": "timeseries", "title": "Connections", "targets": target("pg_up")},
        ]},
        {"type": "timeseries", "title": "Lag", "targets": target("pg_up")},
        {"type": "heatmap", "title": "Latency buckets", "datasource": "Loki logs", "targets": target("x")},
        {"type": "heatmap", "title": "Latency buckets", "targets": target("sum by (le) (x_bucket)")},
    ]});
    let import = offline(&classic.to_string());
    let titles: Vec<&str> = import.panels.iter().map(|p| p.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "Primary · Connections",
            "Replica · Connections",
            "Replica · Connections (2)",
            "Lag",
            "Latency buckets"
        ]
    );
    assert_findings(
        &import.warnings,
        &[(
            "panels[5]",
            "a heatmap in Grafana; warroom draws each bucket as a line",
        )],
    );
    assert_findings(
        &import.skipped,
        &[("panels[4]", "data source \"Loki logs\" (by its name)")],
    );

    let element = |title: &str| {
        serde_json::json!({"kind": "Panel", "spec": {"title": title, "data": {"kind": "QueryGroup",
            "spec": {"queries": [{"kind": "PanelQuery", "spec": {"refId": "A", "query": {
                "kind": "DataQuery", "group": "prometheus", "spec": {"expr": "up"}}}}]}}}})
    };
    let item = |name: &str| serde_json::json!({"kind": "GridLayoutItem", "spec": {"element": {"kind": "ElementReference", "name": name}}});
    let v2 = serde_json::json!({
        "apiVersion": "dashboard.grafana.app/v2beta1", "kind": "Dashboard",
        "spec": {
            "elements": {"a": element("Up"), "b": element("Up"), "c": element("Other")},
            "layout": {"kind": "TabsLayout", "spec": {"tabs": [
                {"kind": "TabsLayoutTab", "spec": {"title": "East", "layout": {"kind": "GridLayout", "spec": {"items": [item("b")]}}}},
                {"kind": "TabsLayoutTab", "spec": {"title": "West", "layout": {"kind": "GridLayout", "spec": {"items": [item("a")]}}}},
            ]}},
        },
    });
    let import = offline(&v2.to_string());
    let titles: Vec<&str> = import.panels.iter().map(|p| p.title.as_str()).collect();
    assert_eq!(titles, ["East · Up", "West · Up", "Other"]);
}

/// Overrides of one query decide for that query: "Show thresholds" on for B only gives B its
/// level, a colour override away from thresholds takes a stat's away, and what is dropped is
/// reported at the override's own path.
#[test]
fn threshold_overrides_decide_per_query() {
    let steps = serde_json::json!({"mode": "absolute", "steps": [
        {"color": "green", "value": null}, {"color": "red", "value": 10}]});
    let text = serde_json::json!({
        "panels": [
            {"type": "timeseries", "title": "Errors",
             "fieldConfig": {"defaults": {"thresholds": steps}, "overrides": [
                {"matcher": {"id": "byFrameRefID", "options": "B"}, "properties": [
                    {"id": "custom.thresholdsStyle", "value": {"mode": "line"}}]}]},
             "targets": [{"expr": "a", "refId": "A", "legendFormat": "a"},
                         {"expr": "b", "refId": "B", "legendFormat": "b"}]},
            {"type": "stat", "title": "Queue",
             "fieldConfig": {"defaults": {}, "overrides": [
                {"matcher": {"id": "byFrameRefID", "options": "A"}, "properties": [
                    {"id": "color", "value": {"mode": "fixed", "fixedColor": "blue"}},
                    {"id": "thresholds", "value": steps}]}]},
             "targets": [{"expr": "q", "refId": "A"}]},
        ]
    })
    .to_string();
    let import = offline(&text);
    let levels: Vec<(&str, Option<f64>)> = import
        .panels
        .iter()
        .map(|p| (p.title.as_str(), p.crit))
        .collect();
    assert_eq!(
        levels,
        [
            ("Errors · a", None),
            ("Errors · b", Some(10.0)),
            ("Queue", None)
        ]
    );
    assert_findings(
        &import.warnings,
        &[
            (
                "panels[0].fieldConfig.defaults.thresholds",
                "\"Show thresholds\" (custom.thresholdsStyle.mode) is off",
            ),
            (
                "panels[1].fieldConfig.overrides[0].properties[1]",
                "its colour mode is \"fixed\", not from thresholds",
            ),
        ],
    );
}
