//! Sizes and grids, shared by the view and by `update` (which needs plot widths to choose
//! query steps and the grid's columns to move between panels).

use ratatui::layout::{Constraint, Layout, Rect};

/// Below this the console shows a "too small" message instead of panels.
pub const MIN_WIDTH: u16 = 40;
pub const MIN_HEIGHT: u16 = 10;
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
    let [main, status] = Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
    (main, status)
}

/// Split the main area between the panels and the timeline pane: beside them when there is
/// room, instead of them on a narrow terminal.
pub fn split_timeline(main: Rect, show: bool) -> (Option<Rect>, Option<Rect>) {
    if !show {
        return (Some(main), None);
    }
    if main.width < 100 {
        return (None, Some(main));
    }
    let side = (main.width / 3).clamp(40, 70);
    let [panels, timeline] =
        Layout::horizontal([Constraint::Min(0), Constraint::Length(side)]).areas(main);
    (Some(panels), Some(timeline))
}

/// Split the side area between the timeline (above) and the Changes pane (below) when both
/// are shown; either takes it all alone.
pub fn split_side(side: Rect, timeline: bool, changes: bool) -> (Option<Rect>, Option<Rect>) {
    match (timeline, changes) {
        (true, true) => {
            let [top, bottom] =
                Layout::vertical([Constraint::Percentage(55), Constraint::Min(0)]).areas(side);
            (Some(top), Some(bottom))
        }
        (false, true) => (None, Some(side)),
        _ => (Some(side), None),
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
    let row_areas = Layout::vertical(vec![Constraint::Ratio(1, rows as u32); rows]).split(area);
    let mut rects = Vec::new();
    for (r, row) in row_areas.iter().enumerate() {
        let first = (first_row + r) * cols;
        let in_row = cols.min(n.saturating_sub(first));
        let cells = Layout::horizontal(vec![Constraint::Ratio(1, cols as u32); cols]).split(*row);
        rects.extend(cells.iter().take(in_row).copied());
    }
    (rects, first_row * cols)
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
    fn a_tall_screen_shows_every_panel() {
        let (rects, first) = grid(Rect::new(0, 0, 120, 39), 8, 0);
        assert_eq!((rects.len(), first), (8, 0));
    }
}
