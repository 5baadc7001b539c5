//! The "what's wrong" line above the panels: how many panels are CRIT and WARN and which, the
//! incident's status and severity, and the run in progress. It fits any width from 40 columns:
//! names shorten to "+N" first, then the least important parts go.
//!
//! ```text
//! ▲ 2 CRIT Pool saturation, Error ratio · △ 1 WARN Pool wait · SEV-2 investigating
//! ```
//!
//! It names a runbook only as the advice evaluated it (`app::workers::advice`): the one whose
//! `[applies]` symptom holds over its whole window and whose every precondition holds against
//! live data now, with the readings that say so in the runbook's words (its labels), or else one
//! whose symptom holds but which a precondition holds back, with why. Advice older than two
//! rounds, or with the source down, says nothing: no suggestion is better than a wrong one.
//!
//! ```text
//! △ 1 WARN Pool wait · → try pgbouncer-raise-pool: waiting clients 8, … PostgreSQL at 7 % of max_connections, …
//! △ 1 WARN Pool wait · pgbouncer-raise-pool held back: PostgreSQL at 87.7 % of max_connections, needs < 80 %
//! ```

use crate::app::Model;
use crate::app::PanelState;
use crate::app::panes::panel::Level;
use crate::keymap::{Action, Mode};
use crate::metrics::health::HealthState;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// One part of the line: its full text, a shorter one, its style.
struct Part {
    full: String,
    short: String,
    style: Style,
}

/// The panels whose current value is at `level`, by title, in dashboard order (a value too old
/// to be current counts in none: the panel says how old it is).
fn at_level(model: &Model, level: Level) -> Vec<String> {
    (model.panel_order().into_iter())
        .filter(|i| model.value_age(*i).is_none())
        .filter_map(|i| model.panels.get(i))
        .filter(|p| p.current().is_some_and(|v| p.level(v) == level))
        .map(|p| p.config.title.clone())
        .collect()
}

/// The source is down: said first, with how old the newest reading on screen is.
fn source_down(model: &Model) -> Option<Part> {
    let HealthState::Down { since, .. } = model.source.health.state() else {
        return None;
    };
    let newest = (0..model.panels.len())
        .filter_map(|i| model.panels[i].last_ok)
        .max()
        .map(|ok| crate::ui::panel::age((model.now - ok).num_seconds()));
    let tz = model.tz;
    let at = since.with_timezone(&tz).format("%H:%M:%S");
    let readings = newest.map_or(String::new(), |a| format!(", newest reading {a} old"));
    Some(Part {
        full: format!("✖ source unreachable since {at}{readings}"),
        short: "✖ source unreachable".into(),
        style: model.theme.failing,
    })
}

