//! The mouse, when `mouse = true` in the config (off by default: a console that captures the
//! mouse takes away the terminal's own selection and copy). A click selects the panel under it
//! or gives the runbook pane the keys; the wheel scrolls the timeline or the runbook list under
//! it, and moves between panels over the dashboard. Over a dialog, a search or the help, the
//! mouse does nothing: those are answered with keys.

use crate::app::effect::Effect;
use crate::app::model::Model;
use crate::keymap::{Action, Mode};
use crossterm::event::{MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

/// A mouse event from the terminal.
pub(super) fn event(model: &mut Model, ev: MouseEvent) -> Vec<Effect> {
    if model.dialog.is_some() || model.search.is_some() || model.mode == Mode::Help {
        return Vec::new();
    }
    if model.briefing.is_some() || model.ended.is_some() {
        return Vec::new();
    }
    let at = Position::new(ev.column, ev.row);
    let areas = model.areas();
    let inside = |r: Option<Rect>| r.is_some_and(|r| r.contains(at));
    let down = match ev.kind {
        MouseEventKind::ScrollDown => true,
        MouseEventKind::ScrollUp => false,
        MouseEventKind::Down(crossterm::event::MouseButton::Left) => {
            return click(model, at);
        }
        _ => return Vec::new(),
    };
    model.dirty = true;
    if inside(areas.timeline) {
        let n = model.timeline.len();
        let s = &mut model.timeline_pane.scroll;
        *s = if down {
            (*s + 1).min(n.saturating_sub(1))
        } else {
            s.saturating_sub(1)
        };
        model.jumped = None;
        return Vec::new();
    }
    let step = if down { Action::Down } else { Action::Up };
    if inside(areas.runbooks) {
        return super::runbooks::key(model, step);
    }
    match inside(areas.panels) {
        true => super::dashboard::key(model, Some(step)),
        false => Vec::new(),
    }
}

/// A left click: the panel under it is selected (the dashboard gets the keys); a click in the
/// runbook pane gives it the keys.
fn click(model: &mut Model, at: Position) -> Vec<Effect> {
    let areas = model.areas();
    if areas.runbooks.is_some_and(|r| r.contains(at)) {
        model.mode = Mode::Runbooks;
        model.dirty = true;
        return Vec::new();
    }
    let Some(area) = areas.panels.filter(|r| r.contains(at)) else {
        return Vec::new();
    };
    let Some(i) = crate::ui::dashboard::panel_at(area, model, at) else {
        return Vec::new();
    };
    if model.mode == Mode::Runbooks {
        model.mode = Mode::Dashboard;
    }
    model.selected = i;
    model.dirty = true;
    super::schedule(model)
}
