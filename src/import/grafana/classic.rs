//! The classic dashboard JSON (also the `spec` of a V1 resource): `panels[]` with rows (a
//! collapsed row keeps its panels in its own `panels`), the `rows[].panels[]` of dashboards
//! older than Grafana 5, `templating.list[]`, `__inputs`, `refresh`, `time`.

use super::json::{
    Board, Display, Ds, FieldSettings, GraphThreshold, Input, RowOf, SourcePanel, SourceTarget,
    Step, Thresholds, VarKind, Variable, duration, flag, index, join, max_data_points, number,
    relative_range, strings, text, type_name,
};
use super::{Finding, Model};
use serde_json::{Value, json};

/// Read a classic dashboard found at `prefix` (empty for the file itself).
pub(super) fn read(root: &Value, prefix: &str, model: Model) -> Board {
    let mut board = Board::new(model);
    board.title = text(root, "title").map(|t| crate::sanitize::line(t).into_owned());
    board.refresh = root
        .get("refresh")
        .and_then(Value::as_str)
        .and_then(duration);
    let time = root.get("time");
    board.range = relative_range(
        time.and_then(|t| t.get("from")).and_then(Value::as_str),
        time.and_then(|t| t.get("to")).and_then(Value::as_str),
    );
    board.inputs = read_inputs(root.get("__inputs"));
    let templating = join(prefix, "templating");
    match root.get("templating").map(|t| t.get("list")) {
        Some(Some(Value::Array(_))) | Some(Some(Value::Null)) | Some(None) | None => {}
        Some(Some(other)) => board.warnings.push(Finding::new(
            join(&templating, "list"),
            format!(
                "\"templating.list\" is {}, expected a list; no variables were read",
                type_name(other)
            ),
        )),
    }
    board.variables = read_variables(root.get("templating"), &templating);

    match root.get("panels") {
        Some(Value::Array(panels)) => {
            let base = join(prefix, "panels");
            // Panels after an open row belong to it.
            let mut row = RowOf::default();
            for (i, p) in panels.iter().enumerate() {
                if let Some(title) = read_panel_or_row(&mut board, p, &index(&base, i), 0, &row) {
                    row = title;
                }
            }
        }
        None | Some(Value::Null) => {}
        Some(other) => board.skip(
            join(prefix, "panels"),
            format!("\"panels\" is {}, expected a list", type_name(other)),
        ),
    }
    // Grafana 4 and older: `rows[].panels[]`.
    if let Some(other) = root.get("rows").filter(|r| !r.is_array() && !r.is_null()) {
        board.skip(
            join(prefix, "rows"),
            format!("\"rows\" is {}, expected a list", type_name(other)),
        );
    }
    if let Some(Value::Array(rows)) = root.get("rows") {
        let base = join(prefix, "rows");
        for (r, row) in rows.iter().enumerate() {
            let row_path = index(&base, r);
            let title = RowOf {
                title: text(row, "title").map(str::to_string),
                collapsed: flag(row, "collapse"),
            };
            match row.get("panels") {
                Some(Value::Array(panels)) => {
                    let base = join(&row_path, "panels");
                    for (i, p) in panels.iter().enumerate() {
                        read_panel_or_row(&mut board, p, &index(&base, i), 1, &title);
                    }
                }
                None | Some(Value::Null) => {}
                Some(other) => board.skip(
                    row_path,
                    format!(
                        "the row's \"panels\" is {}, expected a list",
                        type_name(other)
                    ),
                ),
            }
        }
    }
    board
}

/// Read one entry of a panel list under `row`; for a row, `Some` of the row the panels after
/// it are in.
fn read_panel_or_row(
    board: &mut Board,
    p: &Value,
    path: &str,
    depth: usize,
    row: &RowOf,
) -> Option<RowOf> {
    if !board.admit(path) {
        return None;
    }
    if p.get("type").and_then(Value::as_str) == Some("row") {
        // A collapsed row holds its panels; an open one is followed by them. Rows do not nest
        // in Grafana, so a row inside a row is not followed.
        let title = RowOf {
            title: text(p, "title").map(str::to_string),
            collapsed: flag(p, "collapsed"),
        };
        if let Some(other) = p.get("panels").filter(|c| !c.is_array() && !c.is_null()) {
            board.skip(
                path,
                format!(
                    "the row's \"panels\" is {}, expected a list",
                    type_name(other)
                ),
            );
        }
        if let Some(Value::Array(children)) = p.get("panels") {
            if depth >= 1 {
                if !children.is_empty() {
                    board.skip(
                        path,
                        "a row nested inside a row: Grafana does not make these, so its panels \
                         were not read",
                    );
                }
                return Some(title);
            }
            let base = join(path, "panels");
            for (i, c) in children.iter().enumerate() {
                read_panel_or_row(board, c, &index(&base, i), depth + 1, &title);
            }
        }
        // Panels after a collapsed row, not inside it, are shown: they are in no row (only
        // the row's own are collapsed).
        return Some(match title.collapsed {
            true => RowOf::default(),
            false => title,
        });
    }
    let mut panel = read_panel(p, path);
    row.holds(&mut panel);
    board.panels.push(panel);
    None
}

