//! Dialogs: a typed confirmation, a choice or a form over everything else. Their own keys
//! first; any other key is text for the focused field. Dialogs queue: the next one opens when
//! this one closes.

use super::{incident, runbooks};
use crate::app::effect::Effect;
use crate::app::model::Model;
use crate::app::panes::dialog::Purpose;
use crate::keymap::{Action, Mode};

/// A key while a dialog is open: the dialog's own bindings, else text for its field.
pub(super) fn key(model: &mut Model, ev: &crossterm::event::KeyEvent) -> Vec<Effect> {
    let Some(d) = model.dialog.as_mut() else {
        return Vec::new();
    };
    match model.keymap.action(Mode::Dialog, ev) {
        Some(Action::Submit) => submit(model),
        Some(Action::Close) => close(model),
        Some(Action::NextField) if d.purpose == Purpose::Palette => {
            super::palette::complete(model);
            Vec::new()
        }
        Some(Action::NextField) => {
            d.step(true);
            Vec::new()
        }
        Some(Action::PrevField) => {
            d.step(false);
            Vec::new()
        }
        // Space checks a value of a multi-value variable ("All" and values exclude each other).
        _ if ev.code == crossterm::event::KeyCode::Char(' ')
            && matches!(d.purpose, Purpose::SetVariable { .. })
            && d.checked().is_some() =>
        {
            super::variables::toggle(model);
            Vec::new()
        }
        _ => {
            if d.edit(ev) && d.purpose == Purpose::Palette {
                super::palette::typed(model);
            }
            Vec::new()
        }
    }
}

