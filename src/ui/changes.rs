//! The Changes pane: GitHub's deployments, releases and merged pull requests on the incident's
//! timeline, newest first, each with its time in the configured zone, kind, repository, who,
//! what, and its link shortened.
//!
//! ```text
//! ┌ Changes · acme/api ───────────────── UTC ┐
//! │09:40 deploy  acme/api  ana               │
//! │  deploy production main@abcdef1: plann…  │
//! │  ↗ ci.example/deploy/11                  │
//! └──────────────────────────────────────────┘
//! ```

use crate::app::Model;
use crate::app::panes::changes::{ChangeRow, rows, short_link};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

/// Draw the Changes pane into `area`.
pub fn draw(frame: &mut Frame, area: Rect, model: &Model) {
    let t = &model.theme;
    let watched = match &model.changes.watching {
        Some(w) if !w.is_empty() => format!(" Changes · {} ", w.join(", ")),
        _ => " Changes ".to_string(),
    };
    let zone = model.now.with_timezone(&model.tz).format("%Z").to_string();
    let mut block = Block::bordered()
        .border_style(t.border)
        .title(Line::styled(watched, t.title))
        .title(Line::styled(format!(" {zone} "), t.muted).right_aligned());
    if let Some(trouble) = &model.changes.trouble {
        block = block.title_bottom(Line::styled(format!(" ✖ GitHub: {trouble} "), t.warn));
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let list = rows(&model.timeline);
    if list.is_empty() {
        let text = match &model.changes.watching {
            None => vec![
                Line::styled("[github] is not configured:", t.muted),
                Line::styled("add watch = [\"owner/name\"] under [github]", t.muted),
                Line::styled("in warroom.toml to see deploys here", t.muted),
            ],
            Some(w) if w.is_empty() => vec![
                Line::styled("no repositories watched:", t.muted),
                Line::styled("add watch = [\"owner/name\"] under [github]", t.muted),
            ],
            Some(w) => vec![
                Line::styled(format!("watching {}", w.join(", ")), t.muted),
                Line::styled(
                    "no deployments, releases or merged pull requests yet",
                    t.muted,
                ),
            ],
        };
        frame.render_widget(Paragraph::new(text), inner);
        return;
    }
    let today = model.now.with_timezone(&model.tz).date_naive();
    let width = usize::from(inner.width);
    // Enough for the pane even if no line wraps; what does not fit is cut at the bottom.
    let lines: Vec<Line> = list
        .iter()
        .flat_map(|r| lines_of(r, model, today, width))
        .take(usize::from(inner.height))
        .collect();
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

/// A change in two or three lines: when, kind, repository, who; what; its link.
fn lines_of<'a>(
    r: &ChangeRow<'a>,
    model: &Model,
    today: chrono::NaiveDate,
    width: usize,
) -> Vec<Line<'a>> {
    let t = &model.theme;
    let local = r.at.with_timezone(&model.tz);
    let time = if local.date_naive() == today {
        local.format("%H:%M").to_string()
    } else {
        local.format("%m-%d %H:%M").to_string()
    };
    let mut lines = vec![
        Line::from(vec![
            Span::styled(time, t.muted),
            Span::raw(" "),
            Span::styled(format!("{:<7}", r.kind.word()), t.accent),
            Span::raw(" "),
            Span::styled(r.repo.to_string(), t.text),
            Span::raw("  "),
            Span::styled(r.who.to_string(), t.muted),
        ]),
        Line::styled(format!("  {}: {}", r.reference, r.title), t.text),
    ];
    if let Some(url) = r.url {
        lines.push(Line::styled(
            format!("  ↗ {}", short_link(url, width.saturating_sub(4).max(8))),
            t.muted,
        ));
    }
    lines
}
