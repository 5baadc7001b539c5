//! The help overlay, generated from the key map so it always matches the bindings.

use super::layout;
use crate::app::Model;
use crate::keymap::Mode;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

/// Draw the help overlay over `area`.
pub fn draw(frame: &mut Frame, area: Rect, model: &Model) {
    let t = &model.theme;
    let mut lines = Vec::new();
    // The help mode's own keys go in the title, so the rest fits 80×24.
    for mode in [Mode::Dashboard, Mode::Note, Mode::Runbooks, Mode::Dialog] {
        lines.push(Line::styled(format!("{} keys", mode.name()), t.accent));
        for (keys, what) in model.keymap.help(mode) {
            lines.push(Line::from(vec![
                Span::styled(format!("  {keys:<18}"), t.title),
                Span::styled(what, t.text),
            ]));
        }
    }
    lines.push(Line::styled(
        "Panel states: ● live  ◌ loading  ◷ stale  ◐ partial  ✖ failing",
        t.muted,
    ));
    lines.push(Line::styled(
        "Levels: ✓ ok  △ WARN  ▲ CRIT    Rebind: [keys.MODE] in warroom.toml",
        t.muted,
    ));
    let h = (lines.len() as u16).saturating_add(2);
    let rect = layout::centered(area, 72, h);
    // What does not fit scrolls (the help mode's up and down keys).
    let overflow = h.saturating_sub(rect.height);
    let scroll = model.help_scroll.min(overflow);
    frame.render_widget(Clear, rect);
    let close: Vec<String> = model
        .keymap
        .keys(Mode::Help, crate::keymap::Action::Close)
        .iter()
        .map(ToString::to_string)
        .collect();
    let block = Block::bordered()
        .border_style(t.border_focus)
        .title(Line::styled(" Help ", t.title))
        .title(Line::styled(format!(" {} closes ", close.join(" ")), t.muted).right_aligned());
    let block = if overflow > 0 {
        let k = &model.keymap;
        block.title_bottom(
            Line::styled(
                format!(
                    " {}/{} scroll · {}/{} lines ",
                    k.hint(Mode::Help, crate::keymap::Action::Up),
                    k.hint(Mode::Help, crate::keymap::Action::Down),
                    scroll + rect.height.saturating_sub(2),
                    h.saturating_sub(2)
                ),
                t.muted,
            )
            .right_aligned(),
        )
    } else {
        block
    };
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0)),
        rect,
    );
}
