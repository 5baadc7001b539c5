//! Searching the timeline (`/`): the typed text is the search; enter keeps it and scrolls to
//! the next matching row (wrapping), esc leaves the search as it was.

use crate::app::effect::Effect;
use crate::app::model::Model;
use crate::app::panes::text::{self, Caret};
use crate::app::panes::timeline::TimelinePane;
use crate::keymap::{Action, Mode};

/// Longest search typed.
const SEARCH_MAX: usize = 200;

/// `/`: open the search, prefilled (and selected) with the last one.
pub(super) fn open(model: &mut Model) {
    model.show_timeline = true;
    let last = model.timeline_pane.find.clone().unwrap_or_default();
    model.search = Some((last.clone(), Caret::prefilled(&last)));
}

/// A key while the search is typed (the dialog's enter and esc keys answer it).
pub(super) fn key(model: &mut Model, ev: &crossterm::event::KeyEvent) -> Vec<Effect> {
    match model.keymap.action(Mode::Dialog, ev) {
        Some(Action::Submit) => {
            let (q, _) = model.search.take().unwrap_or_default();
            let q = q.trim().to_string();
            let fresh = model.timeline_pane.find.as_deref() != Some(q.as_str());
            model.timeline_pane.find = (!q.is_empty()).then_some(q);
            next_match(model, fresh);
        }
        Some(Action::Close) => model.search = None,
        _ => {
            if let Some((q, caret)) = model.search.as_mut() {
                text::edit(q, caret, ev, SEARCH_MAX);
            }
        }
    }
    Vec::new()
}

/// Scroll to the next row that matches, after the one at the top (wrapping; from the top
/// itself for a new search); say so when nothing does.
pub(super) fn next_match(model: &mut Model, fresh: bool) {
    let Some(find) = model.timeline_pane.find.clone() else {
        return;
    };
    let rows = super::super::panes::timeline::rows(&model.timeline, &|p| model.unit_of(p));
    let shown = TimelinePane::shown(rows, model.timeline_filter, model.oldest_first);
    let n = shown.len();
    let from = if fresh {
        0
    } else {
        model.timeline_pane.scroll + 1
    };
    let hit = (0..n)
        .map(|k| (from + k) % n.max(1))
        .find(|&i| shown.get(i).is_some_and(|r| model.timeline_pane.matches(r)));
    match hit {
        Some(i) => {
            model.timeline_pane.scroll = i;
            model.notify(format!("\"{find}\": row #{}", shown[i].seq), false, Some(5));
        }
        None => model.notify(
            format!("nothing on the timeline matches \"{find}\""),
            false,
            Some(5),
        ),
    }
}
