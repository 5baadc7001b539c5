//! Sizes and grids, shared by the view and by `update` (which needs plot widths to choose
//! query steps and the grid's columns to move between panels).

use ratatui::layout::{Constraint, Layout, Rect};

/// Below this the console shows a "too small" message instead of panels.
pub const MIN_WIDTH: u16 = 40;
pub const MIN_HEIGHT: u16 = 10;
/// Whether a terminal of this size is too small to show anything but the "too small" note
/// (then no key but quit acts: nothing would show its effect).
pub fn too_small(width: u16, height: u16) -> bool {
    width < MIN_WIDTH || height < MIN_HEIGHT
}

/// A panel is never drawn shorter than this (border, value line, two chart rows).
pub const MIN_PANEL_HEIGHT: u16 = 5;
/// Columns taken by the y-axis labels and borders of a chart.
const CHART_CHROME: u16 = 10;

/// How many panels side by side at this width.
pub fn grid_columns(width: u16) -> usize {
    match width {
        0..=69 => 1,
        70..=139 => 2,
        140..=199 => 3,
        _ => 4,
    }
}

/// The main area and the one-line status bar below it.
pub fn split_status(area: Rect) -> (Rect, Rect) {
    let status = area.height.min(1);
    let main = Rect {
        height: area.height - status,
        ..area
    };
    let status = Rect {
        y: main.bottom(),
        height: status,
        ..area
    };
    (main, status)
}

/// The first row of `area` and the rest below it (what a vertical layout of `Length(1)` and
/// `Min(0)` gives, without a constraint solver: ratatui caches solved layouts, but on the first
/// frame every one is new, and solving them was a third of its time).
pub fn top_row(area: Rect) -> (Rect, Rect) {
    let top = Rect {
        height: area.height.min(1),
        ..area
    };
    let rest = Rect {
        y: top.bottom(),
        height: area.height - top.height,
        ..area
    };
    (top, rest)
}

/// How a panel is on screen, as the view reports it to `update` (which fetches by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Showing {
    /// Drawn with its chart: range queries at the plot's resolution.
    Chart,
    /// One row of the compact form: its value and a sparkline.
    Row,
    /// Not on screen: only its latest value is read, for the threshold crossings.
    Hidden,
}

/// The sparkline of a one-row panel, in cells.
pub const SPARKLINE_CELLS: u16 = 12;

/// Below this width the side panes cannot sit beside the panels.
pub const SIDE_BY_SIDE_WIDTH: u16 = 100;
/// Below this height (of the main area) the side panes cannot sit under the panels.
pub const STACKED_HEIGHT: u16 = 30;

/// What is on screen besides the panels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Shown {
    /// The runbook pane (`focused`: it has the keys).
    pub runbooks: bool,
    pub focused: bool,
    pub timeline: bool,
    pub changes: bool,
}

/// Where everything goes in the main area (above the status bar).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Areas {
    /// The one-line summary of what is wrong, at the top.
    pub summary: Option<Rect>,
    pub panels: Option<Rect>,
    pub runbooks: Option<Rect>,
    pub timeline: Option<Rect>,
    pub changes: Option<Rect>,
    /// The screen holds the panels and the runbook pane together.
    pub together: bool,
}

/// Lay out the main area. The side panes (the runbook pane first, then the timeline and the
/// Changes pane) sit beside the panels when the width allows, under them when the height does;
/// on a smaller screen one of them takes the area: the runbook pane when it has the keys, else
/// the timeline or Changes when shown, else the panels.
///
/// ```text
/// ┌ what's wrong ─────────────────────────────────────────┐
/// │ panels (a run's gate panels first) │ runbook pane      │
/// │                                     ├──────────────────┤
/// │                                     │ timeline/changes │
/// └───────────────────────────────────────────────────────┘
/// ```
pub fn areas(main: Rect, shown: Shown) -> Areas {
    let mut a = Areas::default();
    let main = if main.height >= 12 {
        let (top, rest) = top_row(main);
        a.summary = Some(top);
        rest
    } else {
        main
    };
    let side: Vec<u8> = [
        (shown.runbooks, 0u8),
        (shown.timeline, 1),
        (shown.changes, 2),
    ]
    .into_iter()
    .filter_map(|(on, k)| on.then_some(k))
    .collect();
    if side.is_empty() {
        a.panels = Some(main);
        return a;
    }
    let (panels, rest) = if main.width >= SIDE_BY_SIDE_WIDTH {
        // The pane with the keys gets more of the width (a plan is read there).
        let w = if shown.focused {
            (main.width * 3 / 5).clamp(50, 120)
        } else if shown.runbooks {
            (main.width / 2).clamp(50, 100)
        } else {
            (main.width / 3).clamp(40, 70)
        };
        let [p, s] = Layout::horizontal([Constraint::Min(0), Constraint::Length(w)]).areas(main);
        (Some(p), s)
    } else if main.height >= STACKED_HEIGHT {
        let h = (main.height * 2 / 5).max(10);
        let [p, s] = Layout::vertical([Constraint::Length(h), Constraint::Min(0)]).areas(main);
        (Some(p), s)
    } else {
        // One at a time: what has the keys, else what was asked for.
        let only = if shown.focused || !(shown.timeline || shown.changes) {
            if shown.focused { vec![0u8] } else { vec![] }
        } else {
            side.iter().copied().filter(|k| *k != 0).collect()
        };
        if only.is_empty() {
            a.panels = Some(main);
            return a;
        }
        place(&mut a, main, &only, shown.focused);
        return a;
    };
    a.panels = panels;
    a.together = shown.runbooks;
    place(&mut a, rest, &side, shown.focused);
    a
}

