//! Source panels to warroom panels.
//!
//! One warroom panel per Grafana query: warroom's panel is one PromQL query with one unit,
//! one pair of thresholds and one legend template, and a Grafana panel's queries usually differ
//! in exactly those (p50 and p99, in and out). Merging them with `or` would need label surgery
//! that changes what the query means and still could not carry two legends. A panel with
//! several queries therefore gives several panels titled `Title · p99`, the suffix taken from
//! the query's legend without its `{{label}}` parts, else its `refId`.

use super::datasource::{Source, classify};
use super::json::{Board, FieldSettings, SourcePanel, SourceTarget};
use super::thresholds::{Levels, drawn, levels};
use super::titles::{MAX_TITLE, clean_text, dedupe_titles, legend_template, panel_title, suffixes};
use super::units::map_unit;
use super::{Finding, ImportOptions, MAX_PANELS};
use crate::config::panels::{BadWhen, MAX_POINTS_LIMIT, PanelConfig, Shape};
use crate::variables::Bindings;
use crate::variables::interpolate::{Binding, Builtins, Mode, Outcome, interpolate, one_line};
use crate::variables::promql::parse_promql;
use std::time::Duration;

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

/// Pixels across Grafana's 24-column grid on a common 1920-pixel screen: a panel's width is
/// what Grafana asks points for when it sets no `maxDataPoints`.
const SCREEN_PIXELS: u32 = 1920;
/// The grid's columns; a panel without a `gridPos` is half of them wide.
const GRID_COLUMNS: u32 = 24;

/// The global variables' durations for one panel, as Grafana computes them
/// (`rangeutil.calculateInterval`): `$__interval` is the range over the panel's resolution
/// (its `maxDataPoints`, else its width in pixels), rounded to a clear increment
/// ([`round_interval`]) and never below the panel's minimum interval (else the scrape
/// interval); `$__rate_interval` is `max($__interval + scrape, 4 × scrape)`.
fn builtins(panel: &SourcePanel, board: &Board, opts: &ImportOptions) -> Builtins {
    let min = panel
        .min_interval
        .as_deref()
        .and_then(super::json::duration)
        .filter(|d| *d >= Duration::from_secs(1));
    let scrape = min
        .unwrap_or(opts.scrape_interval)
        .max(Duration::from_secs(1));
    let range = board.range.unwrap_or(opts.range);
    let width = panel
        .grid_width
        .unwrap_or(GRID_COLUMNS / 2)
        .clamp(1, GRID_COLUMNS);
    let resolution = (panel.max_data_points).unwrap_or(SCREEN_PIXELS * width / GRID_COLUMNS);
    let raw = range.as_millis() as f64 / f64::from(resolution.max(1));
    let interval = Duration::from_millis(round_interval(raw)).max(scrape);
    let rate_interval = (interval + scrape).max(scrape * 4);
    Builtins {
        interval,
        rate_interval,
        range,
    }
}

/// Grafana's `roundInterval`: an interval in milliseconds to the clear increment it shows.
fn round_interval(ms: f64) -> u64 {
    const STEPS: &[(f64, u64)] = &[
        (15.0, 10),
        (35.0, 20),
        (75.0, 50),
        (150.0, 100),
        (350.0, 200),
        (750.0, 500),
        (1_500.0, 1_000),
        (3_500.0, 2_000),
        (7_500.0, 5_000),
        (12_500.0, 10_000),
        (17_500.0, 15_000),
        (25_000.0, 20_000),
        (45_000.0, 30_000),
        (90_000.0, 60_000),
        (210_000.0, 120_000),
        (450_000.0, 300_000),
        (750_000.0, 600_000),
        (1_050_000.0, 900_000),
        (1_500_000.0, 1_200_000),
        (2_700_000.0, 1_800_000),
        (5_400_000.0, 3_600_000),
        (9_000_000.0, 7_200_000),
        (16_200_000.0, 10_800_000),
        (32_400_000.0, 21_600_000),
        (86_400_000.0, 43_200_000),
        (604_800_000.0, 86_400_000),
        (1_814_400_000.0, 604_800_000),
        (3_628_800_000.0, 2_592_000_000),
    ];
    (STEPS.iter())
        .find(|(below, _)| ms < *below)
        .map_or(31_536_000_000, |(_, step)| *step)
}

/// Where the panel sits and what it asks for, from its dashboard: its row (and whether that
/// starts collapsed), the dashboard's refresh and the panel's `maxDataPoints`.
fn shape(panel: &SourcePanel, board: &Board) -> Shape {
    Shape {
        row: panel
            .row
            .as_deref()
            .map(clean_text)
            .filter(|r| !r.is_empty()),
        collapsed: panel.collapsed,
        every: (board.refresh).map(|d| d.clamp(Duration::from_secs(1), Duration::from_secs(3600))),
        max_points: (panel.max_data_points).map(|n| n.clamp(2, MAX_POINTS_LIMIT)),
    }
}

