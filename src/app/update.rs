//! `update`: the only place the model changes. No I/O: effects describe the work.

use super::effect::Effect;
use super::model::{Model, Quit, RANGES};
use super::msg::Msg;
use crate::incident::{Event, Source};
use crate::keymap::{Action, Mode};
use crate::ui::layout;

mod incident;
mod runbooks;

pub use incident::{FILTERS, SEVERITIES, STATUSES};

/// Apply one message; return the work to start.
pub fn update(model: &mut Model, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Key(ev) if model.dialog.is_some() => {
            let effects = dialog_key(model, &ev);
            model.dirty = true;
            return effects;
        }
        Msg::Key(ev) => {
            if model.mode == Mode::Note && model.keymap.action(Mode::Note, &ev).is_none() {
                edit_note(model, &ev);
                return Vec::new();
            }
            if let Some(action) = model.keymap.action(model.mode, &ev) {
                match action {
                    // The briefing is read first: dismissing it is all other keys do.
                    Action::Close | Action::Zoom if model.briefing.is_some() => {
                        model.briefing = None;
                    }
                    a if model.briefing.is_some() && a != Action::Quit => {}
                    Action::Submit => return submit_note(model),
                    Action::Quit if model.runbooks.active().is_some() => {
                        model.notify(
                            "a runbook is running: abort it first (b, then a) so nothing is left half done",
                            true,
                            Some(8),
                        );
                    }
                    Action::Help => {
                        if model.mode == Mode::Help {
                            model.mode = model.help_from;
                        } else {
                            model.help_from = model.mode;
                            model.help_scroll = 0;
                            model.mode = Mode::Help;
                        }
                    }
                    a if model.mode == Mode::Runbooks
                        && a != Action::Quit
                        && a != Action::Timeline =>
                    {
                        model.dirty = true;
                        return runbooks::key(model, a);
                    }
                    Action::Runbooks => {
                        model.dirty = true;
                        return runbooks::open(model);
                    }
                    Action::Changes => super::changes::toggle(model),
                    Action::Publish => return super::publish::ask(model),
                    a @ (Action::Status
                    | Action::Severity
                    | Action::ActionItem
                    | Action::ImpactStart
                    | Action::ImpactEnd
                    | Action::Correct
                    | Action::EditorNote
                    | Action::Export
                    | Action::TimelineFilter
                    | Action::TimelineOrder
                    | Action::JumpToPanel) => {
                        model.dirty = true;
                        return incident::key(model, a);
                    }
                    a => act(model, a),
                }
                model.dirty = true;
            }
        }
        Msg::RunbooksLoaded(entries) => {
            let n = entries.len();
            model.runbooks.entries = Some(entries);
            model.runbooks.selected = model.runbooks.selected.min(n.saturating_sub(1));
            model.dirty = true;
        }
        Msg::Planned { name, result } => {
            match model.runbooks.plan.as_mut().filter(|p| p.name == name) {
                Some(p) => match result {
                    Ok(plan) => {
                        p.lines = Some(Ok(plan.lines));
                        p.batches = plan.batches;
                        p.titles = plan.titles;
                    }
                    Err(e) => p.lines = Some(Err(crate::sanitize::line(&e).into_owned())),
                },
                None => {
                    if let Err(e) = result {
                        model.notify(format!("runbook \"{name}\": {e}"), true, Some(10));
                    }
                }
            }
            model.dirty = true;
        }
        Msg::Run { record, journaled } => {
            if let Some(run) = model
                .runbooks
                .run
                .as_mut()
                .filter(|r| r.run_id == record.run_id)
            {
                run.apply(&record);
            }
            if let Some(r) = journaled {
                model.timeline.push(*r);
            }
            model.dirty = true;
        }
        Msg::Journaled(r) => {
            model.timeline.push(*r);
            model.dirty = true;
        }
        Msg::RunEnded { run_id, outcome } => {
            let mut effects = runbooks::drop_questions(model, &run_id);
            if let Some(run) = model.runbooks.run.as_mut().filter(|r| r.run_id == run_id) {
                if run.outcome.is_none() {
                    run.outcome = Some(outcome);
                }
                let text = format!("runbook \"{}\" ended: {outcome:?}", run.runbook);
                let warn = outcome != crate::runbook::record::RunOutcome::Succeeded;
                model.notify(text, warn, Some(15));
            }
            model.dirty = true;
            effects.extend(schedule(model));
            return effects;
        }
        Msg::Ask {
            run_id,
            question,
            reply,
        } => {
            model.dirty = true;
            let known = model
                .runbooks
                .run
                .as_ref()
                .is_some_and(|r| r.run_id == run_id && !r.finished());
            if !known {
                // Nobody here started that run: the answer is no.
                return vec![Effect::Answer {
                    reply,
                    answer: super::operator::Answer::Confirmed(false),
                }];
            }
            return runbooks::ask(model, run_id, question, reply);
        }
        Msg::EditorClosed(result) => {
            model.dirty = true;
            return incident::editor_closed(model, result);
        }
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
            if model
                .notice
                .as_ref()
                .and_then(|n| n.until)
                .is_some_and(|until| now >= until)
            {
                model.notice = None;
                model.dirty = true;
            }
        }
        Msg::Answer {
            panel,
            ticket,
            pass,
            query: _,
            result,
            at,
        } => {
            report_health(model, pass, &result, at);
            if let Some(p) = model.panels.get_mut(panel)
                && p.land(ticket, result, at)
            {
                p.next_due = None;
            }
            return after_answer(model, panel, at);
        }
        Msg::Latest {
            panel,
            pass,
            result,
            at,
        } => {
            report_health(model, pass, &result, at);
            if let Some(p) = model.panels.get_mut(panel) {
                p.land_latest(result, at);
            }
            return after_answer(model, panel, at);
        }
        Msg::Exported(result) => {
            match result {
                Ok((path, 0)) => model.notify(format!("exported {path}"), false, Some(30)),
                Ok((path, n)) => model.notify(
                    format!("exported {path}; lint: {n} finding(s), see `warroom export`"),
                    false,
                    Some(30),
                ),
                Err(e) => model.notify(format!("export failed: {e}"), true, Some(30)),
            }
            model.dirty = true;
        }
        Msg::Recorded(result) => {
            model.recording = model.recording.saturating_sub(1);
            match result {
                Ok(record) => {
                    if matches!(record.kind, Event::ActionItem { .. }) {
                        model.actions_pending = model.actions_pending.saturating_sub(1);
                    }
                    model.timeline.push(record);
                    model.journal_error = None;
                }
                Err(e) => {
                    model.journal_error = Some(crate::sanitize::line(&e).into_owned());
                }
            }
            model.dirty = true;
        }
        Msg::Changes(report) => super::changes::report(model, report),
        Msg::Published(report) => super::publish::report(model, report),
        Msg::Interrupted(signal) => {
            model.quit = Some(Quit::Signal(signal));
        }
    }
    schedule(model)
}

