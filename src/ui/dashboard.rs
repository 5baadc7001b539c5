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
