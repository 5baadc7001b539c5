//! Drawing a replay: the console's own view of the model at the cursor, and the replay's help
//! over it.

use super::keys;
use super::session::Replay;
use crate::ui::layout;
use ratatui::Frame;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

/// Draw the replay.
pub fn draw(frame: &mut Frame, replay: &Replay) {
    let area = frame.area();
    let model = replay.model();
    let t = &model.theme;
    if area.width < layout::MIN_WIDTH || area.height < layout::MIN_HEIGHT {
        crate::ui::too_small(frame, area, t, "enlarge the window to see the replay");
        return;
    }
    crate::ui::view(frame, model);
    if replay.help {
        let (main, _) = layout::split_status(area);
        let mut lines: Vec<Line> = keys::help()
            .into_iter()
            .map(|(k, what)| {
                Line::from(vec![
                    Span::styled(format!("  {k:<18}"), t.title),
                    Span::styled(what, t.text),
                ])
            })
            .collect();
        lines.push(Line::styled(
            "Read-only: a replay records nothing and takes no lock.",
            t.muted,
        ));
        let rect = layout::centered(main, 64, lines.len() as u16 + 2);
        frame.render_widget(Clear, rect);
        let block = Block::bordered()
            .border_style(t.border_focus)
            .title(Line::styled(" Replay keys ", t.title))
            .title(Line::styled(" any key closes ", t.muted).right_aligned());
        frame.render_widget(
            Paragraph::new(lines)
                .block(block)
                .wrap(Wrap { trim: false }),
            rect,
        );
    }
}
