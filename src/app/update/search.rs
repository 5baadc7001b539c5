//! Searching the timeline and filtering the runbook list (`/`). The timeline's search: enter
//! keeps it and scrolls to the next matching row (wrapping), esc leaves it as it was. The
//! runbook list's filter follows the text as it is typed; enter keeps it, esc restores the
//! one before.

use crate::app::effect::Effect;
use crate::app::model::{Model, Search};
use crate::app::panes::text::{self, Caret};
use crate::app::panes::timeline::TimelinePane;
use crate::keymap::{Action, Mode};

/// Longest search typed.
const SEARCH_MAX: usize = 200;

/// `/` on the dashboard: open the timeline's search, prefilled (and selected) with the last.
pub(super) fn open(model: &mut Model) {
    model.show_timeline = true;
    let last = model.timeline_pane.find.clone();
    model.search = Some(typing(last, false));
}

/// `/` in the runbook pane: filter the list by name.
pub(super) fn filter(model: &mut Model) {
    model.runbooks.plan = None;
    let before = model.runbooks.filter.clone();
    model.search = Some(typing(before, true));
}

fn typing(last: Option<String>, runbooks: bool) -> Search {
    let text = last.clone().unwrap_or_default();
    Search {
        caret: Caret::prefilled(&text),
        text,
        runbooks,
        before: last,
    }
}

/// A key while the search is typed (the dialog's enter and esc keys answer it).
pub(super) fn key(model: &mut Model, ev: &crossterm::event::KeyEvent) -> Vec<Effect> {
    let Some(search) = model.search.as_mut() else {
        return Vec::new();
    };
    match model.keymap.action(Mode::Dialog, ev) {
        Some(Action::Submit) if search.runbooks => {
            model.search = None;
        }
        Some(Action::Submit) => {
            let q = search.text.trim().to_string();
            model.search = None;
            let fresh = model.timeline_pane.find.as_deref() != Some(q.as_str());
            model.timeline_pane.find = (!q.is_empty()).then_some(q);
            next_match(model, fresh);
        }
        Some(Action::Close) => {
            if search.runbooks {
                let before = search.before.clone().unwrap_or_default();
                model.runbooks.set_filter(&before);
            }
            model.search = None;
        }
        _ => {
            let edited = text::edit(&mut search.text, &mut search.caret, ev, SEARCH_MAX);
            if edited && search.runbooks {
                let text = search.text.clone();
                model.runbooks.set_filter(&text);
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
