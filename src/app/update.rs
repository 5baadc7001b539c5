//! `update`: the only place the model changes. No I/O: effects describe the work.

use super::effect::Effect;
use super::model::{Model, Quit, RANGES};
use super::msg::Msg;
use crate::keymap::{Action, Mode};
use crate::ui::layout;

/// Apply one message; return the work to start.
pub fn update(model: &mut Model, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Key(ev) => {
            if let Some(action) = model.keymap.action(model.mode, &ev) {
                match action {
                    // The briefing is read first: dismissing it is all other keys do.
                    Action::Close | Action::Zoom if model.briefing.is_some() => {
                        model.briefing = None;
                    }
                    a if model.briefing.is_some() && a != Action::Quit => {}
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
            model
                .source
                .health
                .report(pass, result.as_ref().map(|_| ()), at, &mut model.rng);
            if let Some(p) = model.panels.get_mut(panel)
                && p.land(ticket, result, at)
            {
                p.next_due = None;
            }
            model.dirty = true;
        }
        Msg::Latest {
            panel,
            pass,
            result,
            at,
        } => {
            model
                .source
                .health
                .report(pass, result.as_ref().map(|_| ()), at, &mut model.rng);
            if let Some(p) = model.panels.get_mut(panel) {
                p.land_latest(result, at);
            }
            model.dirty = true;
        }
        Msg::Interrupted(signal) => {
            model.quit = Some(Quit::Signal(signal));
        }
    }
    schedule(model)
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
