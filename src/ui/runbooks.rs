//! The runbook pane: the list on the left (broken files marked, with their error; one that
//! cannot act or be prepared here dimmed, the detail saying why), and on the
//! right the plan of the selected runbook, or the run's live progress.
//!
//! ```text
//! ┌ Runbooks ─────────┐┌ Run · pool-exhaustion ─────────── ▶ running ┐
//! │  batch-restart    ││ ✓ rollback      http  Roll back · HTTP 200   │
//! │▸ pool-exhaustion  ││ ▶ restart       batch Restart in batches     │
//! │✖ broken           ││     batch 2/4: api-3, api-4 · 1 healthy      │
//! └───────────────────┘└──────────────────────────────────────────────┘
//! ```

use crate::app::Model;
use crate::app::panes::run::{RunPane, StepMark};
use crate::keymap::{Action, Mode};
use crate::runbook::catalog::Entry;
use crate::runbook::executor::Control;
use crate::runbook::report::{RunOutcome, StepOutcome};
use crate::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

/// Draw the pane into `area`.
pub fn draw(frame: &mut Frame, area: Rect, model: &Model) {
    if area.width < 4 || area.height < 4 {
        return;
    }
    frame.render_widget(Clear, area);
    let pane = &model.runbooks;
    let entries: &[Entry] = pane.entries.as_deref().unwrap_or(&[]);
    let [list, detail] = if area.width >= 70 {
        // As wide as the longest name with its marks, within two fifths of the pane.
        let longest = (entries.iter().map(|e| e.name().chars().count()).max()).unwrap_or(0);
        let w = (longest as u16 + 6).clamp(22, (area.width * 2 / 5).max(22));
        Layout::horizontal([Constraint::Length(w), Constraint::Min(0)]).areas(area)
    } else {
        let h = (entries.len() as u16 + 2).clamp(3, (area.height / 3).max(3));
        Layout::vertical([Constraint::Length(h), Constraint::Min(0)]).areas(area)
    };
    draw_list(frame, list, model, entries);
    draw_detail(frame, detail, model);
}

/// Whether the pane has the keys (else the dashboard beside it has them).
fn focused(model: &Model) -> bool {
    model.shown().focused
}

