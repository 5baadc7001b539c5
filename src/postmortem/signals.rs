//! Reading the panel snapshots: which role a panel plays, its peak, its worst value at an
//! instant, and counters' increases over a window.
//!
//! Panels come from configuration, so a panel's role is recognised by its title and unit (the
//! default dashboard's titles all match): "error" in percent; "wait" in seconds (pool wait);
//! "saturation" or "pool" in percent; "latency" in seconds; "retry" or "amplification";
//! "restart"; "instances" or "up" in percent (capacity); "queue" or "backlog"; "request rate",
//! "requests" or a per-second unit. The first panel that matches a role takes it.

use crate::config::Unit;
use crate::incident::snapshot::{PanelSnapshot, SnapshotSeries};

/// What a panel tells the draft.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    ErrorRatio,
    PoolSaturation,
    Latency,
    RetryAmplification,
    RequestRate,
    PoolWait,
    QueueDepth,
    /// The share of instances serving.
    Capacity,
    Restarts,
}

/// The role a panel plays: from the signal it says it answers (discovered panels and presets
/// name theirs), else from its title and unit.
pub fn role(s: &PanelSnapshot) -> Option<Role> {
    if let Some(signal) = &s.signal {
        return match signal.as_str() {
            "error-ratio" => Some(Role::ErrorRatio),
            "saturation" => Some(Role::PoolSaturation),
            "query-latency" | "request-latency" => Some(Role::Latency),
            "retry-amplification" => Some(Role::RetryAmplification),
            "request-rate" => Some(Role::RequestRate),
            "pool-wait" | "queue-wait" => Some(Role::PoolWait),
            "queue-depth" | "waiting-clients" => Some(Role::QueueDepth),
            "instances-up" => Some(Role::Capacity),
            "restarts" => Some(Role::Restarts),
            // Another signal (locks, deadlocks, timeouts...): no figure of the draft reads it.
            _ => None,
        };
    }
    let t = s.title.to_lowercase();
    let unit = s.unit();
    if t.contains("error") && unit == Unit::Percent {
        Some(Role::ErrorRatio)
    } else if t.contains("wait") && unit == Unit::Seconds {
        Some(Role::PoolWait)
    } else if (t.contains("saturation") || t.contains("pool"))
        && unit == Unit::Percent
        && !t.contains("wait")
    {
        Some(Role::PoolSaturation)
    } else if t.contains("latency") && unit == Unit::Seconds {
        Some(Role::Latency)
    } else if t.contains("retr") || t.contains("amplification") {
        Some(Role::RetryAmplification)
    } else if t.contains("restart") {
        Some(Role::Restarts)
    } else if (t.contains("instances") || t.split_whitespace().any(|w| w == "up"))
        && unit == Unit::Percent
    {
        Some(Role::Capacity)
    } else if t.contains("queue") || t.contains("backlog") {
        Some(Role::QueueDepth)
    } else if unit == Unit::PerSecond || t.contains("request rate") || t.contains("requests") {
        Some(Role::RequestRate)
    } else {
        None
    }
}

/// The snapshot among `snaps` that speaks for `want`: the first that plays it, except that a
/// pool's saturation is a pool's panel first (PgBouncer's pool beside PostgreSQL's connection
/// saturation, both a "saturation" signal: the pool's peak is the pool's, whatever order the
/// dashboard lists them in).
pub fn pick<'a>(
    snaps: impl Iterator<Item = &'a PanelSnapshot> + Clone,
    want: Role,
) -> Option<&'a PanelSnapshot> {
    let mut playing = snaps.filter(move |s| role(s) == Some(want));
    let pool = |s: &&PanelSnapshot| s.title.to_lowercase().contains("pool");
    if want == Role::PoolSaturation
        && let Some(p) = playing.clone().find(pool)
    {
        return Some(p);
    }
    playing.next()
}

