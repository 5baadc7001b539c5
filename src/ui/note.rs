//! The one-line note editor, over the bottom of the dashboard.

use crate::app::Model;
use crate::keymap::{Action, Mode};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

/// Draw the note being typed at the bottom of `area`.
pub fn draw(frame: &mut Frame, area: Rect, model: &Model) {
    let t = &model.theme;
    let h = 3u16.min(area.height);
    let rect = Rect {
        x: area.x,
        y: area.y + area.height - h,
        width: area.width,
        height: h,
    };
    frame.render_widget(Clear, rect);
    let k = &model.keymap;
    const TITLE: &str = " Note for the timeline ";
    let (submit, close) = (
        k.hint(Mode::Note, Action::Submit),
        k.hint(Mode::Note, Action::Close),
    );
    let keys = format!(" {submit} records · {close} cancels ");
    let tags =
        format!(" {submit} records · {close} cancels · #root-cause #impact #lesson… are kept ");
    // The longest hint that fits beside the title (the border's corners and a gap kept).
    let room = usize::from(rect.width).saturating_sub(TITLE.chars().count() + 3);
    let hint = [tags, keys]
        .into_iter()
        .find(|h| h.chars().count() <= room)
        .unwrap_or_default();
    let block = Block::bordered()
        .border_style(t.border_focus)
        .title(Line::styled(TITLE, t.title))
        .title(Line::styled(hint, t.muted).right_aligned());
    let inner = block.inner(rect);
    // Show the end of a long note: that is where the typing happens.
    let text = crate::sanitize::line(&model.note).into_owned();
    let room = usize::from(inner.width.saturating_sub(1));
    let shown: String = {
        let n = text.chars().count();
        text.chars().skip(n.saturating_sub(room)).collect()
    };
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(shown, t.text),
            Span::styled("▏", t.accent),
        ]))
        .block(block),
        rect,
    );
}