/// One panel (or a V2 element converted to the same shape by the caller).
pub(super) fn read_panel(p: &Value, path: &str) -> SourcePanel {
    let Some(obj) = p.as_object() else {
        return SourcePanel {
            path: path.to_string(),
            malformed: Some(type_name(p)),
            ..SourcePanel::default()
        };
    };
    let mut panel = SourcePanel {
        path: path.to_string(),
        id: obj.get("id").and_then(Value::as_i64),
        title: text(p, "title").map(str::to_string),
        kind: text(p, "type").map(str::to_string),
        datasource: Ds::read(obj.get("datasource")),
        min_interval: text(p, "interval").map(str::to_string),
        max_data_points: max_data_points(obj.get("maxDataPoints")),
        grid_width: (obj.get("gridPos").and_then(|g| g.get("w")))
            .and_then(Value::as_u64)
            .map(|w| w.min(24) as u32),
        repeat: text(p, "repeat").map(str::to_string),
        repeat_of: match obj.get("repeatPanelId") {
            Some(Value::Number(n)) => Some(n.to_string()),
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            _ => None,
        },
        library: obj
            .get("libraryPanel")
            .filter(|l| l.is_object())
            .map(|l| text(l, "name").or(text(l, "uid")).unwrap_or("").to_string()),
        transformations: count_transformations(obj.get("transformations")),
        ..SourcePanel::default()
    };
    match obj.get("targets") {
        Some(Value::Array(ts)) => {
            let base = join(path, "targets");
            panel.targets = ts
                .iter()
                .enumerate()
                .take(super::MAX_EXAMINED)
                .map(|(i, t)| read_target(t, &index(&base, i)))
                .collect();
        }
        None | Some(Value::Null) => {}
        Some(other) => panel.targets_malformed = Some(type_name(other)),
    }
    let field_config = obj.get("fieldConfig");
    let at = join(path, "fieldConfig");
    panel.defaults = FieldSettings::read_defaults(
        field_config.and_then(|f| f.get("defaults")),
        &join(&at, "defaults"),
    );
    panel.overrides = read_overrides(
        field_config.and_then(|f| f.get("overrides")),
        &join(&at, "overrides"),
    );
    panel.display = Display::read(obj.get("options"), p);
    legacy_settings(p, path, &mut panel.defaults);
    panel
}

pub(super) fn count_transformations(v: Option<&Value>) -> usize {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .filter(|t| t.is_object() && !flag(t, "disabled"))
            .count(),
        _ => 0,
    }
}

fn read_target(t: &Value, path: &str) -> SourceTarget {
    if !t.is_object() {
        return SourceTarget {
            path: path.to_string(),
            malformed: Some(type_name(t)),
            ..SourceTarget::default()
        };
    }
    SourceTarget {
        path: path.to_string(),
        ref_id: text(t, "refId").map(str::to_string),
        expr: t.get("expr").and_then(Value::as_str).map(str::to_string),
        legend: t
            .get("legendFormat")
            .and_then(Value::as_str)
            .map(str::to_string),
        hidden: flag(t, "hide"),
        datasource: Ds::read(t.get("datasource")),
        malformed: None,
    }
}

/// `byFrameRefID` overrides that set `unit`, `thresholds`, `min`, `max`, or what decides
/// whether thresholds are drawn (`color`, `custom.thresholdsStyle`), for one query; `path` is
/// the overrides list's.
pub(super) fn read_overrides(v: Option<&Value>, path: &str) -> Vec<(String, FieldSettings)> {
    let Some(Value::Array(list)) = v else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, o) in list.iter().enumerate().take(200) {
        let Some(matcher) = o.get("matcher") else {
            continue;
        };
        if matcher.get("id").and_then(Value::as_str) != Some("byFrameRefID") {
            continue;
        }
        let Some(ref_id) = matcher.get("options").and_then(Value::as_str) else {
            continue;
        };
        let at = join(&index(path, i), "properties");
        let mut defaults = serde_json::Map::new();
        let mut thresholds_at = None;
        if let Some(Value::Array(props)) = o.get("properties") {
            for (j, p) in props.iter().enumerate() {
                let Some(v) = p.get("value") else {
                    continue;
                };
                let key = match p.get("id").and_then(Value::as_str) {
                    Some(k @ ("unit" | "min" | "max" | "color")) => k,
                    Some("thresholds") => {
                        thresholds_at = Some(index(&at, j));
                        "thresholds"
                    }
                    Some("custom.thresholdsStyle") => {
                        defaults.insert("custom".into(), json!({ "thresholdsStyle": v }));
                        continue;
                    }
                    _ => continue,
                };
                defaults.insert(key.into(), v.clone());
            }
        }
        if !defaults.is_empty() {
            let mut settings = FieldSettings::read_defaults(Some(&Value::Object(defaults)), "");
            if settings.thresholds.is_some() {
                settings.thresholds_at = thresholds_at;
            }
            out.push((ref_id.to_string(), settings));
        }
    }
    out
}

