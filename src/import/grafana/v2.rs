//! The V2 dashboard resource (`dashboard.grafana.app/v2alpha1`, `v2beta1`), best effort.
//!
//! Field names as grafana/grafana's `apps/dashboard/kinds/v2beta1/dashboard_spec.cue` gives
//! them: `spec.elements.<name>` is `{kind: "Panel", spec: PanelSpec}` (or `LibraryPanel`);
//! `PanelSpec.data.spec.queries[]` are `{kind: "PanelQuery", spec: {query, refId, hidden}}`;
//! `query` is a `DataQueryKind` `{kind: "DataQuery", group: <data source type>, datasource:
//! {name}, spec: {…}}` (in v2alpha1 `kind` itself was the data source type); the Prometheus
//! query model inside `spec` (`expr`, `legendFormat`) is the data source's, not the schema's.
//! Field config is `PanelSpec.vizConfig.spec.fieldConfig`, the panel type `vizConfig.group`
//! (v2alpha1: `vizConfig.kind`). The layout (`GridLayout`, `RowsLayout`, `AutoGridLayout`,
//! `TabsLayout`) only gives the order. Variables are `spec.variables[]` of kinds
//! `QueryVariable`, `CustomVariable`, … each with a `spec`.

use super::Model;
use super::classic::{count_transformations, read_overrides};
use super::json::{
    Board, Display, Ds, FieldSettings, RowOf, SourcePanel, SourceTarget, VarKind, Variable,
    duration, flag, index, join, max_data_points, relative_range, strings, text, type_name,
};
use serde_json::{Map, Value};

/// Deepest layout nesting followed (rows in tabs in rows…).
const MAX_LAYOUT_DEPTH: usize = 16;

