//! The status bar: the source and its health, the range, the incident and its journal's state,
//! the run, pause, the clock with its zone, the message shown, and key hints. When it is too
//! narrow the least important fields go first; the clock, the journal's state and the help
//! key never do, and a message that does not fit gets lines of its own above the bar.

use crate::app::Model;
use crate::keymap::{Action, Mode};
use crate::metrics::health::HealthState;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// How much a field matters: the least important go first when the bar is too narrow.
/// `KEEP` fields never go: the clock, the journal's state, the help key.
const KEEP: u8 = 9;

/// The fields of the bar, in display order, with their importance.
pub(super) fn fields(model: &Model) -> Vec<(u8, Vec<Span<'static>>)> {
    let t = &model.theme;
    let s = &model.source;
    let (health, hstyle) = match s.health.state() {
        HealthState::Down { retry_at, .. } => {
            let wait = crate::backoff::shown_wait((*retry_at - model.now).num_seconds());
            (format!("✖ down, retry in {wait}s"), t.failing)
        }
        HealthState::Up { .. } => ("● up".to_string(), t.ok),
        // Nothing is asked of a source with no panels: "connecting" would never end.
        HealthState::Unknown if model.panels.is_empty() => {
            ("○ no panels to query".to_string(), t.muted)
        }
        HealthState::Unknown => ("◌ connecting".to_string(), t.loading),
    };
    let local = model.now.with_timezone(&model.tz);
    let range = humantime::format_duration(crate::app::model::RANGES[model.range_idx]);
    // The console's clock to the minute: an idle console draws once a minute for it, not
    // every second (`ui::idle`). A replay steps through records: its clock keeps seconds.
    let fmt = match model.replay {
        Some(_) => "%Y-%m-%d %H:%M:%S %Z",
        None => "%Y-%m-%d %H:%M %Z",
    };
    let clock = Span::styled(local.format(fmt).to_string(), t.text);
    let mut out: Vec<(u8, Vec<Span>)> = Vec::new();
    match &model.replay {
        // A replay reads a journal: there is no source, and it records nothing.
        Some(r) => {
            out.push((KEEP, vec![Span::styled(r.state.clone(), t.accent)]));
            out.push((KEEP, vec![clock.clone()]));
        }
        None => {
            out.push((6, vec![Span::styled(s.name.clone(), t.text)]));
            out.push((7, vec![Span::styled(health, hstyle)]));
        }
    }
    // What discovery found names the dashboard: "found postgres_exporter, HAProxy".
    if let Some(d @ crate::app::model::Discovery::Found { .. }) = &model.discovery {
        out.push((1, vec![Span::styled(d.line(model.now), t.accent)]));
    }
    if let Some(r) = &model.replay {
        out.push((4, vec![Span::styled(r.incident.clone(), t.text)]));
    }
    out.push((3, vec![Span::styled(format!("range {range}"), t.text)]));
    if model.replay.is_none() {
        match &model.incident {
            Some(i) => {
                let (state, style) = super::timeline::journal_state(model);
                // The id is what responders say to each other and type into commands: it
                // outranks the source's name (issue 33 point 5).
                out.push((8, vec![Span::styled(format!("incident {}", i.id), t.text)]));
                out.push((KEEP, vec![Span::styled(state, style)]));
                // Who holds it and who follows; a holder gone (read-only) matters most.
                if let Some((text, warn)) = sharing(model) {
                    let (weight, style) = if warn { (8, t.warn) } else { (5, t.accent) };
                    out.push((weight, vec![Span::styled(text, style)]));
                }
                if let Some((text, warn)) = engine(model) {
                    let (weight, style) = if warn { (8, t.warn) } else { (5, t.accent) };
                    out.push((weight, vec![Span::styled(text, style)]));
                }
            }
            None => out.push((KEEP, vec![Span::styled("○ not recording", t.muted)])),
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
        // A run in progress keeps its place when the pane is not on screen (shortened to
        // "▶ name 5/6 b2/4" when the bar is narrow).
        let weight = if run.finished() { 4 } else { 8 };
        let full = format!("{state} {}{step}{batch}", run.runbook);
        let sym = state.split(' ').next().unwrap_or_default();
        let short = format!(
            "{sym} {}{}{}",
            run.runbook,
            run.current()
                .map(|i| format!(" {}/{}", i + 1, run.steps.len()))
                .unwrap_or_default(),
            run.batch
                .as_ref()
                .map(|b| format!(
                    " b{}{}",
                    b.batch,
                    b.of.map(|n| format!("/{n}")).unwrap_or_default()
                ))
                .unwrap_or_default()
        );
        out.push((
            weight,
            vec![
                Span::styled(full, style),
                Span::raw(SHORT_MARK),
                Span::styled(short, style),
            ],
        ));
    }
    if model.paused {
        out.push((8, vec![Span::styled("⏸ paused", t.warn)]));
    }
    if model.replay.is_none() {
        out.push((KEEP, vec![clock]));
    }
    let k = &model.keymap;
    let d = Mode::Dashboard;
    match &model.replay {
        Some(r) => out.push((KEEP, vec![Span::styled(r.hints.clone(), t.muted)])),
        None => {
            out.push((
                KEEP,
                vec![Span::styled(
                    format!("{} help", k.hint(d, Action::Help)),
                    t.muted,
                )],
            ));
            // The zoomed panel's own keys.
            if model.zoomed && model.mode == d {
                let hint = format!(
                    "{} back  {} copy  {} graph URL",
                    k.hint(d, Action::Close),
                    k.hint(d, Action::Copy),
                    k.hint(d, Action::GraphUrl)
                );
                out.push((2, vec![Span::styled(hint, t.muted)]));
            }
            out.push((
                1,
                vec![Span::styled(
                    format!(
                        "{} messages  {} quit",
                        k.hint(d, Action::Messages),
                        k.hint(d, Action::Quit)
                    ),
                    t.muted,
                )],
            ));
        }
    }
    out
}

const SEP: &str = " │ ";
/// Between a field's full and short forms (never drawn: the field shows one or the other).
const SHORT_MARK: &str = "\u{0}";

/// A field's spans in its full form, or its short one.
fn form(spans: &[Span<'static>], short: bool) -> Vec<Span<'static>> {
    match spans.iter().position(|s| s.content == SHORT_MARK) {
        Some(i) if short => spans[i + 1..].to_vec(),
        Some(i) => spans[..i].to_vec(),
        None => spans.to_vec(),
    }
}

/// How a role's style shows on the bar: on a bar with its own background the bar's
/// foreground is used (a role's colour could vanish on it; the symbols and words stay), on a
/// reversed bar the role's colour, reversed.
pub fn on_bar(role: Style, bar: Style) -> Style {
    if bar.bg.is_some_and(|c| c != ratatui::style::Color::Reset) {
        Style {
            fg: None,
            bg: None,
            ..role
        }
    } else {
        role
    }
}

fn width(fields: &[(u8, Vec<Span>)]) -> usize {
    1 + fields
        .iter()
        .map(|(_, sp)| sp.iter().map(ratatui::prelude::Span::width).sum::<usize>())
        .sum::<usize>()
        + SEP.chars().count() * fields.len().saturating_sub(1)
}

/// The bar's fields that fit `cols`: the least important dropped first (the last of equals
/// first), never a `KEEP` one; fields with a short form take it before anything important
/// goes; then what was dropped and fits in the room left comes back, the most important
/// first (a long field gone can leave room for a shorter one dropped before it).
fn fit(fields: Vec<(u8, Vec<Span<'static>>)>, cols: usize) -> Vec<(u8, Vec<Span<'static>>)> {
    let full: Vec<_> = fields.iter().map(|(w, s)| (*w, form(s, false))).collect();
    let short: Vec<_> = fields.iter().map(|(w, s)| (*w, form(s, true))).collect();
    let n = fields.len();
    let pick = |kept: &[bool], short_forms: bool| -> Vec<(u8, Vec<Span<'static>>)> {
        let from = if short_forms { &short } else { &full };
        (0..n)
            .filter(|i| kept[*i])
            .map(|i| from[i].clone())
            .collect()
    };
    let droppable = |i: &usize| full[*i].0 < KEEP;
    let mut kept = vec![true; n];
    let mut short_forms = false;
    while width(&pick(&kept, short_forms)) > cols {
        // Before a field of weight 7 or more goes, the short forms.
        if !short_forms
            && (0..n)
                .filter(|i| kept[*i] && droppable(i))
                .all(|i| full[i].0 >= 7)
            && width(&pick(&kept, true)) < width(&pick(&kept, false))
        {
            short_forms = true;
            continue;
        }
        let Some(i) = (0..n)
            .filter(|i| kept[*i] && droppable(i))
            .min_by_key(|i| (full[*i].0, usize::MAX - i))
        else {
            break;
        };
        kept[i] = false;
    }
    let mut dropped: Vec<usize> = (0..n).filter(|i| !kept[*i]).collect();
    dropped.sort_by_key(|i| (std::cmp::Reverse(full[*i].0), *i));
    for i in dropped {
        kept[i] = true;
        if width(&pick(&kept, short_forms)) > cols {
            kept[i] = false;
        }
    }
    pick(&kept, short_forms)
}

/// The message shown, as it would sit in the bar (its own lines when it does not fit).
pub fn notice_spans(model: &Model) -> Option<Span<'static>> {
    let t = &model.theme;
    model.notice.as_ref().map(|n| {
        let k = model.keymap.hint(Mode::Dashboard, Action::Close);
        let text = if n.until.is_none() {
            format!("{} ({k} dismisses)", n.text)
        } else {
            n.text.clone()
        };
        Span::styled(text, if n.warning { t.warn } else { t.accent })
    })
}

/// The rows the message needs above the bar when it does not fit in it (0 when it does, or
/// there is none), at most `max`.
pub fn notice_rows(model: &Model, cols: u16, max: u16) -> u16 {
    let Some(n) = notice_spans(model) else {
        return 0;
    };
    let room = cols as usize;
    let bar = width(&fit(fields(model), room));
    if bar + SEP.chars().count() + n.width() <= room {
        return 0;
    }
    (n.width().div_ceil(room.max(1)) as u16).clamp(1, max)
}

/// Draw the status bar into its one line; the message goes in the bar when it fits, else on
/// its own wrapped lines in `above` (as many as [`notice_rows`] asked for).
pub fn draw(frame: &mut Frame, area: Rect, model: &Model) {
    let t = &model.theme;
    let cols = usize::from(area.width);
    let mut fields = fit(fields(model), cols);
    if let Some(n) = notice_spans(model)
        && width(&fields) + SEP.chars().count() + n.width() <= cols
    {
        // In the bar, after the source (where the eye starts).
        let at = 2.min(fields.len());
        fields.insert(at, (KEEP, vec![n]));
    } else if let Some(n) = notice_spans(model) {
        let rows = notice_rows(model, area.width, 3);
        if rows > 0 && area.y >= rows {
            let above = Rect {
                x: area.x,
                y: area.y - rows,
                width: area.width,
                height: rows,
            };
            frame.render_widget(ratatui::widgets::Clear, above);
            frame.render_widget(
                Paragraph::new(Line::from(vec![n]))
                    .wrap(ratatui::widgets::Wrap { trim: false })
                    .style(t.status_bar),
                above,
            );
        }
    }
    let mut spans = vec![Span::raw(" ")];
    for (i, (_, sp)) in fields.into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(SEP, on_bar(t.muted, t.status_bar)));
        }
        spans.extend(sp.into_iter().map(|s| {
            let style = on_bar(s.style, t.status_bar);
            s.style(style)
        }));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)).style(t.status_bar), area);
}

