//! The help overlay, generated from the key map so it always matches the bindings.

use super::layout;
use crate::app::Model;
use crate::keymap::Mode;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

/// The message log, newest first, each with its time and whether it was a warning; the last
/// export's lint findings first, when it had any.
fn message_lines(model: &Model) -> Vec<Line<'static>> {
    let t = &model.theme;
    let mut out = Vec::new();
    if !model.lint.is_empty() {
        out.extend(lint_lines(model));
        out.push(Line::raw(""));
    }
    if model.messages.is_empty() {
        out.push(Line::styled("no messages yet", t.muted));
        return out;
    }
    out.extend((model.messages.iter().rev()).map(|n| {
        let at = n.at.with_timezone(&model.tz).format("%H:%M:%S").to_string();
        let (sym, style) = if n.warning {
            ("✖", t.warn)
        } else {
            ("·", t.text)
        };
        Line::from(vec![
            Span::styled(format!("{at} "), t.muted),
            Span::styled(format!("{sym} {}", n.text), style),
        ])
    }));
    out
}

fn lint_lines(model: &Model) -> Vec<Line<'static>> {
    let t = &model.theme;
    let mut l = vec![Line::styled(
        "What the draft still lacks (fix these before publishing):",
        t.text,
    )];
    l.extend((model.lint.iter()).map(|f| Line::styled(format!("  • {f}"), t.warn)));
    if model.lint.is_empty() {
        l.push(Line::styled("  nothing: the lint found no problem", t.ok));
    }
    l
}

/// Draw the help overlay over `area`: the keys, the message log or the lint's findings.
pub fn draw(frame: &mut Frame, area: Rect, model: &Model) {
    let t = &model.theme;
    let (title, mut lines) = match model.help_page {
        crate::app::model::HelpPage::Messages => {
            (" Messages (newest first) ", message_lines(model))
        }
        crate::app::model::HelpPage::Lint => (" Lint findings of the export ", lint_lines(model)),
        crate::app::model::HelpPage::Keys => (" Help ", Vec::new()),
    };
    if model.help_page != crate::app::model::HelpPage::Keys {
        return overlay(frame, area, model, title, lines);
    }
    // The help mode's own keys go in the title, so the rest fits 80×24.
    // The keys of the view help was opened from come first.
    let mut modes = vec![Mode::Dashboard, Mode::Note, Mode::Runbooks, Mode::Dialog];
    if let Some(i) = modes.iter().position(|m| *m == model.help_from) {
        modes[..=i].rotate_right(1);
    }
    for mode in modes {
        lines.push(Line::styled(format!("{} keys", mode.name()), t.accent));
        for (keys, what) in model.keymap.help(mode) {
            lines.push(Line::from(vec![
                Span::styled(format!("  {keys:<18}"), t.title),
                Span::styled(what, t.text),
            ]));
        }
    }
    for text in [
        "Panel states: ● live  ◌ loading  ◷ stale  ◐ partial  ✖ failing  ⏸ paused  ↺ replayed",
        "Levels: ✓ ok  △ WARN  ▲ CRIT    Rebind: [keys.MODE] in warroom.toml",
        "In every field: ctrl-u clears to the start, ctrl-w deletes a word, home/end, left/right",
        "The runbook pane's other keys are the dashboard's (it shares the screen with it)",
    ] {
        lines.push(Line::styled(text, t.muted));
    }
    lines.push(Line::styled(
        match model.mouse {
            true => "Mouse: on (mouse = true): a click selects a panel, the wheel scrolls; shift-drag selects text",
            false => "Mouse: off, the terminal keeps its selection; mouse = true in warroom.toml: click and wheel",
        },
        t.muted,
    ));
    overlay(frame, area, model, title, lines);
}

fn overlay(frame: &mut Frame, area: Rect, model: &Model, title: &str, lines: Vec<Line<'static>>) {
    let t = &model.theme;
    let inner_w = usize::from(area.width.min(92).saturating_sub(2)).max(1);
    let rows: usize = lines
        .iter()
        .map(|l| l.width().div_ceil(inner_w).max(1))
        .sum();
    let h = (rows as u16).saturating_add(2);
    let rect = layout::centered(area, 92, h);
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
        .title(Line::styled(title.to_string(), t.title))
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
