//! The dashboard as the converter sees it, whatever model it came from: panels with their
//! queries, field settings and JSON paths; variables; `__inputs`; time settings. Reading is
//! tolerant: a field of the wrong type counts as absent, and a panel that is not an object is
//! skipped with its path, so one odd panel never costs the others.

use super::{Finding, GrafanaError, MAX_EXAMINED, Model, classic, v2};
pub(super) use crate::variables::{VarKind, Variable};
use serde_json::Value;
use std::time::Duration;

/// Everything read from the file.
#[derive(Debug, Clone)]
pub(super) struct Board {
    pub model: Model,
    pub title: Option<String>,
    pub panels: Vec<SourcePanel>,
    pub variables: Vec<Variable>,
    /// `__inputs` of the export: data sources and constants the importer is asked for.
    pub inputs: Vec<Input>,
    /// `refresh` (classic) or `timeSettings.autoRefresh` (V2).
    pub refresh: Option<Duration>,
    /// The span of `time.from`..`time.to` when it is `now-X`..`now`.
    pub range: Option<Duration>,
    pub warnings: Vec<Finding>,
    /// Panels and queries looked at so far (bounded by [`MAX_EXAMINED`]).
    pub examined: usize,
}

impl Board {
    pub fn new(model: Model) -> Self {
        Board {
            model,
            title: None,
            panels: Vec::new(),
            variables: Vec::new(),
            inputs: Vec::new(),
            refresh: None,
            range: None,
            warnings: Vec::new(),
            examined: 0,
        }
    }

    /// The `${VAR_X}` constants an export asks for at import time, with their default.
    pub fn constants(&self) -> Vec<(String, String)> {
        (self.inputs.iter())
            .filter(|i| i.kind == "constant")
            .filter_map(|i| Some((i.name.clone(), i.value.clone()?)))
            .collect()
    }

    /// A finding made while reading, kept in document order among the panels.
    pub fn skip(&mut self, path: impl Into<String>, message: impl AsRef<str>) {
        let path = path.into();
        self.panels.push(SourcePanel {
            skip: Some(Finding::new(path.clone(), message)),
            path,
            ..SourcePanel::default()
        });
    }

    /// Count one more panel; false (with one finding, the first time) past the limit.
    pub fn admit(&mut self, path: &str) -> bool {
        self.examined += 1;
        if self.examined == MAX_EXAMINED + 1 {
            self.skip(
                path,
                format!(
                    "this and every later panel: the dashboard has more than {MAX_EXAMINED} \
                     panels, and only the first {MAX_EXAMINED} are examined"
                ),
            );
        }
        self.examined <= MAX_EXAMINED
    }
}

/// Where a panel's or query's data comes from, as written.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) enum Ds {
    /// Absent or null: Grafana's default data source.
    #[default]
    Default,
    /// A bare string: a data source name (old dashboards), `$var`, `${DS_X}` or `-- Mixed --`.
    Named(String),
    /// `{type, uid}` (classic), or V2's `group` and `datasource.name`.
    Ref {
        kind: Option<String>,
        uid: Option<String>,
    },
}

impl Ds {
    pub fn read(v: Option<&Value>) -> Ds {
        match v {
            None | Some(Value::Null) => Ds::Default,
            Some(Value::String(s)) if s.trim().is_empty() => Ds::Default,
            Some(Value::String(s)) => Ds::Named(s.trim().to_string()),
            Some(Value::Object(o)) => {
                let kind = o.get("type").and_then(Value::as_str).map(str::to_string);
                let uid = o.get("uid").and_then(Value::as_str).map(str::to_string);
                if kind.is_none() && uid.is_none() {
                    Ds::Default
                } else {
                    Ds::Ref { kind, uid }
                }
            }
            Some(_) => Ds::Default,
        }
    }

    pub fn is_default(&self) -> bool {
        matches!(self, Ds::Default)
    }
}

/// One query of a panel.
#[derive(Debug, Clone, Default)]
pub(super) struct SourceTarget {
    pub path: String,
    pub ref_id: Option<String>,
    pub expr: Option<String>,
    pub legend: Option<String>,
    pub hidden: bool,
    pub datasource: Ds,
    /// Set when the target is not an object.
    pub malformed: Option<&'static str>,
}