/// The incident shared through an engine, in words: how many responders write to it and how
/// many of this console's records wait; or that the engine is out of reach (true: a warning).
pub fn engine(model: &Model) -> Option<(String, bool)> {
    use crate::share::session::News;
    let plural = |n: usize, one: &str| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {one}s"),
    };
    match model.engine.as_ref()? {
        News::Shared { responders, unsent } => Some((
            format!(
                "⇄ shared · {} · {unsent} unsent",
                plural(*responders, "responder")
            ),
            false,
        )),
        News::Unreachable { unsent, .. } => Some((
            format!("✖ engine unreachable · {unsent} unsent, kept here"),
            true,
        )),
        _ => None,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn field(w: u8, text: &str) -> (u8, Vec<Span<'static>>) {
        (w, vec![Span::raw(text.to_string())])
    }

    fn texts(fields: &[(u8, Vec<Span<'static>>)]) -> Vec<String> {
        fields
            .iter()
            .map(|(_, s)| s.iter().map(|s| s.content.to_string()).collect())
            .collect()
    }

    #[test]
    fn the_incident_id_is_on_the_bar_at_every_width_from_80_columns() {
        let mut model = crate::app::Model::new(
            &crate::config::Config::default(),
            crate::theme::Theme::fallback(),
            "embedded · planner-peak 30× · control http://127.0.0.1:9187".into(),
            chrono::Utc::now(),
        );
        model.incident = Some(crate::app::model::IncidentHeader {
            id: "2026-12-04-1".into(),
            title: "Checkout failing".into(),
        });
        for cols in 80..=200 {
            let shown = texts(&fit(fields(&model), cols)).join(" │ ");
            assert!(
                shown.contains("incident 2026-12-04-1"),
                "{cols} columns: {shown}"
            );
            assert!(shown.chars().count() < cols, "{cols} columns: {shown}");
        }
    }

    #[test]
    fn a_source_with_no_panels_is_not_connecting_forever() {
        let config = crate::config::Config::default();
        let now = chrono::Utc::now();
        use crate::theme::Theme;
        let empty = crate::app::Model::new(&config, Theme::fallback(), "p".into(), now);
        let shown = texts(&fields(&empty)).join(" │ ");
        assert!(shown.contains("no panels to query"), "{shown}");
        assert!(!shown.contains("connecting"), "{shown}");
        let with = config.with_panels(crate::metrics::presets::sim_panels());
        let waiting = crate::app::Model::new(&with, Theme::fallback(), "p".into(), now);
        let shown = texts(&fields(&waiting)).join(" │ ");
        assert!(shown.contains("◌ connecting"), "{shown}");
    }

    #[test]
    fn the_least_important_go_first_and_what_fits_again_comes_back() {
        let bar = vec![
            field(6, "prometheus http://prometheus.example:9090"),
            field(KEEP, "● up"),
            field(3, "range 1h"),
            field(KEEP, "2026-07-17 08:30:00 UTC"),
            field(KEEP, "? help"),
            field(1, "m messages  q quit"),
        ];
        let all = width(&bar);
        assert_eq!(texts(&fit(bar.clone(), all)).len(), 6, "everything fits");
        // Room for all but the source: the range (dropped before it) comes back.
        let cols = all
            - "prometheus http://prometheus.example:9090 │ "
                .chars()
                .count();
        let shown = texts(&fit(bar.clone(), cols));
        assert_eq!(
            shown,
            [
                "● up",
                "range 1h",
                "2026-07-17 08:30:00 UTC",
                "? help",
                "m messages  q quit"
            ]
        );
        assert!(width(&fit(bar.clone(), cols)) <= cols);
        // Narrower than the kept fields: they stay, nothing else.
        let shown = texts(&fit(bar, 10));
        assert_eq!(shown, ["● up", "2026-07-17 08:30:00 UTC", "? help"]);
    }
}
