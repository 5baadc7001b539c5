//! The simulator's panels (the `sim` preset), as the demo, the rehearsals and the tests ask
//! for them.

use super::sim_panels;
use crate::config::panels::render_toml;
use crate::config::{BadWhen, PanelConfig, Unit};

// The built-in dashboard as it was written in code before it moved to `sim.toml`: the preset
// must give exactly these panels, so nothing that uses `sim_panels()` changes.
fn panel(title: &str, query: &str, unit: Unit, warn: f64, crit: f64) -> PanelConfig {
    PanelConfig {
        title: title.into(),
        query: query.into(),
        unit,
        warn: Some(warn),
        crit: Some(crit),
        bad_when: BadWhen::Above,
        legend: None,
        signal: None,
        shape: Default::default(),
    }
}

fn panels_as_they_were() -> Vec<PanelConfig> {
    let quantile = |q: &str, tag: &str| {
        format!(
            "label_replace(histogram_quantile({q}, sum by (le) (rate(db_query_duration_seconds_bucket[1m]))), \"quantile\", \"{tag}\", \"\", \"\")"
        )
    };
    vec![
        PanelConfig {
            legend: Some("{{pod}}".into()),
            ..panel(
                "Pool saturation",
                "max by (pod) (db_pool_connections_in_use / db_pool_connections_max)",
                Unit::Percent,
                0.8,
                0.95,
            )
        },
        panel(
            "Pool wait p99",
            "histogram_quantile(0.99, sum by (le) (rate(db_pool_wait_seconds_bucket[1m])))",
            Unit::Seconds,
            0.1,
            1.0,
        ),
        PanelConfig {
            legend: Some("{{quantile}}".into()),
            ..panel(
                "Query latency p50/p99",
                &format!("{} or {}", quantile("0.5", "p50"), quantile("0.99", "p99")),
                Unit::Seconds,
                0.5,
                2.0,
            )
        },
        panel(
            "Retry amplification",
            "sum(rate(app_requests_total[1m])) / sum(rate(app_logical_requests_total[1m]))",
            Unit::Ratio,
            1.3,
            2.0,
        ),
        panel(
            "Error ratio",
            "sum(rate(app_requests_total{code=~\"5..\"}[1m])) / sum(rate(app_requests_total[1m]))",
            Unit::Percent,
            0.01,
            0.05,
        ),
        PanelConfig {
            legend: Some("{{queue}}".into()),
            ..panel(
                "Queue depth",
                "sum by (queue) (queue_depth)",
                Unit::Count,
                1000.0,
                10000.0,
            )
        },
        PanelConfig {
            bad_when: BadWhen::Below,
            ..panel(
                "Instances up",
                "sum(app_instance_up) / count(app_instance_up)",
                Unit::Percent,
                0.9,
                0.7,
            )
        },
        panel(
            "Restarts (5m)",
            "sum(increase(process_restarts_total[5m]))",
            Unit::Count,
            1.0,
            5.0,
        ),
    ]
}

#[test]
fn the_default_dashboard_is_the_sim_preset_unchanged() {
    let now = sim_panels();
    // The panels now also say which signal each answers (the postmortem reads its figures by
    // it); everything else is as it was.
    assert!(now.iter().all(|p| p.signal.is_some()), "{now:#?}");
    let without: Vec<PanelConfig> = now
        .into_iter()
        .map(|p| PanelConfig { signal: None, ..p })
        .collect();
    assert_eq!(without, panels_as_they_were());
}

#[test]
fn rendered_panels_load_back_unchanged() {
    let mut panels = sim_panels();
    panels.push(PanelConfig {
        title: "Quotes \" and \\ backslashes, {{braces}} and ünïcode".into(),
        query: "sum by (le) (rate(x{a=\"b\\\\c\"}[5m])) / (sum(y) > 0)".into(),
        unit: Unit::Bytes,
        warn: None,
        crit: Some(1e9),
        bad_when: BadWhen::Below,
        legend: Some("{{pod}} · {{le}}".into()),
        signal: None,
        shape: Default::default(),
    });
    let text = render_toml(&panels);
    let cfg = crate::config::Config::parse("rendered.toml", &text)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(cfg.panels, panels, "{text}");
}
