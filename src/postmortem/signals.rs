//! The figures the draft reads from the panel snapshots: peak error ratio, peak pool
//! saturation, latency before and at the peak, peak retry amplification and, when a
//! request-rate panel exists, the estimated failed requests.
//!
//! Panels come from configuration, so a panel's role is recognised by its title and unit (the
//! default dashboard's titles all match): "error" in percent; "saturation" or "pool" in percent;
//! "latency" in seconds; "retry" or "amplification"; "request rate", "requests" or a per-second
//! unit. The first panel that matches a role takes it.

use crate::config::Unit;
use crate::incident::snapshot::{PanelSnapshot, SnapshotSeries};
use chrono::{DateTime, Utc};

/// What a panel tells the draft.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    ErrorRatio,
    PoolSaturation,
    Latency,
    RetryAmplification,
    RequestRate,
}

/// The role a panel plays, from its title and unit.
pub fn role(s: &PanelSnapshot) -> Option<Role> {
    let t = s.title.to_lowercase();
    let unit = s.unit();
    if t.contains("error") && unit == Unit::Percent {
        Some(Role::ErrorRatio)
    } else if (t.contains("saturation") || t.contains("pool"))
        && unit == Unit::Percent
        && !t.contains("wait")
    {
        Some(Role::PoolSaturation)
    } else if t.contains("latency") && unit == Unit::Seconds {
        Some(Role::Latency)
    } else if t.contains("retr") || t.contains("amplification") {
        Some(Role::RetryAmplification)
    } else if unit == Unit::PerSecond || t.contains("request rate") || t.contains("requests") {
        Some(Role::RequestRate)
    } else {
        None
    }
}

/// The first snapshot with data that plays `role`.
pub fn find(snaps: &[PanelSnapshot], want: Role) -> Option<&PanelSnapshot> {
    snaps.iter().find(|s| role(s) == Some(want))
}

fn secs(at: DateTime<Utc>) -> f64 {
    at.timestamp_millis() as f64 / 1000.0
}

/// The highest value of any series of `snap` within `[from, to]` (inclusive) and its time.
pub fn peak(snap: &PanelSnapshot, from: Option<f64>, to: Option<f64>) -> Option<(f64, f64)> {
    let inside = |t: f64| from.is_none_or(|f| t >= f) && to.is_none_or(|e| t <= e);
    snap.series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|p| inside(p[0]))
        .fold(None, |best: Option<(f64, f64)>, p| match best {
            Some((v, _)) if v >= p[1] => best,
            _ => Some((p[1], p[0])),
        })
}

/// The series a latency panel's "median" reads: one labelled p50/0.5, else the one with the
/// lowest mean (the median is below every higher quantile).
pub fn median_series(snap: &PanelSnapshot) -> Option<&SnapshotSeries> {
    let labelled = snap.series.iter().find(|s| {
        s.labels
            .iter()
            .any(|(k, v)| k.contains("quantile") && matches!(v.as_str(), "p50" | "0.5" | "50"))
    });
    labelled.or_else(|| {
        snap.series
            .iter()
            .filter(|s| !s.points.is_empty())
            .min_by(|a, b| {
                let mean = |s: &SnapshotSeries| {
                    s.points.iter().map(|p| p[1]).sum::<f64>() / s.points.len() as f64
                };
                mean(a).total_cmp(&mean(b))
            })
    })
}

/// The median of the values of `series` within `[from, to)`.
pub fn median_between(series: &SnapshotSeries, from: f64, to: f64) -> Option<f64> {
    let mut v: Vec<f64> = series
        .points
        .iter()
        .filter(|p| p[0] >= from && p[0] < to)
        .map(|p| p[1])
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

/// The highest value of one series within `[from, to]` and its time.
pub fn series_peak(series: &SnapshotSeries, from: f64, to: f64) -> Option<(f64, f64)> {
    series
        .points
        .iter()
        .filter(|p| p[0] >= from && p[0] <= to)
        .fold(None, |best: Option<(f64, f64)>, p| match best {
            Some((v, _)) if v >= p[1] => best,
            _ => Some((p[1], p[0])),
        })
}

/// Failed requests over `[from, to]`: the request rate (all series summed) times the error
/// ratio at each of the rate panel's steps, times the step.
pub fn failed_requests(
    rate: &PanelSnapshot,
    errors: &PanelSnapshot,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Option<f64> {
    let (from, to) = (secs(from), secs(to));
    let step = rate.window.step_s;
    let ratio: Vec<[f64; 2]> = errors
        .series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .collect();
    if ratio.is_empty() {
        return None;
    }
    let mut totals: std::collections::BTreeMap<i64, f64> = std::collections::BTreeMap::new();
    for s in &rate.series {
        for p in &s.points {
            if p[0] >= from && p[0] <= to {
                *totals.entry((p[0] * 1000.0).round() as i64).or_default() += p[1];
            }
        }
    }
    if totals.is_empty() {
        return None;
    }
    let nearest = |t: f64| {
        ratio
            .iter()
            .min_by(|a, b| (a[0] - t).abs().total_cmp(&(b[0] - t).abs()))
            .map_or(0.0, |p| p[1])
    };
    Some(
        totals
            .iter()
            .map(|(t, rps)| rps * nearest(*t as f64 / 1000.0).clamp(0.0, 1.0) * step)
            .sum(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incident::snapshot::SnapshotWindow;

    fn snap(title: &str, unit: &str, series: Vec<Vec<[f64; 2]>>) -> PanelSnapshot {
        PanelSnapshot {
            order: 0,
            slug: crate::incident::snapshot::slug(title),
            title: title.into(),
            query: "q".into(),
            unit: unit.into(),
            warn: None,
            crit: None,
            bad_when: "above".into(),
            legend: None,
            window: SnapshotWindow {
                from: DateTime::from_timestamp(0, 0).unwrap(),
                to: DateTime::from_timestamp(100, 0).unwrap(),
                step_s: 10.0,
            },
            series: series
                .into_iter()
                .map(|points| SnapshotSeries {
                    labels: Default::default(),
                    points,
                })
                .collect(),
            error: None,
        }
    }

    #[test]
    fn default_panels_get_their_roles() {
        let roles: Vec<Option<Role>> = crate::config::default_panels()
            .iter()
            .map(|p| {
                role(&snap(
                    &p.title,
                    crate::incident::snapshot::unit_name(p.unit),
                    vec![],
                ))
            })
            .collect();
        assert_eq!(
            roles,
            vec![
                Some(Role::PoolSaturation),
                None,
                Some(Role::Latency),
                Some(Role::RetryAmplification),
                Some(Role::ErrorRatio),
                None,
                None,
                None
            ]
        );
    }

    #[test]
    fn peaks_and_failed_requests_are_computed_from_the_points() {
        let e = snap(
            "Error ratio",
            "percent",
            vec![vec![[0.0, 0.1], [10.0, 0.5], [20.0, 0.2]]],
        );
        assert_eq!(peak(&e, None, None), Some((0.5, 10.0)));
        assert_eq!(peak(&e, Some(15.0), None), Some((0.2, 20.0)));
        let r = snap(
            "Request rate",
            "per-second",
            vec![vec![[0.0, 100.0], [10.0, 100.0], [20.0, 100.0]]],
        );
        let from = DateTime::from_timestamp(0, 0).unwrap();
        let to = DateTime::from_timestamp(20, 0).unwrap();
        // (0.1 + 0.5 + 0.2) × 100 rps × 10 s
        let got = failed_requests(&r, &e, from, to).unwrap();
        assert!((got - 800.0).abs() < 1e-9, "{got}");
    }
}
