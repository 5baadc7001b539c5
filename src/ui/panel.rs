//! One panel: a bordered line chart with its thresholds, the current value and its level, a
//! legend, and the panel's state as a symbol and a word (never colour alone).
//!
//! ```text
//! ┌ Pool saturation ─────────────── ● live ┐
//! │ 97.0% ▲ CRIT                            │
//! │100%┤      ⣀⡠⠤⠒⠒⠉⠉⠉⠉⠉⠉⠉ crit ─ ─ ─ ─ ─ │
//! │  0%┼──────────────────────────────────  │
//! │    07:00                          08:00 │
//! └─────────────────────────────────────────┘
//! ```

use crate::app::panes::panel::{Level, Panel, PanelState};
use crate::config::Unit;
use crate::metrics::Series;
use crate::metrics::series::{MAX_DRAWN_SERIES, MAX_PANEL_POINTS};
use crate::theme::Theme;
use chrono::TimeZone;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset, GraphType, Paragraph};

/// A threshold line: its name, style and two end points (named on the y axis' side by its
/// value in the headline's unit).
type Threshold = (String, Style, [(f64, f64); 2]);

/// What is marked on a chart at a moment: a threshold crossing, or a runbook step starting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MarkKind {
    /// Past a threshold (worse).
    Breach,
    /// Back within it.
    Recovery,
    /// A runbook step started.
    Step,
}

/// A mark at `t` (Unix seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mark {
    pub t: f64,
    pub kind: MarkKind,
}

/// What the panel needs besides itself.
pub struct PanelView<'a> {
    pub panel: &'a Panel,
    pub state: PanelState,
    pub selected: bool,
    pub theme: &'a Theme,
    pub tz: chrono_tz::Tz,
    /// Shown window, Unix seconds.
    pub start: f64,
    pub end: f64,
    /// Where the values come from: live, paused, or a replay of a recorded incident.
    pub feed: Feed,
    /// How old the value is, when it is too old to be current ([`Model::value_age`]).
    ///
    /// [`Model::value_age`]: crate::app::Model::value_age
    pub value_age: Option<i64>,
    /// Crossings of this panel and runbook steps in the window, marked on the chart.
    pub marks: Vec<Mark>,
}

/// Where a panel's values come from, as its tag says: a replay's values are the record's,
/// never "live".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feed {
    Live,
    /// Refreshing is paused.
    Paused,
    /// A recorded incident played back.
    Replay,
}

impl Feed {
    pub fn of(model: &crate::app::Model) -> Feed {
        if model.replay.is_some() {
            Feed::Replay
        } else if model.paused {
            Feed::Paused
        } else {
            Feed::Live
        }
    }
}

/// The state as a symbol, a word and a style, as `feed` colours it.
pub fn state_tag_in(state: &PanelState, feed: Feed, theme: &Theme) -> (String, Style) {
    match (feed, state) {
        (Feed::Replay, PanelState::Fresh | PanelState::Stale { .. }) => {
            ("↺ replayed".into(), theme.stale)
        }
        (Feed::Paused, PanelState::Fresh | PanelState::Stale { .. }) => {
            ("⏸ paused".into(), theme.stale)
        }
        _ => state_tag(state, theme),
    }
}

/// The state as a symbol, a word and a style.
pub fn state_tag(state: &PanelState, theme: &Theme) -> (String, Style) {
    match state {
        PanelState::Loading => ("◌ loading".into(), theme.loading),
        PanelState::Fresh => ("● live".into(), theme.ok),
        PanelState::Stale { age_secs } => (format!("◷ stale {}", age(*age_secs)), theme.stale),
        PanelState::Partial { .. } => ("◐ partial".into(), theme.partial),
        PanelState::Failing { .. } => ("✖ failing".into(), theme.failing),
        PanelState::Unset { .. } => ("◇ not sent".into(), theme.stale),
    }
}

