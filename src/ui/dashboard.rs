//! The panel grid, or one panel zoomed to the whole area; on a short screen (80×24) the
//! compact form: the selected panel's chart, and every other panel as one line with its value,
//! level, a sparkline and its state.
//!
//! ```text
//! ┌ Pool saturation ─────────────────── ● live ┐
//! │ 97.0% ▲ CRIT   ┄ warn 80% · crit 95%        │
//! │ (chart)                                     │
//! └─────────────────────────────────────────────┘
//!   Pool wait p99      1.20s ▲ CRIT ▁▂▃▅▇█ ● live
//!   Error ratio        2.0%  ✓ ok   ▁▁▁▁▂▂ ● live
//!   +3 more panels (tab moves)
//! ```

use super::layout;
use super::panel::{self, Mark, MarkKind, PanelView};
use crate::app::Model;
use crate::app::PanelState;
use crate::app::panes::panel::Level;
use crate::incident::Event;
use crate::incident::event::{Direction, StepState};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// A panel drawn in the grid gets at least this many rows, else the compact form is used.
const GRID_ROWS: u16 = 8;

/// Crossings of the panel titled `title`, and runbook step starts, as chart marks.
fn marks(model: &Model, title: &str, start: f64, end: f64) -> Vec<Mark> {
    let secs = |t: chrono::DateTime<chrono::Utc>| t.timestamp_millis() as f64 / 1000.0;
    (model.timeline.iter())
        .filter_map(|r| match &r.kind {
            Event::ThresholdCrossed {
                panel,
                direction,
                at,
                ..
            } if panel == title => Some(Mark {
                t: secs(*at),
                kind: match direction {
                    Direction::Up => MarkKind::Breach,
                    Direction::Down => MarkKind::Recovery,
                },
            }),
            Event::RunbookStep {
                state: StepState::Started,
                detail: Some(d),
                ..
            } if d.split_once(": ").is_some_and(|(k, _)| {
                crate::runbook::model::Kind::ALL
                    .iter()
                    .any(|x| x.name() == k)
            }) =>
            {
                Some(Mark {
                    t: secs(r.time),
                    kind: MarkKind::Step,
                })
            }
            _ => None,
        })
        .filter(|m| m.t >= start && m.t <= end)
        .collect()
}

/// Draw the dashboard into `area`.
pub fn draw(frame: &mut Frame, area: Rect, model: &Model) {
    let end = model.now.timestamp_millis() as f64 / 1000.0;
    let start = end - model.range_secs();
    let view = |i: usize| PanelView {
        panel: &model.panels[i],
        state: model.panel_state(i),
        selected: i == model.selected,
        theme: &model.theme,
        tz: model.tz,
        start,
        end,
        feed: panel::Feed::of(model),
        value_age: model.value_age(i),
        marks: marks(model, &model.panels[i].config.title, start, end),
    };
    if model.panels.is_empty() {
        // Discovery is building the dashboard, or found nothing it knows: say which.
        if let Some(d) = &model.discovery {
            let text = vec![
                Line::styled(d.line(model.now), model.theme.muted),
                Line::styled(
                    "warroom discover --prometheus URL lists what was found; [[panel]] entries in warroom.toml choose the panels",
                    model.theme.muted,
                ),
            ];
            frame.render_widget(
                Paragraph::new(text)
                    .wrap(ratatui::widgets::Wrap { trim: true })
                    .block(ratatui::widgets::Block::bordered().border_style(model.theme.border)),
                area,
            );
        }
        return;
    }
    let area = match model.zoomed {
        true => zoomed_query(frame, area, model),
        false => area,
    };
    let placed = place(area, model);
    for (i, rect) in &placed.charts {
        panel::draw(frame, *rect, &view(*i));
    }
    if let Some(rest) = placed.rows_area {
        draw_rows(frame, rest, model, &placed, &view);
    }
    if let Some(line) = placed.folded {
        frame.render_widget(Paragraph::new(folded_line(model, line.width)), line);
    }
}

/// The collapsed rows, one line: `▸ 3 rows collapsed, not queried: Disk (12) · Network (8)
/// · … (:row NAME opens one)`, cut to `width`.
fn folded_line(model: &Model, width: u16) -> Line<'static> {
    let t = &model.theme;
    let folded: Vec<String> = (model.rows().into_iter())
        .filter(|(_, _, collapsed)| *collapsed)
        .map(|(row, n, _)| format!("{row} ({n})"))
        .collect();
    let head = match folded.len() {
        1 => " ▸ 1 row collapsed, not queried: ".to_string(),
        n => format!(" ▸ {n} rows collapsed, not queried: "),
    };
    let tail = "  (:row NAME opens one)";
    let room = usize::from(width).saturating_sub(head.chars().count() + tail.chars().count());
    Line::from(vec![
        Span::styled(head, t.muted),
        Span::styled(fit(&folded.join(" · "), room.max(1)), t.title),
        Span::styled(tail, t.muted),
    ])
}