/// A threshold step: from `value` (None: −∞) upwards, this colour.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Step {
    pub value: Option<f64>,
    pub color: String,
}

/// Thresholds as the panel states them.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Thresholds {
    /// `fieldConfig.defaults.thresholds`: steps, absolute or percentages of min..max.
    Steps { percentage: bool, steps: Vec<Step> },
    /// The old graph panel's `thresholds: [{value, op, colorMode}]`.
    Graph(Vec<GraphThreshold>),
    /// Present but unreadable; the text says why.
    Unreadable(String),
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct GraphThreshold {
    pub value: f64,
    pub below: bool,
    /// `critical`, `warning`, `ok` or `custom` (then `color` decides).
    pub mode: String,
    pub color: Option<String>,
}

/// Unit and thresholds for a panel (`fieldConfig.defaults`) or one query (an override), with
/// the settings that decide whether Grafana draws the thresholds at all.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct FieldSettings {
    /// The unit id; `Some(Err)` when the field is there but not a string.
    pub unit: Option<Result<String, String>>,
    pub thresholds: Option<Thresholds>,
    /// The JSON path `thresholds` were read from, for the report.
    pub thresholds_at: Option<String>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// `color.mode`: `thresholds`, `fixed`, `palette-classic`…
    pub color_mode: Option<String>,
    /// `custom.thresholdsStyle.mode` (time series): `off`, `line`, `area`, `dashed`…
    pub thresholds_style: Option<String>,
    /// A table's cell type: `custom.cellOptions.type`, or `custom.displayMode` before
    /// Grafana 10.
    pub cell_type: Option<String>,
}

impl FieldSettings {
    /// Read `fieldConfig.defaults` (or V2's `vizConfig.spec.fieldConfig.defaults`) found at
    /// `path`.
    pub fn read_defaults(v: Option<&Value>, path: &str) -> FieldSettings {
        let Some(d) = v.and_then(Value::as_object) else {
            return FieldSettings::default();
        };
        let custom = d.get("custom");
        let thresholds = d.get("thresholds").and_then(read_steps);
        FieldSettings {
            unit: match d.get("unit") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) if s.is_empty() => None,
                Some(Value::String(s)) => Some(Ok(s.clone())),
                Some(other) => Some(Err(type_name(other).to_string())),
            },
            thresholds_at: thresholds.as_ref().map(|_| join(path, "thresholds")),
            thresholds,
            min: d.get("min").and_then(number),
            max: d.get("max").and_then(number),
            color_mode: d
                .get("color")
                .and_then(|c| text(c, "mode"))
                .map(str::to_string),
            thresholds_style: custom
                .and_then(|c| c.get("thresholdsStyle"))
                .and_then(|t| text(t, "mode"))
                .map(str::to_string),
            cell_type: custom
                .and_then(|c| c.get("cellOptions"))
                .and_then(|o| text(o, "type"))
                .or_else(|| custom.and_then(|c| text(c, "displayMode")))
                .map(str::to_string),
        }
    }

    /// Fill what `self` lacks from `other`.
    pub fn or(&self, other: &FieldSettings) -> FieldSettings {
        let (thresholds, thresholds_at) = match &self.thresholds {
            Some(t) => (Some(t.clone()), self.thresholds_at.clone()),
            None => (other.thresholds.clone(), other.thresholds_at.clone()),
        };
        FieldSettings {
            unit: self.unit.clone().or_else(|| other.unit.clone()),
            thresholds,
            thresholds_at,
            min: self.min.or(other.min),
            max: self.max.or(other.max),
            color_mode: self.color_mode.clone().or_else(|| other.color_mode.clone()),
            thresholds_style: self
                .thresholds_style
                .clone()
                .or_else(|| other.thresholds_style.clone()),
            cell_type: self.cell_type.clone().or_else(|| other.cell_type.clone()),
        }
    }
}

