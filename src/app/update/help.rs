//! The help overlay: opened from any mode, scrolled, and closed back to where it was opened.

use crate::app::effect::Effect;
use crate::app::model::{HelpPage, Model, Quit};
use crate::keymap::{Action, Mode};

/// Open help over the current mode, or close it.
pub(super) fn toggle(model: &mut Model) -> Vec<Effect> {
    if model.mode == Mode::Help {
        close(model)
    } else {
        open_page(model, HelpPage::Keys)
    }
}

/// Open the overlay on `page` (the message log dismisses the message shown: it is in the log).
/// A running rehearsal waits while the operator reads: its clock stops until help closes.
pub(super) fn open_page(model: &mut Model, page: HelpPage) -> Vec<Effect> {
    if model.mode != Mode::Help {
        model.help_from = model.mode;
    }
    model.help_scroll = 0;
    model.help_page = page;
    model.mode = Mode::Help;
    if page == HelpPage::Messages {
        model.notice = None;
    }
    let running = model.briefing.is_none() && model.ended.is_none() && !model.paused;
    if !(model.rehearsal && running) {
        return Vec::new();
    }
    model.paused = true;
    model.help_paused = true;
    vec![Effect::Pace { running: false }]
}

/// Close the overlay, back to where it was opened; a rehearsal it paused runs again.
fn close(model: &mut Model) -> Vec<Effect> {
    model.mode = model.help_from;
    if !std::mem::take(&mut model.help_paused) {
        return Vec::new();
    }
    model.paused = false;
    let mut effects = vec![Effect::Pace { running: true }];
    effects.extend(super::schedule(model));
    effects
}

/// A key while help is shown.
pub(super) fn key(model: &mut Model, action: Option<Action>) -> Vec<Effect> {
    match action {
        Some(Action::Up) => model.help_scroll = model.help_scroll.saturating_sub(1),
        Some(Action::Down) => model.help_scroll = model.help_scroll.saturating_add(1),
        Some(Action::Close) => return close(model),
        Some(Action::Quit) => model.quit = Some(Quit::User),
        _ => {}
    }
    Vec::new()
}
