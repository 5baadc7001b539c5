//! Dialogs: a typed confirmation, a choice or a form over everything else. Their own keys
//! first; any other key is text for the focused field. Dialogs queue: the next one opens when
//! this one closes.

use super::{incident, record, runbooks};
use crate::app::effect::Effect;
use crate::app::model::Model;
use crate::incident::Source;
use crate::keymap::{Action, Mode};

/// A key while a dialog is open: the dialog's own bindings, else text for its field.
pub(super) fn key(model: &mut Model, ev: &crossterm::event::KeyEvent) -> Vec<Effect> {
    let Some(d) = model.dialog.as_mut() else {
        return Vec::new();
    };
    match model.keymap.action(Mode::Dialog, ev) {
        Some(Action::Submit) => submit(model),
        Some(Action::Close) => {
            let effects = model
                .dialog
                .take()
                .and_then(|d| runbooks::refusal(&d))
                .into_iter()
                .collect();
            next_dialog(model);
            effects
        }
        Some(Action::NextField) => {
            d.step(true);
            Vec::new()
        }
        Some(Action::PrevField) => {
            d.step(false);
            Vec::new()
        }
        _ => {
            d.edit(ev);
            Vec::new()
        }
    }
}

fn next_dialog(model: &mut Model) {
    if model.dialog.is_none() {
        model.dialog = model.dialogs_waiting.pop_front();
    }
}

/// Enter in a dialog: act on the answer, or say why it is not accepted and keep it open.
fn submit(model: &mut Model) -> Vec<Effect> {
    use crate::app::panes::dialog::{Body, Purpose};
    use crate::app::workers::operator::Answer;
    let Some(d) = model.dialog.take() else {
        return Vec::new();
    };
    let keep = |model: &mut Model, mut d: crate::app::panes::dialog::Dialog, error: String| {
        d.error = Some(crate::sanitize::line(&error).into_owned());
        model.dialog = Some(d);
        Vec::new()
    };
    let effects = match &d.purpose {
        Purpose::StartRun(_) | Purpose::Confirm { .. } if !d.typed_matches() => {
            let word = match &d.body {
                Body::Type { word, .. } => word.clone(),
                _ => String::new(),
            };
            let what = if matches!(d.purpose, Purpose::StartRun(_)) {
                "to run it"
            } else {
                "to go ahead"
            };
            return keep(
                model,
                d,
                format!("type exactly \"{word}\" {what}, or esc to say no"),
            );
        }
        Purpose::StartRun(rb) => runbooks::start(model, (**rb).clone()),
        Purpose::Confirm { reply, .. } => vec![Effect::Answer {
            reply: reply.clone(),
            answer: Answer::Confirmed(true),
        }],
        Purpose::Publish => super::publish::confirmed(model, &d),
        Purpose::TakeOver => super::sharing::take_over_answered(model, d.selected().unwrap_or(1)),
        Purpose::Decide { reply, .. } => {
            let i = d.selected().unwrap_or(0);
            vec![Effect::Answer {
                reply: reply.clone(),
                answer: Answer::Decided(runbooks::DECISIONS[i.min(2)].0),
            }]
        }
        _ => match incident::event_of(model, &d) {
            Err(e) => return keep(model, d, e),
            Ok(None) => Vec::new(),
            Ok(Some(event)) => {
                let actor = model.actor.clone();
                vec![record(model, Source::Operator, actor, event)]
            }
        },
    };
    next_dialog(model);
    effects
}
