//! The status bar: the source and its health, the range, pause, the clock with its zone, a
//! notice if any, and key hints.

use crate::app::Model;
use crate::keymap::{Action, Mode};
use crate::metrics::health::HealthState;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Draw the status bar into its one line.
pub fn draw(frame: &mut Frame, area: Rect, model: &Model) {
    let t = &model.theme;
    let s = &model.source;
    let (health, hstyle) = match s.health.state() {
        HealthState::Down { retry_at, .. } => {
            let wait = (*retry_at - model.now).num_seconds().max(0);
            (format!("✖ down, retry in {wait}s"), t.failing)
        }
        HealthState::Up { .. } => ("● up".to_string(), t.ok),
        HealthState::Unknown => ("◌ connecting".to_string(), t.loading),
    };
    let local = model.now.with_timezone(&model.tz);
    let range = humantime::format_duration(crate::app::model::RANGES[model.range_idx]);
    let sep = || Span::styled(" │ ", t.muted);
    let clock = Span::styled(local.format("%Y-%m-%d %H:%M:%S %Z").to_string(), t.text);
    let mut spans = vec![Span::raw(" ")];
    match &model.replay {
        // A replay reads a journal: there is no source, and it records nothing. Its time
        // comes early, so a narrow terminal still shows where the replay is.
        Some(r) => spans.extend([
            Span::styled(r.state.clone(), t.accent),
            sep(),
            clock.clone(),
        ]),
        None => spans.extend([
            Span::styled(s.name.clone(), t.text),
            Span::raw(" "),
            Span::styled(health, hstyle),
        ]),
    }
    // What discovery found names the dashboard: "found postgres_exporter, HAProxy".
    if let Some(d @ crate::app::model::Discovery::Found { .. }) = &model.discovery {
        spans.push(sep());
        spans.push(Span::styled(d.line(model.now), t.accent));
    }
    // A notice comes early: on a narrow terminal the end of the bar is cut off.
    if let Some(n) = &model.notice {
        spans.push(sep());
        spans.push(Span::styled(
            n.text.clone(),
            if n.warning { t.warn } else { t.accent },
        ));
    }
    if let Some(r) = &model.replay {
        spans.push(sep());
        spans.push(Span::styled(r.incident.clone(), t.text));
    }
    spans.push(sep());
    spans.push(Span::styled(format!("range {range}"), t.text));
    if let Some(i) = model.incident.as_ref().filter(|_| model.replay.is_none()) {
        let (state, style) = super::timeline::journal_state(model);
        spans.push(sep());
        spans.push(Span::styled(format!("incident {}", i.id), t.text));
        spans.push(Span::raw(" "));
        spans.push(Span::styled(state, style));
        if let Some((text, warn)) = sharing(model) {
            spans.push(sep());
            spans.push(Span::styled(text, if warn { t.warn } else { t.accent }));
        }
    }
    if let Some(run) = &model.runbooks.run {
        let (state, style) = super::runbooks::run_state(run, t);
        let step = run
            .current()
            .map(|i| format!(" step {}/{}", i + 1, run.steps.len()))
            .unwrap_or_default();
        let batch = run
            .batch
            .as_ref()
            .map(|b| {
                format!(
                    " batch {}{}",
                    b.batch,
                    b.of.map(|n| format!("/{n}")).unwrap_or_default()
                )
            })
            .unwrap_or_default();
        spans.push(sep());
        spans.push(Span::styled(
            format!("{state} {}{step}{batch}", run.runbook),
            style,
        ));
    }
    if model.paused {
        spans.push(sep());
        spans.push(Span::styled("⏸ paused", t.warn));
    }
    if model.replay.is_none() {
        spans.push(sep());
        spans.push(clock);
    }
    let k = &model.keymap;
    let d = Mode::Dashboard;
    spans.push(sep());
    let hints = match &model.replay {
        Some(r) => r.hints.clone(),
        None => format!(
            "{} help  {} zoom  {} quit",
            k.hint(d, Action::Help),
            k.hint(d, Action::Zoom),
            k.hint(d, Action::Quit)
        ),
    };
    spans.push(Span::styled(hints, t.muted));
    frame.render_widget(Paragraph::new(Line::from(spans)).style(t.status_bar), area);
}

/// Who holds the incident and how many follow it, in words (`None` when it is not shared).
pub fn sharing(model: &Model) -> Option<(String, bool)> {
    use crate::app::sharing::Sharing;
    let follow = |n: usize| match n {
        0 => String::new(),
        n => format!(", {n} following"),
    };
    match &model.sharing {
        Sharing::Alone => None,
        Sharing::Holding { followers } => {
            Some((format!("⇄ held here{}", follow(*followers)), false))
        }
        Sharing::Following { gone: Some(_), .. } => Some(("✖ holder gone: read-only".into(), true)),
        Sharing::Following {
            holder, followers, ..
        } => {
            let host = if holder.is_local() {
                String::new()
            } else {
                format!(" on {}", crate::sanitize::line(&holder.host))
            };
            Some((
                format!(
                    "⇄ following {} pid {}{host}{}",
                    holder.command(),
                    holder.pid,
                    follow(*followers)
                ),
                false,
            ))
        }
    }
}
