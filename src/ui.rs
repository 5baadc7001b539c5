//! Drawing. `view` reads the model and draws into a ratatui frame; it changes nothing.
//!
//! ```text
//! ┌ Pool saturation ─ ● live ┐┌ Pool wait p99 ── ● live ┐
//! │ 97.0%  ▲ CRIT            ││ 1.20s  ▲ CRIT           │
//! │ ⣀⣀⣠⠴⠒⠉⠉⠉⠉⠉ (chart)       ││ ...                      │
//! └──────────────────────────┘└──────────────────────────┘
//!   … one panel per signal, in a grid; `enter` zooms one …
//!  ● prometheus up │ range 1h │ 14:03:12 UTC │ ? help  q quit      (status bar)
//! ```

pub mod briefing;
pub mod changes;
pub mod dashboard;
pub mod dialog;
pub mod help;
pub mod layout;
pub mod note;
pub mod panel;
pub mod runbooks;
pub mod statusbar;
pub mod timeline;

use crate::app::Model;
use crate::keymap::Mode;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};

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
    let side_shown = model.show_timeline || model.changes.shown;
    let (panels, side) = layout::split_timeline(main, side_shown);
    if let Some(area) = panels {
        dashboard::draw(frame, area, model);
    }
    if let Some(side) = side {
        let (timeline, changes) =
            layout::split_side(side, model.show_timeline, model.changes.shown);
        if let Some(area) = timeline {
            timeline::draw(frame, area, model);
        }
        if let Some(area) = changes {
            changes::draw(frame, area, model);
        }
    }
    let under_help = if model.mode == Mode::Help {
        model.help_from
    } else {
        model.mode
    };
    if under_help == Mode::Runbooks {
        // The pane takes the panels' place; the timeline stays beside it.
        let (pane, _) = layout::split_timeline(main, side_shown && main.width >= 100);
        runbooks::draw(frame, pane.unwrap_or(main), model);
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
