//! A rehearsal's briefing, over the dashboard until the team dismisses it.

use super::layout;
use crate::app::Model;
use crate::keymap::{Action, Mode};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

/// Draw the briefing `text` centred over `area`.
pub fn draw(frame: &mut Frame, area: Rect, model: &Model, text: &str) {
    overlay(frame, area, model, text, " Briefing ", "to start", 80);
}

/// Draw the rehearsal's end announcement `text` centred over `area`.
pub fn draw_ended(frame: &mut Frame, area: Rect, model: &Model, text: &str) {
    overlay(
        frame,
        area,
        model,
        text,
        " Rehearsal over ",
        "to close",
        120,
    );
}

fn overlay(
    frame: &mut Frame,
    area: Rect,
    model: &Model,
    text: &str,
    title: &str,
    close: &str,
    width: u16,
) {
    let t = &model.theme;
    let mut lines: Vec<Line> = text
        .lines()
        .map(|l| Line::styled(l.to_string(), t.text))
        .collect();
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        format!(
            "{} {close}   {} quit",
            model.keymap.hint(Mode::Dashboard, Action::Close),
            model.keymap.hint(Mode::Dashboard, Action::Quit)
        ),
        t.muted,
    ));
    let width = width.min(area.width);
    // Wrapped lines take more rows than there are lines: estimate them for the height.
    let inner = usize::from(width.saturating_sub(2)).max(1);
    let rows: usize = lines.iter().map(|l| l.width().div_ceil(inner).max(1)).sum();
    let rect = layout::centered(area, width, (rows as u16).saturating_add(2));
    frame.render_widget(Clear, rect);
    let block = Block::bordered()
        .border_style(t.border_focus)
        .title(Line::styled(title, t.title));
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        rect,
    );
}
