//! Typing a note: keys that are not bound in note mode are text; enter records it, esc
//! cancels.

use crate::app::effect::Effect;
use crate::app::model::Model;
use crate::incident::Event;
use crate::keymap::{Action, Mode};

/// Longest note typed in the console, in characters.
pub const NOTE_MAX: usize = 2000;

/// A key while a note is typed.
pub(super) fn key(
    model: &mut Model,
    ev: &crossterm::event::KeyEvent,
    action: Option<Action>,
) -> Vec<Effect> {
    match action {
        None => {
            edit(model, ev);
            Vec::new()
        }
        Some(Action::Submit) => submit(model),
        Some(Action::Close) => {
            model.mode = Mode::Dashboard;
            model.note.clear();
            model.note_caret = Default::default();
            Vec::new()
        }
        Some(_) => Vec::new(),
    }
}

fn edit(model: &mut Model, ev: &crossterm::event::KeyEvent) {
    if crate::app::panes::text::edit(&mut model.note, &mut model.note_caret, ev, NOTE_MAX) {
        model.dirty = true;
    }
}

fn submit(model: &mut Model) -> Vec<Effect> {
    model.mode = Mode::Dashboard;
    model.dirty = true;
    let text = std::mem::take(&mut model.note);
    model.note_caret = Default::default();
    let text = text.trim();
    if text.is_empty() {
        return Vec::new();
    }
    if model.incident.is_none() && !model.declarable {
        return Vec::new();
    }
    // The first note declares the incident; it is recorded once the journal is open.
    super::incident::record_declaring(model, Event::note(text))
}
