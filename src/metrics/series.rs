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

#[cfg(test)]
mod tests {
    use super::*;

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
