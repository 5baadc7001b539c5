//! `import::grafana` held out against dashboards nobody here wrote: the postgres_exporter
//! mixin's overview, node-exporter-full and the Redis exporter's own dashboard, as their
//! projects commit them (tests/fixtures/grafana/community/README.md gives source, commit and
//! licence).
//!
//! Each is imported through a resolver that gives every label two values (the real exporters
//! are in tests/real/grafana_community.rs) and checked against what Grafana itself would do,
//! worked out here from the JSON and not from the importer: the share of Prometheus panels
//! converted, no `$` left in a query, and no panel given a level where Grafana draws no
//! threshold.

use crate::support::grafana_json::source_panels;
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;
use warroom::config::PanelConfig;
use warroom::import::grafana::{self, Import, ImportOptions, ResolveError, VariableResolver};

/// Two values for every label, `label-1` and `label-2`, whatever the selector.
struct TwoOfEach;

impl VariableResolver for TwoOfEach {
    fn describe(&self) -> String {
        "two values of each label".into()
    }

    fn label_values(
        &self,
        label: &str,
        _: Option<&str>,
    ) -> BoxFuture<'static, Result<Vec<String>, ResolveError>> {
        let values = vec![format!("{label}-1"), format!("{label}-2")];
        async move { Ok(values) }.boxed()
    }
}