/// Esc: no, except where no would stop a run unasked. A step's confirmation is declined for
/// that step only (the next dialog offers to ask again or abort); a failed step's decision
/// must be chosen; esc on the declined step's choice asks the question again.
fn close(model: &mut Model) -> Vec<Effect> {
    let Some(d) = model.dialog.take() else {
        return Vec::new();
    };
    match d.purpose {
        Purpose::Confirm { .. } => {
            runbooks::declined(model, d);
            Vec::new()
        }
        Purpose::Decide { .. } => {
            let mut d = d;
            d.error = Some("choose one: esc does not answer a failed step".into());
            model.dialog = Some(d);
            Vec::new()
        }
        Purpose::Declined { question, .. } => {
            model.dialog = Some(*question);
            Vec::new()
        }
        Purpose::Proposal {
            proposer,
            seq,
            what,
        } => {
            let effects = super::sharing::proposal_answered(model, &proposer, seq, &what, false);
            next_dialog(model);
            effects
        }
        Purpose::StartRun(rb) => {
            let why = "the operator closed its run dialog";
            let effects = super::sharing::accepted_run_dropped(model, &rb.name, why);
            next_dialog(model);
            effects.into_iter().collect()
        }
        _ => {
            let effects = runbooks::refusal(&d).into_iter().collect();
            next_dialog(model);
            effects
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
    use crate::app::panes::dialog::Body;
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
        Purpose::Confirm { .. } if !d.typed_matches() => {
            // A wrong answer is cleared: the next attempt starts from nothing.
            let mut d = d;
            let why = match &mut d.body {
                Body::Type { word, typed, caret } => {
                    let why = format!(
                        "\"{typed}\" is not \"{word}\": type exactly \"{word}\" to go ahead, or esc to say no"
                    );
                    typed.clear();
                    *caret = crate::app::panes::text::Caret::END;
                    why
                }
                _ => String::new(),
            };
            return keep(model, d, why);
        }
        Purpose::StartRun(rb)
            if !crate::runbook::operator::typed_confirms(Some(d.field(0)), &rb.name) =>
        {
            let name = rb.name.clone();
            return keep(
                model,
                d,
                format!("type exactly \"{name}\" in \"run\" to run it, or esc to say no"),
            );
        }
        Purpose::StartRun(rb) => {
            let values = runbooks::dialog_values(model, &rb.name);
            let missing = runbooks::secrets_missing(&d);
            if !missing.is_empty() {
                let why = format!(
                    "{} has no value: type it (for this run only), or esc and set its environment variable",
                    missing.join(", ")
                );
                return keep(model, d, why);
            }
            let vars = runbooks::changed_vars(&d, rb, &values);
            let secrets = runbooks::typed_secrets(&d, rb);
            runbooks::start(model, (**rb).clone(), vars, secrets)
        }
        Purpose::AbortRun { .. } if d.selected() == Some(1) => runbooks::abort(model),
        Purpose::ControlRun { run_id, control } if d.selected() == Some(1) => {
            runbooks::control(model, run_id, *control)
        }
        Purpose::AbortRun { .. } | Purpose::ControlRun { .. } => Vec::new(),
        Purpose::Declined { question, .. } if d.selected() == Some(0) => {
            model.dialog = Some((**question).clone());
            return Vec::new();
        }
        Purpose::Declined {
            reply, question, ..
        } => {
            // The skippable form's second choice goes on without the step.
            let skip = matches!(
                question.purpose,
                Purpose::Confirm {
                    skippable: true,
                    ..
                }
            ) && d.selected() == Some(1);
            vec![Effect::Answer {
                reply: reply.clone(),
                answer: if skip {
                    Answer::Skipped
                } else {
                    Answer::Confirmed(false)
                },
            }]
        }
        Purpose::Declare => match incident::declare_answered(model, &d) {
            Ok(e) => e,
            Err(e) => return keep(model, d, e),
        },
        Purpose::Resume {
            runbook,
            run_id,
            from,
        } => match from.get(d.selected().unwrap_or(0)).copied().flatten() {
            Some(i) => super::resume::start(model, (**runbook).clone(), run_id.clone(), i),
            None => Vec::new(),
        },
        Purpose::Confirm { reply, .. } => vec![Effect::Answer {
            reply: reply.clone(),
            answer: Answer::Confirmed(true),
        }],
        Purpose::Publish => super::publish::confirmed(model, &d),
        Purpose::PickVariable => {
            model.dialog = None;
            super::variables::values(model, d.selected().unwrap_or(0))
        }
        Purpose::SetVariable { index, choices } => {
            let picked: Vec<_> = match d.checked() {
                Some(checked) => checked.iter().filter_map(|i| choices.get(*i)).collect(),
                None => choices.get(d.selected().unwrap_or(0)).into_iter().collect(),
            };
            if picked.is_empty() {
                let why = "check at least one value (space), then enter; esc keeps the values";
                return keep(model, d, why.into());
            }
            let picked: Vec<_> = picked.into_iter().cloned().collect();
            super::variables::chosen(model, *index, &picked)
        }
        Purpose::TakeOver => super::sharing::take_over_answered(model, d.selected().unwrap_or(1)),
        Purpose::ProposeToLeaseHolder { by, runbook } => {
            super::sharing::propose_to_lease_holder(model, by, runbook, d.selected() == Some(0))
        }
        Purpose::Copy(items) => super::copy::chosen(model, items, d.selected().unwrap_or(0)),
        Purpose::Palette => match super::palette::submit(model, &d) {
            Ok(e) => e,
            Err(e) => return keep(model, d, e),
        },
        Purpose::SilencePick(_)
        | Purpose::SilenceForm
        | Purpose::SilenceBroad(_)
        | Purpose::SilenceLapsing(_)
        | Purpose::SilenceExpire(_) => match super::silence::answered(model, &d) {
            Ok(e) => e,
            Err(e) => return keep(model, d, e),
        },
        Purpose::Proposal {
            proposer,
            seq,
            what,
        } => {
            super::sharing::proposal_answered(model, proposer, *seq, what, d.selected() == Some(0))
        }
        Purpose::Decide { reply, .. } => {
            let Some(i) = d.selected() else {
                let why = "choose with ↑/↓ first, then enter: nothing is highlighted";
                return keep(model, d, why.into());
            };
            vec![Effect::Answer {
                reply: reply.clone(),
                answer: Answer::Decided(runbooks::DECISIONS[i.min(2)].0),
            }]
        }
        _ => match incident::event_of(model, &d) {
            Err(e) => return keep(model, d, e),
            Ok(None) => Vec::new(),
            Ok(Some(event)) => incident::operator_event(model, event),
        },
    };
    next_dialog(model);
    effects
}
