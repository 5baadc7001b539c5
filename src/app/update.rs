//! `update`: the only place the model changes. No I/O: effects describe the work.

use super::effect::Effect;
use super::model::{Model, Quit, RANGES};
use super::msg::Msg;
use crate::keymap::{Action, Mode};
use crate::ui::layout;
use chrono::{DateTime, Utc};

/// Apply one message; return the work to start.
pub fn update(model: &mut Model, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Key(ev) => {
            if let Some(action) = model.keymap.action(model.mode, &ev) {
                act(model, action);
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
            generation,
            query,
            result,
            at,
        } => {
            let range = model.range_secs();
            let failure = result.as_ref().err().cloned();
            let Some(p) = model.panels.get_mut(panel) else {
                return Vec::new();
            };
            let current = p.accept(generation, &query, result, at, range);
            if current {
                note_source_outcome(model, failure, at);
            }
            model.dirty = true;
        }
        Msg::Interrupted(signal) => {
            model.quit = Some(Quit::Signal(signal));
        }
    }
    schedule(model)
}

fn note_source_outcome(
    model: &mut Model,
    failure: Option<crate::metrics::SourceError>,
    at: DateTime<Utc>,
) {
    let s = &mut model.source;
    match failure {
        None => {
            s.consecutive_failures = 0;
            s.next_allowed = None;
            s.last_ok = Some(at);
        }
        // A query the server refused (bad PromQL, too many points) says nothing about its
        // health: only transient failures slow every panel down.
        Some(e) if !e.is_transient() => {}
        Some(e) => {
            let delay = model.backoff.delay(s.consecutive_failures, &mut model.rng);
            let wait = e.retry_after().map_or(delay, |r| r.max(delay));
            s.consecutive_failures = s.consecutive_failures.saturating_add(1);
            s.next_allowed =
                Some(at + chrono::Duration::from_std(wait).unwrap_or(chrono::Duration::zero()));
            s.last_error = Some((at, e.to_string()));
        }
    }
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
            if model.mode == Mode::Help {
                model.mode = Mode::Dashboard;
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
                    p.invalidate();
                    p.next_due = None;
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
    }
}

/// Start the fetches that are due, within the in-flight limits and the source's backoff.
fn schedule(model: &mut Model) -> Vec<Effect> {
    let mut effects = Vec::new();
    if model.paused || model.quit.is_some() {
        return effects;
    }
    let now = model.now;
    if model.source.next_allowed.is_some_and(|t| now < t) {
        return effects;
    }
    // While the source fails, one probe at a time: no burst when the backoff ends.
    let limit = if model.source.is_failing() {
        1
    } else {
        super::model::MAX_IN_FLIGHT
    };
    let mut in_flight = model.in_flight();
    let cols = layout::plot_columns(model.width, model.panels.len(), model.zoomed);
    let now_s = now.timestamp_millis() as f64 / 1000.0;
    let range = model.range_secs();
    let refresh = chrono::Duration::from_std(model.refresh).unwrap_or(chrono::Duration::seconds(5));
    let min_step = model.refresh.as_secs_f64().max(1.0);
    let n = model.panels.len();
    // The selected panel first: it is the one being looked at.
    for k in 0..n {
        if in_flight >= limit {
            break;
        }
        let i = (model.selected + k) % n;
        let p = &mut model.panels[i];
        if p.in_flight.is_some() || p.next_due.is_some_and(|due| now < due) {
            continue;
        }
        let query = p.plan(now_s, range, cols, min_step);
        p.in_flight = Some(p.generation);
        p.next_due = Some(now + refresh);
        in_flight += 1;
        model.source.requests_sent += 1;
        effects.push(Effect::Fetch {
            panel: i,
            generation: p.generation,
            query,
        });
    }
    effects
}

#[cfg(test)]
mod tests;