/// A short age: `40s`, `3m`, `2h`, `3d`; under a minute, to 5 s (`12s` reads `10s`), so an
/// idle console redraws a stale panel every 5 s, not every second.
pub fn age(secs: i64) -> String {
    let s = secs.max(0);
    match s {
        0..=59 => format!("{}s", s / 5 * 5),
        60..=3599 => format!("{}m", s / 60),
        3600..=86399 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}

/// A value's level, and its age when it is old: an old value is never "ok" (`◷ 40s old`), and an
/// old WARN or CRIT says how old it is (`▲ CRIT ◷ 2m old`).
pub fn value_tag(level: Level, value_age: Option<i64>, theme: &Theme) -> Vec<Span<'static>> {
    match (value_age, level) {
        (Some(a), Level::Ok) => vec![Span::styled(format!("◷ {} old", age(a)), theme.stale)],
        (Some(a), l) => {
            let (lt, ls) = level_tag(l, theme);
            vec![
                Span::styled(lt, ls),
                Span::styled(format!(" ◷ {} old", age(a)), theme.stale),
            ]
        }
        (None, l) => {
            let (lt, ls) = level_tag(l, theme);
            vec![Span::styled(lt, ls)]
        }
    }
}

pub fn level_tag(level: Level, theme: &Theme) -> (&'static str, Style) {
    match level {
        Level::Ok => ("✓ ok", theme.ok),
        Level::Warn => ("△ WARN", theme.warn),
        Level::Crit => ("▲ CRIT", theme.crit),
    }
}

/// Draw one panel into `area`.
pub fn draw(frame: &mut Frame, area: Rect, v: &PanelView) {
    let theme = v.theme;
    let (tag, tag_style) = state_tag_in(&v.state, v.feed, theme);
    let border = if v.selected {
        theme.border_focus
    } else {
        theme.border
    };
    let block = Block::bordered()
        .border_style(border)
        .title(Line::styled(
            format!(" {} ", v.panel.config.title),
            theme.title,
        ))
        .title(Line::styled(format!(" {tag} "), tag_style).right_aligned());
    // The thresholds the dotted lines draw, named in the panel's unit.
    let cfg = &v.panel.config;
    let limits: Vec<String> = [("warn", cfg.warn), ("crit", cfg.crit)]
        .into_iter()
        .filter_map(|(n, t)| t.map(|t| format!("{n} {}", cfg.unit.format(t))))
        .collect();
    let block = if limits.is_empty() {
        block
    } else {
        block.title_bottom(Line::styled(
            format!(" ┄ {} ", limits.join(" · ")),
            theme.muted,
        ))
    };
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let (head, body) = crate::ui::layout::top_row(inner);
    frame.render_widget(Paragraph::new(headline(v)), head);
    // Nothing to plot (no answer yet, a failing source, an empty answer): the headline says
    // so, and no axes are drawn around invented bounds. The first frame, before any answer,
    // is then boxes and titles, half the bytes of empty charts (issue 20).
    let nothing =
        v.panel.shown().is_empty() && !(v.marks.iter()).any(|m| m.t >= v.start && m.t <= v.end);
    if body.height >= 2 && body.width >= 8 && !nothing {
        chart(frame, body, v);
    }
}