fn draw_list(frame: &mut Frame, area: Rect, model: &Model, entries: &[Entry]) {
    let t = &model.theme;
    let pane = &model.runbooks;
    let block = Block::bordered()
        .border_style(if pane.plan.is_none() && focused(model) {
            t.border_focus
        } else {
            t.border
        })
        .title(Line::styled(" Runbooks ", t.title));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if pane.entries.is_none() {
        frame.render_widget(Paragraph::new(Line::styled("loading…", t.loading)), inner);
        return;
    }
    // The filter's line at the bottom while it is typed or kept.
    let typing = (model.search.as_ref()).filter(|s| s.runbooks);
    let inner = match (typing, &pane.filter) {
        (None, None) => inner,
        _ => filter_line(frame, inner, model, typing),
    };
    let shown = pane.visible();
    if shown.is_empty() {
        let none = Line::styled("no runbook matches (esc clears)", t.muted);
        frame.render_widget(Paragraph::new(none), inner);
        return;
    }
    let rows = usize::from(inner.height).max(1);
    let at = shown.iter().position(|i| *i == pane.selected).unwrap_or(0);
    let first = at.saturating_sub(rows - 1);
    let lines: Vec<Line> = (shown.iter().skip(first).take(rows))
        .filter_map(|i| entries.get(*i).map(|e| (*i, e)))
        .map(|(i, e)| {
            let sel = i == pane.selected;
            let marker = if sel { "▸ " } else { "  " };
            let running = pane
                .active()
                .is_some_and(|r| r.runbook == e.name() && e.runbook().is_some());
            let (sym, style) = match e {
                Entry::Broken { .. } => ("✖ ", t.failing),
                Entry::Ready(_) if running => ("▶ ", t.accent),
                // One that cannot act here stays listed, dimmed (the detail says why).
                Entry::Ready(_) if not_here(model, e).is_some() => ("○ ", t.muted),
                Entry::Ready(_) => ("", t.text),
            };
            let style = if sel { t.selection } else { style };
            Line::from(vec![
                Span::styled(marker, t.accent),
                Span::styled(format!("{sym}{}", e.name()), style),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The filter's line at the bottom of `inner` (being typed, with its caret, or kept); the rest
/// of `inner` is returned for the list.
fn filter_line(
    frame: &mut Frame,
    inner: Rect,
    model: &Model,
    typing: Option<&crate::app::model::Search>,
) -> Rect {
    let t = &model.theme;
    let [list, line] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(1.min(inner.height))])
            .areas(inner);
    let mut spans = vec![Span::styled("/", t.accent)];
    match typing {
        Some(s) => spans.extend(super::dialog::edited(&s.text, s.caret, true, t)),
        None => spans.push(Span::styled(
            model.runbooks.filter.clone().unwrap_or_default(),
            t.text,
        )),
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), line);
    list
}

/// Why `e` cannot act here: where it acts, or its variables.
fn not_here(model: &Model, e: &Entry) -> Option<String> {
    e.not_here(model.rehearsal, &model.runbooks.unresolved)
}

fn hints(model: &Model) -> String {
    let k = &model.keymap;
    let m = Mode::Runbooks;
    if !focused(model) {
        return format!(
            " {} pane keys (the dashboard has them now) ",
            k.hint(Mode::Dashboard, Action::Runbooks)
        );
    }
    let mut parts = vec![
        format!("{} plan", k.hint(m, Action::Open)),
        format!("{} run", k.hint(m, Action::Run)),
        format!("{} filter", k.hint(m, Action::Search)),
    ];
    let run = model.runbooks.run.as_ref();
    if model.runbooks.active().is_some() {
        parts.push(format!("{} hold", k.hint(m, Action::PauseRun)));
        parts.push(format!("{} abort", k.hint(m, Action::AbortRun)));
    } else if run
        .is_some_and(|r| matches!(r.outcome, Some(RunOutcome::Aborted | RunOutcome::Failed)))
    {
        parts.push(format!("{} resume", k.hint(m, Action::ResumeRun)));
    }
    parts.push(format!("{} back", k.hint(m, Action::Close)));
    parts.push(format!("{} panels", k.hint(m, Action::Runbooks)));
    format!(" {} ", parts.join(" · "))
}

fn draw_detail(frame: &mut Frame, area: Rect, model: &Model) {
    let t = &model.theme;
    let pane = &model.runbooks;
    let (title, state, lines, scroll): (String, Option<(String, Style)>, Vec<Line>, u16) =
        if let Some(plan) = &pane.plan {
            let lines = match &plan.lines {
                None => vec![Line::styled(
                    "preparing the plan (variables, targets)…",
                    t.loading,
                )],
                Some(Err(e)) => vec![
                    Line::styled("✖ the plan cannot be made", t.failing),
                    Line::styled(e.clone(), t.text),
                ],
                Some(Ok(l)) => l.iter().map(|x| Line::styled(x.clone(), t.text)).collect(),
            };
            (format!(" Plan · {} ", plan.name), None, lines, plan.scroll)
        } else if let Some(run) = &pane.run {
            (
                format!(" Run · {} ", run.runbook),
                Some(run_state(run, t)),
                run_lines(run, t, usize::from(area.height.saturating_sub(2))),
                0,
            )
        } else {
            match pane.entry() {
                Some(e) => {
                    let mut lines = entry_lines(e, t);
                    if let Some(why) = not_here(model, e) {
                        lines.insert(0, Line::styled(format!("○ {why}"), t.warn));
                    }
                    (format!(" {} ", e.name()), None, lines, 0)
                }
                None => (" Runbook ".into(), None, vec![], 0),
            }
        };
    let mut block = Block::bordered()
        .border_style(if pane.plan.is_some() && focused(model) {
            t.border_focus
        } else {
            t.border
        })
        .title(Line::styled(title, t.title))
        .title_bottom(Line::styled(hints(model), t.muted));
    if let Some((s, style)) = state {
        block = block.title(Line::styled(format!(" {s} "), style).right_aligned());
    }
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0)),
        area,
    );
}

fn entry_lines(e: &Entry, t: &Theme) -> Vec<Line<'static>> {
    match e {
        Entry::Broken { file, error } => {
            let mut l = vec![Line::styled(
                format!("✖ {file} does not load; the others are usable:"),
                t.failing,
            )];
            l.extend(error.lines().map(|x| Line::styled(x.to_string(), t.text)));
            l
        }
        Entry::Ready(rb) => {
            let mut l: Vec<Line> = rb
                .description
                .split("\n\n")
                .map(|p| {
                    Line::styled(
                        crate::sanitize::line(&p.split_whitespace().collect::<Vec<_>>().join(" "))
                            .into_owned(),
                        t.text,
                    )
                })
                .collect();
            l.push(Line::raw(""));
            for s in &rb.steps {
                l.push(Line::from(vec![
                    Span::styled(format!("  {:<20}", s.id), t.accent),
                    Span::styled(format!("{:<7}", s.kind.name()), t.muted),
                    Span::styled(if s.mutating { "changes " } else { "        " }, t.warn),
                    Span::styled(title_with_defaults(rb, s), t.text),
                ]));
            }
            l
        }
    }
}