/// The panel of the mean wait for a server per query (PgBouncer's `mean-client-wait`): the
/// part of the clients' latency a query-latency panel "wait excluded" leaves out.
pub fn client_wait<'a>(
    mut snaps: impl Iterator<Item = &'a PanelSnapshot>,
) -> Option<&'a PanelSnapshot> {
    snaps.find(|s| s.signal.as_deref() == Some("mean-client-wait") && !s.series.is_empty())
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

/// The worst value of `snap` at `t`: each series' latest point at or before `t` (no older
/// than three steps), the highest of them when high values are bad, the lowest otherwise.
pub fn worst_at(snap: &PanelSnapshot, t: f64) -> Option<f64> {
    let stale = 3.0 * snap.window.step_s.max(1.0);
    let vals = snap.series.iter().filter_map(|s| {
        let i = s.points.partition_point(|p| p[0] <= t + 1e-6);
        let p = s.points.get(i.checked_sub(1)?)?;
        (t - p[0] <= stale).then_some(p[1])
    });
    let below = snap.bad_below();
    vals.fold(None, |best: Option<f64>, v| {
        Some(match best {
            None => v,
            Some(b) if below => b.min(v),
            Some(b) => b.max(v),
        })
    })
}

/// The worst value of `snap` over `[from, to]` and its time: the highest when high values are
/// bad, the lowest otherwise.
pub fn worst_between(snap: &PanelSnapshot, from: f64, to: f64) -> Option<(f64, f64)> {
    let below = snap.bad_below();
    snap.series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|p| p[0] >= from && p[0] <= to)
        .fold(None, |best: Option<(f64, f64)>, p| match best {
            Some((v, _)) if (below && v <= p[1]) || (!below && v >= p[1]) => best,
            _ => Some((p[1], p[0])),
        })
}

/// Every instant of `snap` (any series) in `[from, to]`, in order, without repeats.
pub fn instants(snap: &PanelSnapshot, from: f64, to: f64) -> Vec<f64> {
    let mut t: Vec<f64> = snap
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p[0]))
        .filter(|t| *t >= from && *t <= to)
        .collect();
    t.sort_by(f64::total_cmp);
    t.dedup();
    t
}

/// True when `v` is past `threshold` the bad way for `snap`.
pub fn is_bad(snap: &PanelSnapshot, v: f64, threshold: f64) -> bool {
    if snap.bad_below() {
        v <= threshold
    } else {
        v >= threshold
    }
}

/// The increase of a counter snapshot over `[from, to]`: per series, the sum of its rises
/// between consecutive points, a fall counting as a reset (the new value is all increase, as
/// Prometheus counts it); summed over series. `None` when no series has two points inside.
pub fn increase(snap: &PanelSnapshot, from: f64, to: f64) -> Option<f64> {
    let mut total = None;
    for s in &snap.series {
        let inside: Vec<f64> = s
            .points
            .iter()
            .filter(|p| p[0] >= from - 1e-6 && p[0] <= to + 1e-6)
            .map(|p| p[1])
            .collect();
        if inside.len() < 2 {
            continue;
        }
        let rise: f64 = inside
            .windows(2)
            .map(|w| if w[1] >= w[0] { w[1] - w[0] } else { w[1] })
            .sum();
        *total.get_or_insert(0.0) += rise;
    }
    total
}

/// What the central series of a latency panel is, by how it was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statistic {
    /// A 50th percentile: a series labelled p50/0.5, or a `histogram_quantile(0.5, …)`.
    Median,
    /// A mean: a sum over a count (`…_sum / …_count`), or `avg`.
    Mean,
}

impl Statistic {
    /// "median", "mean".
    pub fn word(self) -> &'static str {
        match self {
            Statistic::Median => "median",
            Statistic::Mean => "mean",
        }
    }
}