pub fn headline(v: &PanelView) -> Line<'static> {
    let theme = v.theme;
    let unit = v.panel.config.unit;
    let mut spans = Vec::new();
    match v.panel.current() {
        Some(value) => {
            let level = v.panel.level(value);
            spans.push(Span::styled(unit.format(value), theme.title));
            spans.push(Span::raw(" "));
            spans.extend(value_tag(level, v.value_age, theme));
        }
        None if matches!(v.state, PanelState::Loading) => {
            spans.push(Span::styled("waiting for the first answer…", theme.muted));
        }
        // A failing query's reason comes first: "no series" would be a guess.
        None if matches!(
            v.state,
            PanelState::Failing { .. } | PanelState::Unset { .. }
        ) => {}
        // An empty answer says which metric the query needed and where to look.
        // (Only for an answer that came back empty: a failing query has no answer at all.)
        None => match v.panel.empty_hint() {
            Some(hint)
                if v.panel.shown().is_empty()
                    && matches!(
                        v.state,
                        PanelState::Fresh | PanelState::Partial { .. } | PanelState::Stale { .. }
                    ) =>
            {
                spans.push(Span::styled(format!("— {hint}"), theme.muted));
            }
            _ => spans.push(Span::styled("— no data", theme.muted)),
        },
    }
    if let Some(matched) = v.panel.matched() {
        spans.push(Span::styled(
            format!("  worst {} of {matched} series", v.panel.shown().len()),
            theme.muted,
        ));
    }
    if v.panel.points_capped {
        spans.push(Span::styled(
            format!("  points capped at {}", grouped(MAX_PANEL_POINTS)),
            theme.muted,
        ));
    }
    match &v.state {
        PanelState::Unset { reason } => {
            spans.push(Span::styled(format!("◇ {reason}"), theme.stale));
        }
        PanelState::Failing { reason } => {
            spans.push(Span::raw("  "));
            spans.push(Span::styled(format!("✖ {reason}"), theme.failing));
        }
        PanelState::Partial { warning } => {
            spans.push(Span::raw("  "));
            spans.push(Span::styled(format!("◐ partial: {warning}"), theme.partial));
        }
        _ => {}
    }
    Line::from(spans)
}

/// The legend of series `i`: the panel's template, else the labels that differ.
fn legend(panel: &Panel, s: &Series, all: &[&Series]) -> String {
    if let Some(t) = &panel.config.legend {
        let mut out = t.clone();
        for (k, val) in &s.labels {
            out = out.replace(&format!("{{{{{k}}}}}"), val);
        }
        return out;
    }
    let differing: Vec<String> = s
        .labels
        .iter()
        .filter(|(k, val)| all.iter().any(|o| o.labels.get(*k) != Some(*val)))
        .map(|(k, val)| format!("{k}={val}"))
        .collect();
    if differing.is_empty() {
        s.label_text()
    } else {
        differing.join(",")
    }
}

/// `text` cut to `max` characters, `…` saying so.
fn short(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// One legend entry: the series' name, its style and its newest value.
struct LegendEntry {
    name: String,
    style: Style,
    value: Option<f64>,
}

impl LegendEntry {
    /// `name value`, the value in the panel's unit when there is one.
    fn text(&self, unit: Unit) -> String {
        match self.value {
            Some(x) => format!("{} {}", self.name, unit.format(x)),
            None => self.name.clone(),
        }
    }
}

/// What a chart does not draw: how many series more the query matched, and the worst of all
/// (what sets the level, drawn or not) as a legend entry.
struct Beyond {
    more: usize,
    worst: Option<LegendEntry>,
}

impl Beyond {
    /// `+1,990 more`, counting `unfit` entries that found no room too.
    fn more_text(&self, unfit: usize) -> String {
        format!("+{} more", grouped(self.more + unfit))
    }

    /// `worst pod=api-7 97.0%`, its style the level's.
    fn worst_span(&self, unit: Unit, width: usize) -> Option<Span<'static>> {
        let w = self.worst.as_ref().filter(|_| self.more > 0)?;
        let text: String = format!("worst {}", w.text(unit))
            .chars()
            .take(width)
            .collect();
        Some(Span::styled(text, w.style))
    }
}