fn community(name: &str) -> (Value, Import) {
    let path = format!(
        "{}/tests/fixtures/grafana/community/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let json: Value = serde_json::from_str(&text).expect("JSON");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let import = rt
        .block_on(grafana::import(
            &text,
            Some(&TwoOfEach),
            ImportOptions::default(),
        ))
        .expect("a dashboard");
    for p in &import.panels {
        assert!(!p.query.contains('$'), "{name}: {:?} keeps a $", p.query);
    }
    (json, import)
}

/// A panel Grafana would query Prometheus for: one shown query with PromQL at least.
fn queries_prometheus(p: &Value) -> bool {
    p["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| t["hide"] != true && t["expr"].as_str().is_some_and(|e| !e.trim().is_empty()))
}

/// Whether Grafana draws the panel's thresholds, by Grafana's rules as its documentation and
/// source state them (a field without `color` is coloured from thresholds; a time series is
/// `palette-classic` and shows thresholds only with `thresholdsStyle` on; stat with
/// `colorMode` none colours nothing; a gauge draws threshold markers unless told not to).
fn grafana_draws(p: &Value) -> bool {
    let d = &p["fieldConfig"]["defaults"];
    let color = d["color"]["mode"].as_str();
    let from_thresholds = color.unwrap_or("thresholds") == "thresholds";
    match p["type"].as_str().unwrap_or("") {
        "timeseries" => {
            d["custom"]["thresholdsStyle"]["mode"]
                .as_str()
                .is_some_and(|m| m != "off")
                || color == Some("thresholds")
        }
        "stat" => from_thresholds && p["options"]["colorMode"] != "none",
        "gauge" => from_thresholds || p["options"]["showThresholdMarkers"] != false,
        "bargauge" => from_thresholds,
        "graph" => p["thresholds"].as_array().is_some_and(|a| !a.is_empty()),
        _ => false,
    }
}

fn has_level(p: &PanelConfig) -> bool {
    p.warn.is_some() || p.crit.is_some()
}

/// The source title a converted panel came from (`Title · suffix` → `Title`).
fn source_title(p: &PanelConfig) -> &str {
    p.title.split(" · ").next().unwrap_or(&p.title)
}

struct Figures {
    prometheus_panels: usize,
    converted: usize,
    with_level: usize,
}

/// Check one dashboard against Grafana's rules and give its figures.
fn check(name: &str) -> (Figures, Import) {
    let (json, import) = community(name);
    let panels = source_panels(&json);
    let prometheus: Vec<&(String, &Value)> = panels
        .iter()
        .filter(|(_, p)| queries_prometheus(p))
        .collect();
    // A panel is lost when it, or every one of its shown queries, is in the skipped list.
    let lost = |(path, p): &&(String, &Value)| {
        let skipped = |at: &str| import.skipped.iter().any(|f| f.path == at);
        let shown: Vec<String> = p["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .filter(|(_, t)| t["hide"] != true)
            .map(|(i, _)| format!("{path}.targets[{i}]"))
            .collect();
        skipped(path) || shown.iter().all(|t| skipped(t))
    };
    let converted = prometheus.iter().filter(|p| !lost(p)).count();

    // No level where Grafana draws no threshold: every converted panel with a level comes from
    // a source panel Grafana colours by its thresholds.
    for p in import.panels.iter().filter(|p| has_level(p)) {
        let source = panels
            .iter()
            .find(|(_, s)| s["title"] == source_title(p))
            .unwrap_or_else(|| panic!("{name}: no source panel for {:?}", p.title));
        assert!(
            grafana_draws(source.1),
            "{name}: {:?} has warn {:?} crit {:?}, which Grafana does not draw ({})",
            p.title,
            p.warn,
            p.crit,
            source.0
        );
    }
    // Every threshold dropped for that reason is in the report with its path.
    for (path, p) in &panels {
        let steps = p["fieldConfig"]["defaults"]["thresholds"]["steps"].as_array();
        let coloured = steps.is_some_and(|s| s.iter().any(|s| s["color"] != "green"));
        if queries_prometheus(p) && !grafana_draws(p) && coloured {
            let at = format!("{path}.fieldConfig.defaults.thresholds");
            assert!(
                import
                    .warnings
                    .iter()
                    .any(|f| f.path == at && f.message.contains("Grafana does not draw")),
                "{name}: the thresholds at {at} are dropped without a word"
            );
        }
    }
    let figures = Figures {
        prometheus_panels: prometheus.len(),
        converted,
        with_level: import.panels.iter().filter(|p| has_level(p)).count(),
    };
    (figures, import)
}

fn level_of<'a>(import: &'a Import, title: &str) -> Vec<&'a PanelConfig> {
    let found: Vec<&PanelConfig> = import
        .panels
        .iter()
        .filter(|p| source_title(p) == title)
        .collect();
    assert!(!found.is_empty(), "no panel {title:?} converted");
    found
}

/// 6 of 6 Prometheus panels converted (15 warroom panels, one per query); no level, as
/// Grafana shows none: the five time series keep Grafana's default green/red-from-80 with
/// "Show thresholds" off, and the stat is a fixed colour with colour mode none. Before, the
/// cache hit ratio (100 %) read crit.
#[test]
fn postgres_mixin_overview_reads_as_grafana_shows_it() {
    let (figures, import) = check("postgres-overview.json");
    assert_eq!(
        (figures.prometheus_panels, figures.converted),
        (6, 6),
        "{:#?}",
        import.skipped
    );
    assert_eq!(figures.with_level, 0);
    for p in level_of(&import, "Cache hit ratio") {
        assert_eq!((p.warn, p.crit), (None, None), "{}", p.title);
    }
}

/// 125 of 125 Prometheus panels converted (the 11 queries not converted are hidden in
/// Grafana). Levels only on the gauges and bar gauges Grafana colours (CPU Busy, RAM Used,
/// Pressure…); the stats that show totals and uptime colour nothing (colour mode none), so
/// RAM Total, SWAP Total, RootFS Total and Uptime get none: they were crit from 80 before.
#[test]
fn node_exporter_full_reads_as_grafana_shows_it() {
    let (figures, import) = check("node-exporter-full.json");
    let share = figures.converted as f64 / figures.prometheus_panels as f64;
    assert!(
        share >= 0.95,
        "{} of {} panels converted",
        figures.converted,
        figures.prometheus_panels
    );
    assert_eq!((figures.prometheus_panels, figures.converted), (125, 125));
    for title in [
        "RAM Total",
        "SWAP Total",
        "RootFS Total",
        "Uptime",
        "CPU Cores",
    ] {
        for p in level_of(&import, title) {
            assert_eq!((p.warn, p.crit), (None, None), "{}", p.title);
        }
    }
    // What Grafana does colour keeps its levels: RAM Used is orange from 80 %, red from 90 %.
    let ram = level_of(&import, "RAM Used");
    assert_eq!((ram[0].warn, ram[0].crit), (Some(0.8), Some(0.9)));
    assert_eq!(figures.with_level, 9, "the 5 gauges and 4 Pressure bars");
}

/// The Redis exporter's dashboard (Grafana.com 763): 13 of 13 Prometheus panels, all 19
/// queries converted. Its `$namespace` and `$instance` are looked up as Grafana looks them up;
/// nothing is left as `$name` (before, all 19 queries kept `$namespace` and `$instance` and
/// none returned data against a plain redis_exporter).
#[test]
fn redis_exporter_dashboard_reads_as_grafana_shows_it() {
    let (figures, import) = check("redis-exporter.json");
    assert_eq!(
        (figures.prometheus_panels, figures.converted),
        (13, 13),
        "{:#?}",
        import.skipped
    );
    assert_eq!(import.panels.len(), 19, "{:#?}", import.skipped);
    // `$instance` is multi-value: the first value Grafana picks, regex-formatted.
    let clients = level_of(&import, "Clients");
    assert_eq!(
        clients[0].query,
        "sum(redis_connected_clients{namespace=~\"namespace-1\", instance=~\"instance-1\"})"
    );
}

/// node-exporter-full keeps its shape (issue 34 point 2): its 2 open rows and 14 collapsed
/// ones, each imported panel in the row Grafana shows it in and collapsed exactly when that
/// row is (worked out here from the JSON's row entries), its `refresh` (1m) on every panel,
/// and each stat's `maxDataPoints` (100) on the panels made from it.
#[test]
fn node_exporter_full_keeps_its_rows_refresh_and_max_data_points() {
    let (json, import) = community("node-exporter-full.json");
    // Grafana's rows, in order: an open row owns the top-level panels after it, a collapsed
    // one the panels inside it.
    let mut rows: Vec<(String, bool, usize)> = Vec::new();
    let mut with_points = 0;
    let mut open: Option<usize> = None;
    for p in json["panels"].as_array().unwrap() {
        if p["type"] == "row" {
            let collapsed = p["collapsed"] == true;
            let inside = p["panels"].as_array().map_or(0, Vec::len);
            rows.push((p["title"].as_str().unwrap().to_string(), collapsed, inside));
            open = (!collapsed).then_some(rows.len() - 1);
            with_points += (p["panels"].as_array().into_iter().flatten())
                .filter(|c| c["maxDataPoints"].is_number())
                .count();
        } else {
            if let Some(r) = open {
                rows[r].2 += 1;
            }
            with_points += usize::from(p["maxDataPoints"].is_number());
        }
    }
    let collapsed: Vec<&str> = (rows.iter())
        .filter(|r| r.1)
        .map(|r| r.0.as_str())
        .collect();
    assert_eq!((rows.len(), collapsed.len()), (16, 14), "{rows:?}");
    for (title, folded, panels) in &rows {
        let imported: Vec<&PanelConfig> = (import.panels.iter())
            .filter(|p| p.shape.row.as_deref() == Some(title.as_str()))
            .collect();
        assert!(
            imported.len() >= *panels,
            "row {title}: {} imported from {panels} panels",
            imported.len()
        );
        for p in imported {
            assert_eq!(p.shape.collapsed, *folded, "{} in {title}", p.title);
        }
    }
    assert!(import.panels.iter().all(|p| p.shape.row.is_some()));
    for p in &import.panels {
        assert_eq!(p.shape.every, Some(std::time::Duration::from_secs(60)));
    }
    let capped = (import.panels.iter()).filter(|p| p.shape.max_points == Some(100));
    // The five stats (CPU Cores, RAM Total, SWAP Total, RootFS Total, Uptime) set 100.
    assert_eq!(with_points, 5);
    assert!(capped.count() >= with_points);
    // Written out and read back, the shape stays.
    let text = warroom::config::panels::render_toml(&import.panels);
    let back = warroom::config::Config::parse("imported.toml", &text).expect("the TOML loads");
    assert_eq!(back.panels, import.panels);
}