fn report_health(
    model: &mut Model,
    pass: crate::metrics::health::Pass,
    result: &Result<crate::metrics::QueryAnswer, crate::metrics::SourceError>,
    at: chrono::DateTime<chrono::Utc>,
) {
    let outcome = result.as_ref().map(|_| ());
    model
        .source
        .health
        .report(pass, outcome, at, &mut model.rng);
}

/// After a panel's answer: record any threshold crossing, then start what is due.
fn after_answer(model: &mut Model, panel: usize, at: chrono::DateTime<chrono::Utc>) -> Vec<Effect> {
    model.dirty = true;
    let mut effects = crossings(model, panel, at);
    effects.extend(schedule(model));
    effects
}

/// Feed a panel's newest value to its threshold detector; each crossing becomes a record.
fn crossings(model: &mut Model, panel: usize, at: chrono::DateTime<chrono::Utc>) -> Vec<Effect> {
    if model.incident.is_none() {
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
    found
        .into_iter()
        .map(|c| record(model, Source::Metric, title.clone(), c.event(&title)))
        .collect()
}

/// An effect that appends `event`, counted as recording until acknowledged.
fn record(model: &mut Model, source: Source, actor: String, event: Event) -> Effect {
    model.recording += 1;
    model.dirty = true;
    Effect::Record {
        source,
        actor,
        event,
    }
}

fn edit_note(model: &mut Model, ev: &crossterm::event::KeyEvent) {
    use crossterm::event::{KeyCode, KeyEventKind, KeyModifiers};
    if ev.kind == KeyEventKind::Release {
        return;
    }
    match ev.code {
        KeyCode::Char(c)
            if !ev
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            if model.note.chars().count() < NOTE_MAX {
                model.note.push(c);
            }
        }
        KeyCode::Backspace => {
            model.note.pop();
        }
        _ => return,
    }
    model.dirty = true;
}

/// Longest note typed in the console, in characters.
pub const NOTE_MAX: usize = 2000;

fn submit_note(model: &mut Model) -> Vec<Effect> {
    model.mode = Mode::Dashboard;
    model.dirty = true;
    let text = std::mem::take(&mut model.note);
    let text = text.trim();
    if text.is_empty() || model.incident.is_none() {
        return Vec::new();
    }
    let actor = model.actor.clone();
    vec![record(model, Source::Operator, actor, Event::note(text))]
}