/// `1990` as `1,990`.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The legend's entries as lines of `width` columns: `━ name value`, each series in its own
/// colour and with its value (so series whose colours repeat past the palette still tell
/// apart), at most `rows` lines, the rest counted, then the series not drawn and the worst.
fn legend_lines(
    entries: &[LegendEntry],
    beyond: &Beyond,
    unit: Unit,
    (width, rows): (usize, usize),
    theme: &Theme,
) -> Vec<Line<'static>> {
    let tail = if beyond.more > 0 { 2 } else { 0 };
    let room = rows.saturating_sub(tail).max(1);
    let mut lines: Vec<Line> = Vec::new();
    let mut unfit = 0;
    for (k, e) in entries.iter().enumerate() {
        if lines.len() + 1 >= room && k + 1 < entries.len() {
            unfit = entries.len() - k;
            break;
        }
        let body: String = e.text(unit).chars().take(width.saturating_sub(2)).collect();
        lines.push(Line::from(vec![
            Span::styled("━ ", e.style),
            Span::styled(body, theme.text),
        ]));
    }
    if unfit + beyond.more > 0 {
        lines.push(Line::styled(beyond.more_text(unfit), theme.muted));
    }
    lines.extend(beyond.worst_span(unit, width).map(Line::from));
    lines
}

/// The same legend on one or two rows below the plot: entries side by side.
fn legend_rows(
    entries: &[LegendEntry],
    beyond: &Beyond,
    unit: Unit,
    (width, rows): (usize, usize),
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut lines: Vec<Line> = Vec::new();
    let mut spans: Vec<Span> = Vec::new();
    let mut used = 0;
    let mut unfit = 0;
    for (k, e) in entries.iter().enumerate() {
        let item = format!("{}  ", e.text(unit));
        let w = item.chars().count() + 2;
        // The last row keeps room to count what does not fit.
        let room = if lines.len() + 1 == rows {
            width.saturating_sub(9)
        } else {
            width
        };
        if used + w > room && !spans.is_empty() {
            lines.push(Line::from(std::mem::take(&mut spans)));
            used = 0;
            if lines.len() == rows {
                unfit = entries.len() - k;
                break;
            }
        }
        spans.push(Span::styled("━ ", e.style));
        spans.push(Span::styled(item, theme.text));
        used += w;
    }
    if !spans.is_empty() {
        lines.push(Line::from(spans));
    }
    if unfit + beyond.more > 0 {
        // No room for the rest: say how many, and which is the worst.
        let mut tail = vec![Span::styled(beyond.more_text(unfit), theme.muted)];
        if let Some(w) = beyond.worst_span(unit, width) {
            tail.push(Span::raw(" · "));
            tail.push(w);
        }
        let full = lines.len() >= rows;
        match lines.last_mut() {
            Some(last) if full => last.spans.extend(tail),
            _ => lines.push(Line::from(tail)),
        }
    }
    lines
}

/// Time labels for the x axis: one every ~14 columns, with the date when the window crosses
/// midnight in `tz`.
fn time_labels(v: &PanelView, columns: u16, theme: &Theme) -> Vec<Span<'static>> {
    let local = |t: f64| v.tz.timestamp_opt(t as i64, 0).single();
    let crosses = match (local(v.start), local(v.end)) {
        (Some(a), Some(b)) => a.date_naive() != b.date_naive(),
        _ => false,
    };
    let (fmt, each) = if crosses {
        ("%m-%d %H:%M", 16)
    } else {
        ("%H:%M", 10)
    };
    let n = usize::from(columns / each).clamp(2, 9);
    (0..n)
        .map(|k| {
            let t = v.start + (v.end - v.start) * k as f64 / (n - 1) as f64;
            let text = local(t)
                .map(|d| d.format(fmt).to_string())
                .unwrap_or_default();
            Span::styled(text, theme.muted)
        })
        .collect()
}

