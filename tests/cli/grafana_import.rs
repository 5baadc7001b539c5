//! `import::grafana`: Grafana dashboards (classic, the V1 resource, V2) to warroom panels.
//! Fixtures are written for these tests (tests/fixtures/grafana/); the resolver test runs a
//! real Prometheus scraping a loopback exposition so `label_values` answers come from
//! Prometheus itself, and every converted query is sent to it.

use crate::support::prometheus;

use futures::FutureExt;
use futures::future::BoxFuture;
use std::sync::Mutex;
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
    }
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
    vec![
        // Range 6 h over 300 points is 72 s, up to a multiple of the 30 s refresh: 90 s;
        // $__rate_interval is max(90 s + 15 s scrape, 4 × 15 s) = 105 s.
        panel(
            "Request rate (payments)",
            &format!(
                "sum by (pod) ( rate(app_requests_total{{service=\"{service}\", pod=~\".*\"}}[105s]) )"
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
            &format!("sum by (layer) (rate(app_retries_total{{service=\"{service}\"}}[90s]))"),
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
    ]
}

const CLASSIC_SKIPPED: &[(&str, &str)] = &[
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

const CLASSIC_PANEL_WARNINGS: &[(&str, &str)] = &[
    (
        "panels[1].fieldConfig.defaults.thresholds",
        "thresholds (crit 1000, bad above) not imported as levels: Grafana does not draw them \
         on this panel, \"Show thresholds\" (custom.thresholdsStyle.mode) is off",
    ),
    (
        "panels[8].targets[0]",
        "unit \"lengthm\" has no warroom equivalent",
    ),
    ("panels[8].targets[0]", "thresholds mark a band"),
    ("panels[12]", "1 transformation(s)"),
    ("panels[12].targets[0]", "$cluster is not a variable"),
];

#[test]
fn classic_dashboard_without_a_prometheus() {
    let import = offline(&fixture("classic.json"));
    assert_eq!(import.model, Model::Classic);
    assert_eq!(import.title.as_deref(), Some("Checkout service"));
    assert_eq!(
        import.panels,
        classic_panels("$service", "$replica", "$instance")
    );
    let mut warnings = vec![
        (
            "templating.list[4]",
            "$service (label_values(app_requests_total, service)) needs a Prometheus",
        ),
        (
            "templating.list[6]",
            "$replica (label_values(app_requests_total{service=~\"$service\"}, pod)) needs a Prometheus",
        ),
        (
            "templating.list[7]",
            "$instance (label_values(instance)) needs a Prometheus",
        ),
        (
            "templating.list[9]",
            "ad hoc filter variable $Filters has 1 filter",
        ),
        (
            "templating.list[11]",
            "only label_values(…) is looked up, so it is kept as $version",
        ),
    ];
    warnings.extend_from_slice(CLASSIC_PANEL_WARNINGS);
    assert_findings(&import.warnings, &warnings);
    assert_findings(&import.skipped, CLASSIC_SKIPPED);
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
        vec![
            panel(
                "Clients waiting on orders_db, billing_db · waiting",
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
                "Clients waiting on orders_db, billing_db · longest wait",
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
        ]
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
        vec![
            // Range 3 h over 300 points is 36 s, up to a multiple of the 10 s refresh: 40 s.
            // singlestat colours red, orange, green: bad below.
            panel(
                "Success ratio",
                "sum(rate(app_requests_total{code!~\"5..\"}[40s])) / sum(rate(app_requests_total[40s]))",
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
        ]
    );
    assert_findings(&import.warnings, &[]);
    assert_findings(
        &import.skipped,
        &[("rows[1].panels[1]", "the panel is a string")],
    );
}

#[test]
fn v2_resource_fixture() {
    let import = offline(&fixture("v2.json"));
    assert_eq!(import.model, Model::V2Resource);
    assert_eq!(import.title.as_deref(), Some("Database pools (V2)"));
    assert_eq!(
        import.panels,
        vec![
            // In layout order. Range 30 m over 300 points is 6 s, up to a multiple of the 30 s
            // minimum interval: 30 s; $__rate_interval is max(30 + 30, 4 × 30) s = 2 m.
            panel(
                "Pool wait",
                "(histogram_quantile(0.99, sum by (le) (rate(db_pool_wait_seconds_bucket{service=\"$service\"}[2m])))) / 1000000",
                Unit::Seconds,
                None,
                None,
                BadWhen::Above,
                Some("p99"),
            ),
            panel(
                "Pool saturation",
                "max by (pod) (db_pool_connections_in_use{service=\"$service\", pod=~\"checkout-.+\"} / db_pool_connections_max{service=\"$service\", pod=~\"checkout-.+\"})",
                Unit::Percent,
                Some(0.8),
                Some(0.95),
                BadWhen::Above,
                Some("{{pod}}"),
            ),
        ]
    );
    assert_findings(
        &import.warnings,
        &[(
            "spec.variables[0]",
            "$service (label_values(db_pool_connections_in_use, service)) needs a Prometheus",
        )],
    );
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
}

#[test]
fn label_values_are_resolved_in_order_through_the_resolver() {
    let resolver = Fixed {
        answers: vec![
            (
                "service",
                Some("app_requests_total"),
                Ok(vec!["cart", "checkout"]),
            ),
            (
                "pod",
                Some("app_requests_total{service=~\"checkout\"}"),
                Ok(vec!["checkout-0", "checkout-1"]),
            ),
            ("instance", None, Err("connection refused")),
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
    // `$pod` is "All", which needs no look-up; `$replica` uses the `$service` just resolved.
    assert_eq!(
        *resolver.asked.lock().unwrap(),
        vec![
            (
                "service".to_string(),
                Some("app_requests_total".to_string())
            ),
            (
                "pod".to_string(),
                Some("app_requests_total{service=~\"checkout\"}".to_string())
            ),
            ("instance".to_string(), None),
        ]
    );
    assert_eq!(
        import.panels,
        classic_panels("checkout", "(checkout-0|checkout-1)", "$instance")
    );
    let mut warnings = vec![
        (
            "templating.list[7]",
            "$instance (label_values(instance)) could not be looked up in fixed answers: connection refused; kept as $instance",
        ),
        ("templating.list[9]", "ad hoc filter"),
        ("templating.list[11]", "kept as $version"),
    ];
    warnings.extend_from_slice(CLASSIC_PANEL_WARNINGS);
    assert_findings(&import.warnings, &warnings);
    assert_findings(&import.skipped, CLASSIC_SKIPPED);
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

/// Serve the exposition on loopback from a thread (counters grow by one a scrape);
/// returns `host:port`.
fn exporter() -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind exporter");
    let addr = listener.local_addr().expect("exporter address").to_string();
    let template = exposition();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut s) = stream else { continue };
            let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(2)));
            let mut buf = [0u8; 4096];
            let mut got = Vec::new();
            while !got.windows(4).any(|w| w == b"\r\n\r\n") && got.len() < 64 * 1024 {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => got.extend_from_slice(&buf[..k]),
                }
            }
            let body = template.replace("{N}", &(n * 10).to_string());
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
    // saved "checkout"; `$replica` (saved "retired-7", gone) becomes every checkout pod, sorted
    // as Prometheus sorts label values; `$instance` becomes the only target there is.
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
            p.chars()
                .flat_map(|c| {
                    let special = "\\^$.|?*+()[]{}".contains(c);
                    special.then_some('\\').into_iter().chain([c])
                })
                .collect()
        })
        .collect();
    let replica = format!("({})", regex.join("|"))
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    assert_eq!(import.panels, classic_panels("checkout", &replica, &target));
    let picked = format!(
        "$instance takes one value, and its saved value \"old-host:9100\" is not among the 1 found; the panels use \"{target}\""
    );
    let mut warnings = vec![
        ("templating.list[7]", picked.as_str()),
        ("templating.list[9]", "ad hoc filter"),
        ("templating.list[11]", "kept as $version"),
    ];
    warnings.extend_from_slice(CLASSIC_PANEL_WARNINGS);
    assert_findings(&import.warnings, &warnings);
    assert_findings(&import.skipped, CLASSIC_SKIPPED);

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
    assert_eq!(pods_of(&by_title("Latency · p99").query), replicas);
    assert_eq!(
        pods_of(&by_title("Request rate (payments)").query),
        replicas
    );
    let mut all: Vec<&str> = PODS.iter().map(|(_, p)| *p).collect();
    all.sort();
    assert_eq!(pods_of(&by_title("Memory").query), all);

    // Every query of every fixture, resolved or not, is PromQL Prometheus accepts.
    let mut checked = 0;
    for name in ["classic.json", "v1.json", "rows.json", "v2.json"] {
        let with = rt
            .block_on(grafana::import(
                &fixture(name),
                Some(&c),
                ImportOptions::default(),
            ))
            .unwrap();
        for p in with.panels.iter().chain(&offline(&fixture(name)).panels) {
            if let Err(e) = instant(&rt, &c, &p.query) {
                panic!("{name}: Prometheus refuses {:?}: {e}", p.query);
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 2 * (10 + 4 + 2 + 2));
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
    assert_eq!(
        import.panels,
        classic_panels("$service", "$replica", "$instance")
    );
    let refused =
        format!("could not be looked up in prometheus http://127.0.0.1:{port}/: unreachable");
    let mut warnings = vec![
        ("templating.list[4]", refused.as_str()),
        (
            "templating.list[6]",
            "depends on $service, which has no value, so it was not looked up; kept as $replica",
        ),
        ("templating.list[7]", refused.as_str()),
        ("templating.list[9]", "ad hoc filter"),
        ("templating.list[11]", "kept as $version"),
    ];
    warnings.extend_from_slice(CLASSIC_PANEL_WARNINGS);
    assert_findings(&import.warnings, &warnings);
    assert_findings(&import.skipped, CLASSIC_SKIPPED);
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
            "could not be looked up: no answer within 0.3s; kept as $service",
        ),
        ("templating.list[6]", "depends on $service"),
        (
            "templating.list[7]",
            "was not looked up: the 0.3s for all look-ups ran out; kept as $instance",
        ),
        ("templating.list[9]", "ad hoc filter"),
        ("templating.list[11]", "kept as $version"),
    ];
    warnings.extend_from_slice(CLASSIC_PANEL_WARNINGS);
    assert_findings(&import.warnings, &warnings);
    assert_eq!(
        import.panels,
        classic_panels("$service", "$replica", "$instance")
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
    fn check(import: &Import) {
        assert!(import.panels.len() <= grafana::MAX_PANELS);
        for p in &import.panels {
            assert!(!p.title.trim().is_empty(), "{p:?}");
            for text in [&p.title, &p.query] {
                assert!(warroom::sanitize::is_clean(text, false), "{p:?}");
            }
            if let Some(l) = &p.legend {
                assert!(warroom::sanitize::is_clean(l, false), "{p:?}");
            }
            assert!(
                promql_parser::parser::parse(&p.query).is_ok(),
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
                    check(&d.convert());
                    rt.block_on(d.resolve(&Nasty));
                    check(&d.convert());
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
                check(&d.convert());
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
