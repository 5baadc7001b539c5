//! The panel grid, or one panel zoomed to the whole area.

use super::layout;
use super::panel::{self, PanelView};
use crate::app::Model;
use ratatui::Frame;
use ratatui::layout::Rect;

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
    };
    if model.panels.is_empty() {
        // Discovery is building the dashboard, or found nothing it knows: say which.
        if let Some(d) = &model.discovery {
            let text = vec![
                ratatui::text::Line::styled(d.line(model.now), model.theme.muted),
                ratatui::text::Line::styled(
                    "warroom discover --prometheus URL lists what was found; [[panel]] entries in warroom.toml choose the panels",
                    model.theme.muted,
                ),
            ];
            frame.render_widget(
                ratatui::widgets::Paragraph::new(text)
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
    let (rects, first) = layout::grid(area, model.panels.len(), model.selected);
    for (k, rect) in rects.into_iter().enumerate() {
        panel::draw(frame, rect, &view(first + k));
    }
}