/// Units and thresholds of the panels Grafana 7 replaced: `graph` (`yaxes[0].format`,
/// `thresholds: [{value, op, colorMode}]`) and `singlestat` (`format`, `thresholds: "80,90"`
/// with `colors`). The graph panel draws its own list, never field thresholds, so there the
/// list wins.
fn legacy_settings(p: &Value, path: &str, d: &mut FieldSettings) {
    if d.unit.is_none() {
        let format = text(p, "format").or_else(|| {
            p.get("yaxes")
                .and_then(|y| y.get(0))
                .and_then(|y| text(y, "format"))
        });
        d.unit = format.map(|f| Ok(f.to_string()));
    }
    if d.thresholds.is_some() && text(p, "type") != Some("graph") {
        return;
    }
    let at = Some(join(path, "thresholds"));
    match p.get("thresholds") {
        Some(Value::Array(list)) if !list.is_empty() => {
            let graph: Vec<GraphThreshold> = list
                .iter()
                .filter_map(|t| {
                    Some(GraphThreshold {
                        value: number(t.get("value")?)?,
                        below: t.get("op").and_then(Value::as_str) == Some("lt"),
                        mode: text(t, "colorMode").unwrap_or("custom").to_string(),
                        color: text(t, "lineColor")
                            .or(text(t, "fillColor"))
                            .map(str::to_string),
                    })
                })
                .collect();
            if !graph.is_empty() {
                d.thresholds = Some(Thresholds::Graph(graph));
                d.thresholds_at = at;
            }
        }
        Some(Value::String(s)) if !s.trim().is_empty() => {
            let colors = strings(p.get("colors"));
            let values: Vec<Option<f64>> = s
                .split(',')
                .map(|v| v.trim().parse::<f64>().ok().filter(|v| v.is_finite()))
                .collect();
            if values.iter().any(Option::is_none) || colors.len() != values.len() + 1 {
                d.thresholds = Some(Thresholds::Unreadable(format!(
                    "the singlestat thresholds \"{}\" do not match its {} colours",
                    crate::sanitize::sanitize(s, false, 40),
                    colors.len()
                )));
                d.thresholds_at = at;
                return;
            }
            let mut steps = vec![Step {
                value: None,
                color: colors[0].clone(),
            }];
            for (v, c) in values.into_iter().zip(colors.into_iter().skip(1)) {
                steps.push(Step { value: v, color: c });
            }
            d.thresholds = Some(Thresholds::Steps {
                percentage: false,
                steps,
            });
            d.thresholds_at = at;
        }
        _ => {}
    }
}

fn read_inputs(v: Option<&Value>) -> Vec<Input> {
    let Some(Value::Array(list)) = v else {
        return Vec::new();
    };
    list.iter()
        .take(200)
        .filter_map(|i| {
            Some(Input {
                name: text(i, "name")?.to_string(),
                kind: text(i, "type").unwrap_or("").to_string(),
                plugin_id: text(i, "pluginId").map(str::to_string),
                value: i.get("value").and_then(Value::as_str).map(str::to_string),
            })
        })
        .collect()
}

fn read_variables(templating: Option<&Value>, path: &str) -> Vec<Variable> {
    let Some(Value::Array(list)) = templating.and_then(|t| t.get("list")) else {
        return Vec::new();
    };
    let base = join(path, "list");
    list.iter()
        .enumerate()
        .take(crate::variables::MAX_VARIABLES)
        .filter_map(|(i, v)| read_variable(v, &index(&base, i)))
        .collect()
}

fn read_variable(v: &Value, path: &str) -> Option<Variable> {
    let name = text(v, "name")?.to_string();
    let kind = match text(v, "type").unwrap_or("query") {
        "query" => VarKind::Query,
        "custom" => VarKind::Custom,
        "constant" => VarKind::Constant,
        "interval" => VarKind::Interval,
        "textbox" => VarKind::Textbox,
        "datasource" => VarKind::Datasource,
        "adhoc" => VarKind::Adhoc,
        "groupby" => VarKind::GroupBy,
        "switch" => VarKind::Switch,
        other => VarKind::Other(other.to_string()),
    };
    // A query variable's `query` is a string, or `{query, qryType, refId}` since Grafana 10;
    // `definition` holds the same text.
    let query = match v.get("query") {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        Some(Value::Object(o)) => o
            .get("query")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_string),
        _ => None,
    }
    .or_else(|| text(v, "definition").map(str::to_string));
    let current = v.get("current");
    let current = strings(current.and_then(|c| c.get("value")));
    Some(super::json::variable(path, name, kind, query, current, v))
}