pub(super) fn read(spec: &Value) -> Board {
    let mut board = Board::new(Model::V2Resource);
    board.title = text(spec, "title").map(|t| crate::sanitize::line(t).into_owned());
    let time = spec.get("timeSettings");
    board.refresh = time
        .and_then(|t| t.get("autoRefresh"))
        .and_then(Value::as_str)
        .and_then(duration);
    board.range = relative_range(
        time.and_then(|t| t.get("from")).and_then(Value::as_str),
        time.and_then(|t| t.get("to")).and_then(Value::as_str),
    );
    if let Some(Value::Array(vars)) = spec.get("variables") {
        board.variables = vars
            .iter()
            .enumerate()
            .take(crate::variables::MAX_VARIABLES)
            .filter_map(|(i, v)| read_variable(v, &index("spec.variables", i)))
            .collect();
    }
    let elements = match spec.get("elements") {
        Some(Value::Object(e)) => e,
        None | Some(Value::Null) => return board,
        Some(other) => {
            board.skip(
                "spec.elements",
                format!("\"elements\" is {}, expected an object", type_name(other)),
            );
            return board;
        }
    };
    let mut order: Vec<(String, RowOf)> = Vec::new();
    if let Some(layout) = spec.get("layout") {
        layout_order(layout, 0, &RowOf::default(), &mut order);
    }
    // Elements the layout does not place still count; they come last, by name.
    for name in elements.keys() {
        if !order.iter().any(|(n, _)| n == name) {
            order.push((name.clone(), RowOf::default()));
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for (name, row) in order {
        if !seen.insert(name.clone()) {
            continue;
        }
        let Some(el) = elements.get(&name) else {
            continue;
        };
        let path = join("spec.elements", &name);
        if !board.admit(&path) {
            break;
        }
        let mut panel = read_element(el, &path);
        row.holds(&mut panel);
        board.panels.push(panel);
    }
    board
}

/// Element names in the order the layout shows them, with their row or tab (collapsed when a
/// row around them is: `RowsLayoutRow`'s `collapse`).
fn layout_order(layout: &Value, depth: usize, row: &RowOf, out: &mut Vec<(String, RowOf)>) {
    if depth > MAX_LAYOUT_DEPTH || out.len() > super::MAX_EXAMINED {
        return;
    }
    let Some(spec) = layout.get("spec") else {
        return;
    };
    for key in ["items", "rows", "tabs"] {
        let Some(Value::Array(list)) = spec.get(key) else {
            continue;
        };
        for item in list {
            let s = item.get("spec");
            if let Some(name) = s
                .and_then(|s| s.get("element"))
                .and_then(|e| e.get("name"))
                .and_then(Value::as_str)
            {
                out.push((name.to_string(), row.clone()));
            }
            if let Some(inner) = s.and_then(|s| s.get("layout")) {
                let title = RowOf {
                    title: (s.and_then(|s| text(s, "title")))
                        .map(str::to_string)
                        .or_else(|| row.title.clone()),
                    collapsed: row.collapsed || s.is_some_and(|s| flag(s, "collapse")),
                };
                layout_order(inner, depth + 1, &title, out);
            }
        }
    }
}

fn read_element(el: &Value, path: &str) -> SourcePanel {
    let Some(obj) = el.as_object() else {
        return SourcePanel {
            path: path.to_string(),
            malformed: Some(type_name(el)),
            ..SourcePanel::default()
        };
    };
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("Panel");
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    if kind == "LibraryPanel" {
        let name = spec
            .get("libraryPanel")
            .and_then(|l| text(l, "name").or(text(l, "uid")))
            .unwrap_or("");
        return SourcePanel {
            path: path.to_string(),
            title: text(&spec, "title").map(str::to_string),
            library: Some(name.to_string()),
            ..SourcePanel::default()
        };
    }
    let viz = spec.get("vizConfig");
    let viz_kind = viz.and_then(|v| text(v, "kind"));
    let panel_type = viz
        .and_then(|v| text(v, "group"))
        .or(viz_kind.filter(|k| *k != "VizConfig"));
    let field_config = viz
        .and_then(|v| v.get("spec"))
        .and_then(|s| s.get("fieldConfig"));
    let field_config_at = ["spec", "vizConfig", "spec", "fieldConfig"]
        .iter()
        .fold(path.to_string(), |p, k| join(&p, k));
    let data = spec.get("data").and_then(|d| d.get("spec"));
    let mut panel = SourcePanel {
        path: path.to_string(),
        id: spec.get("id").and_then(Value::as_i64),
        title: text(&spec, "title").map(str::to_string),
        kind: panel_type.map(str::to_string),
        defaults: FieldSettings::read_defaults(
            field_config.and_then(|f| f.get("defaults")),
            &join(&field_config_at, "defaults"),
        ),
        overrides: read_overrides(
            field_config.and_then(|f| f.get("overrides")),
            &join(&field_config_at, "overrides"),
        ),
        display: Display::read(
            viz.and_then(|v| v.get("spec"))
                .and_then(|s| s.get("options")),
            &Value::Null,
        ),
        min_interval: data
            .and_then(|d| d.get("queryOptions"))
            .and_then(|q| text(q, "interval"))
            .map(str::to_string),
        max_data_points: max_data_points(
            (data.and_then(|d| d.get("queryOptions"))).and_then(|q| q.get("maxDataPoints")),
        ),
        repeat: None,
        transformations: count_transformations(data.and_then(|d| d.get("transformations"))),
        ..SourcePanel::default()
    };
    match data.and_then(|d| d.get("queries")) {
        Some(Value::Array(qs)) => {
            let base = ["spec", "data", "spec", "queries"]
                .iter()
                .fold(path.to_string(), |p, k| join(&p, k));
            panel.targets = qs
                .iter()
                .enumerate()
                .take(super::MAX_EXAMINED)
                .map(|(i, q)| read_query(q, &index(&base, i)))
                .collect();
        }
        None | Some(Value::Null) => {}
        Some(other) => panel.targets_malformed = Some(type_name(other)),
    }
    panel
}

fn read_query(q: &Value, path: &str) -> SourceTarget {
    let Some(spec) = q.get("spec").filter(|s| s.is_object()) else {
        return SourceTarget {
            path: path.to_string(),
            malformed: Some(type_name(q.get("spec").unwrap_or(q))),
            ..SourceTarget::default()
        };
    };
    let query = spec.get("query").cloned().unwrap_or(Value::Null);
    let inner = query.get("spec").cloned().unwrap_or(Value::Null);
    SourceTarget {
        path: path.to_string(),
        ref_id: text(spec, "refId").map(str::to_string),
        expr: inner
            .get("expr")
            .and_then(Value::as_str)
            .map(str::to_string),
        legend: inner
            .get("legendFormat")
            .and_then(Value::as_str)
            .map(str::to_string),
        hidden: flag(spec, "hidden") || flag(&inner, "hide"),
        datasource: query_datasource(&query, spec.get("datasource")),
        malformed: None,
    }
}

/// The data source of a `DataQueryKind`: `group` (v2beta1), or `kind` when it is not
/// `DataQuery` (v2alpha1), else the `PanelQuery`'s own `datasource` (v2alpha0).
fn query_datasource(query: &Value, outer: Option<&Value>) -> Ds {
    let kind = text(query, "group")
        .or(text(query, "kind").filter(|k| *k != "DataQuery"))
        .map(str::to_string);
    let uid = query
        .get("datasource")
        .and_then(|d| text(d, "name").or(text(d, "uid")))
        .map(str::to_string);
    if kind.is_some() || uid.is_some() {
        return Ds::Ref { kind, uid };
    }
    Ds::read(outer)
}

fn read_variable(v: &Value, path: &str) -> Option<Variable> {
    let spec = v.get("spec")?;
    let name = text(spec, "name")?.to_string();
    let kind = match text(v, "kind").unwrap_or("") {
        "QueryVariable" => VarKind::Query,
        "CustomVariable" => VarKind::Custom,
        "ConstantVariable" => VarKind::Constant,
        "IntervalVariable" => VarKind::Interval,
        "TextVariable" => VarKind::Textbox,
        "DatasourceVariable" => VarKind::Datasource,
        "AdhocVariable" => VarKind::Adhoc,
        "GroupByVariable" => VarKind::GroupBy,
        "SwitchVariable" => VarKind::Switch,
        other => VarKind::Other(other.to_string()),
    };
    let query = match (&kind, spec.get("query")) {
        // QueryVariable: a DataQueryKind whose spec holds the Prometheus variable query.
        (VarKind::Query, Some(Value::Object(q))) => query_text(q),
        (_, Some(Value::String(s))) if !s.trim().is_empty() => Some(s.clone()),
        _ => None,
    }
    .or_else(|| match kind {
        VarKind::Datasource => text(spec, "pluginId").map(str::to_string),
        _ => None,
    })
    .or_else(|| text(spec, "definition").map(str::to_string));
    let current = match spec.get("current") {
        // SwitchVariable's `current` is the string itself.
        Some(s @ Value::String(_)) => strings(Some(s)),
        Some(c) => strings(c.get("value")),
        None => Vec::new(),
    };
    Some(super::json::variable(
        path, name, kind, query, current, spec,
    ))
}

fn query_text(q: &Map<String, Value>) -> Option<String> {
    let spec = q.get("spec")?;
    ["query", "expr"]
        .iter()
        .find_map(|k| text(spec, k))
        .map(str::to_string)
}
