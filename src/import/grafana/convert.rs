//! Source panels to warroom panels.
//!
//! One warroom panel per Grafana query: warroom's panel is one PromQL query with one unit,
//! one pair of thresholds and one legend template, and a Grafana panel's queries usually differ
//! in exactly those (p50 and p99, in and out). Merging them with `or` would need label surgery
//! that changes what the query means and still could not carry two legends. A panel with
//! several queries therefore gives several panels titled `Title · p99`, the suffix taken from
//! the query's legend without its `{{label}}` parts, else its `refId`.

use super::datasource::{Source, classify};
use super::interpolate::{Builtins, Mode, Outcome, interpolate, one_line};
use super::json::{Board, FieldSettings, SourcePanel, SourceTarget};
use super::thresholds::{Levels, drawn, levels};
use super::titles::{MAX_TITLE, clean_text, dedupe_titles, legend_template, panel_title, suffixes};
use super::units::map_unit;
use super::variables::Bindings;
use super::{Finding, ImportOptions, MAX_EXPR_BYTES, MAX_PANELS};
use crate::config::panels::{BadWhen, PanelConfig};
use std::time::Duration;

/// Deepest bracket nesting handed to the parser.
const MAX_NESTING: usize = 64;

/// Panel types that never hold a chartable query.
const NOT_DATA: &[&str] = &[
    "text",
    "news",
    "dashlist",
    "alertlist",
    "annolist",
    "welcome",
    "gettingstarted",
    "pluginlist",
    "live",
];
/// Panel types whose data are logs or traces, not time series.
const LOGS_OR_TRACES: &[&str] = &["logs", "traces", "nodeGraph", "flamegraph"];

/// Parse PromQL with bounds the parser itself does not have: length and nesting.
pub(super) fn parse_promql(q: &str) -> Result<promql_parser::parser::Expr, String> {
    if q.len() > MAX_EXPR_BYTES {
        return Err(format!(
            "the expression is {} bytes, over the {MAX_EXPR_BYTES} bytes read",
            q.len()
        ));
    }
    if nesting(q) > MAX_NESTING {
        return Err(format!(
            "the expression nests brackets deeper than {MAX_NESTING} levels"
        ));
    }
    if let Some(n) = huge_duration(q) {
        return Err(format!(
            "the duration {n} is beyond any range Prometheus can hold"
        ));
    }
    // promql-parser 0.11 panics on some input it should refuse (a unitless duration past
    // u64 seconds); the check above catches the known case, this any other.
    std::panic::catch_unwind(|| promql_parser::parser::parse(q))
        .unwrap_or_else(|_| Err("the PromQL parser failed on this expression".to_string()))
}

/// Largest unitless number taken as a duration (about 31 million years of seconds).
const MAX_DURATION_NUMBER: f64 = 1e15;

/// A unitless number where PromQL reads a duration (`x[N]`, `x[5m:N]`, `offset N`) too large
/// to be one, as written.
fn huge_duration(q: &str) -> Option<String> {
    static NUMBER: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^(0[xX][0-9a-fA-F]+|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)").ok()
    });
    let number = NUMBER.as_ref()?;
    let chars: Vec<(usize, char)> = q.char_indices().collect();
    let mut stack: Vec<char> = Vec::new();
    let mut after_offset = false;
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        match c {
            '"' | '\'' | '`' => {
                i += 1;
                while i < chars.len() && chars[i].1 != c {
                    if chars[i].1 == '\\' && c != '`' {
                        i += 1;
                    }
                    i += 1;
                }
                after_offset = false;
            }
            '(' | '[' | '{' => {
                stack.push(c);
                after_offset = false;
            }
            ')' | ']' | '}' => {
                stack.pop();
                after_offset = false;
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = at;
                while i + 1 < chars.len()
                    && (chars[i + 1].1.is_ascii_alphanumeric() || chars[i + 1].1 == '_')
                {
                    i += 1;
                }
                let end = chars.get(i + 1).map_or(q.len(), |c| c.0);
                after_offset = q[start..end].eq_ignore_ascii_case("offset");
            }
            c if c.is_ascii_digit() || c == '.' => {
                if let Some(m) = number.find(&q[at..]) {
                    let text = m.as_str();
                    let value = match text.strip_prefix("0x").or(text.strip_prefix("0X")) {
                        Some(hex) => {
                            u64::from_str_radix(hex, 16).map_or(f64::INFINITY, |v| v as f64)
                        }
                        None => text.parse::<f64>().unwrap_or(f64::INFINITY),
                    };
                    let in_range = stack.last() == Some(&'[');
                    if (in_range || after_offset) && value.abs() >= MAX_DURATION_NUMBER {
                        return Some(crate::sanitize::sanitize(text, false, 40).into_owned());
                    }
                    i += text.chars().count().max(1) - 1;
                }
                after_offset = false;
            }
            c if c.is_whitespace() || c == '-' || c == '+' => {}
            _ => after_offset = false,
        }
        i += 1;
    }
    None
}