fn read_steps(v: &Value) -> Option<Thresholds> {
    let o = match v {
        Value::Null => return None,
        Value::Object(o) => o,
        other => {
            return Some(Thresholds::Unreadable(format!(
                "\"thresholds\" is {}, expected an object with \"steps\"",
                type_name(other)
            )));
        }
    };
    let percentage = o.get("mode").and_then(Value::as_str) == Some("percentage");
    let steps = match o.get("steps") {
        None | Some(Value::Null) => return None,
        Some(Value::Array(a)) => a,
        Some(other) => {
            return Some(Thresholds::Unreadable(format!(
                "\"thresholds.steps\" is {}, expected a list",
                type_name(other)
            )));
        }
    };
    let mut out = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let Some(obj) = s.as_object() else {
            return Some(Thresholds::Unreadable(format!(
                "threshold step {i} is {}, expected an object",
                type_name(s)
            )));
        };
        let value = match obj.get("value") {
            None | Some(Value::Null) => None,
            Some(v) => match number(v) {
                Some(n) => Some(n),
                None => {
                    return Some(Thresholds::Unreadable(format!(
                        "threshold step {i} has value {}, expected a number",
                        short(v)
                    )));
                }
            },
        };
        let color = obj
            .get("color")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        out.push(Step { value, color });
    }
    if out.is_empty() {
        return None;
    }
    Some(Thresholds::Steps {
        percentage,
        steps: out,
    })
}

/// One panel, with everything the converter uses.
#[derive(Debug, Clone, Default)]
pub(super) struct SourcePanel {
    pub path: String,
    pub id: Option<i64>,
    pub title: Option<String>,
    /// The panel type (classic `type`, V2 `vizConfig.group`).
    pub kind: Option<String>,
    pub datasource: Ds,
    pub targets: Vec<SourceTarget>,
    /// Set when `targets` is there but not a list (its JSON type).
    pub targets_malformed: Option<&'static str>,
    pub defaults: FieldSettings,
    /// Field settings of single queries (`byFrameRefID` overrides): `(refId, settings)`.
    pub overrides: Vec<(String, FieldSettings)>,
    /// Panel options that decide whether thresholds are drawn.
    pub display: Display,
    /// The panel's minimum interval (`interval`, V2 `queryOptions.interval`).
    pub min_interval: Option<String>,
    /// `repeat`: the variable the panel is repeated for.
    pub repeat: Option<String>,
    /// `repeatPanelId`: this panel is a copy Grafana made for a repeat.
    pub repeat_of: Option<String>,
    /// A library panel's name (its queries live in Grafana, not in the file).
    pub library: Option<String>,
    /// Enabled transformations, which change what the panel shows.
    pub transformations: usize,
    /// Set when the panel is not an object.
    pub malformed: Option<&'static str>,
    /// A finding made while reading in place of a panel (a row that is not a list…).
    pub skip: Option<Finding>,
    /// The title of the row (or V2 row or tab) the panel is in, if any.
    pub row: Option<String>,
    /// Its row is collapsed: Grafana does not query it until the row is opened.
    pub collapsed: bool,
    /// `maxDataPoints` (V2 `queryOptions.maxDataPoints`): the most points a query asks for.
    pub max_data_points: Option<u32>,
    /// `gridPos.w`: its width in the grid's 24 columns.
    pub grid_width: Option<u32>,
}

/// The row panels are read under: its title and whether it is collapsed.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct RowOf {
    pub title: Option<String>,
    pub collapsed: bool,
}

impl RowOf {
    /// Put a panel read under this row in it.
    pub fn holds(&self, panel: &mut SourcePanel) {
        panel.row = self.title.clone();
        panel.collapsed = self.collapsed;
    }
}

/// A positive whole `maxDataPoints` (Grafana ignores the rest).
pub(super) fn max_data_points(v: Option<&Value>) -> Option<u32> {
    let n = match v? {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    (n >= 1.0 && n.is_finite()).then(|| n.min(f64::from(u32::MAX)) as u32)
}

/// Panel options (not field settings) that decide whether Grafana draws thresholds.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Display {
    /// Stat's `options.colorMode`: `value` (the default), `background`, `none`.
    pub stat_color: Option<String>,
    /// Gauge's `options.showThresholdMarkers` (default true).
    pub markers: Option<bool>,
    /// The old singlestat colours its value or background (`colorValue`, `colorBackground`)
    /// or draws a gauge with threshold markers.
    pub singlestat_colored: bool,
}

