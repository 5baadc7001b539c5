//! Drawing. `view` reads the model and draws into a ratatui frame; it changes nothing.
//!
//! ```text
//! ┌ Pool saturation ─ ● live ┐┌ Pool wait p99 ── ● live ┐
//! │ 97.0%  ▲ CRIT            ││ 1.20s  ▲ CRIT           │
//! │ ⣀⣀⣠⠴⠒⠉⠉⠉⠉⠉ (chart)       ││ ...                      │
//! └──────────────────────────┘└──────────────────────────┘
//!   … one panel per signal, in a grid; `enter` zooms one …
//!  ● prometheus up │ range 1h │ 14:03 UTC │ ? help  q quit      (status bar)
//! ```

pub mod briefing;
pub mod changes;
pub mod dashboard;
pub mod dialog;
pub mod help;
pub mod idle;
pub mod layout;
pub mod note;
pub mod panel;
pub mod runbooks;
pub mod statusbar;
pub mod summary;
pub mod timeline;

use crate::app::Model;
use crate::keymap::Mode;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};

/// How each panel is on screen in the frame `view` draws for `model` (none is when the
/// terminal is too small or a pane has the panels' place).
pub fn showing(model: &Model) -> Vec<layout::Showing> {
    let hidden = vec![layout::Showing::Hidden; model.panels.len()];
    if layout::too_small(model.width, model.height) {
        return hidden;
    }
    match model.areas().panels {
        Some(r) => dashboard::showing(r, model),
        None => hidden,
    }
}

/// Draw the whole console.
pub fn view(frame: &mut Frame, model: &Model) {
    let area = frame.area();
    if area.width == 0 || area.height == 0 {
        return;
    }
    if area.width < layout::MIN_WIDTH || area.height < layout::MIN_HEIGHT {
        too_small(
            frame,
            area,
            &model.theme,
            "still recording; enlarge the window",
        );
        return;
    }
    let (main, status) = layout::split_status(area);
    let a = layout::areas(main, model.shown());
    if let Some(r) = a.summary {
        summary::draw(frame, r, model);
    }
    if let Some(r) = a.panels {
        dashboard::draw(frame, r, model);
    }
    if let Some(r) = a.timeline {
        timeline::draw(frame, r, model);
    }
    if let Some(r) = a.changes {
        changes::draw(frame, r, model);
    }
    if let Some(r) = a.runbooks {
        runbooks::draw(frame, r, model);
    }
    if model.mode == Mode::Note {
        note::draw(frame, main, model);
    }
    statusbar::draw(frame, status, model);
    if model.mode == Mode::Help {
        help::draw(frame, main, model);
    } else if let Some(text) = &model.briefing {
        briefing::draw(frame, main, model, text);
    } else if let Some(text) = &model.ended {
        briefing::draw_ended(frame, main, model, text);
    }
    if let Some(d) = &model.dialog {
        dialog::draw(frame, main, model, d);
    }
}

/// What every front end shows below its smallest size: what it needs, and `hint`.
pub fn too_small(frame: &mut Frame, area: Rect, theme: &crate::theme::Theme, hint: &str) {
    let text = vec![
        Line::styled("Terminal too small", theme.warn),
        Line::styled(
            format!(
                "need {}×{}, have {}×{}",
                layout::MIN_WIDTH,
                layout::MIN_HEIGHT,
                area.width,
                area.height
            ),
            theme.text,
        ),
        Line::styled(hint.to_string(), theme.muted),
    ];
    frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), area);
}
