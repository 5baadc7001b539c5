//! One SVG chart per panel snapshot over the incident window: the panel's series, its warn and
//! crit thresholds as labelled lines, the impact window shaded and the actions taken marked
//! with numbered vertical lines (the numbers of the draft's resolution list). Drawn with
//! `plotters`' SVG backend: no browser, no font files, no system library.

use super::words;
use crate::incident::snapshot::PanelSnapshot;
use chrono::{DateTime, Offset, Utc};
use chrono_tz::Tz;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Chart size in pixels.
pub const SIZE: (u32, u32) = (860, 320);
/// Series beyond this many are not drawn (a panel with a series per pod stays readable).
const MAX_SERIES: usize = 12;
/// The impact window's shade; tests find the window by this colour.
pub const IMPACT_FILL: RGBColor = RGBColor(214, 39, 40);
const WARN: RGBColor = RGBColor(230, 145, 0);
const CRIT: RGBColor = RGBColor(200, 0, 0);
const ACTION: RGBColor = RGBColor(60, 60, 60);
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
    /// Actions: Unix seconds and a short label ("1", "2", …).
    pub actions: Vec<(f64, String)>,
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

/// A legend for one series: the panel's legend template filled from its labels, else the
/// labels other than `__name__`.
fn legend(template: Option<&str>, labels: &std::collections::BTreeMap<String, String>) -> String {
    if let Some(t) = template {
        let mut out = t.to_string();
        for (k, v) in labels {
            out = out.replace(&format!("{{{{{k}}}}}"), v);
        }
        return out;
    }
    let parts: Vec<String> = labels
        .iter()
        .filter(|(k, _)| k.as_str() != "__name__")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    parts.join(", ")
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
    let y1 = if hi > y0 {
        hi + (hi - y0) * 0.12
    } else {
        y0 + 1.0
    };

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&snap.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(28)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| fail(&e))?;
        let x_fmt = |x: &f64| {
            // Truncated like every clock time in the draft (07:00:50 is "07:00").
            let m = (x + 1e-6).floor().rem_euclid(1440.0) as i64;
            format!("{:02}:{:02}", m / 60, m % 60)
        };
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

        if let Some((from, to)) = marks.impact {
            let (from, to) = (fx(from).max(x0), to.map_or(x1, fx).min(x1));
            if to > from {
                let label = format!(
                    "impact window {}–{}",
                    x_fmt(&from),
                    marks
                        .impact
                        .and_then(|i| i.1)
                        .map_or("ongoing".to_string(), |e| x_fmt(&fx(e)))
                );
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(from, y0), (to, y1)],
                        IMPACT_FILL.mix(0.12).filled(),
                    )))
                    .map_err(|e| fail(&e))?
                    .label(label)
                    .legend(|(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 14, y + 5)], IMPACT_FILL.mix(0.3).filled())
                    });
            }
        }

        let many = snap.series.len() > 6;
        for (i, s) in snap.series.iter().take(MAX_SERIES).enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let drawn = chart
                .draw_series(LineSeries::new(
                    s.points.iter().map(|p| (fx(p[0]), p[1])),
                    color.stroke_width(2),
                ))
                .map_err(|e| fail(&e))?;
            if !many {
                let name = legend(snap.legend.as_deref(), &s.labels);
                if !name.is_empty() {
                    drawn.label(name).legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 14, y)], color.stroke_width(2))
                    });
                }
            }
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
                .map_err(|e| fail(&e))?
                .label(label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 14, y)], color.stroke_width(1))
                });
            chart
                .draw_series(std::iter::once(Text::new(
                    label,
                    (x1, t),
                    ("sans-serif", 12)
                        .into_font()
                        .color(&color)
                        .pos(Pos::new(HPos::Right, VPos::Bottom)),
                )))
                .map_err(|e| fail(&e))?;
        }

        // Actions close together (within 2 % of the width) share one label, "3–12", so the
        // numbers stay readable; each still gets its line.
        let shown: Vec<(f64, &String)> = marks
            .actions
            .iter()
            .map(|(t, l)| (fx(*t), l))
            .filter(|(t, _)| *t >= x0 && *t <= x1)
            .collect();
        let close = (x1 - x0) * 0.02;
        let mut groups: Vec<(f64, String, String)> = Vec::new();
        for (t, label) in &shown {
            match groups.last_mut() {
                Some(g) if *t - g.0 <= close => g.2 = (*label).clone(),
                _ => groups.push((*t, (*label).clone(), (*label).clone())),
            }
        }
        chart
            .draw_series(
                shown.iter().map(|(t, _)| {
                    PathElement::new(vec![(*t, y0), (*t, y1)], ACTION.stroke_width(1))
                }),
            )
            .map_err(|e| fail(&e))?;
        chart
            .draw_series(groups.into_iter().map(|(t, first, last)| {
                let label = if first == last {
                    first
                } else {
                    format!("{first}–{last}")
                };
                Text::new(
                    label,
                    (t, y1),
                    ("sans-serif", 12).into_font().color(&ACTION),
                )
            }))
            .map_err(|e| fail(&e))?;

        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85).filled())
            .border_style(RGBColor(200, 200, 200).stroke_width(1))
            .label_font(("sans-serif", 12))
            .draw()
            .map_err(|e| fail(&e))?;
        root.present().map_err(|e| fail(&e))?;
    }
    Ok(svg)
}