fn chart(frame: &mut Frame, area: Rect, v: &PanelView) {
    let theme = v.theme;
    let cfg = &v.panel.config;
    // Beside the plot, a legend row each and two for what is not drawn.
    let fits = if area.width >= 60 {
        usize::from(area.height).saturating_sub(2).max(1)
    } else {
        MAX_DRAWN_SERIES
    };
    let shown = v.panel.drawn(MAX_DRAWN_SERIES.min(fits));
    let beyond = Beyond {
        more: v.panel.series_count().saturating_sub(shown.len()),
        worst: v.panel.worst_now().map(|(s, value)| LegendEntry {
            name: short(&legend(v.panel, s, &v.panel.shown()), 40),
            style: level_tag(v.panel.level(value), theme).1,
            value: Some(value).filter(|x| x.is_finite()),
        }),
    };
    let named = cfg.legend.is_some() || shown.len() > 1 || beyond.more > 0;
    let entries: Vec<LegendEntry> = if named {
        shown
            .iter()
            .enumerate()
            .map(|(i, s)| LegendEntry {
                name: legend(v.panel, s, &shown),
                style: theme.series(i),
                value: v.panel.newest(s).map(|p| p.v).filter(|x| x.is_finite()),
            })
            .collect()
    } else {
        Vec::new()
    };
    // The legend beside the plot when there is room, else below it: never over the lines.
    let widest = entries
        .iter()
        .map(|e| e.name.chars().count() + 10)
        // `worst NAME 97.0%` too, when it is said.
        .chain(
            (beyond.more > 0)
                .then_some(())
                .and(beyond.worst.as_ref())
                .map(|w| w.name.chars().count() + 16),
        )
        .max()
        .unwrap_or(0) as u16;
    let (plot, legend_area, beside) = if entries.is_empty() {
        (area, None, false)
    } else if area.width >= 60 {
        let w = widest.clamp(12, area.width / 3);
        let [p, l] = Layout::horizontal([Constraint::Min(0), Constraint::Length(w)]).areas(area);
        (p, Some(l), true)
    } else if area.height >= 5 {
        let rows = if area.height >= 8 { 2 } else { 1 };
        let [p, l] = Layout::vertical([Constraint::Min(0), Constraint::Length(rows)]).areas(area);
        (p, Some(l), false)
    } else {
        (area, None, false)
    };
    if let Some(l) = legend_area {
        let lines = if beside {
            legend_lines(
                &entries,
                &beyond,
                cfg.unit,
                (usize::from(l.width), usize::from(l.height)),
                theme,
            )
        } else {
            legend_rows(
                &entries,
                &beyond,
                cfg.unit,
                (usize::from(l.width), usize::from(l.height)),
                theme,
            )
        };
        frame.render_widget(Paragraph::new(lines), l);
    }
    let area = plot;
    // Braille gives two dots a column: more points than that only cost time.
    let buckets = usize::from(area.width) * 2;
    let data: Vec<Vec<(f64, f64)>> = shown
        .iter()
        .map(|s| {
            let visible = s
                .points
                .iter()
                .filter(|p| p.v.is_finite() && p.t >= v.start && p.t <= v.end)
                .map(|p| (p.t, p.v));
            let mut points = decimate(visible, v.start, v.end, buckets);
            // The instant value, when newer than the step grid, extends the line to now.
            if let Some(n) = v.panel.newest(s)
                && n.v.is_finite()
                && points.last().is_none_or(|l| n.t > l.0)
            {
                points.push((n.t, n.v));
            }
            points
        })
        .collect();
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for (_, y) in data.iter().flatten() {
        lo = lo.min(*y);
        hi = hi.max(*y);
    }
    for t in [cfg.warn, cfg.crit].into_iter().flatten() {
        lo = lo.min(t);
        hi = hi.max(t);
    }
    if !lo.is_finite() || !hi.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    lo = lo.min(0.0);
    if hi <= lo {
        hi = lo + 1.0;
    }
    // A round top ("40s", "100%"), never "31.39s" or "105.0%".
    hi = lo + nice_ceiling(hi - lo);
    let thresholds: Vec<Threshold> = [
        ("warn", cfg.warn, theme.threshold_warn),
        ("crit", cfg.crit, theme.threshold_crit),
    ]
    .into_iter()
    .filter_map(|(name, t, style)| {
        t.map(|t| {
            (
                format!("{name} {}", cfg.unit.format(t)),
                style,
                [(v.start, t), (v.end, t)],
            )
        })
    })
    .collect();
    // Crossings and runbook steps as vertical lines across the plot.
    let marks: Vec<(Style, [(f64, f64); 2])> = (v.marks.iter())
        .filter(|m| m.t >= v.start && m.t <= v.end)
        .map(|m| {
            let style = match m.kind {
                MarkKind::Breach => theme.threshold_crit,
                MarkKind::Recovery => theme.ok,
                MarkKind::Step => theme.accent,
            };
            (style, [(m.t, lo), (m.t, hi)])
        })
        .collect();
    let mut datasets: Vec<Dataset> = Vec::new();
    for (style, line) in &marks {
        datasets.push(
            Dataset::default()
                .marker(Marker::Dot)
                .graph_type(GraphType::Line)
                .style(*style)
                .data(line),
        );
    }
    for (_, style, line) in &thresholds {
        datasets.push(
            Dataset::default()
                .marker(Marker::Dot)
                .graph_type(GraphType::Line)
                .style(*style)
                .data(line),
        );
    }
    let y_labels = vec![
        Span::styled(fmt_axis(cfg.unit, lo), theme.muted),
        Span::styled(fmt_axis(cfg.unit, hi), theme.muted),
    ];
    let x_labels = time_labels(v, area.width.saturating_sub(8), theme);
    let graph = graph_area(area, &x_labels, &y_labels);
    // The axes, their labels, the thresholds and the marks: ratatui's chart, one layer each.
    let chart = Chart::new(datasets)
        .x_axis(
            Axis::default()
                .bounds([v.start, v.end])
                .style(theme.border)
                .labels(x_labels),
        )
        .y_axis(
            Axis::default()
                .bounds([lo, hi])
                .style(theme.border)
                .labels(y_labels),
        )
        .legend_position(None);
    frame.render_widget(chart, area);
    // The series over them, all on one braille layer: the chart would paint one layer of the
    // whole plot per series and merge them all, the most of a frame's time with ten series.
    // Each series is drawn as the chart draws a line dataset (its points, then its segments);
    // where two series share a cell, its dots are both series' (the later one's colour).
    if let Some(graph) = graph {
        let traces = Traces {
            series: &data,
            theme,
        };
        frame.render_widget(
            ratatui::widgets::canvas::Canvas::default()
                .marker(Marker::Braille)
                .x_bounds([v.start, v.end])
                .y_bounds([lo, hi])
                .paint(|ctx| ctx.draw(&traces)),
            graph,
        );
    }
}