/// A step's title with the variables' defaults filled in (the plan shows the values a run
/// will use), so the list never shows `{{service}}`.
fn title_with_defaults(
    rb: &crate::runbook::model::Runbook,
    s: &crate::runbook::model::Step,
) -> String {
    let values = (rb.variables.iter())
        .filter(|v| !v.secret)
        .filter_map(|v| Some((v.name.clone(), v.default.clone()?)))
        .collect();
    crate::sanitize::line(&s.title_rendered(&values)).into_owned()
}

/// The run's state in words, with its symbol.
pub fn run_state(run: &RunPane, t: &Theme) -> (String, Style) {
    match (run.outcome, run.control) {
        (Some(RunOutcome::Succeeded), _) => ("✓ succeeded".into(), t.ok),
        (Some(RunOutcome::DryRun), _) => ("✓ dry run".into(), t.ok),
        (Some(RunOutcome::Failed), _) => ("✖ failed".into(), t.failing),
        (Some(RunOutcome::Aborted), _) => ("■ aborted".into(), t.warn),
        (None, Control::Abort) => ("■ aborting…".into(), t.warn),
        (None, Control::Pause) => ("‖ held".into(), t.warn),
        (None, Control::Run) => ("▶ running".into(), t.accent),
    }
}

fn mark(m: StepMark, t: &Theme) -> (&'static str, Style) {
    match m {
        StepMark::Pending => ("·", t.muted),
        StepMark::Running => ("▶", t.accent),
        StepMark::Done(StepOutcome::Succeeded) => ("✓", t.ok),
        StepMark::Done(StepOutcome::Skipped) => ("–", t.muted),
        StepMark::Done(StepOutcome::Declined | StepOutcome::Cancelled) => ("■", t.warn),
        StepMark::Done(StepOutcome::Failed | StepOutcome::TimedOut) => ("✖", t.failing),
    }
}

fn run_lines(run: &RunPane, t: &Theme, height: usize) -> Vec<Line<'static>> {
    let mut l = vec![Line::styled(format!("run {}", run.run_id), t.muted)];
    for s in &run.steps {
        let (sym, style) = mark(s.mark, t);
        let detail = if s.detail.is_empty() {
            String::new()
        } else {
            format!(" · {}", crate::runbook::journal::detail::words(&s.detail))
        };
        l.push(Line::from(vec![
            Span::styled(format!("{sym} "), style),
            Span::styled(format!("{:<20}", s.id), t.accent),
            Span::styled(format!("{:<7}", s.kind), t.muted),
            Span::styled(format!("{}{detail}", s.title), t.text),
        ]));
        if s.mark == StepMark::Running {
            if let Some(b) = run.batch.as_ref().filter(|b| b.step == s.id) {
                let of = b.of.map(|n| format!("/{n}")).unwrap_or_default();
                l.push(Line::styled(
                    format!(
                        "    batch {}{of}: {} · {} healthy · {} lost",
                        b.batch,
                        b.targets.join(", "),
                        b.healthy,
                        b.lost
                    ),
                    t.text,
                ));
            }
            if let Some((_, reading, verdict)) = run.gate.as_ref().filter(|g| g.0 == s.id) {
                l.push(Line::styled(
                    format!(
                        "    gate reads {} → {}",
                        crate::runbook::journal::detail::verdict(reading),
                        crate::runbook::journal::detail::verdict(verdict)
                    ),
                    t.muted,
                ));
            }
        }
    }
    if let Some(w) = &run.waiting {
        l.push(Line::styled(format!("waiting for you: {w}"), t.warn));
    }
    if !run.output.is_empty() {
        l.push(Line::styled("output (newest last):", t.muted));
        let room = height.saturating_sub(l.len()).max(1);
        let skip = run.output.len().saturating_sub(room);
        for o in run.output.iter().skip(skip) {
            l.push(Line::styled(format!("  | {o}"), t.text));
        }
    }
    l
}
