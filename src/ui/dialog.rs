//! A dialog, centred over everything: its text, then a typed word, a choice or a form, the
//! reason the last answer was refused, and its keys.
//!
//! ```text
//! ┌ Confirm step "rollback" ─────────────────────┐
//! │ Step "rollback": Roll back the deploy        │
//! │ Type "rollback" to go ahead; esc says no.    │
//! │ > rollb▏                                     │
//! └──────────────── enter answers · esc cancels ┘
//! ```

use super::layout;
use crate::app::Model;
use crate::app::panes::dialog::{Body, Dialog, Purpose};
use crate::keymap::{Action, Mode};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

/// Draw `d` over `area`.
pub fn draw(frame: &mut Frame, area: Rect, model: &Model, d: &Dialog) {
    let t = &model.theme;
    let width = area.width.saturating_sub(4).min(76);
    let inner_w = usize::from(width.saturating_sub(2)).max(1);
    let rows_of = |l: &Line| l.width().div_ceil(inner_w).max(1);
    let mut lines: Vec<Line> = Vec::new();
    match &d.body {
        Body::Type { word, typed, caret } => {
            let what = match &d.purpose {
                Purpose::StartRun(_) => "run it",
                _ => "go ahead",
            };
            lines.push(Line::from(vec![
                Span::styled("Type ", t.text),
                Span::styled(format!("\"{word}\""), t.accent),
                Span::styled(format!(" to {what}; anything else is no."), t.text),
            ]));
            let mut spans = vec![Span::styled("> ", t.accent)];
            spans.extend(edited(typed, *caret, true, t));
            lines.push(Line::from(spans));
        }
        Body::Choose {
            options,
            selected,
            checked,
        } => {
            for (i, o) in options.iter().enumerate() {
                let sel = *selected == Some(i);
                let mut spans = vec![Span::styled(if sel { "▸ " } else { "  " }, t.accent)];
                if let Some(c) = checked.get(i) {
                    spans.push(Span::styled(if *c { "[x] " } else { "[ ] " }, t.accent));
                }
                spans.push(Span::styled(
                    o.clone(),
                    if sel { t.selection } else { t.text },
                ));
                lines.push(Line::from(spans));
            }
        }
        Body::Form { fields, focus } => {
            for (i, f) in fields.iter().enumerate() {
                let sel = i == *focus;
                let mut spans = vec![
                    Span::styled(if sel { "▸ " } else { "  " }, t.accent),
                    Span::styled(format!("{:<12} ", f.label), t.title),
                ];
                // A secret shows one dot a character, so the caret still falls where it is.
                let dots;
                let shown = match f.masked {
                    true => {
                        dots = "•".repeat(f.value.chars().count());
                        &dots
                    }
                    false => &f.value,
                };
                spans.extend(edited(shown, f.caret, sel, t));
                if f.value.is_empty() {
                    spans.push(Span::styled(format!(" ({})", f.hint), t.muted));
                }
                lines.push(Line::from(spans));
            }
            if matches!(d.purpose, Purpose::Correction) {
                lines.push(correction_preview(model, d));
            }
        }
    }
    if let Some(e) = &d.error {
        lines.push(Line::styled(format!("✖ {e}"), t.failing));
    }
    // The text above the answer, cut to what fits: the answer and its keys never go.
    let body: usize = lines.iter().map(rows_of).sum();
    let room = usize::from(area.height.saturating_sub(2)).saturating_sub(body);
    let mut text: Vec<Line> = Vec::new();
    let mut used = 0;
    for (i, l) in d.text.iter().enumerate() {
        let line = Line::styled(l.clone(), t.text);
        let r = rows_of(&line);
        let last = i + 1 == d.text.len();
        if used + r + usize::from(!last) > room {
            let left = d.text.len() - i;
            text.push(Line::styled(
                format!("… {left} more line(s) (the pane behind shows them all)"),
                t.muted,
            ));
            break;
        }
        used += r;
        text.push(line);
    }
    text.extend(lines);
    let lines = text;
    let k = &model.keymap;
    let next = match d.body {
        Body::Form { .. } if d.purpose == crate::app::panes::dialog::Purpose::Palette => {
            format!("{} completes · ", k.hint(Mode::Dialog, Action::NextField))
        }
        Body::Form { .. } => format!("{} next field · ", k.hint(Mode::Dialog, Action::NextField)),
        Body::Choose { ref checked, .. } if !checked.is_empty() => format!(
            "space checks · {} next · ",
            k.hint(Mode::Dialog, Action::NextField)
        ),
        Body::Choose { .. } => format!("{} next · ", k.hint(Mode::Dialog, Action::NextField)),
        Body::Type { .. } => String::new(),
    };
    let keys = format!(
        " {} answers · {next}{} cancels ",
        k.hint(Mode::Dialog, Action::Submit),
        k.hint(Mode::Dialog, Action::Close)
    );
    // Wrapped height: each line takes at least one row.
    let rows: usize = lines.iter().map(rows_of).sum();
    let h = (rows as u16).saturating_add(2);
    let rect = layout::centered(area, width, h);
    frame.render_widget(Clear, rect);
    let block = Block::bordered()
        .border_style(t.border_focus)
        .title(Line::styled(format!(" {} ", d.title), t.title))
        .title_bottom(Line::styled(keys, t.muted).right_aligned());
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        rect,
    );
}

/// A value being edited: the caret where typing happens, a selected (prefilled) value shown
/// selected, since typing replaces it.
pub fn edited(
    value: &str,
    caret: crate::app::panes::text::Caret,
    focused: bool,
    t: &crate::theme::Theme,
) -> Vec<Span<'static>> {
    let clean = |s: &str| crate::sanitize::line(s).into_owned();
    if !focused {
        return vec![Span::styled(clean(value), t.text)];
    }
    if caret.selected {
        return vec![
            Span::styled(clean(value), t.selection),
            Span::styled("▏", t.accent),
        ];
    }
    let (before, after) = caret.split(value);
    vec![
        Span::styled(clean(before), t.text),
        Span::styled("▏", t.accent),
        Span::styled(clean(after), t.text),
    ]
}

/// The record a correction would supersede, as the timeline describes it.
fn correction_preview(model: &Model, d: &Dialog) -> Line<'static> {
    let t = &model.theme;
    let seq = d.field(0).trim_start_matches('#').parse::<u64>().ok();
    match seq.and_then(|s| model.timeline.iter().find(|r| r.seq == s)) {
        Some(r) => Line::styled(
            format!(
                "  #{} {} {}",
                r.seq,
                r.source,
                crate::incident::timeline::describe(&r.kind)
            ),
            t.muted,
        ),
        None => Line::styled("  (no such record on the timeline)", t.warn),
    }
}
