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
        Action::Search => {
            super::search::open(model);
            Vec::new()
        }
        Action::Messages => super::help::open_page(model, crate::app::model::HelpPage::Messages),
        Action::Declare => incident::declare(model),
        Action::Variables => super::variables::open(model),
        Action::Silence => super::silence::open(model),
        Action::Copy => super::copy::ask(model),
        Action::GraphUrl => super::copy::graph(model),
        Action::Palette => super::palette::open(model),
        a @ (Action::PageUp | Action::PageDown | Action::Top | Action::Bottom) => {
            scroll_timeline(model, a);
            Vec::new()
        }
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
    // Moving follows the order on screen (a run's panels first; collapsed rows left out).
    let order = model.panel_order();
    let n = order.len().max(1);
    let pos = order.iter().position(|i| *i == model.selected).unwrap_or(0);
    let at = |p: usize| order.get(p).copied().unwrap_or(0);
    match action {
        Action::Quit => model.quit = Some(Quit::User),
        // A message that waits to be dismissed goes first; then the zoom.
        Action::Close if model.notice.as_ref().is_some_and(|n| n.until.is_none()) => {
            model.notice = None;
        }
        Action::Close => model.zoomed = false,
        Action::Zoom => model.zoomed = !model.zoomed,
        Action::NextPanel => model.selected = at((pos + 1) % n),
        Action::PrevPanel => model.selected = at((pos + n - 1) % n),
        Action::Down | Action::Up => {
            // The compact form lists one panel a row.
            let area = model.areas().panels.unwrap_or_default();
            let cols = if crate::ui::dashboard::compact(area, n) {
                1
            } else {
                layout::grid_columns(model.panels_width()).min(n)
            };
            model.selected = match action {
                Action::Down if pos + cols < n => at(pos + cols),
                Action::Up if pos >= cols => at(pos - cols),
                _ => model.selected,
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
            super::discovery::look_again(model);
        }
        Action::Timeline => model.show_timeline = !model.show_timeline,
        Action::Note => {
            if model.incident.is_some() || model.declarable {
                model.mode = Mode::Note;
                model.note.clear();
            } else {
                model.notify(crate::strings::NO_INCIDENT, true, Some(5));
            }
        }
        _ => {}
    }
}

/// PgUp/PgDn/Home/End: scroll the timeline pane (opening it), a page at a time.
fn scroll_timeline(model: &mut Model, action: Action) {
    model.show_timeline = true;
    model.jumped = None;
    let page = usize::from(model.height / 2).max(1);
    let n = model.timeline.len();
    let s = &mut model.timeline_pane.scroll;
    *s = match action {
        Action::PageUp => s.saturating_sub(page),
        Action::PageDown => (*s + page).min(n.saturating_sub(1)),
        Action::Top => 0,
        _ => n.saturating_sub(1),
    };
}
