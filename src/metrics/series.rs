//! Time series as warroom holds them: label sets (sanitized on entry) and points.

use std::collections::BTreeMap;

/// A label set. Names and values are sanitized where they enter (the Prometheus client).
pub type Labels = BTreeMap<String, String>;

/// One sample: `t` in Unix seconds (fractional), `v` the value (NaN and ±Inf are possible).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub t: f64,
    pub v: f64,
}

/// One series: its labels and points in increasing time.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    pub labels: Labels,
    pub points: Vec<Point>,
}

impl Series {
    /// A short legend for the series: the labels that differ are chosen by the panel; this is
    /// the fallback `{a="x", b="y"}` form without `__name__`.
    pub fn label_text(&self) -> String {
        let parts: Vec<String> = self
            .labels
            .iter()
            .filter(|(k, _)| k.as_str() != "__name__")
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if parts.is_empty() {
            self.labels.get("__name__").cloned().unwrap_or_default()
        } else {
            parts.join(",")
        }
    }

    /// The newest point, if any.
    pub fn last(&self) -> Option<Point> {
        self.points.last().copied()
    }
}

/// Merge a freshly fetched tail into existing series: points at or after the tail's first
/// timestamp are replaced, older ones kept, and points before `keep_from` dropped.
pub fn merge_tail(existing: &mut Vec<Series>, tail: Vec<Series>, tail_start: f64, keep_from: f64) {
    for s in existing.iter_mut() {
        s.points.retain(|p| p.t < tail_start && p.t >= keep_from);
    }
    for t in tail {
        match existing.iter_mut().find(|s| s.labels == t.labels) {
            Some(s) => s
                .points
                .extend(t.points.into_iter().filter(|p| p.t >= keep_from)),
            None => existing.push(Series {
                labels: t.labels,
                points: t.points.into_iter().filter(|p| p.t >= keep_from).collect(),
            }),
        }
    }
    existing.retain(|s| !s.points.is_empty());
}

/// The most series a console panel keeps from one answer. A query that matches 100,000
/// series (a missing `sum by`, a label with a value per request) would otherwise cost seconds a
/// frame to draw and hundreds of MB to hold; the worst ones are what an incident needs, and
/// the panel says how many more there were.
pub const MAX_PANEL_SERIES: usize = 64;

/// Which series a panel keeps: the `cap` worst, by their newest value (the highest when
/// `higher_is_worse`, else the lowest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeepWorst {
    pub higher_is_worse: bool,
    pub cap: usize,
}

