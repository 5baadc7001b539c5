//! The in-process sample store: one sorted run of `(milliseconds, value)` points per series,
//! and a retention beyond which old points are pruned so a long rehearsal stays bounded.
//!
//! Staleness is written as Prometheus writes it. A scrape ([`Store::ingest_scrape`]) ends every
//! series that was in the previous scrape but is missing from this one with a staleness marker,
//! so the series disappears at once instead of five minutes later. A sample appended on its own
//! ([`Store::append`]) touches no other series: a series that simply has no sample for a while
//! (a gap) is still answered from its last sample within the lookback. An explicit marker can be
//! written with [`Store::mark_stale`].

use crate::metrics::Labels;
use std::collections::HashMap;

/// Prometheus's staleness marker: a NaN with this exact bit pattern means "the series ended".
pub const STALE_NAN_BITS: u64 = 0x7ff0_0000_0000_0002;

/// The staleness marker as a value, for [`Store::append`].
pub fn stale_marker() -> f64 {
    f64::from_bits(STALE_NAN_BITS)
}

/// Whether `v` is the staleness marker (not just any NaN).
pub fn is_stale(v: f64) -> bool {
    v.to_bits() == STALE_NAN_BITS
}

/// One stored series: its full label set (`__name__` included) and points in increasing time.
#[derive(Debug, Clone)]
pub struct StoredSeries {
    pub labels: Labels,
    pub points: Vec<(i64, f64)>,
    /// Whether any point is a staleness marker, so windows without one can be lent as they are.
    pub has_stale: bool,
}

impl StoredSeries {
    /// The points with `from <= t <= to` (Prometheus 2.x ranges are closed at both ends).
    pub fn window(&self, from: i64, to: i64) -> &[(i64, f64)] {
        let lo = self.points.partition_point(|p| p.0 < from);
        let hi = self.points.partition_point(|p| p.0 <= to);
        &self.points[lo..hi.max(lo)]
    }

    /// The newest point at or before `t`, if any.
    pub fn at_or_before(&self, t: i64) -> Option<(i64, f64)> {
        let hi = self.points.partition_point(|p| p.0 <= t);
        hi.checked_sub(1).map(|i| self.points[i])
    }
}

/// Series grouped by metric name, so a selector only looks at its own metric.
#[derive(Debug, Default)]
pub struct Store {
    by_name: HashMap<String, Vec<StoredSeries>>,
    /// Where each label set lives: (metric name, index in its vector).
    index: HashMap<Labels, (String, usize)>,
    /// Label sets present in the last scrape, to write staleness markers for the ones that leave.
    last_scrape: Vec<Labels>,
    /// Newest ingest time, in milliseconds.
    pub newest: Option<i64>,
    pub retention_ms: i64,
    /// The last pruning cutoff: pruning runs once per eighth of the retention, so the cost of
    /// moving the kept points is paid rarely rather than on every scrape.
    pruned_to: Option<i64>,
}

impl Store {
    pub fn new(retention_ms: i64) -> Self {
        Store {
            retention_ms,
            ..Store::default()
        }
    }

    /// Append one complete scrape at `t_ms`: every sample gets that timestamp, series seen in
    /// the previous scrape but missing from this one get a staleness marker, and points older
    /// than the retention are pruned (in batches: up to an eighth of the retention more is
    /// kept). A scrape at or before the newest one is ignored.
    pub fn ingest_scrape<I>(&mut self, t_ms: i64, samples: I)
    where
        I: IntoIterator<Item = (Labels, f64)>,
    {
        if self.newest.is_some_and(|n| t_ms <= n) {
            return;
        }
        let mut seen = Vec::new();
        for (labels, v) in samples {
            self.push(&labels, t_ms, v);
            seen.push(labels);
        }
        let gone: Vec<Labels> = {
            let now: std::collections::HashSet<&Labels> = seen.iter().collect();
            self.last_scrape
                .iter()
                .filter(|l| !now.contains(l))
                .cloned()
                .collect()
        };
        for labels in gone {
            self.push(&labels, t_ms, stale_marker());
        }
        self.last_scrape = seen;
        self.advance(t_ms);
    }

    /// Append one sample as Prometheus's appender takes it, outside any scrape: no other series
    /// is touched, so a series without samples for a while is a gap, not stale. `v` may be
    /// [`stale_marker`]. A sample at or before its series' newest is refused (`false`), as
    /// Prometheus refuses out-of-order samples.
    pub fn append(&mut self, labels: &Labels, t_ms: i64, v: f64) -> bool {
        let accepted = self.push(labels, t_ms, v);
        if accepted && self.newest.is_none_or(|n| t_ms > n) {
            self.advance(t_ms);
        }
        accepted
    }