fn nesting(q: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for c in q.chars() {
        match c {
            '(' | '[' | '{' => {
                depth += 1;
                max = max.max(depth);
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// The global variables' durations for one panel: `$__interval` is the range over 300
/// points, rounded up to a whole multiple of the panel's resolution (its minimum interval,
/// else the dashboard's refresh, else the scrape interval); `$__rate_interval` is Grafana's
/// `max($__interval + scrape, 4 × scrape)`.
fn builtins(panel: &SourcePanel, board: &Board, opts: &ImportOptions) -> Builtins {
    let min = panel
        .min_interval
        .as_deref()
        .and_then(super::json::duration)
        .filter(|d| *d >= Duration::from_secs(1));
    let scrape = min
        .unwrap_or(opts.scrape_interval)
        .max(Duration::from_secs(1));
    let resolution = min
        .or(board.refresh)
        .unwrap_or(opts.scrape_interval)
        .max(Duration::from_secs(1))
        .as_secs();
    let range = board.range.unwrap_or(opts.range);
    let raw = range.as_secs().div_ceil(300).max(1);
    let interval = Duration::from_secs(raw.div_ceil(resolution) * resolution);
    let rate_interval = (interval + scrape).max(scrape * 4);
    Builtins {
        interval,
        rate_interval,
        range,
    }
}

/// Convert every panel; record warnings and skips in traversal order.
pub(super) fn panels(
    board: &Board,
    bindings: &Bindings,
    opts: &ImportOptions,
    warnings: &mut Vec<Finding>,
    skipped: &mut Vec<Finding>,
) -> Vec<PanelConfig> {
    let mut out: Vec<(PanelConfig, Option<String>)> = Vec::new();
    for panel in &board.panels {
        let before = out.len();
        convert_panel(panel, board, bindings, opts, &mut out, warnings, skipped);
        if out.len() > MAX_PANELS {
            out.truncate(MAX_PANELS.max(before));
            skipped.push(Finding::new(
                &panel.path,
                format!(
                    "this and every later panel: {MAX_PANELS} panels were imported, the most one \
                     import makes"
                ),
            ));
            break;
        }
    }
    dedupe_titles(&mut out);
    out.into_iter().map(|(p, _)| p).collect()
}

/// One target ready to become a panel.
struct Ready<'a> {
    target: &'a SourceTarget,
    expr: String,
}

/// Why a panel is not converted before its queries are looked at: it is no panel, a repeat's
/// copy, holds no data, logs or traces, a library panel without its queries, or no queries.
fn refusal(panel: &SourcePanel) -> Option<Finding> {
    let path = &panel.path;
    if let Some(f) = &panel.skip {
        return Some(f.clone());
    }
    if let Some(t) = panel.malformed {
        return Some(Finding::new(
            path,
            format!("the panel is {t}, expected an object"),
        ));
    }
    if let Some(of) = &panel.repeat_of {
        return Some(Finding::new(
            path,
            format!(
                "a copy Grafana made when repeating panel {}; the original is imported",
                crate::sanitize::sanitize(of, false, 20)
            ),
        ));
    }
    let kind = panel.kind.as_deref().unwrap_or("");
    if NOT_DATA.contains(&kind) {
        return Some(Finding::new(
            path,
            format!(
                "a \"{}\" panel shows no query results",
                crate::sanitize::sanitize(kind, false, 40)
            ),
        ));
    }
    if LOGS_OR_TRACES.contains(&kind) {
        return Some(Finding::new(
            path,
            format!(
                "a \"{}\" panel shows logs or traces, not time series",
                crate::sanitize::sanitize(kind, false, 40)
            ),
        ));
    }
    if let Some(lib) = &panel.library
        && panel.targets.is_empty()
    {
        return Some(Finding::new(
            path,
            format!(
                "library panel \"{}\": its queries are stored in Grafana, not in this file; \
                 export the dashboard with \"Export for sharing externally\" to include them",
                crate::sanitize::sanitize(lib, false, 60)
            ),
        ));
    }
    if let Some(t) = panel.targets_malformed {
        return Some(Finding::new(
            path,
            format!("\"targets\" is {t}, expected a list"),
        ));
    }
    if panel.targets.is_empty() {
        return Some(Finding::new(path, "the panel has no queries"));
    }
    None
}

#[allow(clippy::too_many_arguments)]
fn convert_panel(
    panel: &SourcePanel,
    board: &Board,
    bindings: &Bindings,
    opts: &ImportOptions,
    out: &mut Vec<(PanelConfig, Option<String>)>,
    warnings: &mut Vec<Finding>,
    skipped: &mut Vec<Finding>,
) {
    if let Some(f) = refusal(panel) {
        skipped.push(f);
        return;
    }
    let path = &panel.path;
    let kind = panel.kind.as_deref().unwrap_or("");
    let panel_source = classify(&panel.datasource, board, bindings);
    let sources: Vec<Source> = panel
        .targets
        .iter()
        .map(|t| {
            let own = classify(&t.datasource, board, bindings);
            if !t.datasource.is_default() && own != Source::Mixed {
                own
            } else if panel_source == Source::Mixed {
                Source::Prometheus
            } else {
                panel_source.clone()
            }
        })
        .collect();
    // One finding for a panel whose every query goes elsewhere (a table of logs, say).
    if let Some(Source::Other(first)) = sources.first()
        && sources.iter().all(|s| s == &Source::Other(first.clone()))
    {
        skipped.push(Finding::new(
            path,
            format!("its queries go to {first}, not Prometheus"),
        ));
        return;
    }

    let b = builtins(panel, board, opts);
    let lookup = |n: &str| bindings.get(n);
    let mut ready: Vec<Ready> = Vec::new();
    // The panel's own warnings come before its queries'.
    let mut target_warnings: Vec<Finding> = Vec::new();
    for (t, source) in panel.targets.iter().zip(&sources) {
        let tp = &t.path;
        if let Some(kind) = t.malformed {
            skipped.push(Finding::new(
                tp,
                format!("the query is {kind}, expected an object"),
            ));
            continue;
        }
        if t.hidden {
            skipped.push(Finding::new(tp, "the query is hidden in Grafana"));
            continue;
        }
        if let Source::Other(what) = source {
            skipped.push(Finding::new(
                tp,
                format!("the query goes to {what}, not Prometheus"),
            ));
            continue;
        }
        let Some(raw) = t.expr.as_deref().filter(|e| !e.trim().is_empty()) else {
            skipped.push(Finding::new(
                tp,
                "the query has no PromQL expression (\"expr\")",
            ));
            continue;
        };
        let done = interpolate(raw, &lookup, &b, Mode::Query);
        // Never a `$name` sent to Prometheus: a query with one left is not converted.
        if !done.unresolved.is_empty() {
            skipped.push(Finding::new(tp, unresolved(&done, board)));
            continue;
        }
        warn_formats(&done, tp, &mut target_warnings);
        let expr = match one_line(&done.text) {
            Ok(e) => e,
            Err(c) => {
                skipped.push(Finding::new(
                    tp,
                    format!(
                        "the expression holds the control character U+{:04X} where PromQL \
                         cannot escape it",
                        c as u32
                    ),
                ));
                continue;
            }
        };
        if let Err(e) = parse_promql(&expr) {
            skipped.push(Finding::new(
                tp,
                format!(
                    "the PromQL parser rejects the expression after substitution: {} (in \"{}\")",
                    first_line(&e),
                    crate::sanitize::sanitize(&expr, false, 160)
                ),
            ));
            continue;
        }
        ready.push(Ready { target: t, expr });
    }
    if ready.is_empty() {
        return;
    }
    if panel.transformations > 0 {
        warnings.push(Finding::new(
            path,
            format!(
                "{} transformation(s) change what Grafana shows; warroom shows the raw query \
                 results",
                panel.transformations
            ),
        ));
    }
    if kind == "heatmap" {
        warnings.push(Finding::new(
            path,
            "a heatmap in Grafana; warroom draws each bucket as a line",
        ));
    }
    if let Some(r) = &panel.repeat {
        warnings.push(Finding::new(
            path,
            format!(
                "Grafana repeats this panel for each value of ${}; imported once, showing all \
                 of them",
                crate::sanitize::sanitize(r, false, 40)
            ),
        ));
    }

    warnings.append(&mut target_warnings);
    let title = panel_title(panel, &lookup, &b);
    let targets: Vec<&SourceTarget> = ready.iter().map(|r| r.target).collect();
    let suffixes = suffixes(&targets, &lookup, &b);
    for (r, suffix) in ready.iter().zip(suffixes) {
        let settings = panel
            .overrides
            .iter()
            .rev()
            .find(|(id, _)| Some(id.as_str()) == r.target.ref_id.as_deref())
            .map(|(_, s)| s.or(&panel.defaults))
            .unwrap_or_else(|| panel.defaults.clone());
        let (config, notes, undrawn) = build(r, panel, &title, suffix, &settings, &lookup, &b);
        for n in notes {
            warnings.push(Finding::new(&r.target.path, n));
        }
        // Queries sharing the panel's thresholds share one finding.
        if let Some(f) = undrawn
            && !warnings.contains(&f)
        {
            warnings.push(f);
        }
        out.push((config, panel.row.clone()));
    }
}

fn first_line(e: &str) -> String {
    crate::sanitize::sanitize(e.lines().next().unwrap_or(e).trim(), false, 200).into_owned()
}

/// Why a query with references left after substitution is not converted, name by name.
fn unresolved(done: &Outcome, board: &Board) -> String {
    let why: Vec<String> = done
        .unresolved
        .iter()
        .map(|name| {
            let shown = crate::sanitize::sanitize(name, false, 60);
            if name.starts_with("__") {
                format!("${shown} is a Grafana global warroom does not fill in")
            } else if let Some(v) = board.variables.iter().find(|v| &v.name == name) {
                format!("${shown} has no value (see {})", v.path)
            } else {
                format!("${shown} is not a variable of this dashboard")
            }
        })
        .collect();
    format!(
        "{}; the query is not converted rather than sent to Prometheus with the reference in it",
        why.join("; ")
    )
}

fn warn_formats(done: &Outcome, path: &str, warnings: &mut Vec<Finding>) {
    for f in &done.unknown_formats {
        warnings.push(Finding::new(
            path,
            format!(
                "${{{}}} asks for a format warroom does not know; the default was used",
                crate::sanitize::sanitize(f, false, 60)
            ),
        ));
    }
}

/// One panel for one query; the notes are the query's warnings, the finding a threshold that
/// would have given a level where Grafana does not draw it.
fn build<'b>(
    r: &Ready,
    panel: &SourcePanel,
    title: &str,
    suffix: Option<String>,
    settings: &FieldSettings,
    lookup: &dyn Fn(&str) -> Option<&'b super::interpolate::Binding>,
    b: &Builtins,
) -> (PanelConfig, Vec<String>, Option<Finding>) {
    let mut notes = Vec::new();
    let unit_id = match &settings.unit {
        Some(Ok(u)) => Some(u.as_str()),
        Some(Err(t)) => {
            notes.push(format!(
                "\"unit\" is {t}, expected a unit id; shown as a plain count"
            ));
            None
        }
        None => None,
    };
    let mapping = map_unit(unit_id);
    if let Some(c) = &mapping.caveat {
        notes.push(c.clone());
    }
    let mut lv = Levels::default();
    let mut undrawn = None;
    if let Some(t) = &settings.thresholds {
        let (found, note) = levels(t, settings.min, settings.max);
        let kind = panel.kind.as_deref().unwrap_or("");
        match drawn(kind, t, settings, &panel.display) {
            Ok(()) => {
                lv = found;
                notes.extend(note);
            }
            // Steps of one fine colour were never a level; anything else is reported.
            Err(why) if found != Levels::default() || note.is_some() => {
                let at = settings.thresholds_at.as_deref().unwrap_or(&panel.path);
                undrawn = Some(Finding::new(
                    at,
                    format!(
                        "thresholds{} not imported as levels: Grafana does not draw them on this \
                         panel, {why}",
                        describe(&found)
                    ),
                ));
            }
            Err(_) => {}
        }
    }
    let scale = |v: Option<f64>| v.map(|v| mapping.factor.apply(v)).filter(|v| v.is_finite());
    let (warn, crit) = (scale(lv.warn), scale(lv.crit));
    let (warn, crit) = match (warn, crit) {
        (Some(w), Some(c))
            if (lv.bad_when == BadWhen::Above && w > c)
                || (lv.bad_when == BadWhen::Below && w < c) =>
        {
            notes.push("warn and crit come out in the wrong order; only crit was kept".into());
            (None, Some(c))
        }
        other => other,
    };
    let legend = r
        .target
        .legend
        .as_deref()
        .filter(|l| !l.trim().is_empty() && l.trim() != "__auto")
        .map(|l| {
            let text = interpolate(l, lookup, b, Mode::Text).text;
            crate::sanitize::sanitize(&legend_template(text.trim()), false, MAX_TITLE).into_owned()
        })
        .filter(|l| !l.is_empty());
    let title = match suffix {
        Some(s) => clean_text(&format!("{title} · {s}")),
        None => title.to_string(),
    };
    let config = PanelConfig {
        title,
        query: mapping.factor.wrap(&r.expr),
        unit: mapping.unit,
        warn,
        crit,
        bad_when: lv.bad_when,
        legend,
        signal: None,
    };
    (config, notes, undrawn)
}

/// ` (warn 80, crit 90, bad above)` as a finding says it, in Grafana's numbers; empty for
/// thresholds that gave no level.
fn describe(l: &Levels) -> String {
    if *l == Levels::default() {
        return String::new();
    }
    let mut parts: Vec<String> = Vec::new();
    if let Some(w) = l.warn {
        parts.push(format!("warn {w}"));
    }
    if let Some(c) = l.crit {
        parts.push(format!("crit {c}"));
    }
    let side = match l.bad_when {
        BadWhen::Above => "bad above",
        BadWhen::Below => "bad below",
    };
    parts.push(side.to_string());
    format!(" ({})", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_or_long_expressions_are_refused_before_parsing() {
        let deep = format!("{}up{}", "(".repeat(500), ")".repeat(500));
        assert!(parse_promql(&deep).unwrap_err().contains("nests"));
        let long = format!("up{{a=\"{}\"}}", "x".repeat(MAX_EXPR_BYTES));
        assert!(parse_promql(&long).unwrap_err().contains("bytes"));
        assert!(parse_promql("sum(rate(x[1m]))").is_ok());
        // The deepest nesting allowed parses on a test thread's small stack.
        let ok = format!("{}up{}", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
        assert!(parse_promql(&ok).is_ok());
        // Unitless durations past u64 seconds made promql-parser 0.11 panic.
        for q in [
            "x[1e20]",
            "x[5m:18446744073709551615]",
            "x offset 1e20",
            "x offset -1e20",
            "rate(x[ 0xffffffffffffffffff ])",
        ] {
            assert!(
                parse_promql(q).unwrap_err().contains("beyond any range"),
                "{q}"
            );
        }
        for q in [
            "x > 1e20",
            "x[1e9]",
            "x{a=\"[1e20]\"}",
            "x @ 1e20",
            "sum(x offset 5m)",
        ] {
            assert!(parse_promql(q).is_ok(), "{q}");
        }
        // `one_line` escapes control characters as `\u001b`; the parser takes that.
        assert!(parse_promql("up{a=\"x\\u001by\"}").is_ok());
    }
}