impl Display {
    /// Read a panel's `options` (V2: `vizConfig.spec.options`) and the singlestat's own keys.
    pub fn read(options: Option<&Value>, panel: &Value) -> Display {
        let gauge = panel.get("gauge");
        Display {
            stat_color: options
                .and_then(|o| text(o, "colorMode"))
                .map(str::to_string),
            markers: options
                .and_then(|o| o.get("showThresholdMarkers"))
                .and_then(Value::as_bool),
            singlestat_colored: flag(panel, "colorValue")
                || flag(panel, "colorBackground")
                || gauge.is_some_and(|g| flag(g, "show") && flag(g, "thresholdMarkers")),
        }
    }
}

/// One `__inputs` entry.
#[derive(Debug, Clone)]
pub(super) struct Input {
    pub name: String,
    /// `datasource` or `constant`.
    pub kind: String,
    pub plugin_id: Option<String>,
    pub value: Option<String>,
}

/// A variable whose model-specific parts are read; the rest is named alike in the classic
/// model and in V2's `spec` (`obj`).
pub(super) fn variable(
    path: &str,
    name: String,
    kind: VarKind,
    query: Option<String>,
    current: Vec<String>,
    obj: &Value,
) -> Variable {
    Variable {
        path: path.to_string(),
        name,
        kind,
        query,
        current,
        options: match obj.get("options") {
            Some(Value::Array(opts)) => opts
                .iter()
                .take(1000)
                .flat_map(|o| strings(o.get("value")))
                .collect(),
            _ => Vec::new(),
        },
        multi: flag(obj, "multi"),
        include_all: flag(obj, "includeAll"),
        all_value: text(obj, "allValue").map(str::to_string),
        regex: text(obj, "regex").map(str::to_string),
        sort: sort_order(obj.get("sort")),
        filters: match obj.get("filters") {
            Some(Value::Array(f)) => f.len(),
            _ => 0,
        },
    }
}

/// Grafana's `VariableSort`: a number in the classic model, a name in V2.
fn sort_order(v: Option<&Value>) -> u8 {
    const NAMES: [&str; 9] = [
        "disabled",
        "alphabeticalAsc",
        "alphabeticalDesc",
        "numericalAsc",
        "numericalDesc",
        "alphabeticalCaseInsensitiveAsc",
        "alphabeticalCaseInsensitiveDesc",
        "naturalAsc",
        "naturalDesc",
    ];
    let n = match v {
        Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
        Some(Value::String(s)) => NAMES
            .iter()
            .position(|n| n == s)
            .map_or_else(|| s.parse().unwrap_or(0), |i| i as u64),
        _ => 0,
    };
    u8::try_from(n).ok().filter(|n| *n < 9).unwrap_or(0)
}

/// Read the file's top level and pick the model.
pub(super) fn read_board(root: &Value) -> Result<Board, GrafanaError> {
    let Some(obj) = root.as_object() else {
        return Err(GrafanaError::NotADashboard {
            found: format!("the top level is {}", type_name(root)),
        });
    };
    // `GET /api/dashboards/uid/…` answers `{"dashboard": {…}, "meta": {…}}`.
    if let Some(inner @ Value::Object(d)) = obj.get("dashboard")
        && !obj.contains_key("panels")
        && (d.contains_key("panels") || d.contains_key("rows") || d.contains_key("templating"))
    {
        return Ok(classic::read(inner, "dashboard", Model::Classic));
    }
    let api = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let is_resource = obj.get("kind").and_then(Value::as_str) == Some("Dashboard")
        || api.starts_with("dashboard.grafana.app/");
    if let Some(spec @ Value::Object(s)) = obj.get("spec")
        && (is_resource || !obj.contains_key("panels"))
    {
        let v2 = api.contains("/v2") || s.contains_key("elements") || s.contains_key("layout");
        return Ok(if v2 {
            v2::read(spec)
        } else {
            classic::read(spec, "spec", Model::V1Resource)
        });
    }
    if ["panels", "rows", "templating", "schemaVersion", "title"]
        .iter()
        .any(|k| obj.contains_key(*k))
    {
        return Ok(classic::read(root, "", Model::Classic));
    }
    let keys: Vec<String> = obj
        .keys()
        .take(5)
        .map(|k| format!("\"{}\"", crate::sanitize::sanitize(k, false, 40)))
        .collect();
    Err(GrafanaError::NotADashboard {
        found: if keys.is_empty() {
            "an empty object".to_string()
        } else {
            format!("an object with keys {}", keys.join(", "))
        },
    })
}

