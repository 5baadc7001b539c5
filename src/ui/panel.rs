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
use crate::theme::Theme;
use chrono::TimeZone;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset, GraphType, LegendPosition, Paragraph};

/// A threshold line: its legend name, style and two end points.
type Threshold = (String, Style, [(f64, f64); 2]);

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
}

/// The state as a symbol, a word and a style.
pub fn state_tag(state: &PanelState, theme: &Theme) -> (String, Style) {
    match state {
        PanelState::Loading => ("◌ loading".into(), theme.loading),
        PanelState::Fresh => ("● live".into(), theme.ok),
        PanelState::Stale { age_secs } => (format!("◷ stale {}", age(*age_secs)), theme.stale),
        PanelState::Partial { .. } => ("◐ partial".into(), theme.partial),
        PanelState::Failing { .. } => ("✖ failing".into(), theme.failing),
    }
}

/// A short age: `42s`, `3m`, `2h`, `3d`.
pub fn age(secs: i64) -> String {
    let s = secs.max(0);
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86399 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}

fn level_tag(level: Level, theme: &Theme) -> (&'static str, Style) {
    match level {
        Level::Ok => ("✓ ok", theme.ok),
        Level::Warn => ("△ WARN", theme.warn),
        Level::Crit => ("▲ CRIT", theme.crit),
    }
}

/// Draw one panel into `area`.
pub fn draw(frame: &mut Frame, area: Rect, v: &PanelView) {
    let theme = v.theme;
    let (tag, tag_style) = state_tag(&v.state, theme);
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
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(inner);
    frame.render_widget(Paragraph::new(headline(v)), head);
    if body.height >= 2 && body.width >= 8 {
        chart(frame, body, v);
    }
}

fn headline(v: &PanelView) -> Line<'static> {
    let theme = v.theme;
    let unit = v.panel.config.unit;
    let mut spans = Vec::new();
    match v.panel.current() {
        Some(value) => {
            let (lt, ls) = level_tag(v.panel.level(value), theme);
            spans.push(Span::styled(unit.format(value), theme.title));
            spans.push(Span::raw(" "));
            spans.push(Span::styled(lt, ls));
        }
        None if matches!(v.state, PanelState::Loading) => {
            spans.push(Span::styled("waiting for the first answer…", theme.muted));
        }
        // An empty answer says which metric the query needed and where to look.
        // (Only for an answer that came back empty: a failing query has no answer at all.)
        None => match &v.panel.empty_hint {
            Some(hint)
                if v.panel.shown().is_empty()
                    && matches!(
                        v.state,
                        PanelState::Fresh | PanelState::Partial { .. } | PanelState::Stale { .. }
                    ) =>
            {
                spans.push(Span::styled(format!("— {hint}"), theme.muted))
            }
            _ => spans.push(Span::styled("— no data", theme.muted)),
        },
    }
    match &v.state {
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

fn chart(frame: &mut Frame, area: Rect, v: &PanelView) {
    let theme = v.theme;
    let cfg = &v.panel.config;
    // Braille gives two dots a column: more points than that only cost time.
    let buckets = usize::from(area.width) * 2;
    let shown = v.panel.shown();
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
    hi += (hi - lo) * 0.05;
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
    let named = cfg.legend.is_some() || data.len() > 1;
    let mut datasets: Vec<Dataset> = data
        .iter()
        .enumerate()
        .map(|(i, points)| {
            let ds = Dataset::default()
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(theme.series(i))
                .data(points);
            if named {
                ds.name(legend(v.panel, shown[i], &shown))
            } else {
                ds
            }
        })
        .collect();
    for (name, style, line) in &thresholds {
        datasets.push(
            Dataset::default()
                .name(name.clone())
                .marker(Marker::Dot)
                .graph_type(GraphType::Line)
                .style(*style)
                .data(line),
        );
    }
    let time = |t: f64| {
        v.tz.timestamp_opt(t as i64, 0)
            .single()
            .map(|d| d.format("%H:%M").to_string())
            .unwrap_or_default()
    };
    let axis_unit = if cfg.unit == Unit::Count && hi < 10.0 {
        Unit::Ratio
    } else {
        cfg.unit
    };
    let y_labels = vec![
        Span::styled(fmt_axis(cfg.unit, axis_unit, lo), theme.muted),
        Span::styled(fmt_axis(cfg.unit, axis_unit, hi), theme.muted),
    ];
    let chart = Chart::new(datasets)
        .x_axis(
            Axis::default()
                .bounds([v.start, v.end])
                .style(theme.border)
                .labels(vec![
                    Span::styled(time(v.start), theme.muted),
                    Span::styled(time(v.end), theme.muted),
                ]),
        )
        .y_axis(
            Axis::default()
                .bounds([lo, hi])
                .style(theme.border)
                .labels(y_labels),
        )
        .legend_position(Some(LegendPosition::TopLeft))
        .hidden_legend_constraints((Constraint::Percentage(60), Constraint::Percentage(60)));
    frame.render_widget(chart, area);
}

fn fmt_axis(unit: Unit, fallback: Unit, v: f64) -> String {
    if unit == Unit::Count && fallback != Unit::Count {
        return format!("{v:.1}");
    }
    unit.format(v)
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
    use super::decimate;

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