fn act(model: &mut Model, action: Action) {
    let n = model.panels.len().max(1);
    match action {
        Action::Quit => model.quit = Some(Quit::User),
        Action::Help => {
            model.mode = if model.mode == Mode::Help {
                Mode::Dashboard
            } else {
                Mode::Help
            }
        }
        Action::Up if model.mode == Mode::Help => {
            model.help_scroll = model.help_scroll.saturating_sub(1);
        }
        Action::Down if model.mode == Mode::Help => {
            model.help_scroll = model.help_scroll.saturating_add(1);
        }
        Action::Close if model.mode == Mode::Help => model.mode = model.help_from,
        Action::Close => {
            if model.mode != Mode::Dashboard {
                model.mode = Mode::Dashboard;
                model.note.clear();
            } else {
                model.zoomed = false;
            }
        }
        Action::Zoom => model.zoomed = !model.zoomed,
        Action::NextPanel => model.selected = (model.selected + 1) % n,
        Action::PrevPanel => model.selected = (model.selected + n - 1) % n,
        Action::Down | Action::Up => {
            let cols = layout::grid_columns(model.width).min(n);
            let sel = model.selected;
            model.selected = match action {
                Action::Down if sel + cols < n => sel + cols,
                Action::Up if sel >= cols => sel - cols,
                _ => sel,
            };
        }
        Action::RangeShorter | Action::RangeLonger => {
            let idx = if action == Action::RangeShorter {
                model.range_idx.saturating_sub(1)
            } else {
                (model.range_idx + 1).min(RANGES.len() - 1)
            };
            if idx != model.range_idx {
                model.range_idx = idx;
                for p in &mut model.panels {
                    p.reset();
                }
            }
        }
        Action::Pause => {
            model.paused = !model.paused;
            if !model.paused {
                for p in &mut model.panels {
                    p.next_due = None;
                }
            }
        }
        Action::Refresh => {
            for p in &mut model.panels {
                p.next_due = None;
            }
        }
        Action::Timeline => model.show_timeline = !model.show_timeline,
        Action::Note => {
            if model.incident.is_some() {
                model.mode = Mode::Note;
                model.note.clear();
            } else {
                model.notify("no incident is being recorded here: warroom open records one (the demo does not)", true, Some(5));
            }
        }
        _ => {}
    }
}

/// A key while a dialog is open: the dialog's own bindings, else text for its field.
fn dialog_key(model: &mut Model, ev: &crossterm::event::KeyEvent) -> Vec<Effect> {
    let Some(d) = model.dialog.as_mut() else {
        return Vec::new();
    };
    match model.keymap.action(Mode::Dialog, ev) {
        Some(Action::Submit) => submit_dialog(model),
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
fn submit_dialog(model: &mut Model) -> Vec<Effect> {
    use super::dialog::{Body, Purpose};
    use super::operator::Answer;
    let Some(d) = model.dialog.take() else {
        return Vec::new();
    };
    let keep = |model: &mut Model, mut d: super::dialog::Dialog, error: String| {
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

/// Start the fetches that are due, within the in-flight limit and the source's backoff (while
/// the source is down, `Health` admits one probe at a time after a jittered delay).
fn schedule(model: &mut Model) -> Vec<Effect> {
    let mut effects = Vec::new();
    if model.paused || model.quit.is_some() {
        return effects;
    }
    let now = model.now;
    let window = model.window();
    let now_s = now.timestamp_millis() as f64 / 1000.0;
    let refresh = chrono::Duration::from_std(model.refresh).unwrap_or(chrono::Duration::seconds(5));
    let mut in_flight = model.in_flight();
    let n = model.panels.len();
    // The selected panel first: it is the one being looked at.
    for k in 0..n {
        if in_flight >= super::model::MAX_IN_FLIGHT {
            break;
        }
        let i = (model.selected + k) % n;
        let p = &mut model.panels[i];
        if p.busy() || p.next_due.is_some_and(|due| now < due) {
            continue;
        }
        let Some(pass) = model.source.health.admit(now) else {
            break;
        };
        p.next_due = Some(now + refresh);
        match p.fetch.due(&p.config.query, &window, now_s) {
            Some((ticket, query)) => {
                in_flight += 1;
                model.source.requests_sent += 1;
                effects.push(Effect::Fetch {
                    panel: i,
                    ticket,
                    pass,
                    query,
                });
            }
            // The newest grid point is held: ask for the value now instead.
            None => {
                p.latest_in_flight = true;
                in_flight += 1;
                model.source.requests_sent += 1;
                effects.push(Effect::FetchLatest {
                    panel: i,
                    pass,
                    query: crate::metrics::InstantQuery {
                        query: p.config.query.clone(),
                        time: Some(now_s),
                    },
                });
            }
        }
    }
    effects
}

#[cfg(test)]
mod tests;