/// `a.b` from `a` and `b`, `b` alone from an empty prefix.
pub(super) fn join(prefix: &str, key: &str) -> String {
    let simple = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    let key = if simple {
        key.to_string()
    } else {
        let clean = crate::sanitize::sanitize(key, false, 60);
        return format!(
            "{prefix}[\"{}\"]",
            clean.replace('\\', "\\\\").replace('"', "\\\"")
        );
    };
    if prefix.is_empty() {
        key
    } else {
        format!("{prefix}.{key}")
    }
}

/// `a[3]`.
pub(super) fn index(prefix: &str, i: usize) -> String {
    format!("{prefix}[{i}]")
}

/// The JSON type of a value, for messages.
pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A number, or a string holding one (Grafana writes both); finite only.
pub(super) fn number(v: &Value) -> Option<f64> {
    let n = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }?;
    n.is_finite().then_some(n)
}

/// A string field, trimmed; absent when empty or not a string.
pub(super) fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// A boolean field; Grafana's old files also write `1`/`0` or `"true"`.
pub(super) fn flag(v: &Value, key: &str) -> bool {
    match v.get(key) {
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|n| n != 0.0),
        Some(Value::String(s)) => s == "true",
        _ => false,
    }
}

/// A value as a list of strings: `"a"`, `["a","b"]`, numbers and booleans as text.
pub(super) fn strings(v: Option<&Value>) -> Vec<String> {
    let one = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    match v {
        Some(Value::Array(a)) => a.iter().take(1000).filter_map(one).collect(),
        Some(v) => one(v).into_iter().collect(),
        None => Vec::new(),
    }
}

/// A short rendering of a value for a message.
pub(super) fn short(v: &Value) -> String {
    let s = v.to_string();
    crate::sanitize::sanitize(&s, false, 40).into_owned()
}

/// A Grafana duration (`30s`, `1m`, `2h`, `1d`, `1w`, `500ms`), also `>30s` (a minimum).
pub(super) fn duration(s: &str) -> Option<Duration> {
    let s = s.trim().trim_start_matches('>').trim();
    if s.is_empty() {
        return None;
    }
    let split = s.find(|c: char| !c.is_ascii_digit() && c != '.')?;
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86_400.0,
        "w" => n * 604_800.0,
        "y" => n * 31_536_000.0,
        _ => return None,
    };
    (secs.is_finite() && secs > 0.0 && secs < 1e10).then(|| Duration::from_secs_f64(secs))
}

/// The dashboard range from `from`/`to` when they are `now-X` and `now`.
pub(super) fn relative_range(from: Option<&str>, to: Option<&str>) -> Option<Duration> {
    let to = to.unwrap_or("now").trim();
    if to != "now" {
        return None;
    }
    duration(from?.trim().strip_prefix("now-")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_grafana_forms() {
        assert_eq!(duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(duration(">1m"), Some(Duration::from_secs(60)));
        assert_eq!(duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(duration("1d"), Some(Duration::from_secs(86_400)));
        assert_eq!(duration("auto"), None);
        assert_eq!(duration("5"), None);
        assert_eq!(duration(""), None);
        assert_eq!(duration("1e400s"), None);
        assert_eq!(
            relative_range(Some("now-6h"), Some("now")),
            Some(Duration::from_secs(21_600))
        );
        assert_eq!(relative_range(Some("now-6h"), Some("now-1h")), None);
        assert_eq!(relative_range(Some("2024-01-01"), None), None);
    }

    #[test]
    fn paths_quote_odd_keys() {
        assert_eq!(join("spec.elements", "panel-1"), "spec.elements.panel-1");
        assert_eq!(join("spec.elements", "a b"), "spec.elements[\"a b\"]");
        assert_eq!(join("", "panels"), "panels");
        assert_eq!(join("x", "\u{1b}[2J"), "x[\"\\\\e[2J\"]");
        assert_eq!(index("panels", 3), "panels[3]");
    }

    #[test]
    fn numbers_accept_strings_and_refuse_non_finite() {
        assert_eq!(number(&serde_json::json!(80)), Some(80.0));
        assert_eq!(number(&serde_json::json!("0.5")), Some(0.5));
        assert_eq!(number(&serde_json::json!("NaN")), None);
        assert_eq!(number(&serde_json::json!("inf")), None);
        assert_eq!(number(&serde_json::json!(true)), None);
    }
}