/// Convert every panel; record warnings and skips in traversal order.
/// `used` gets the query variables left in the converted queries for the console to resolve.
pub(super) fn panels(
    board: &Board,
    bindings: &Bindings,
    opts: &ImportOptions,
    warnings: &mut Vec<Finding>,
    skipped: &mut Vec<Finding>,
    used: &mut Vec<String>,
) -> Vec<PanelConfig> {
    let mut out: Vec<(PanelConfig, Option<String>)> = Vec::new();
    for panel in &board.panels {
        let before = out.len();
        let found = (&mut *warnings, &mut *skipped, &mut *used);
        convert_panel(panel, board, bindings, opts, &mut out, found);
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

fn convert_panel(
    panel: &SourcePanel,
    board: &Board,
    bindings: &Bindings,
    opts: &ImportOptions,
    out: &mut Vec<(PanelConfig, Option<String>)>,
    (warnings, skipped, used): (&mut Vec<Finding>, &mut Vec<Finding>, &mut Vec<String>),
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
        // Never a `$name` sent to Prometheus: a query with one left is not converted, unless
        // each is a query variable left for the console to resolve (an offline import).
        let waiting = |n: &String| bindings.is_pending(&board.variables, n);
        if !done.unresolved.is_empty() && !done.unresolved.iter().all(waiting) {
            skipped.push(Finding::new(tp, unresolved(&done, board)));
            continue;
        }
        // The console fills in the text written: a value filled in now must not read as a
        // reference then.
        if !done.unresolved.is_empty() && !same_when_opened(raw, &done, bindings, &b) {
            skipped.push(Finding::new(
                tp,
                "a value filled in holds a variable reference of its own, which the console \
                 would read again; import with --prometheus URL to resolve it now",
            ));
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
        if let Err(e) = parse_promql(&with_placeholders(&expr, &done.unresolved, &b)) {
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
        for n in done.unresolved {
            if !used.contains(&n) {
                used.push(n);
            }
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
        let config = PanelConfig {
            shape: shape(panel, board),
            ..config
        };
        out.push((config, panel.row.clone()));
    }
}

/// `expr` with each of the variables `names` standing for a placeholder value, for the parser
/// to check a query whose variables the console resolves later.
fn with_placeholders(expr: &str, names: &[String], b: &Builtins) -> String {
    if names.is_empty() {
        return expr.to_string();
    }
    let placeholder = Binding::One("x".into());
    let lookup = |n: &str| names.iter().any(|m| m == n).then_some(&placeholder);
    interpolate(expr, &lookup, b, Mode::Query).text
}

/// Whether filling in the variables left in `done` later gives what filling in all of `raw`'s
/// at once would: no value filled in now holds a reference (or a global) of its own.
fn same_when_opened(raw: &str, done: &Outcome, bindings: &Bindings, b: &Builtins) -> bool {
    let placeholder = Binding::One("x".into());
    let lookup = |n: &str| {
        (bindings.get(n)).or_else(|| {
            done.unresolved
                .iter()
                .any(|m| m == n)
                .then_some(&placeholder)
        })
    };
    interpolate(raw, &lookup, b, Mode::Query).text
        == with_placeholders(&done.text, &done.unresolved, b)
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
    lookup: &dyn Fn(&str) -> Option<&'b Binding>,
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
            let text = interpolate(l, lookup, b, Mode::Legend).text;
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
        shape: Default::default(),
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
    fn intervals_round_as_grafana_rounds_them() {
        // Grafana's own table (rangeutil.roundInterval): below 17.5 s is 15 s, below 25 s 20 s…
        for (ms, want) in [
            (11_250.0, 10_000),
            (17_499.0, 15_000),
            (22_500.0, 20_000),
            (44_999.0, 30_000),
            (89_999.0, 60_000),
            (90_000.0, 120_000),
            (5.0, 10),
            (4e12, 31_536_000_000),
        ] {
            assert_eq!(round_interval(ms), want, "{ms} ms");
        }
    }

    #[test]
    fn max_data_points_then_the_panels_width_set_the_interval() {
        let board = Board {
            range: Some(Duration::from_secs(24 * 3600)),
            ..Board::new(super::super::Model::Classic)
        };
        let opts = ImportOptions::default();
        let mut panel = SourcePanel::default();
        // 24 h over 960 pixels: 90 s, rounded to 2 m; $__rate_interval 2 m + 15 s.
        let b = builtins(&panel, &board, &opts);
        assert_eq!(b.interval, Duration::from_secs(120));
        assert_eq!(b.rate_interval, Duration::from_secs(135));
        // A full-width panel (1920 pixels): 45 s, rounded to 1 m.
        panel.grid_width = Some(24);
        assert_eq!(
            builtins(&panel, &board, &opts).interval,
            Duration::from_secs(60)
        );
        // maxDataPoints 100: 864 s, rounded to 15 m.
        panel.max_data_points = Some(100);
        assert_eq!(
            builtins(&panel, &board, &opts).interval,
            Duration::from_secs(900)
        );
        // Never below the panel's minimum interval.
        panel.max_data_points = Some(10_000);
        panel.min_interval = Some("30s".into());
        assert_eq!(
            builtins(&panel, &board, &opts).interval,
            Duration::from_secs(30)
        );
    }
}