/// All the series of a chart, one shape on one canvas layer.
struct Traces<'a> {
    series: &'a [Vec<(f64, f64)>],
    theme: &'a Theme,
}

impl ratatui::widgets::canvas::Shape for Traces<'_> {
    fn draw(&self, painter: &mut ratatui::widgets::canvas::Painter) {
        use ratatui::widgets::canvas::{Line as Segment, Points};
        for (i, points) in self.series.iter().enumerate() {
            let color = self.theme.series(i).fg.unwrap_or_default();
            Points {
                coords: points,
                color,
            }
            .draw(painter);
            for w in points.windows(2) {
                Segment::new(w[0].0, w[0].1, w[1].0, w[1].1, color).draw(painter);
            }
        }
    }
}

/// Where ratatui's [`Chart`] plots inside `area` with these labels (both axes labelled, the
/// x labels left-aligned, no titles): left of it the y labels and the y axis, below it the x
/// axis and its labels. `None` when nothing is plotted.
fn graph_area(area: Rect, x_labels: &[Span], y_labels: &[Span]) -> Option<Rect> {
    if area.width == 0 || area.height == 0 {
        return None;
    }
    let mut x = area.left();
    let mut y = area.bottom() - 1;
    if !x_labels.is_empty() && y > area.top() {
        y -= 1;
    }
    let widest_y = y_labels.iter().map(Span::width).max().unwrap_or(0) as u16;
    // The first x label's last character sits below the y axis.
    let first_x = (x_labels.first()).map_or(0, |l| (l.width() as u16).saturating_sub(1));
    x += widest_y.max(first_x).min(area.width / 3);
    if !x_labels.is_empty() && y > area.top() {
        y -= 1;
    }
    if !y_labels.is_empty() && x + 1 < area.right() {
        x += 1;
    }
    let graph = Rect::new(
        x,
        area.top(),
        area.right().saturating_sub(x),
        y.saturating_sub(area.top()).saturating_add(1),
    );
    (!graph.is_empty()).then_some(graph)
}