fn parts(model: &Model) -> Vec<Part> {
    let t = &model.theme;
    let mut parts = Vec::new();
    let down = source_down(model);
    let source_is_down = down.is_some();
    parts.extend(down);
    let crit = at_level(model, Level::Crit);
    let warn = at_level(model, Level::Warn);
    let names = |v: &[String]| -> (String, String) {
        let full = v.join(", ");
        let short = match v {
            [] => String::new(),
            [one] => one.clone(),
            [first, rest @ ..] => format!("{first} +{}", rest.len()),
        };
        (full, short)
    };
    let in_state = |want: fn(&PanelState) -> bool| -> Vec<String> {
        (model.panel_order().into_iter())
            .filter(|i| want(&model.panel_state(*i)))
            .map(|i| model.panels[i].config.title.clone())
            .collect()
    };
    // With the source down every panel fails for the same reason, said first already.
    let (failing, stale) = match source_is_down {
        true => (Vec::new(), Vec::new()),
        false => (
            in_state(|s| matches!(s, PanelState::Failing { .. })),
            in_state(|s| matches!(s, PanelState::Stale { .. })),
        ),
    };
    for (names_of, symbol, what, style) in [
        (&crit, "▲", "CRIT", t.crit),
        (&warn, "△", "WARN", t.warn),
        (&failing, "✖", "failing", t.failing),
        (&stale, "◷", "stale", t.stale),
    ] {
        if names_of.is_empty() {
            continue;
        }
        let (full, short) = names(names_of);
        parts.push(Part {
            full: format!("{symbol} {} {what} {full}", names_of.len()),
            short: format!("{symbol} {} {what} {short}", names_of.len()),
            style,
        });
    }
    // The all-clear only when every panel holds a current value: a stale, failing or missing
    // one proves nothing.
    let quiet = crit.is_empty() && warn.is_empty() && failing.is_empty() && stale.is_empty();
    let n = model.panel_order().len();
    if quiet && !source_is_down && n > 0 {
        let answered = n - in_state(|s| matches!(s, PanelState::Loading)).len();
        // Collapsed rows are not read: the all-clear does not speak for them.
        let unread = match model.panels.len() - n {
            0 => String::new(),
            k => format!("; {k} in collapsed rows not read"),
        };
        parts.push(if answered == n {
            Part {
                full: format!("✓ no panel past a threshold ({n} of {n} current{unread})"),
                short: "✓ no panel past a threshold".into(),
                style: t.ok,
            }
        } else {
            Part {
                full: format!("◌ {answered} of {n} panels answered: no all-clear yet"),
                short: "◌ no all-clear yet".into(),
                style: t.loading,
            }
        });
    }
    if let Some(h) = crate::app::update::advice_headline(model) {
        parts.push(Part {
            full: h.full,
            short: h.short,
            style: if h.suggests { t.text } else { t.warn },
        });
    }
    match &model.incident {
        Some(_) => {
            let s = crate::incident::summary::summarize(&model.timeline);
            let sev = s
                .severity
                .map_or("severity not set".into(), |v| v.to_string());
            let status = s.status.map_or("status not set".into(), |v| v.to_string());
            parts.push(Part {
                full: format!("{sev} {status}"),
                short: format!(
                    "{} {}",
                    s.severity.map_or("SEV?".into(), |v| v.to_string()),
                    s.status.map_or("?".into(), |v| v.to_string())
                ),
                style: t.text,
            });
        }
        None if model.replay.is_none() && !model.declarable => parts.push(Part {
            full: "no incident recorded".into(),
            short: "no incident".into(),
            style: t.muted,
        }),
        None if model.replay.is_none() => {
            let d = model.keymap.hint(Mode::Dashboard, Action::Declare);
            parts.push(Part {
                full: format!("watching, no incident ({d} declares)"),
                short: "no incident".into(),
                style: t.muted,
            });
        }
        None => {}
    }
    if let Some(run) = model.runbooks.active() {
        let step = run
            .current()
            .map(|i| format!(" step {}/{}", i + 1, run.steps.len()))
            .unwrap_or_default();
        let (state, style) = super::runbooks::run_state(run, t);
        parts.push(Part {
            full: format!("{state} {}{step}", run.runbook),
            short: format!("{state} {}", run.runbook),
            style,
        });
    }
    parts
}

/// The line for `width` columns: full parts if they fit, then short ones, then the last
/// parts dropped (the counts stay).
pub fn line(model: &Model, width: usize) -> Vec<(String, Style)> {
    let parts = parts(model);
    // Parts and their " · " separators.
    let len = |v: &[(String, Style)]| {
        v.iter().map(|(s, _)| s.chars().count()).sum::<usize>() + 3 * v.len().saturating_sub(1)
    };
    let mut shown: Vec<(String, Style)> = parts.iter().map(|p| (p.full.clone(), p.style)).collect();
    // Shorten from the end first (the counts at the start matter most).
    for i in (0..parts.len()).rev() {
        if len(&shown) <= width {
            break;
        }
        shown[i].0.clone_from(&parts[i].short);
    }
    while len(&shown) > width && shown.len() > 1 {
        shown.pop();
    }
    if let Some(first) = shown.first_mut()
        && first.0.chars().count() > width
    {
        first.0 = first
            .0
            .chars()
            .take(width.saturating_sub(1))
            .collect::<String>()
            + "…";
    }
    shown
}

/// Draw the line into `area`.
pub fn draw(frame: &mut Frame, area: Rect, model: &Model) {
    let t = &model.theme;
    let width = usize::from(area.width.saturating_sub(1));
    let mut spans = vec![Span::raw(" ")];
    for (i, (text, style)) in line(model, width).into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", t.muted));
        }
        spans.push(Span::styled(text, style));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
