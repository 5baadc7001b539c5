//! The dashboard's keys: moving between panels, zoom, range, refresh, the timeline, and the
//! keys that open the other panes and dialogs.

use super::{incident, runbooks};
use crate::app::effect::Effect;
use crate::app::model::{Model, Quit, RANGES};
use crate::keymap::{Action, Mode};
use crate::ui::layout;

/// A key on the dashboard (also quit and the timeline from the runbook pane).
pub(super) fn key(model: &mut Model, action: Option<Action>) -> Vec<Effect> {
    let Some(action) = action else {
        return Vec::new();
    };
    match action {
        Action::Runbooks => runbooks::open(model),
        Action::Changes => {
            super::changes::toggle(model);
            super::schedule(model)
        }
        Action::Publish => super::publish::ask(model),
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
        | Action::JumpToPanel) => incident::key(model, a),
        // In a rehearsal pausing pauses its simulated time too, and says so.
        Action::Pause if model.rehearsal => {
            act(model, Action::Pause);
            let running = !model.paused;
            model.notify(
                if running {
                    "resumed: the simulation and the panels run again"
                } else {
                    "paused: the simulation and the panels (p to resume)"
                },
                false,
                if running { Some(5) } else { None },
            );
            let mut effects = vec![Effect::Pace { running }];
            effects.extend(super::schedule(model));
            effects
        }
        // Moving, zooming, the range, pause and refresh may make fetches due at once.
        a => {
            act(model, a);
            super::schedule(model)
        }
    }
}

fn act(model: &mut Model, action: Action) {
    let n = model.panels.len().max(1);
    match action {
        Action::Quit => model.quit = Some(Quit::User),
        Action::Close => model.zoomed = false,
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
                model.notify(crate::strings::NO_INCIDENT, true, Some(5));
            }
        }
        _ => {}
    }
}
