//! `update`: the only place the model changes. No I/O: effects describe the work.

use super::effect::Effect;
use super::model::{Model, Quit};
use super::msg::Msg;
use crate::incident::{Event, Source};
use crate::keymap::{Action, Mode};

mod advice;
mod changes;
mod copy;
mod dashboard;
mod dialog;
mod discovery;
mod fetching;
mod help;
mod incident;
mod mouse;
mod note;
mod palette;
mod publish;
mod resume;
mod runbooks;
mod search;
mod sharing;
mod silence;
mod variables;

pub use advice::{advisable, headline as advice_headline};
pub(super) use fetching::schedule;
pub use incident::{FILTERS, SEVERITIES, STATUSES};
pub use note::NOTE_MAX;

/// Apply one message; return the work to start.
pub fn update(model: &mut Model, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Key(ev) => {
            let effects = key(model, &ev);
            model.dirty = true;
            effects
        }
        Msg::KeyAhead(_) => {
            key_ahead(model);
            Vec::new()
        }
        msg => {
            let before = model.input_target();
            let effects = apply(model, msg);
            if model.input_target() != before {
                model.targets_changed += 1;
            }
            effects
        }
    }
}

/// A key typed before a dialog came up by itself: not an answer to it.
fn key_ahead(model: &mut Model) {
    const WHY: &str = "keys typed before this came up were ignored: answer it now";
    match model.dialog.as_mut() {
        Some(d) => d.error = Some(WHY.into()),
        None => model.notify(WHY.to_string(), true, Some(5)),
    }
    model.dirty = true;
}

/// Apply one message other than a key.
fn apply(model: &mut Model, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Key(_) | Msg::KeyAhead(_) => unreachable!("keys are handled by update"),
        Msg::RunbooksUnresolved(unresolved) => {
            model.runbooks.unresolved = unresolved;
            model.dirty = true;
        }
        Msg::RunbooksLoaded(entries) => runbooks::loaded(model, entries),
        Msg::Planned { name, result } => runbooks::planned(model, name, result),
        Msg::Run { record, journaled } => runbooks::run_event(model, &record, journaled),
        Msg::Journaled(r) => model.add_record(*r),
        Msg::Share(m) => return sharing::report(model, m),
        Msg::RunEnded { run_id, outcome } => {
            let mut effects = runbooks::ended(model, &run_id, outcome);
            effects.extend(schedule(model));
            return effects;
        }
        Msg::Ask {
            run_id,
            question,
            reply,
        } => return runbooks::ask(model, run_id, question, reply),
        Msg::EditorClosed(result) => {
            model.dirty = true;
            return incident::editor_closed(model, result);
        }
        Msg::Mouse(ev) => return mouse::event(model, ev),
        Msg::Resize { width, height } => {
            model.width = width;
            model.height = height;
            model.dirty = true;
        }
        Msg::Tick(now) => {
            if now.timestamp() != model.now.timestamp() {
                model.dirty = true;
            }
            model.now = now;
            expire_notice(model);
            let mut effects = discovery::tick(model);
            effects.extend(variables::tick(model));
            effects.extend(schedule(model));
            effects.extend(advice::tick(model));
            effects.extend(silence::tick(model));
            return effects;
        }
        Msg::Wall(now) => {
            model.wall = Some(now);
            expire_notice(model);
        }
        Msg::RehearsalEnded(text) => {
            model.ended = Some(text);
            model.paused = true;
            // Ended is ended: closing help does not start the clock again.
            model.help_paused = false;
            model.dirty = true;
        }
        Msg::VariablesResolved(bindings) => return variables::resolved(model, *bindings),
        Msg::Discovered(result) => {
            let mut effects = discovery::answered(model, result);
            effects.extend(schedule(model));
            return effects;
        }
        msg @ (Msg::Answer { .. } | Msg::Latest { .. } | Msg::Group { .. } | Msg::Showing(_)) => {
            return fetching::landed(model, msg);
        }
        Msg::Exported(result) => incident::exported(model, result),
        Msg::Recorded(result) => incident::recorded(model, result),
        Msg::LeaseBusy {
            by,
            runbook,
            lapses_s,
        } => sharing::lease_busy(model, by, runbook, lapses_s),
        Msg::Lease(text) => {
            model.notify(crate::sanitize::line(&text).into_owned(), true, Some(20));
            model.dirty = true;
        }
        Msg::Refused(error) => incident::refused(model, &error),
        Msg::Changes(report) => changes::report(model, report),
        Msg::Published(report) => publish::report(model, report),
        Msg::Declared(result) => return incident::declared(model, result),
        Msg::Advised(a) => advice::advised(model, a),
        Msg::SilenceCounted { spec, result } => return silence::counted(model, spec, result),
        Msg::Silenced(report) => return silence::reported(model, report),
        Msg::Interrupted(signal) => {
            model.quit = Some(Quit::Signal(signal));
        }
    }
    schedule(model)
}

