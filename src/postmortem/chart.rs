//! One SVG chart per panel that moved, over the incident window: the panel's series, its warn
//! and crit thresholds as labelled lines, the impact window shaded, the fault or deploy marked
//! with a dashed line and its name, and each step taken marked with a line labelled with its
//! action. The legend sits beside the plot, never on the data. Panels that never moved (never
//! past their warning threshold and flat) are left out; memory per instance is drawn for a
//! restart loop. Drawn with `plotters`' SVG backend: no browser, no font files, no system
//! library.
//!
//! ```text
//! ┌──────────────────── title ─────────────────┬──────────┐
//! │ fault  step    step                        │ legend   │
//! │  ┊      │       │     ── crit              │ ── pod-1 │
//! │  ┊ ░░░░░│░░░░░░░│░░   ── warn              │ ── crit  │
//! │  ┊ ░ impact ░░░░│░░                        │ ░ impact │
//! └──────────── time ──────────────────────────┴──────────┘
//! ```

use super::board::Board;
use super::signals;
use super::words;
use crate::incident::snapshot::PanelSnapshot;
use chrono::{DateTime, Offset, Utc};
use chrono_tz::Tz;
use plotters::prelude::*;

/// Chart size in pixels.
pub const SIZE: (u32, u32) = (940, 340);
/// The legend's width, right of the plot.
pub const LEGEND_W: u32 = 190;
/// Series beyond this many are not drawn (a panel with a series per pod stays readable).
const MAX_SERIES: usize = 12;
/// Legend entries beyond this many are summarized as "and N more".
const MAX_LEGEND: usize = 10;
/// The impact window's shade; tests find the window by this colour.
pub const IMPACT_FILL: RGBColor = RGBColor(214, 39, 40);
const WARN: RGBColor = RGBColor(230, 145, 0);
const CRIT: RGBColor = RGBColor(200, 0, 0);
/// Step markers; tests find them by this colour.
pub const ACTION: RGBColor = RGBColor(60, 60, 60);
/// The fault or deploy marker; tests find it by this colour.
pub const FAULT: RGBColor = RGBColor(148, 0, 211);
/// The longest marker label, in characters.
const LABEL_CHARS: usize = 30;
const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(23, 190, 207),
    RGBColor(127, 127, 127),
];

/// What is drawn over the series.
#[derive(Debug, Clone, Default)]
pub struct Marks {
    /// The impact window (Unix seconds); an open end runs to the chart's edge.
    pub impact: Option<(f64, Option<f64>)>,
    /// Steps taken: Unix seconds and the action's title; steps with the same label group
    /// (`Some(n)`: the response they belong to) share one label.
    pub actions: Vec<(f64, String, Option<usize>)>,
    /// Faults and changes: Unix seconds and what happened.
    pub faults: Vec<(f64, String)>,
}

/// Why a chart could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the chart of panel \"{panel}\": {reason}")]
pub struct ChartError {
    pub panel: String,
    pub reason: String,
}

fn secs(at: DateTime<Utc>) -> f64 {
    at.timestamp_millis() as f64 / 1000.0
}

/// True when a panel never moved: never past its warning (or critical) threshold, and its
/// range small beside its threshold (or its own size, without one).
pub fn flat(snap: &PanelSnapshot) -> bool {
    let values: Vec<f64> = snap
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p[1]))
        .collect();
    if values.is_empty() {
        return true;
    }
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    let threshold = snap.warn.or(snap.crit);
    if let Some(t) = threshold
        && values.iter().any(|v| signals::is_bad(snap, *v, t))
    {
        return false;
    }
    let scale = match threshold {
        Some(t) => t.abs().max(hi.abs()).max(1e-9),
        None => hi.abs().max(lo.abs()).max(1e-9),
    };
    (hi - lo) <= 0.1 * scale
}

/// The snapshots to chart, in dashboard order: every panel with data that moved, and memory
/// per instance when the incident was a restart loop.
pub fn chosen<'a>(board: &Board<'a>, restart_loop: bool) -> Vec<&'a PanelSnapshot> {
    let mut out: Vec<&PanelSnapshot> = board.panels().filter(|s| !flat(s)).collect();
    if restart_loop && let Some(m) = board.fact(crate::incident::snapshot::fact::MEMORY) {
        out.push(m);
    }
    out
}

