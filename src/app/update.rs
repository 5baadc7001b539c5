//! `update`: the only place the model changes. No I/O: effects describe the work.

use super::effect::Effect;
use super::model::{Model, Quit, RANGES};
use super::msg::Msg;
use crate::incident::{Event, Source};
use crate::keymap::{Action, Mode};
use crate::ui::layout;

/// Apply one message; return the work to start.
pub fn update(model: &mut Model, msg: Msg) -> Vec<Effect> {
    match msg {
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
                    a => act(model, a),
                }
                model.dirty = true;
            }
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
        Msg::Recorded(result) => {
            model.recording = model.recording.saturating_sub(1);
            match result {
                Ok(record) => {
                    model.timeline.push(record);
                    model.journal_error = None;
                }
                Err(e) => {
                    model.journal_error = Some(crate::sanitize::line(&e).into_owned());
                }
            }
            model.dirty = true;
        }
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
    let actor = super::model::operator_name();
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
        Action::Submit => {}
    }
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