/// The series a latency panel's "median" reads: one labelled p50/0.5, else the only series of
/// a query that asks for the 0.5 quantile. Never a guess: a median comes from quantiles or
/// histogram buckets only.
pub fn median_series(snap: &PanelSnapshot) -> Option<&SnapshotSeries> {
    let labelled = snap.series.iter().find(|s| {
        s.labels
            .iter()
            .any(|(k, v)| k.contains("quantile") && matches!(v.as_str(), "p50" | "0.5" | "50"))
    });
    let q = snap.query.replace(' ', "");
    let asks = q.contains("quantile(0.5,") || q.contains("quantile(.5,");
    labelled.or(match snap.series.as_slice() {
        [only] if asks => Some(only),
        _ => None,
    })
}

/// The central series of a latency panel and what it is: its median (see [`median_series`]),
/// else the first series of a query that computes a mean: a sum over a count, `avg`, or one
/// rate divided by another (a time total's rate over a count's, as PgBouncer's per-query
/// times are: time per query, a mean).
pub fn central_series(snap: &PanelSnapshot) -> Option<(&SnapshotSeries, Statistic)> {
    if let Some(m) = median_series(snap) {
        return Some((m, Statistic::Median));
    }
    let q = snap.query.to_lowercase().replace(' ', "");
    let rates_divided = q.matches("rate(").count() >= 2 && q.contains(")/");
    let mean = (q.contains("_sum") && q.contains("_count")) || q.contains("avg") || rates_divided;
    let first = snap.series.iter().find(|s| !s.points.is_empty())?;
    mean.then_some((first, Statistic::Mean))
}

