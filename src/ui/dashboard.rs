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
    if model.zoomed {
        let i = model.selected.min(model.panels.len() - 1);
        panel::draw(frame, area, &view(i));
        return;
    }
    // A run's gate panels first (the order moving between panels follows too).
    let order = model.panel_order();
    let pos = order.iter().position(|i| *i == model.selected).unwrap_or(0);
    if compact(area, model.panels.len()) {
        return draw_compact(frame, area, model, &order, pos, &view);
    }
    let (rects, first) = layout::grid(area, model.panels.len(), pos);
    for (k, rect) in rects.into_iter().enumerate() {
        if let Some(i) = order.get(first + k) {
            panel::draw(frame, rect, &view(*i));
        }
    }
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

fn draw_compact<'a>(
    frame: &mut Frame,
    area: Rect,
    model: &'a Model,
    order: &[usize],
    pos: usize,
    view: &dyn Fn(usize) -> PanelView<'a>,
) {
    let t = &model.theme;
    let others = order.len().saturating_sub(1);
    let list = (others as u16)
        .min(area.height.saturating_sub(GRID_ROWS))
        .max(1);
    let [chart, rest] = Layout::vertical([
        Constraint::Min(GRID_ROWS.min(area.height)),
        Constraint::Length(list),
    ])
    .areas(area);
    panel::draw(frame, chart, &view(order[pos]));
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
    let title_w = (usize::from(rest.width) / 3).clamp(10, 28);
    let mut lines: Vec<Line> = Vec::new();
    for &i in ids.iter().take(fit) {
        let v = view(i);
        let p = v.panel;
        let mut spans = vec![Span::styled(
            format!(" {:<title_w$.title_w$} ", p.config.title),
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
        spans.push(Span::styled(sparkline(p, v.start, v.end, 12), t.series(0)));
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
    if ids.len() > fit {
        let tab = model.keymap.hint(
            crate::keymap::Mode::Dashboard,
            crate::keymap::Action::NextPanel,
        );
        lines.push(Line::styled(
            format!(
                " +{} more panels ({tab} moves, enter zooms)",
                ids.len() - fit
            ),
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