/// A zoomed panel shows the PromQL it sends under its chart (at most 3 lines, the rest cut
/// with `…`; `y` copies it whole, `o` its graph URL); the area left for the chart.
fn zoomed_query(frame: &mut Frame, area: Rect, model: &Model) -> Rect {
    let Some(p) = model.panels.get(model.selected) else {
        return area;
    };
    let t = &model.theme;
    let query = crate::sanitize::line(&p.config.query);
    let label = "PromQL ";
    let width = usize::from(area.width.max(1));
    let chars = label.len() + query.chars().count();
    let lines = chars.div_ceil(width).clamp(1, 3) as u16;
    if area.height < 8 + lines {
        return area;
    }
    let shown: String = match chars > width * usize::from(lines) {
        true => (query
            .chars()
            .take(width * usize::from(lines) - label.len() - 1))
        .chain(['…'])
        .collect(),
        false => query.into_owned(),
    };
    let [chart, below] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(lines)]).areas(area);
    // Cut at the width, not at words: PromQL has few spaces, and each line is full.
    let all: Vec<char> = label.chars().chain(shown.chars()).collect();
    let text: Vec<Line> = (all.chunks(width).enumerate())
        .map(|(n, chunk)| {
            let s: String = chunk.iter().collect();
            match (n, s.strip_prefix(label)) {
                (0, Some(rest)) => Line::from(vec![
                    Span::styled(label, t.muted),
                    Span::styled(rest.to_string(), t.text),
                ]),
                _ => Line::styled(s, t.text),
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(text), below);
    chart
}

/// Where the panels go in an area: those drawn as charts with their rectangle, and, in the
/// compact form, those drawn as one row each below the chart (and how many did not fit).
#[derive(Debug, Default)]
struct Placement {
    charts: Vec<(usize, Rect)>,
    rows: Vec<usize>,
    rows_area: Option<Rect>,
    more: usize,
    /// The line naming the collapsed rows, when there are any.
    folded: Option<Rect>,
}

/// The zoomed panel, the grid's window of panels, or the compact form's chart and rows; the
/// collapsed rows take the last line.
fn place(area: Rect, model: &Model) -> Placement {
    if model.panels.is_empty() {
        return Placement::default();
    }
    let (area, folded) = match model.collapsed.is_empty() || model.zoomed || area.height < 2 {
        true => (area, None),
        false => {
            let [rest, line] =
                Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
            (rest, Some(line))
        }
    };
    Placement {
        folded,
        ..place_panels(area, model)
    }
}

/// [`place`] without the collapsed rows' line.
fn place_panels(area: Rect, model: &Model) -> Placement {
    if model.zoomed {
        let i = model.selected.min(model.panels.len() - 1);
        return Placement {
            charts: vec![(i, area)],
            ..Default::default()
        };
    }
    // A run's gate panels first (the order moving between panels follows too); the panels of
    // collapsed rows are not in it.
    let order = model.panel_order();
    if order.is_empty() {
        return Placement::default();
    }
    let pos = order.iter().position(|i| *i == model.selected).unwrap_or(0);
    if !compact(area, order.len()) {
        let (rects, first) = layout::grid(area, order.len(), pos);
        let charts = (rects.into_iter().enumerate())
            .filter_map(|(k, rect)| order.get(first + k).map(|i| (*i, rect)))
            .collect();
        return Placement {
            charts,
            ..Default::default()
        };
    }
    let others = order.len().saturating_sub(1);
    let list = (others as u16)
        .min(area.height.saturating_sub(GRID_ROWS))
        .max(1);
    let [chart, rest] = Layout::vertical([
        Constraint::Min(GRID_ROWS.min(area.height)),
        Constraint::Length(list),
    ])
    .areas(area);
    // The others, after the selected one, wrapping; what does not fit is counted.
    let rows = usize::from(rest.height);
    let ids: Vec<usize> = (1..order.len())
        .map(|k| order[(pos + k) % order.len()])
        .collect();
    let fit = if ids.len() > rows {
        rows.saturating_sub(1)
    } else {
        rows
    };
    Placement {
        charts: vec![(order[pos], chart)],
        more: ids.len().saturating_sub(fit),
        rows: ids.into_iter().take(fit).collect(),
        rows_area: Some(rest),
        folded: None,
    }
}

/// How each panel is on screen when the dashboard has `area` (issue 34: what is fetched
/// follows it). Panels past the end of the list are hidden.
pub fn showing(area: Rect, model: &Model) -> Vec<layout::Showing> {
    let mut out = vec![layout::Showing::Hidden; model.panels.len()];
    let placed = place(area, model);
    for (i, _) in placed.charts {
        out[i] = layout::Showing::Chart;
    }
    for i in placed.rows {
        out[i] = layout::Showing::Row;
    }
    out
}

/// The panel drawn at `at` when the dashboard has `area` (a chart, or a compact row).
pub fn panel_at(area: Rect, model: &Model, at: ratatui::layout::Position) -> Option<usize> {
    let placed = place(area, model);
    if let Some((i, _)) = placed.charts.iter().find(|(_, r)| r.contains(at)) {
        return Some(*i);
    }
    let rows = placed.rows_area.filter(|r| r.contains(at))?;
    placed.rows.get(usize::from(at.y - rows.y)).copied()
}

/// Whether the grid would give its panels too few rows to read a chart.
pub fn compact(area: Rect, n: usize) -> bool {
    if n <= 1 {
        return false;
    }
    let cols = layout::grid_columns(area.width).min(n);
    let rows = n.div_ceil(cols) as u16;
    area.height / rows.max(1) < GRID_ROWS
}

/// Longest title a compact row gives room for.
const ROW_TITLE_MAX: usize = 28;

/// The compact rows' title width and whether they keep their sparkline: a whole title comes
/// before the sparkline (a cut title reads as another panel's); what still does not fit ends
/// in "…".
fn row_widths(width: u16, model: &Model, rows: &[usize]) -> (usize, bool) {
    let longest = (rows.iter().filter_map(|i| model.panels.get(*i)))
        .map(|p| p.config.title.chars().count())
        .max()
        .unwrap_or(0)
        .min(ROW_TITLE_MAX);
    // The spaces, the value, the level and the state's symbol.
    let fixed = 2 + 9 + 7 + 2;
    let spark = usize::from(layout::SPARKLINE_CELLS);
    let width = usize::from(width);
    let with_spark = longest + fixed + spark <= width;
    let room = width.saturating_sub(fixed + if with_spark { spark } else { 0 });
    (longest.min(room).max(6), with_spark)
}

/// `title` in `w` columns: whole, or cut with "…".
fn fit(title: &str, w: usize) -> String {
    match title.chars().count() <= w {
        true => title.to_string(),
        false => title
            .chars()
            .take(w.saturating_sub(1))
            .chain(['…'])
            .collect(),
    }
}

/// The compact form's one-row panels.
fn draw_rows<'a>(
    frame: &mut Frame,
    rest: Rect,
    model: &'a Model,
    placed: &Placement,
    view: &dyn Fn(usize) -> PanelView<'a>,
) {
    let t = &model.theme;
    let (title_w, spark) = row_widths(rest.width, model, &placed.rows);
    let mut lines: Vec<Line> = Vec::new();
    for &i in &placed.rows {
        let v = view(i);
        let p = v.panel;
        let mut spans = vec![Span::styled(
            format!(" {:<title_w$} ", fit(&p.config.title, title_w)),
            t.title,
        )];
        match p.current() {
            Some(x) => {
                spans.push(Span::styled(
                    format!("{:>8} ", p.config.unit.format(x)),
                    t.text,
                ));
                // The level in its column; an old value is never "ok" but its age (a WARN or
                // CRIT stays, its age at the end of the row).
                let (lt, ls) = match (v.value_age, p.level(x)) {
                    (Some(a), Level::Ok) => (format!("◷ {}", panel::age(a)), t.stale),
                    (_, l) => {
                        let (lt, ls) = panel::level_tag(l, t);
                        (lt.to_string(), ls)
                    }
                };
                spans.push(Span::styled(format!("{lt:<6} "), ls));
            }
            None => spans.push(Span::styled(format!("{:>8} {:<6} ", "—", ""), t.muted)),
        }
        if spark {
            spans.push(Span::styled(
                sparkline(p, v.start, v.end, usize::from(layout::SPARKLINE_CELLS)),
                t.series(0),
            ));
        }
        let (tag, style) = panel::state_tag_in(&v.state, v.feed, t);
        spans.push(Span::styled(format!(" {tag}"), style));
        // A stale panel's tag says its age already; a failing one's old value says it here.
        if let (Some(a), false) = (v.value_age, matches!(v.state, PanelState::Stale { .. })) {
            spans.push(Span::styled(
                format!(", value {} old", panel::age(a)),
                t.stale,
            ));
        }
        lines.push(Line::from(spans));
    }
    if placed.more > 0 {
        let tab = model.keymap.hint(
            crate::keymap::Mode::Dashboard,
            crate::keymap::Action::NextPanel,
        );
        lines.push(Line::styled(
            format!(" +{} more panels ({tab} moves, enter zooms)", placed.more),
            t.muted,
        ));
    }
    frame.render_widget(Paragraph::new(lines), rest);
}

/// The panel's first series over the window as `width` block characters.
pub fn sparkline(p: &crate::app::Panel, start: f64, end: f64, width: usize) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let Some(s) = p.shown().first().copied() else {
        return " ".repeat(width);
    };
    let mut cells: Vec<Option<f64>> = vec![None; width];
    for pt in s
        .points
        .iter()
        .filter(|x| x.v.is_finite() && x.t >= start && x.t <= end)
    {
        let k = (((pt.t - start) / (end - start).max(1e-9)) * width as f64) as usize;
        let c = &mut cells[k.min(width - 1)];
        *c = Some(c.map_or(pt.v, |o: f64| o.max(pt.v)));
    }
    let (lo, hi) = cells
        .iter()
        .flatten()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    cells
        .iter()
        .map(|c| match c {
            None => ' ',
            Some(v) if hi > lo => BARS[(((v - lo) / (hi - lo)) * 7.0).round() as usize],
            Some(_) => BARS[0],
        })
        .collect()
}