/// The level a signal held for at least `hold` seconds within `[from, to]` (the highest such
/// level when high values are bad, the lowest otherwise), from its worst readings: the peak
/// a reader can trust beside the momentary maximum.
pub fn sustained(snap: &PanelSnapshot, from: f64, to: f64, hold: f64) -> Option<f64> {
    let at: Vec<(f64, f64)> = instants(snap, from, to)
        .into_iter()
        .filter_map(|t| worst_at(snap, t).map(|v| (t, v)))
        .collect();
    let below = snap.bad_below();
    let mut best: Option<f64> = None;
    for (i, (t, _)) in at.iter().enumerate() {
        // From this reading to the first one at least `hold` later (readings need not fall on
        // the hold: at a 17 s step, two minutes are seven steps and 119 s, eight and 136 s).
        let Some(j) = at[i..].iter().position(|(u, _)| *u >= t + hold - 1e-6) else {
            break;
        };
        let held: Vec<f64> = at[i..=i + j].iter().map(|p| p.1).collect();
        let level = held.iter().copied().fold(
            if below {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            },
            |a, b| if below { a.max(b) } else { a.min(b) },
        );
        best = Some(match best {
            None => level,
            Some(b) if below => b.min(level),
            Some(b) => b.max(level),
        });
    }
    best
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::incident::snapshot::SnapshotWindow;
    use chrono::DateTime;

    pub(crate) fn snap(title: &str, unit: &str, series: Vec<Vec<[f64; 2]>>) -> PanelSnapshot {
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
            signal: None,
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
    fn the_simulator_panels_get_their_roles() {
        let roles: Vec<Option<Role>> = crate::metrics::presets::sim_panels()
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
                Some(Role::PoolWait),
                Some(Role::Latency),
                Some(Role::RetryAmplification),
                Some(Role::ErrorRatio),
                Some(Role::QueueDepth),
                Some(Role::Capacity),
                Some(Role::Restarts)
            ]
        );
    }

    #[test]
    fn a_sustained_level_is_held_for_the_whole_span() {
        // A spike to 100 % for one reading; 80 % held for two minutes.
        let points: Vec<[f64; 2]> = (0..40)
            .map(|i| {
                [
                    i as f64 * 10.0,
                    if i == 5 {
                        1.0
                    } else if (10..23).contains(&i) {
                        0.8
                    } else {
                        0.3
                    },
                ]
            })
            .collect();
        let p = snap("Pool saturation", "percent", vec![points]);
        assert_eq!(peak(&p, None, None), Some((1.0, 50.0)));
        assert_eq!(sustained(&p, 0.0, 400.0, 120.0), Some(0.8));
        assert_eq!(
            sustained(&p, 0.0, 100.0, 120.0),
            None,
            "shorter than the hold"
        );
        // At a 17 s step (a record of three hours and 20 minutes in 720 points) two minutes
        // are never exactly seven steps: a plateau of an hour at 100 % is still held.
        let plateau: Vec<[f64; 2]> = (0..300)
            .map(|i| {
                [
                    i as f64 * 17.0,
                    if (20..230).contains(&i) { 1.0 } else { 0.2 },
                ]
            })
            .collect();
        let p = snap("Pool saturation", "percent", vec![plateau]);
        assert_eq!(sustained(&p, 0.0, 5100.0, 120.0), Some(1.0));
        // Seven readings at 100 % span 102 s: not two minutes.
        let short: Vec<[f64; 2]> = (0..40)
            .map(|i| {
                [
                    i as f64 * 17.0,
                    if (10..17).contains(&i) { 1.0 } else { 0.2 },
                ]
            })
            .collect();
        let p = snap("Pool saturation", "percent", vec![short]);
        assert_eq!(sustained(&p, 0.0, 680.0, 120.0), Some(0.2));
    }

    #[test]
    fn a_median_only_from_quantiles_a_mean_called_a_mean() {
        let mut p = snap("Query latency", "seconds", vec![vec![[0.0, 0.9]]]);
        p.query = "rate(pgbouncer_stats_queries_duration_seconds_total[5m]) / rate(pgbouncer_stats_queries_pooled_total[5m])".into();
        assert!(
            median_series(&p).is_none(),
            "a ratio of totals is no median"
        );
        assert_eq!(
            central_series(&p).map(|c| c.1),
            Some(Statistic::Mean),
            "a ratio of totals is a mean, and named so"
        );
        p.query = "max(pg_stat_activity_max_tx_duration)".into();
        assert!(central_series(&p).is_none(), "a maximum is neither");
        p.query = "rate(q_seconds_sum[5m]) / rate(q_seconds_count[5m])".into();
        assert_eq!(central_series(&p).map(|c| c.1), Some(Statistic::Mean));
        p.query = "histogram_quantile(0.5, sum by (le) (rate(q_seconds_bucket[1m])))".into();
        assert_eq!(central_series(&p).map(|c| c.1), Some(Statistic::Median));
    }

    /// PostgreSQL's connection saturation listed first: the pool's saturation is still
    /// PgBouncer's pool.
    #[test]
    fn the_pool_saturation_is_the_pool_panel_whatever_the_order() {
        let mut pg = snap("PostgreSQL connection saturation", "percent", vec![]);
        let mut pool = snap("PgBouncer pool saturation", "percent", vec![]);
        pg.signal = Some("saturation".into());
        pool.signal = Some("saturation".into());
        let snaps = [pg.clone(), pool];
        let picked = pick(snaps.iter(), Role::PoolSaturation).map(|s| s.title.as_str());
        assert_eq!(picked, Some("PgBouncer pool saturation"));
        let alone = [pg];
        let picked = pick(alone.iter(), Role::PoolSaturation).map(|s| s.title.as_str());
        assert_eq!(
            picked,
            Some("PostgreSQL connection saturation"),
            "the only one"
        );
    }

    #[test]
    fn peaks_are_read_from_the_points() {
        let e = snap(
            "Error ratio",
            "percent",
            vec![vec![[0.0, 0.1], [10.0, 0.5], [20.0, 0.2]]],
        );
        assert_eq!(peak(&e, None, None), Some((0.5, 10.0)));
        assert_eq!(peak(&e, Some(15.0), None), Some((0.2, 20.0)));
    }
}