/// Stack the side panes `which` (0 runbooks, 1 timeline, 2 changes) in `area`: the runbook
/// pane takes the larger part.
fn place(a: &mut Areas, area: Rect, which: &[u8], focused: bool) {
    let constraints: Vec<Constraint> = which
        .iter()
        .map(|k| match (k, which.len()) {
            (_, 1) => Constraint::Min(0),
            (0, _) if focused => Constraint::Percentage(75),
            (0, _) => Constraint::Percentage(60),
            _ => Constraint::Min(0),
        })
        .collect();
    let rects = Layout::vertical(constraints).split(area);
    for (k, r) in which.iter().zip(rects.iter()) {
        match k {
            0 => a.runbooks = Some(*r),
            1 => a.timeline = Some(*r),
            _ => a.changes = Some(*r),
        }
    }
}

/// The plot width of one panel in terminal columns, for choosing query steps.
pub fn plot_columns(width: u16, panels: usize, zoomed: bool) -> u16 {
    let cols = if zoomed {
        1
    } else {
        grid_columns(width).min(panels.max(1))
    };
    (width / cols as u16).saturating_sub(CHART_CHROME).max(1)
}

/// Rectangles for `n` panels in `area`, and the index of the first panel shown: when not all
/// rows fit at [`MIN_PANEL_HEIGHT`], a window of rows around `selected` is shown.
pub fn grid(area: Rect, n: usize, selected: usize) -> (Vec<Rect>, usize) {
    if n == 0 || area.height == 0 || area.width == 0 {
        return (Vec::new(), 0);
    }
    let cols = grid_columns(area.width).min(n);
    let rows_needed = n.div_ceil(cols);
    let rows_fit = usize::from((area.height / MIN_PANEL_HEIGHT).max(1));
    let rows = rows_needed.min(rows_fit);
    let selected_row = selected.min(n - 1) / cols;
    let first_row = selected_row
        .saturating_sub(rows - 1)
        .min(rows_needed - rows);
    let mut rects = Vec::new();
    for (r, (y, height)) in even(area.height, rows).into_iter().enumerate() {
        let first = (first_row + r) * cols;
        let in_row = cols.min(n.saturating_sub(first));
        let cells = even(area.width, cols).into_iter().take(in_row);
        rects.extend(cells.map(|(x, width)| Rect {
            x: area.x + x,
            y: area.y + y,
            width,
            height,
        }));
    }
    (rects, first_row * cols)
}

/// `total` cut into `n` parts as even as whole cells allow, as (offset, length): what a layout
/// of `n` equal `Ratio` constraints gives (a test holds the two equal), without solving one.
/// The grid's splits are new on the first frame, and the solver was most of its time.
fn even(total: u16, n: usize) -> Vec<(u16, u16)> {
    let edge = |i: usize| (f64::from(total) * i as f64 / n as f64).round() as u16;
    (0..n).map(|i| (edge(i), edge(i + 1) - edge(i))).collect()
}

/// A centred rectangle of at most `w`×`h` inside `area`.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_selected_panel_is_always_in_the_grid() {
        for h in [5u16, 9, 12, 23, 40] {
            for w in [40u16, 80, 150, 220] {
                for sel in 0..8 {
                    let (rects, first) = grid(Rect::new(0, 0, w, h), 8, sel);
                    assert!(
                        first <= sel && sel < first + rects.len(),
                        "{w}x{h} sel {sel}"
                    );
                }
            }
        }
    }

    #[test]
    fn even_parts_are_the_ones_a_ratio_layout_gives() {
        for n in 1..=6usize {
            for total in 0..=420u16 {
                let area = Rect::new(3, 2, total, total);
                let ratios = vec![Constraint::Ratio(1, n as u32); n];
                let solved: Vec<(u16, u16)> = (Layout::horizontal(ratios).split(area).iter())
                    .map(|r| (r.x - area.x, r.width))
                    .collect();
                assert_eq!(even(total, n), solved, "{total} cells in {n}");
            }
        }
    }

    #[test]
    fn a_row_and_the_rest_are_what_the_layout_gives() {
        for h in 0..=5u16 {
            let area = Rect::new(1, 4, 30, h);
            let [top, rest] =
                Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
            assert_eq!(top_row(area), (top, rest), "height {h}");
            let [main, status] =
                Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
            assert_eq!(split_status(area), (main, status), "height {h}");
        }
    }

    #[test]
    fn a_tall_screen_shows_every_panel() {
        let (rects, first) = grid(Rect::new(0, 0, 120, 39), 8, 0);
        assert_eq!((rects.len(), first), (8, 0));
    }
}