/// A legend for one series: the panel's legend template filled from its labels, else the
/// labels other than `__name__`.
fn legend(template: Option<&str>, labels: &std::collections::BTreeMap<String, String>) -> String {
    if let Some(t) = template {
        let mut out = t.to_string();
        for (k, v) in labels {
            out = out.replace(&format!("{{{{{k}}}}}"), v);
        }
        if !out.contains("{{") {
            return out;
        }
    }
    let parts: Vec<String> = labels
        .iter()
        .filter(|(k, _)| k.as_str() != "__name__")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    parts.join(", ")
}

fn short(text: &str) -> String {
    if text.chars().count() <= LABEL_CHARS {
        text.to_string()
    } else {
        let cut: String = text.chars().take(LABEL_CHARS - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

/// One legend entry: a colour, a line or a box, and its text.
struct Entry {
    color: RGBColor,
    boxed: bool,
    text: String,
}

/// The SVG of one panel snapshot.
pub fn render(snap: &PanelSnapshot, marks: &Marks, tz: Tz) -> Result<String, ChartError> {
    let fail = |e: &dyn std::fmt::Display| ChartError {
        panel: snap.title.clone(),
        reason: e.to_string(),
    };
    let unit = snap.unit();
    // The x axis counts local minutes since midnight, so the axis's round numbers (every 10,
    // 20, 50 minutes) fall on round clock times.
    let offset = snap
        .window
        .from
        .with_timezone(&tz)
        .offset()
        .fix()
        .local_minus_utc() as f64;
    let day = (secs(snap.window.from) + offset).div_euclid(86_400.0) * 86_400.0;
    let fx = |t: f64| (t + offset - day) / 60.0;
    let (x0, mut x1) = (fx(secs(snap.window.from)), fx(secs(snap.window.to)));
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let values = snap
        .series
        .iter()
        .take(MAX_SERIES)
        .flat_map(|s| s.points.iter().map(|p| p[1]))
        .chain(snap.warn)
        .chain(snap.crit);
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    let y0 = if lo >= 0.0 { 0.0 } else { lo * 1.1 };
    // Room above the data for the marker labels (four rows).
    let y1 = if hi > y0 {
        hi + (hi - y0) * 0.35
    } else {
        y0 + 1.0
    };
    let x_fmt = |x: &f64| {
        // Truncated like every clock time in the draft (07:00:50 is "07:00").
        let m = (x + 1e-6).floor().rem_euclid(1440.0) as i64;
        format!("{:02}:{:02}", m / 60, m % 60)
    };

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(&e))?;
        let (plot_area, legend_area) = root.split_horizontally(SIZE.0 - LEGEND_W);
        let mut chart = ChartBuilder::on(&plot_area)
            .caption(&snap.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(28)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| fail(&e))?;
        let y_fmt = |y: &f64| words::axis(unit, *y);
        chart
            .configure_mesh()
            .x_labels(12)
            .y_labels(6)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .light_line_style(RGBColor(240, 240, 240).stroke_width(1))
            .draw()
            .map_err(|e| fail(&e))?;
        let mut entries: Vec<Entry> = Vec::new();

        if let Some((from, to)) = marks.impact {
            let (from, to) = (fx(from).max(x0), to.map_or(x1, fx).min(x1));
            if to > from {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(from, y0), (to, y1)],
                        IMPACT_FILL.mix(0.12).filled(),
                    )))
                    .map_err(|e| fail(&e))?;
                entries.push(Entry {
                    color: IMPACT_FILL,
                    boxed: true,
                    text: format!(
                        "impact window {}–{}",
                        x_fmt(&from),
                        marks
                            .impact
                            .and_then(|i| i.1)
                            .map_or("ongoing".to_string(), |e| x_fmt(&fx(e)))
                    ),
                });
            }
        }

        let mut unnamed = 0;
        for (i, s) in snap.series.iter().take(MAX_SERIES).enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(
                    s.points.iter().map(|p| (fx(p[0]), p[1])),
                    color.stroke_width(2),
                ))
                .map_err(|e| fail(&e))?;
            let name = legend(snap.legend.as_deref(), &s.labels);
            if name.is_empty() {
                unnamed += 1;
            } else {
                entries.push(Entry {
                    color,
                    boxed: false,
                    text: short(&name),
                });
            }
        }
        if unnamed == snap.series.len().min(MAX_SERIES) && unnamed == 1 {
            entries.push(Entry {
                color: PALETTE[0],
                boxed: false,
                text: short(&snap.title),
            });
        }

        for (name, threshold, color) in [("warn", snap.warn, WARN), ("crit", snap.crit, CRIT)] {
            let Some(t) = threshold.filter(|t| t.is_finite()) else {
                continue;
            };
            let label = format!("{name} {}", words::axis(unit, t));
            chart
                .draw_series(LineSeries::new(
                    vec![(x0, t), (x1, t)],
                    color.stroke_width(1),
                ))
                .map_err(|e| fail(&e))?;
            entries.push(Entry {
                color,
                boxed: false,
                text: label,
            });
        }

        // Markers: faults dashed, steps solid, each labelled; labels close together go on
        // lower rows so none covers another.
        let span = x1 - x0;
        let mut rows_end: [f64; 4] = [f64::MIN; 4];
        let mut place = |x: f64, chars: usize| {
            let width = span * (chars as f64 * 6.5 + 8.0) / (SIZE.0 - LEGEND_W - 90) as f64;
            let row = rows_end.iter().position(|end| x > *end).unwrap_or(3);
            rows_end[row] = x + width;
            y1 - (y1 - y0) * (0.02 + 0.07 * row as f64)
        };
        for (t, what) in &marks.faults {
            let x = fx(*t);
            if x < x0 || x > x1 {
                continue;
            }
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(x, y0), (x, y1)],
                    6,
                    4,
                    FAULT.stroke_width(2),
                ))
                .map_err(|e| fail(&e))?;
            let label = short(what);
            let y = place(x, label.chars().count());
            chart
                .draw_series(std::iter::once(Text::new(
                    label,
                    (x, y),
                    ("sans-serif", 12).into_font().color(&FAULT),
                )))
                .map_err(|e| fail(&e))?;
        }
        let mut labelled: Vec<usize> = Vec::new();
        for (i, (t, title, group)) in marks.actions.iter().enumerate() {
            let x = fx(*t);
            if x < x0 || x > x1 {
                continue;
            }
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, y0), (x, y1)],
                    ACTION.stroke_width(1),
                )))
                .map_err(|e| fail(&e))?;
            if let Some(g) = group {
                if labelled.contains(g) {
                    continue;
                }
                labelled.push(*g);
            }
            let others = group.map_or(0, |g| {
                marks.actions[i + 1..]
                    .iter()
                    .filter(|a| a.2 == Some(g))
                    .count()
            });
            let label = if others > 0 {
                format!("{} (+{others})", short(title))
            } else {
                short(title)
            };
            let y = place(x, label.chars().count());
            chart
                .draw_series(std::iter::once(Text::new(
                    label,
                    (x, y),
                    ("sans-serif", 12).into_font().color(&ACTION),
                )))
                .map_err(|e| fail(&e))?;
        }

        // The legend, beside the plot.
        let more = entries.len().saturating_sub(MAX_LEGEND);
        entries.truncate(MAX_LEGEND);
        if more > 0 {
            entries.push(Entry {
                color: WHITE,
                boxed: false,
                text: format!("and {more} more"),
            });
        }
        for (i, e) in entries.iter().enumerate() {
            let y = 48 + i as i32 * 20;
            let shape = if e.boxed {
                legend_area.draw(&Rectangle::new(
                    [(6, y - 5), (20, y + 5)],
                    e.color.mix(0.3).filled(),
                ))
            } else {
                legend_area.draw(&PathElement::new(
                    vec![(6, y), (20, y)],
                    e.color.stroke_width(2),
                ))
            };
            shape.map_err(|err| fail(&err))?;
            legend_area
                .draw(&Text::new(
                    e.text.clone(),
                    (26, y - 7),
                    ("sans-serif", 12).into_font(),
                ))
                .map_err(|err| fail(&err))?;
        }
        root.present().map_err(|e| fail(&e))?;
    }
    Ok(svg)
}
