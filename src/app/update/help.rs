//! The help overlay: opened from any mode, scrolled, and closed back to where it was opened.

use crate::app::effect::Effect;
use crate::app::model::{HelpPage, Model, Quit};
use crate::keymap::{Action, Mode};

/// Open help over the current mode, or close it.
pub(super) fn toggle(model: &mut Model) {
    if model.mode == Mode::Help {
        model.mode = model.help_from;
    } else {
        open_page(model, HelpPage::Keys);
    }
}

/// Open the overlay on `page` (the message log dismisses the message shown: it is in the log).
pub(super) fn open_page(model: &mut Model, page: HelpPage) {
    if model.mode != Mode::Help {
        model.help_from = model.mode;
    }
    model.help_scroll = 0;
    model.help_page = page;
    model.mode = Mode::Help;
    if page == HelpPage::Messages {
        model.notice = None;
    }
}

/// A key while help is shown.
pub(super) fn key(model: &mut Model, action: Option<Action>) -> Vec<Effect> {
    match action {
        Some(Action::Up) => model.help_scroll = model.help_scroll.saturating_sub(1),
        Some(Action::Down) => model.help_scroll = model.help_scroll.saturating_add(1),
        Some(Action::Close) => model.mode = model.help_from,
        Some(Action::Quit) => model.quit = Some(Quit::User),
        _ => {}
    }
    Vec::new()
}