    /// End a series at `t_ms` with a staleness marker (what a scrape writes for a series that
    /// left it). `false` when the series has a sample at or after `t_ms`.
    pub fn mark_stale(&mut self, labels: &Labels, t_ms: i64) -> bool {
        self.append(labels, t_ms, stale_marker())
    }

    /// Move the newest time forward and prune what falls out of the retention.
    fn advance(&mut self, t_ms: i64) {
        self.newest = Some(t_ms);
        let cutoff = t_ms.saturating_sub(self.retention_ms);
        if self
            .pruned_to
            .is_none_or(|p| cutoff.saturating_sub(p) >= self.retention_ms / 8)
        {
            self.prune(cutoff);
            self.pruned_to = Some(cutoff);
        }
    }

    fn push(&mut self, labels: &Labels, t_ms: i64, v: f64) -> bool {
        if let Some((name, i)) = self.index.get(labels)
            && let Some(s) = self.by_name.get_mut(name).and_then(|v| v.get_mut(*i))
        {
            if s.points.last().is_some_and(|p| p.0 >= t_ms) {
                return false;
            }
            s.points.push((t_ms, v));
            s.has_stale |= is_stale(v);
            return true;
        }
        let name = labels.get("__name__").cloned().unwrap_or_default();
        let list = self.by_name.entry(name.clone()).or_default();
        list.push(StoredSeries {
            labels: labels.clone(),
            points: vec![(t_ms, v)],
            has_stale: is_stale(v),
        });
        self.index.insert(labels.clone(), (name, list.len() - 1));
        true
    }

    /// Drop points before `cutoff_ms`, and series left with none.
    fn prune(&mut self, cutoff_ms: i64) {
        let mut emptied = false;
        for list in self.by_name.values_mut() {
            for s in list.iter_mut() {
                let n = s.points.partition_point(|p| p.0 < cutoff_ms);
                if n > 0 {
                    s.points.drain(..n);
                    s.has_stale = s.points.iter().any(|p| is_stale(p.1));
                    emptied |= s.points.is_empty();
                }
            }
        }
        if emptied {
            self.by_name.retain(|_, list| {
                list.retain(|s| !s.points.is_empty());
                !list.is_empty()
            });
            self.index.clear();
            for (name, list) in &self.by_name {
                for (i, s) in list.iter().enumerate() {
                    self.index.insert(s.labels.clone(), (name.clone(), i));
                }
            }
        }
    }

    /// The series of one metric name (all of them when `name` is `None`).
    pub fn series_named<'a>(
        &'a self,
        name: Option<&str>,
    ) -> Box<dyn Iterator<Item = &'a StoredSeries> + 'a> {
        match name {
            Some(n) => Box::new(self.by_name.get(n).into_iter().flatten()),
            None => Box::new(self.by_name.values().flatten()),
        }
    }

    /// Number of series and points held (for the memory bound).
    pub fn size(&self) -> (usize, usize) {
        let series = self.index.len();
        let points = self
            .by_name
            .values()
            .flatten()
            .map(|s| s.points.len())
            .sum();
        (series, points)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(name: &str, pod: &str) -> Labels {
        [("__name__", name), ("pod", pod)]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_series_that_leaves_the_scrape_gets_a_stale_marker_and_old_points_are_pruned() {
        let mut st = Store::new(8_000);
        st.ingest_scrape(1_000, [(l("up", "a"), 1.0), (l("up", "b"), 1.0)]);
        st.ingest_scrape(2_000, [(l("up", "a"), 1.0)]);
        let b: Vec<_> = st
            .series_named(Some("up"))
            .filter(|s| s.labels == l("up", "b"))
            .collect();
        assert!(is_stale(b[0].points[1].1), "{:?}", b[0].points);
        st.ingest_scrape(3_000, [(l("up", "a"), 1.5)]);
        st.ingest_scrape(10_500, [(l("up", "a"), 2.0)]);
        // b's points are all older than 10.5 s - 8 s: the series is gone.
        assert_eq!(st.size(), (1, 2));
        let a = st.series_named(Some("up")).next().unwrap();
        assert_eq!(a.window(3_000, 10_500), &[(3_000, 1.5), (10_500, 2.0)]);
        assert_eq!(a.window(3_001, 10_499), &[]);
        assert_eq!(a.at_or_before(5_000), Some((3_000, 1.5)));
        // Pruning waits for an eighth of the retention (1 s) past the last cutoff (2.5 s).
        st.ingest_scrape(11_400, [(l("up", "a"), 2.5)]);
        assert_eq!(st.size(), (1, 3), "the point at 3 s is kept until 11.5 s");
        st.ingest_scrape(11_500, [(l("up", "a"), 3.0)]);
        assert_eq!(st.size(), (1, 3));
    }
}
