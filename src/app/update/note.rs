//! Typing a note: keys that are not bound in note mode are text; enter records it, esc
//! cancels.

use super::record;
use crate::app::effect::Effect;
use crate::app::model::Model;
use crate::incident::{Event, Source};
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
    // The first note declares the incident; it is recorded once the journal is open.
    let mut effects: Vec<Effect> = super::incident::declaring(model).into_iter().collect();
    if model.incident.is_none() && effects.is_empty() && !model.declaring {
        return Vec::new();
    }
    let actor = model.actor.clone();
    effects.push(record(model, Source::Operator, actor, Event::note(text)));
    effects
}