/// Keeps the `keep.cap` worst of `series`, in their order, and returns how many were left out.
/// A series without a value, or whose value is NaN, counts as the least bad; ±Inf counts as
/// what it says. Linear in the number of series (a selection, not a sort).
pub fn keep_worst(series: &mut Vec<Series>, keep: KeepWorst) -> usize {
    let n = series.len();
    if n <= keep.cap {
        return 0;
    }
    if keep.cap == 0 {
        series.clear();
        return n;
    }
    let badness = |s: &Series| match s.last().map(|p| p.v) {
        Some(v) if !v.is_nan() => {
            if keep.higher_is_worse {
                v
            } else {
                -v
            }
        }
        _ => f64::NEG_INFINITY,
    };
    let mut ranked: Vec<(f64, usize)> = series.iter().map(badness).zip(0..).collect();
    // Worst first; ties go to the earlier series, so the choice is stable between answers.
    ranked.select_nth_unstable_by(keep.cap - 1, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut kept = vec![false; n];
    for &(_, i) in &ranked[..keep.cap] {
        kept[i] = true;
    }
    let mut i = 0;
    series.retain(|_| {
        i += 1;
        kept[i - 1]
    });
    n - keep.cap
}

/// The most points a console panel holds across all its series: 64 series of a wide, long
/// window would otherwise hold hundreds of thousands. When it bites, each series is thinned
/// evenly, keeping its newest point and its worst ([`cap_points`]), and the panel says so.
pub const MAX_PANEL_POINTS: usize = 20_000;

/// The most series a chart draws: more lines than colours and legend rows are noise. The
/// rest are counted on the chart, and the worst of all is named.
pub const MAX_DRAWN_SERIES: usize = 10;

/// The worst of `values` on the bad side (the highest when `higher_is_worse`), NaN ignored.
pub fn worst_of(values: impl Iterator<Item = f64>, higher_is_worse: bool) -> Option<f64> {
    values
        .filter(|v| !v.is_nan())
        .reduce(|a, b| if higher_is_worse { a.max(b) } else { a.min(b) })
}

/// The indices of the `n` worst of `keys` (each series' worst value, `None` the least bad),
/// in their order (so a series keeps its colour while it stays drawn).
pub fn top_n(keys: &[Option<f64>], n: usize, higher_is_worse: bool) -> Vec<usize> {
    if keys.len() <= n {
        return (0..keys.len()).collect();
    }
    let bad = |k: Option<f64>| match k {
        Some(v) if higher_is_worse => v,
        Some(v) => -v,
        None => f64::NEG_INFINITY,
    };
    let mut ranked: Vec<(f64, usize)> = keys.iter().map(|&k| bad(k)).zip(0..).collect();
    let mut out: Vec<usize> = if n == 0 {
        Vec::new()
    } else {
        // Worst first; ties go to the earlier series, so the choice is stable.
        ranked.select_nth_unstable_by(n - 1, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        ranked[..n].iter().map(|&(_, i)| i).collect()
    };
    out.sort_unstable();
    out
}

/// Thins `series` to about `cap` points in all (an equal share each), keeping each series'
/// newest point and its worst; the others kept are evenly spaced. Returns whether any point
/// was dropped.
pub fn cap_points(series: &mut [Series], cap: usize, higher_is_worse: bool) -> bool {
    let total: usize = series.iter().map(|s| s.points.len()).sum();
    if total <= cap || series.is_empty() {
        return false;
    }
    let share = (cap / series.len()).max(2);
    let mut dropped = false;
    for s in series.iter_mut() {
        let n = s.points.len();
        if n <= share {
            continue;
        }
        let worst = worst_index(&s.points, higher_is_worse);
        // `share - 2` evenly spaced points besides the newest and the worst.
        let stride = n.div_ceil(share.saturating_sub(2).max(1));
        let keep_spaced = share > 2;
        let mut i = 0;
        s.points.retain(|_| {
            let k = i;
            i += 1;
            k + 1 == n || Some(k) == worst || (keep_spaced && k.is_multiple_of(stride))
        });
        dropped = true;
    }
    dropped
}

/// Where the worst point of `points` is (NaN never worst).
fn worst_index(points: &[Point], higher_is_worse: bool) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, p) in points.iter().enumerate() {
        if p.v.is_nan() {
            continue;
        }
        let worse = best.is_none_or(|(_, b)| if higher_is_worse { p.v > b } else { p.v < b });
        if worse {
            best = Some((i, p.v));
        }
    }
    best.map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_series_are_kept_in_their_order_and_the_rest_counted() {
        let values = [0.5, f64::NAN, 0.9, 0.1, f64::INFINITY, 0.7];
        let all: Vec<Series> = values
            .iter()
            .enumerate()
            .map(|(i, &v)| s(&format!("p{i}"), &[(0.0, v)]))
            .collect();
        let names =
            |v: &[Series]| -> Vec<String> { v.iter().map(|s| s.labels["pod"].clone()).collect() };
        let mut high = all.clone();
        let keep = KeepWorst {
            higher_is_worse: true,
            cap: 3,
        };
        assert_eq!(keep_worst(&mut high, keep), 3);
        assert_eq!(names(&high), ["p2", "p4", "p5"]);
        let mut low = all.clone();
        let keep = KeepWorst {
            higher_is_worse: false,
            cap: 2,
        };
        assert_eq!(keep_worst(&mut low, keep), 4);
        assert_eq!(names(&low), ["p0", "p3"]);
        let mut few = all[..2].to_vec();
        assert_eq!(keep_worst(&mut few, keep), 0, "at the cap, nothing goes");
        assert_eq!(few.len(), 2);
    }

    #[test]
    fn the_top_n_are_the_worst_in_their_order() {
        let keys = [
            Some(0.5),
            None,
            Some(0.9),
            Some(0.1),
            Some(f64::INFINITY),
            Some(0.7),
        ];
        assert_eq!(top_n(&keys, 3, true), [2, 4, 5]);
        assert_eq!(top_n(&keys, 2, false), [0, 3]);
        assert_eq!(
            top_n(&keys, 10, true),
            [0, 1, 2, 3, 4, 5],
            "fewer than n: all"
        );
        assert_eq!(top_n(&keys, 0, true), Vec::<usize>::new());
        assert_eq!(worst_of([0.2, f64::NAN, 0.8].into_iter(), true), Some(0.8));
        assert_eq!(worst_of([0.2, f64::NAN, 0.8].into_iter(), false), Some(0.2));
    }

    #[test]
    fn the_point_cap_keeps_each_series_newest_and_worst() {
        let wave = |peak_at: usize| -> Vec<(f64, f64)> {
            (0..1_000)
                .map(|i| {
                    (
                        i as f64,
                        if i == peak_at {
                            9.0
                        } else {
                            (i % 7) as f64 / 10.0
                        },
                    )
                })
                .collect()
        };
        let mut all = vec![
            s("a", &wave(333)),
            s("b", &wave(998)),
            s("c", &[(0.0, 1.0)]),
        ];
        assert!(
            !cap_points(&mut all.clone(), 2_001, true),
            "under the cap: nothing goes"
        );
        assert!(cap_points(&mut all, 300, true));
        let total: usize = all.iter().map(|s| s.points.len()).sum();
        assert!(total <= 300, "{total} points held");
        for x in &all[..2] {
            assert_eq!(x.last().map(|p| p.t), Some(999.0), "the newest point stays");
            assert!(x.points.iter().any(|p| p.v == 9.0), "the worst point stays");
            assert!(
                x.points.windows(2).all(|w| w[0].t < w[1].t),
                "in time order"
            );
            assert!(x.points.len() > 50, "evenly thinned, not emptied");
        }
        assert_eq!(all[2].points.len(), 1);
        // Low is bad: the lowest point is the one kept.
        let mut low = vec![s(
            "a",
            &[(0.0, 5.0), (1.0, -3.0), (2.0, 5.0), (3.0, 5.0), (4.0, 5.0)],
        )];
        assert!(cap_points(&mut low, 2, false));
        let kept: Vec<f64> = low[0].points.iter().map(|p| p.v).collect();
        assert_eq!(kept, [-3.0, 5.0]);
    }

    fn s(name: &str, pts: &[(f64, f64)]) -> Series {
        Series {
            labels: [("pod".to_string(), name.to_string())].into(),
            points: pts.iter().map(|&(t, v)| Point { t, v }).collect(),
        }
    }

    #[test]
    fn merge_replaces_the_overlap_and_drops_old_points() {
        let mut have = vec![s("a", &[(0.0, 1.0), (10.0, 2.0), (20.0, 3.0)])];
        merge_tail(
            &mut have,
            vec![s("a", &[(20.0, 9.0), (30.0, 4.0)]), s("b", &[(30.0, 1.0)])],
            20.0,
            10.0,
        );
        assert_eq!(have[0], s("a", &[(10.0, 2.0), (20.0, 9.0), (30.0, 4.0)]));
        assert_eq!(have[1], s("b", &[(30.0, 1.0)]));
    }
}
