//! The incident timeline pane: what the journal has acknowledged as durable, newest first,
//! each line with its time in the configured zone, its source and what happened.
//!
//! ```text
//! ┌ Timeline · 2026-11-29-1 ─────── ✓ durable ┐
//! │07:18:04 metric   Pool saturation ▲ crit … │
//! │07:16:40 operator note: retries look high  │
//! └───────────────────────────────────────────┘
//! ```

use crate::app::Model;
use crate::incident::Event;
use crate::incident::event::Direction;
use crate::incident::timeline::describe;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

/// Draw the timeline pane into `area`.
pub fn draw(frame: &mut Frame, area: Rect, model: &Model) {
    let t = &model.theme;
    let (state, style) = journal_state(model);
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
        frame.render_widget(
            Paragraph::new(Line::styled("no incident is being recorded", t.muted)),
            inner,
        );
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
    let shown = model
        .timeline
        .iter()
        .filter(|r| model.timeline_filter.is_none_or(|s| r.source == s));
    let ordered: Box<dyn Iterator<Item = &crate::incident::Record>> = if model.oldest_first {
        Box::new(shown)
    } else {
        Box::new(shown.rev())
    };
    // The crossing jumped to (`g`) stays on screen: the list starts late enough to show it.
    let height = usize::from(inner.height);
    let marked = model.jumped.and_then(|seq| {
        let mut shown = model
            .timeline
            .iter()
            .filter(|r| model.timeline_filter.is_none_or(|s| r.source == s));
        let i = shown.position(|r| r.seq == seq)?;
        Some(if model.oldest_first { i } else { shown.count() })
    });
    let start = marked.map_or(0, |i| (i + 1).saturating_sub(height));
    let here = crate::incident::store::this_host();
    let authors = several_authors(model);
    let build = marked.map_or(height, |i| (i + 1 - start).max(height));
    let mut lines: Vec<Line> = ordered
        .skip(start)
        .take(build)
        .map(|r| {
            let what_style = match &r.kind {
                Event::ThresholdCrossed {
                    direction: Direction::Up,
                    ..
                } => t.warn,
                Event::ThresholdCrossed { .. } => t.ok,
                Event::AlertFiring { .. } => t.crit,
                _ => t.text,
            };
            let marked = model.jumped == Some(r.seq);
            let mut spans = vec![
                Span::styled(short_time(r.time, model.tz, spans_days), t.muted),
                Span::raw(if marked { "▶" } else { " " }),
                Span::styled(format!("{:<8}", r.source.to_string()), t.accent),
                Span::raw(" "),
            ];
            // A person's record says who wrote it: several responders share one timeline.
            if authors && r.source == crate::incident::Source::Operator && !r.actor.is_empty() {
                spans.push(Span::styled(format!("{}: ", author(r, &here)), t.muted));
            }
            spans.push(Span::styled(describe(&r.kind), what_style));
            let line = Line::from(spans);
            if marked {
                line.patch_style(Style::new().add_modifier(Modifier::REVERSED))
            } else {
                line
            }
        })
        .collect();
    // Long records wrap onto more rows: drop rows from the top until the marked one fits.
    if let Some(i) = marked.map(|i| i - start) {
        let rows = |l: &Line| l.width().max(1).div_ceil(usize::from(inner.width.max(1)));
        let mut used: usize = lines[..=i].iter().map(rows).sum();
        let mut drop = 0;
        while used > height && drop < i {
            used -= rows(&lines[drop]);
            drop += 1;
        }
        lines.drain(..drop);
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
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
fn author(r: &crate::incident::Record, here: &str) -> String {
    if r.host.is_empty() || r.host == here {
        r.actor.clone()
    } else {
        format!("{}@{}", r.actor, r.host)
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
