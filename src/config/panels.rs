//! Dashboard panels: what each one queries, how its value reads, where its thresholds are.
//! Every query is PromQL from configuration or from a signal preset
//! (`metrics::presets`). Without `[[panel]]` the dashboard is discovered; rehearsals ask for the
//! simulator's preset (`metrics::presets::sim_panels`).
//!
//! [`RawPanel`] is the `[[panel]]` shape as written; presets and importers reuse it and its
//! checks, and [`render_toml`] writes panels back in that shape.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How a panel's values read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
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
        if let Some(word) = crate::strings::non_finite(v) {
            return word.into();
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
            Unit::Count => short_number(v, true),
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
            Unit::PerSecond => format!("{}/s", short_number(v, false)),
        }
    }
}

/// A number in a few characters; `whole` for counts, which are whole numbers (an
/// extrapolated increase of 3.01 restarts is 3).
fn short_number(v: f64, whole: bool) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if v.fract() == 0.0 || (whole && (a >= 1.0 || (v - v.round()).abs() < 0.05)) {
        format!("{v:.0}")
    } else if whole {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
#[test]
fn counts_read_as_whole_numbers_and_rates_keep_their_decimals() {
    assert_eq!(Unit::Count.format(3.0123), "3");
    assert_eq!(Unit::Count.format(2.98), "3");
    assert_eq!(Unit::Count.format(0.4), "0.4");
    assert_eq!(Unit::Count.format(12_345.0), "12.3k");
    assert_eq!(Unit::PerSecond.format(1.25), "1.25/s");
    assert_eq!(Unit::PerSecond.format(3.0), "3/s");
}

/// Which side of a threshold is bad.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum BadWhen {
    #[default]
    Above,
    Below,
}

/// One panel of the dashboard.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PanelConfig {
    pub title: String,
    pub query: String,
    pub unit: Unit,
    pub warn: Option<f64>,
    pub crit: Option<f64>,
    pub bad_when: BadWhen,
    /// Legend template, e.g. `{{pod}}`; default: the labels that differ between series.
    pub legend: Option<String>,
    /// The signal the panel answers (`error-ratio`, `saturation`, `query-latency`…), as the
    /// presets name it: the postmortem reads its figures by it (a title is a guess).
    pub signal: Option<String>,
    /// Where it sits on an imported dashboard and how often it asks.
    pub shape: Shape,
}

/// Where an imported panel sits and what it asks for (issue 34): its dashboard's row, whether
/// that row starts collapsed, the dashboard's refresh and the panel's most points. A panel of
/// the presets or one written by hand has none of these.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shape {
    /// The row it is in (Grafana's row title): the console opens and collapses rows.
    pub row: Option<String>,
    /// Its row starts collapsed: the panel is not queried at all until the row is opened.
    pub collapsed: bool,
    /// Asked no more often than this (its dashboard's refresh); never more often than the
    /// config's `refresh`.
    pub every: Option<Duration>,
    /// The most points a range query asks for (Grafana's `maxDataPoints`).
    pub max_points: Option<u32>,
}

/// Most points a range query may ask for: Prometheus refuses more than 11,000 a series.
pub const MAX_POINTS_LIMIT: u32 = 11_000;

/// One `[[panel]]` entry as written, before its checks ([`RawPanel::validate`]).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawPanel {
    pub title: String,
    pub query: String,
    #[serde(default)]
    pub unit: Unit,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warn: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crit: Option<f64>,
    #[serde(default)]
    pub bad_when: BadWhen,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub legend: Option<String>,
    /// What the panel shows, in the presets' words (`error-ratio`, `saturation`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// The dashboard row the panel is in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<String>,
    /// Its row starts collapsed (not queried until opened).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub collapsed: bool,
    /// Asked no more often than this, e.g. "1m" (never more often than `refresh`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<String>,
    /// The most points a range query asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_points: Option<u32>,
}

impl From<&PanelConfig> for RawPanel {
    fn from(p: &PanelConfig) -> Self {
        RawPanel {
            title: p.title.clone(),
            query: p.query.clone(),
            unit: p.unit,
            warn: p.warn,
            crit: p.crit,
            bad_when: p.bad_when,
            legend: p.legend.clone(),
            signal: p.signal.clone(),
            row: p.shape.row.clone(),
            collapsed: p.shape.collapsed,
            every: (p.shape.every).map(|d| humantime::format_duration(d).to_string()),
            max_points: p.shape.max_points,
        }
    }
}

/// `[[panel]]` entries for `panels`, in the shape `warroom.toml` reads: loading the text back
/// gives the same panels.
pub fn render_toml(panels: &[PanelConfig]) -> String {
    #[derive(Serialize)]
    struct File {
        panel: Vec<RawPanel>,
    }
    let file = File {
        panel: panels.iter().map(RawPanel::from).collect(),
    };
    // Serializing plain strings, numbers and two enums cannot fail; an empty text is the
    // honest answer if it ever did.
    toml::to_string(&file).unwrap_or_default()
}

impl RawPanel {
    /// Check the entry and make it a panel; the message says what is wrong and what was
    /// expected.
    pub fn validate(self) -> Result<PanelConfig, String> {
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
        let shape = self.shape()?;
        Ok(PanelConfig {
            title: crate::sanitize::line(&self.title).into_owned(),
            query: self.query,
            unit: self.unit,
            warn: self.warn,
            crit: self.crit,
            bad_when: self.bad_when,
            legend: self.legend,
            signal: self
                .signal
                .map(|s| crate::sanitize::line(s.trim()).into_owned()),
            shape,
        })
    }

    /// The entry's row, collapsed state, cadence and points, checked.
    fn shape(&self) -> Result<Shape, String> {
        let title = &self.title;
        let row = (self.row.as_deref())
            .map(|r| crate::sanitize::line(r.trim()).into_owned())
            .filter(|r| !r.is_empty());
        if self.collapsed && row.is_none() {
            return Err(format!(
                "panel \"{title}\": collapsed = true needs the row it collapses: add row = \"NAME\""
            ));
        }
        let every = match self.every.as_deref() {
            None => None,
            Some(text) => {
                let d = humantime::parse_duration(text).map_err(|e| {
                    format!(
                        "panel \"{title}\": every \"{text}\" is not a duration ({e}): expected \
                         e.g. \"30s\", \"1m\""
                    )
                })?;
                if d < Duration::from_secs(1) || d > Duration::from_secs(3600) {
                    return Err(format!(
                        "panel \"{title}\": every \"{text}\" is out of range: expected between 1s \
                         and 1h"
                    ));
                }
                Some(d)
            }
        };
        if let Some(n) = self.max_points
            && !(2..=MAX_POINTS_LIMIT).contains(&n)
        {
            return Err(format!(
                "panel \"{title}\": max_points = {n} is out of range: expected between 2 and \
                 {MAX_POINTS_LIMIT} (Prometheus answers at most 11,000 points a series)"
            ));
        }
        Ok(Shape {
            row,
            collapsed: self.collapsed,
            every,
            max_points: self.max_points,
        })
    }
}