/// A notice whose time is up (on the wall clock in a rehearsal) goes.
fn expire_notice(model: &mut Model) {
    let now = model.ui_now();
    if (model.notice.as_ref())
        .and_then(|n| n.until)
        .is_some_and(|until| now >= until)
    {
        model.notice = None;
        model.dirty = true;
    }
}

/// A key, offered to the handlers in order of precedence; the first that takes it wins:
/// 0. while the terminal is too small to show anything, only quit acts (nothing happens
///    unseen);
/// 1. an open dialog (its own bindings, else text for its field);
/// 2. the scenario briefing or the end announcement (dismissed by close or zoom; only quit
///    gets past it; dismissing the briefing starts a rehearsal's time);
/// 3. quitting while a runbook runs is refused in every mode;
/// 4. help opens or closes from any mode that binds it;
/// 5. the mode's own handler: a note being typed, a timeline search, the help overlay, the
///    runbook pane (whose unbound keys are the dashboard's: it shares the screen), or the
///    dashboard.
fn key(model: &mut Model, ev: &crossterm::event::KeyEvent) -> Vec<Effect> {
    if crate::ui::layout::too_small(model.width, model.height) {
        if model.keymap.action(Mode::Dashboard, ev) == Some(Action::Quit) {
            return quit(model);
        }
        return Vec::new();
    }
    if model.dialog.is_some() {
        return dialog::key(model, ev);
    }
    if model.search.is_some() {
        return search::key(model, ev);
    }
    let action = model.keymap.action_with_fallback(model.mode, ev);
    if model.briefing.is_some() || model.ended.is_some() {
        match action {
            Some(Action::Close | Action::Zoom) => {
                model.dirty = true;
                if model.briefing.take().is_some() && model.rehearsal {
                    // The operator's clock: the rehearsal starts now.
                    return vec![Effect::Pace { running: true }];
                }
                model.ended = None;
                return Vec::new();
            }
            Some(Action::Quit) => {}
            _ => return Vec::new(),
        }
    }
    if action == Some(Action::Quit) {
        return quit(model);
    }
    if action == Some(Action::Help) {
        return help::toggle(model);
    }
    match model.mode {
        Mode::Note => note::key(model, ev, action),
        Mode::Help => help::key(model, action),
        Mode::Runbooks => match model.keymap.action(Mode::Runbooks, ev) {
            Some(a) => runbooks::key(model, a),
            // Not the pane's: the dashboard beside it takes it.
            None => dashboard::key(model, action),
        },
        Mode::Dashboard => dashboard::key(model, action),
        // Dialog mode is the dialog itself, handled first.
        Mode::Dialog => Vec::new(),
    }
}

/// Quit, unless a run is in progress (nothing is left half done).
pub(super) fn quit(model: &mut Model) -> Vec<Effect> {
    if model.runbooks.active().is_some() {
        let k = &model.keymap;
        let text = format!(
            "a runbook is running: abort it first ({}, then {}) so nothing is left half done",
            k.hint(Mode::Dashboard, Action::Runbooks),
            k.hint(Mode::Runbooks, Action::AbortRun)
        );
        model.notify(text, true, Some(8));
        return Vec::new();
    }
    model.quit = Some(Quit::User);
    Vec::new()
}

/// Feed a panel's newest value to its threshold detector; each crossing becomes a record.
pub(super) fn crossings(
    model: &mut Model,
    panel: usize,
    at: chrono::DateTime<chrono::Utc>,
) -> Vec<Effect> {
    // A follower's holder records the crossings; one incident, one detector. While watching
    // (no incident yet, one declarable), they are kept for it.
    if (model.incident.is_none() && !model.declarable) || model.sharing.following() {
        return Vec::new();
    }
    let (Some(p), Some(d)) = (model.panels.get(panel), model.detectors.get_mut(panel)) else {
        return Vec::new();
    };
    let Some(value) = p.current() else {
        return Vec::new();
    };
    let title = p.config.title.clone();
    let found = d.feed(at, value);
    if model.incident.is_none() {
        // Watching: kept, with the time each happened, for the incident once declared.
        for c in found {
            model
                .pending
                .push((Source::Metric, title.clone(), c.event(&title)));
        }
        return Vec::new();
    }
    found
        .into_iter()
        .map(|c| record(model, Source::Metric, title.clone(), c.event(&title)))
        .collect()
}

/// An effect that appends `event`, counted as recording until acknowledged.
pub(super) fn record(model: &mut Model, source: Source, actor: String, event: Event) -> Effect {
    model.recording += 1;
    model.dirty = true;
    Effect::Record {
        source,
        actor,
        event,
    }
}

#[cfg(test)]
mod tests;
