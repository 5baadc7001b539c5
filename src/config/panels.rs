//! Dashboard panels: what each one queries, how its value reads, where its thresholds are.
//! Every query is PromQL from configuration; the defaults below use the metric names of the
//! simulator (DESIGN.md), so a real service points its own names in `warroom.toml`.

use serde::Deserialize;

/// How a panel's values read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Unit {
    /// A ratio 0..1 shown as a percentage.
    Percent,
    Seconds,
    /// A multiplier, shown as `2.6×`.
    Ratio,
    #[default]
    Count,
    Bytes,
    /// Per second.
    PerSecond,
}

impl Unit {
    /// Format a value for a panel title or axis.
    pub fn format(self, v: f64) -> String {
        if v.is_nan() {
            return "NaN".into();
        }
        if v.is_infinite() {
            return if v > 0.0 {
                "+Inf".into()
            } else {
                "-Inf".into()
            };
        }
        match self {
            Unit::Percent => format!("{:.1}%", v * 100.0),
            Unit::Seconds => {
                let a = v.abs();
                if a == 0.0 {
                    "0s".into()
                } else if a < 1e-3 {
                    format!("{:.0}µs", v * 1e6)
                } else if a < 1.0 {
                    format!("{:.0}ms", v * 1e3)
                } else if a < 60.0 {
                    format!("{v:.2}s")
                } else {
                    format!("{:.1}m", v / 60.0)
                }
            }
            Unit::Ratio => format!("{v:.2}×"),
            Unit::Count => short_number(v),
            Unit::Bytes => {
                let mut x = v;
                for suffix in ["B", "KiB", "MiB", "GiB", "TiB"] {
                    if x.abs() < 1024.0 {
                        return format!("{x:.1}{suffix}");
                    }
                    x /= 1024.0;
                }
                format!("{x:.1}PiB")
            }
            Unit::PerSecond => format!("{}/s", short_number(v)),
        }
    }
}

fn short_number(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Which side of a threshold is bad.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum BadWhen {
    #[default]
    Above,
    Below,
}

/// One panel of the dashboard.
#[derive(Debug, Clone, PartialEq)]
pub struct PanelConfig {
    pub title: String,
    pub query: String,
    pub unit: Unit,
    pub warn: Option<f64>,
    pub crit: Option<f64>,
    pub bad_when: BadWhen,
    /// Legend template, e.g. `{{pod}}`; default: the labels that differ between series.
    pub legend: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPanel {
    title: String,
    query: String,
    #[serde(default)]
    unit: Unit,
    warn: Option<f64>,
    crit: Option<f64>,
    #[serde(default)]
    bad_when: BadWhen,
    legend: Option<String>,
}

impl RawPanel {
    pub(super) fn validate(self) -> Result<PanelConfig, String> {
        if self.title.trim().is_empty() {
            return Err(
                "panel title is empty: expected a short name such as \"Pool saturation\"".into(),
            );
        }
        if self.query.trim().is_empty() {
            return Err(format!(
                "panel \"{}\" has an empty query: expected PromQL",
                self.title
            ));
        }
        for (name, v) in [("warn", self.warn), ("crit", self.crit)] {
            if v.is_some_and(|v| !v.is_finite()) {
                return Err(format!(
                    "panel \"{}\": {name} must be a finite number",
                    self.title
                ));
            }
        }
        if let (Some(w), Some(c)) = (self.warn, self.crit) {
            let ordered = match self.bad_when {
                BadWhen::Above => w <= c,
                BadWhen::Below => w >= c,
            };
            if !ordered {
                return Err(format!(
                    "panel \"{}\": warn {w} and crit {c} are in the wrong order for bad_when = \"{}\": crit must be the worse value",
                    self.title,
                    if self.bad_when == BadWhen::Above {
                        "above"
                    } else {
                        "below"
                    }
                ));
            }
        }
        Ok(PanelConfig {
            title: crate::sanitize::line(&self.title).into_owned(),
            query: self.query,
            unit: self.unit,
            warn: self.warn,
            crit: self.crit,
            bad_when: self.bad_when,
            legend: self.legend,
        })
    }
}

fn panel(title: &str, query: &str, unit: Unit, warn: f64, crit: f64) -> PanelConfig {
    PanelConfig {
        title: title.into(),
        query: query.into(),
        unit,
        warn: Some(warn),
        crit: Some(crit),
        bad_when: BadWhen::Above,
        legend: None,
    }
}

/// The built-in dashboard: the signals of a database-bound outage (DESIGN.md).
pub fn default_panels() -> Vec<PanelConfig> {
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
