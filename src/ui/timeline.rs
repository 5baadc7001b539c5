//! The incident timeline pane: what the journal has acknowledged as durable, newest first,
//! each row with its record number (what `c` asks for), its time in the configured zone, its
//! source and what happened in words (a runbook step is one row); scrolled with PgUp/PgDn,
//! searched with `/`.
//!
//! ```text
//! ┌ Timeline · 2026-11-29-1 · UTC ──────────────── ✓ durable ┐
//! │#12  07:18:04 metric   ▲ Pool saturation rose above crit… │
//! │#11  07:17:30 runbook  step restart · Restart api → ✓ done │
//! │#9   07:16:40 operator retries look high                   │
//! └──────────────────────────────────────── rows 1-3 of 40 ───┘
//! ```

use crate::app::Model;
use crate::app::panes::timeline::{TimelinePane, Tone, rows};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

/// Draw the timeline pane into `area`.
pub fn draw(frame: &mut Frame, area: Rect, model: &Model) {
    let t = &model.theme;
    let (state, style) = match &model.incident {
        Some(_) => journal_state(model),
        None => ("○ not recording".to_string(), t.muted),
    };
    // The zone always shows (times in the pane carry no zone); the incident's id only when it
    // fits beside the journal's state (the status bar names the incident too).
    let zone = model.now.with_timezone(&model.tz).format("%Z").to_string();
    let title = match &model.incident {
        Some(i) => {
            let full = format!(" Timeline · {} · {zone} ", i.id);
            let room = usize::from(area.width).saturating_sub(4 + state.chars().count() + 2);
            if full.chars().count() <= room {
                full
            } else {
                format!(" Timeline · {zone} ")
            }
        }
        None => format!(" Timeline · {zone} "),
    };
    let mut block = Block::bordered()
        .border_style(t.border)
        .title(Line::styled(title, t.title))
        .title(Line::styled(format!(" {state} "), style).right_aligned());
    if model.timeline_filter.is_some() || model.oldest_first {
        let mut view = Vec::new();
        if let Some(s) = model.timeline_filter {
            view.push(format!("only {s}"));
        }
        view.push(
            if model.oldest_first {
                "oldest first"
            } else {
                "newest first"
            }
            .to_string(),
        );
        block = block.title_bottom(Line::styled(format!(" {} ", view.join(" · ")), t.accent));
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if model.incident.is_none() {
        let mut lines = vec![Line::styled("no incident is being recorded", t.muted)];
        if model.declarable {
            let d = model.keymap.hint(
                crate::keymap::Mode::Dashboard,
                crate::keymap::Action::Declare,
            );
            lines = vec![
                Line::styled(
                    format!(
                        "watching: no incident yet ({d} declares one; so does the first note, status or action)"
                    ),
                    t.muted,
                ),
                Line::styled(
                    format!(
                        "{} threshold crossing(s) seen so far, kept for it at the time they happened",
                        model.pending.len()
                    ),
                    t.text,
                ),
            ];
            // The crossings kept, newest first, as their rows will read once recorded.
            let unit = |p: &str| model.unit_of(p);
            for (_, _, event) in model.pending.iter().rev() {
                let at = match event {
                    crate::incident::Event::ThresholdCrossed { at, .. } => *at,
                    _ => model.now,
                };
                let (text, tone) = crate::app::panes::timeline::describe(event, &unit);
                let style = match tone {
                    Tone::Critical => t.crit,
                    Tone::Bad => t.warn,
                    Tone::Good => t.ok,
                    _ => t.text,
                };
                lines.push(Line::from(vec![
                    Span::styled(format!("{} ", short_time(at, model.tz, false)), t.muted),
                    Span::styled(text, style),
                ]));
            }
        }
        frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
        return;
    }
    let spans_days = match (model.timeline.first(), model.timeline.last()) {
        (Some(a), Some(b)) => {
            a.time.with_timezone(&model.tz).date_naive()
                != b.time.with_timezone(&model.tz).date_naive()
                || a.time.with_timezone(&model.tz).date_naive()
                    != model.now.with_timezone(&model.tz).date_naive()
        }
        _ => false,
    };
    // Other responders' records (through the engine) interleave with this console's by time.
    let merged: std::borrow::Cow<'_, [crate::incident::Record]> = if model.others.is_empty() {
        std::borrow::Cow::Borrowed(&model.timeline)
    } else {
        let mut all: Vec<_> = model
            .timeline
            .iter()
            .chain(&model.others)
            .cloned()
            .collect();
        all.sort_by_key(|r| r.time);
        std::borrow::Cow::Owned(all)
    };
    let all = rows(&merged, &|p| model.unit_of(p));
    let shown = TimelinePane::shown(all, model.timeline_filter, model.oldest_first);
    let pane = &model.timeline_pane;
    let height = usize::from(inner.height);
    // The crossing jumped to (`g`) stays on screen; else the scroll.
    let marked = model
        .jumped
        .and_then(|seq| shown.iter().position(|r| r.seqs.contains(&seq)));
    let start = match marked {
        Some(i) => i.saturating_sub(height / 3),
        None => pane.scroll.min(shown.len().saturating_sub(1)),
    };
    // Record numbers as wide as the largest shown, so the rows line up.
    let seq_w = shown
        .iter()
        .map(|r| r.seq)
        .max()
        .unwrap_or(0)
        .to_string()
        .len();
    let here = crate::incident::store::this_host();
    let authors = several_authors(model);
    let lines: Vec<Line> = shown
        .iter()
        .enumerate()
        .skip(start)
        .take(height.max(1))
        .map(|(i, r)| {
            let mut what_style = match r.tone {
                Tone::Critical => t.crit,
                Tone::Bad => t.warn,
                Tone::Good => t.ok,
                Tone::Running => t.accent,
                Tone::Plain => t.text,
            };
            let mut text = r.text.clone();
            if let Some(by) = r.superseded_by {
                what_style = t.muted.add_modifier(Modifier::CROSSED_OUT);
                text = format!("{text}  (superseded by #{by})");
            }
            let found = pane.matches(r);
            let marked = marked == Some(i);
            let mut spans = vec![
                Span::styled(format!("#{:<w$} ", r.seq, w = seq_w), t.muted),
                Span::styled(short_time(r.time, model.tz, spans_days), t.muted),
                Span::raw(if marked {
                    "▶"
                } else if found {
                    "»"
                } else {
                    " "
                }),
                Span::styled(format!("{:<8}", r.source.to_string()), t.accent),
                Span::raw(" "),
            ];
            // A person's record says who wrote it: several responders share one timeline.
            if authors && r.source == crate::incident::Source::Operator && !r.actor.is_empty() {
                spans.push(Span::styled(
                    format!("{}: ", author(&r.actor, &r.host, &here)),
                    t.muted,
                ));
            }
            spans.push(Span::styled(text, what_style));
            let line = Line::from(spans);
            if marked || found {
                line.patch_style(Style::new().add_modifier(Modifier::REVERSED))
            } else {
                line
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
    // Where the view is, and the search being typed.
    let mut bottom = Vec::new();
    if shown.len() > height {
        bottom.push(format!(
            "rows {}-{} of {}",
            start + 1,
            (start + height).min(shown.len()),
            shown.len()
        ));
    }
    if let Some(f) = &pane.find {
        bottom.push(format!("/{f}"));
    }
    if !bottom.is_empty() {
        let text = format!(" {} ", bottom.join(" · "));
        let w = (text.chars().count() as u16).min(area.width.saturating_sub(2));
        let r = Rect {
            x: area.x + area.width.saturating_sub(w + 1),
            y: area.y + area.height.saturating_sub(1),
            width: w,
            height: 1,
        };
        frame.render_widget(Paragraph::new(Line::styled(text, t.muted)), r);
    }
    if let Some(crate::app::model::Search {
        text: q,
        caret,
        runbooks: false,
        ..
    }) = &model.search
    {
        let r = Rect {
            x: inner.x,
            y: inner.y + inner.height.saturating_sub(1),
            width: inner.width,
            height: 1.min(inner.height),
        };
        let mut spans = vec![Span::styled("/", t.accent)];
        spans.extend(super::dialog::edited(q, *caret, true, t));
        spans.push(Span::styled("  enter finds · esc cancels", t.muted));
        frame.render_widget(ratatui::widgets::Clear, r);
        frame.render_widget(Paragraph::new(Line::from(spans)), r);
    }
}

/// Whether people's records say who wrote them: when more than one person (or host) wrote to
/// this timeline, or when this console follows another's.
fn several_authors(model: &Model) -> bool {
    let mut people = model
        .timeline
        .iter()
        .filter(|r| r.source == crate::incident::Source::Operator)
        .map(|r| (&r.actor, &r.host));
    let first = people.next();
    model.sharing.following() || people.any(|p| Some(p) != first)
}

/// The author of a record: its actor, with its host when that is another machine.
fn author(actor: &str, host: &str, here: &str) -> String {
    if host.is_empty() || host == here {
        actor.to_string()
    } else {
        format!("{actor}@{host}")
    }
}

/// `07:18:04`, or `07-17 07:18` when the incident spans days (the zone is in the title).
fn short_time(at: chrono::DateTime<chrono::Utc>, tz: chrono_tz::Tz, with_date: bool) -> String {
    let local = at.with_timezone(&tz);
    if with_date {
        local.format("%m-%d %H:%M").to_string()
    } else {
        local.format("%H:%M:%S").to_string()
    }
}

/// The journal's state in words: durable, recording, or not durable.
pub fn journal_state(model: &Model) -> (String, ratatui::style::Style) {
    let t = &model.theme;
    if model.journal_error.is_some() {
        ("✖ NOT DURABLE".into(), t.failing)
    } else if model.recording > 0 {
        (format!("… recording {}", model.recording), t.loading)
    } else {
        ("✓ durable".into(), t.ok)
    }
}