/// An axis label: the unit's format without the zeros a round value does not need
/// ("100%", "40s", "2.5k").
fn fmt_axis(unit: Unit, v: f64) -> String {
    let s = unit.format(v);
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '.' {
            let zeros: String = std::iter::from_fn(|| chars.next_if_eq(&'0')).collect();
            if chars.peek().is_some_and(char::is_ascii_digit) {
                out.push('.');
                out.push_str(&zeros);
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// The smallest round number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten) at
/// or above `x` (> 0): the top of a chart's axis.
pub fn nice_ceiling(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let power = 10f64.powf(x.log10().floor());
    [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        // Within a part in a million: 1.0000001 is still 1.
        .find(|top| *top >= x * (1.0 - 1e-6))
        .unwrap_or(10.0 * power)
}

/// A time slice's index with its lowest and highest point.
type Bucket = (usize, (f64, f64), (f64, f64));

/// Keep at most the lowest and highest point of each of `buckets` time slices, in time order,
/// so spikes survive and drawing costs what the screen can show.
pub fn decimate(
    points: impl Iterator<Item = (f64, f64)>,
    start: f64,
    end: f64,
    buckets: usize,
) -> Vec<(f64, f64)> {
    let width = (end - start).max(f64::MIN_POSITIVE);
    let buckets = buckets.max(1);
    let mut out: Vec<(f64, f64)> = Vec::new();
    // The bucket being filled, with its lowest and highest point.
    let mut current: Option<Bucket> = None;
    let flush = |out: &mut Vec<(f64, f64)>, lo: (f64, f64), hi: (f64, f64)| {
        if lo == hi {
            out.push(lo);
        } else if lo.0 <= hi.0 {
            out.extend([lo, hi]);
        } else {
            out.extend([hi, lo]);
        }
    };
    for p in points {
        let b =
            (((p.0 - start) / width) * buckets as f64).clamp(0.0, (buckets - 1) as f64) as usize;
        current = match current {
            Some((cb, lo, hi)) if cb == b => Some((
                cb,
                if p.1 < lo.1 { p } else { lo },
                if p.1 > hi.1 { p } else { hi },
            )),
            Some((_, lo, hi)) => {
                flush(&mut out, lo, hi);
                Some((b, p, p))
            }
            None => Some((b, p, p)),
        };
    }
    if let Some((_, lo, hi)) = current {
        flush(&mut out, lo, hi);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn axis_tops_are_round_and_labels_carry_no_idle_zeros() {
        use super::{Unit, fmt_axis, nice_ceiling};
        for (x, top) in [
            (1.05, 1.2),
            (1.0, 1.0),
            (1.000_000_1, 1.0),
            (31.39, 40.0),
            (3.01, 4.0),
            (0.0072, 0.008),
            (9.2, 10.0),
            (2.2, 2.5),
            (0.0, 1.0),
        ] {
            let got = nice_ceiling(x);
            assert!((got - top).abs() < 1e-9, "{x}: {got}, expected {top}");
            assert!(x <= 0.0 || got >= x * (1.0 - 1e-6), "{x}: {got}");
        }
        assert_eq!(fmt_axis(Unit::Percent, 1.0), "100%");
        assert_eq!(fmt_axis(Unit::Percent, 0.125), "12.5%");
        assert_eq!(fmt_axis(Unit::Seconds, 40.0), "40s");
        assert_eq!(fmt_axis(Unit::Seconds, 2.5), "2.50s");
        assert_eq!(fmt_axis(Unit::Count, 4.0), "4");
        assert_eq!(fmt_axis(Unit::Bytes, 2048.0), "2KiB");
        assert_eq!(fmt_axis(Unit::Ratio, 2.0), "2×");
    }

    use super::decimate;

    /// One series drawn on our own layer reads exactly as ratatui's chart draws it as a
    /// dataset: same plot area, same dots, same colour, for every size the panels take.
    #[test]
    fn one_layer_plots_where_the_chart_would() {
        use ratatui::buffer::Buffer;
        use ratatui::layout::Rect;
        use ratatui::style::{Color, Style};
        use ratatui::symbols::Marker;
        use ratatui::text::Span;
        use ratatui::widgets::canvas::Canvas;
        use ratatui::widgets::{Axis, Chart, Dataset, GraphType, Widget};
        let points: Vec<(f64, f64)> = (0..300)
            .map(|i| (f64::from(i), (f64::from(i) / 17.0).sin() * 40.0 + 50.0))
            .collect();
        let theme = crate::theme::Theme::builtin("default").unwrap();
        let series = vec![points.clone()];
        for (w, h) in [(20u16, 6u16), (47, 13), (96, 27), (9, 3), (200, 50)] {
            for labels in [["0", "100"], ["0.0%", "100.0%"]] {
                let area = Rect::new(3, 2, w, h);
                let x_labels = vec![Span::raw("07:00"), Span::raw("07:30"), Span::raw("08:00")];
                let y_labels: Vec<Span> = labels.iter().map(|l| Span::raw(*l)).collect();
                let axes = |datasets| {
                    Chart::new(datasets)
                        .x_axis(
                            Axis::default()
                                .bounds([0.0, 300.0])
                                .labels(x_labels.clone()),
                        )
                        .y_axis(
                            Axis::default()
                                .bounds([0.0, 100.0])
                                .labels(y_labels.clone()),
                        )
                        .legend_position(None)
                };
                let mut old = Buffer::empty(Rect::new(0, 0, 210, 60));
                let color = theme.series(0).fg.unwrap_or(Color::Reset);
                axes(vec![
                    Dataset::default()
                        .marker(Marker::Braille)
                        .graph_type(GraphType::Line)
                        .style(Style::default().fg(color))
                        .data(&points),
                ])
                .render(area, &mut old);
                let mut new = Buffer::empty(Rect::new(0, 0, 210, 60));
                axes(vec![]).render(area, &mut new);
                if let Some(graph) = super::graph_area(area, &x_labels, &y_labels) {
                    let traces = super::Traces {
                        series: &series,
                        theme: &theme,
                    };
                    Canvas::default()
                        .marker(Marker::Braille)
                        .x_bounds([0.0, 300.0])
                        .y_bounds([0.0, 100.0])
                        .paint(|ctx| ctx.draw(&traces))
                        .render(graph, &mut new);
                }
                assert_eq!(old, new, "{w}x{h} with labels {labels:?}");
            }
        }
    }

    #[test]
    fn decimation_keeps_spikes_and_bounds_the_count() {
        let points: Vec<(f64, f64)> = (0..10_000)
            .map(|i| (f64::from(i), if i == 5_123 { 99.0 } else { 1.0 }))
            .collect();
        let out = decimate(points.iter().copied(), 0.0, 10_000.0, 100);
        assert!(out.len() <= 200, "{}", out.len());
        assert!(out.contains(&(5_123.0, 99.0)), "the spike survived");
        assert!(out.windows(2).all(|w| w[0].0 <= w[1].0), "time order kept");
        assert_eq!(decimate(std::iter::empty(), 0.0, 1.0, 10), vec![]);
    }
}
