//! Hand-computed cases for the evaluator; the differential test checks the rest against a
//! real Prometheus.

use super::EmbeddedSource;
use crate::metrics::{InstantQuery, Labels};

fn series(name: &str, pod: &str) -> Labels {
    [("__name__", name), ("pod", pod)]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn at(store: &EmbeddedSource, q: &str, t: f64) -> Vec<f64> {
    let a = store
        .instant_now(&InstantQuery {
            query: q.into(),
            time: Some(t),
        })
        .unwrap_or_else(|e| panic!("{q}: {e}"));
    a.series.iter().map(|s| s.points[0].v).collect()
}

#[test]
fn rate_is_not_extrapolated_below_the_counters_zero() {
    let store = EmbeddedSource::default();
    for (t, v) in [
        (0.0, 0.0),
        (10.0, 10.0),
        (20.0, 20.0),
        (30.0, 30.0),
        (40.0, 40.0),
    ] {
        store.ingest_series(t, [(series("x_total", "a"), v)]);
    }
    // 40 counted over 40 s of samples in a 60 s window: the start would extrapolate to a
    // negative count, so it stops at zero; the end is at the last sample.
    assert_eq!(at(&store, "rate(x_total[1m])", 40.0), vec![40.0 / 60.0]);
    // A 20 s window [20, 40]: three samples, no extrapolation needed.
    assert_eq!(at(&store, "increase(x_total[20s])", 40.0), vec![20.0]);
    // Window [15, 35]: samples at 20 and 30, extrapolated 5 s each way: 10 * 20/10.
    assert_eq!(at(&store, "increase(x_total[20s])", 35.0), vec![20.0]);
}

#[test]
fn a_counter_reset_adds_the_value_before_it() {
    let store = EmbeddedSource::default();
    for (t, v) in [(0.0, 5.0), (10.0, 10.0), (20.0, 2.0), (30.0, 7.0)] {
        store.ingest_series(t, [(series("x_total", "a"), v)]);
    }
    // 5 -> 10 (+5), reset to 2 (+2), -> 7 (+5).
    assert_eq!(at(&store, "increase(x_total[30s])", 30.0), vec![12.0]);
    assert_eq!(at(&store, "resets(x_total[30s])", 30.0), vec![1.0]);
    assert_eq!(at(&store, "irate(x_total[30s])", 30.0), vec![0.5]);
}

#[test]
fn a_series_ends_at_its_staleness_marker_or_after_five_minutes() {
    let store = EmbeddedSource::default();
    store.ingest_series(0.0, [(series("g", "a"), 1.0), (series("g", "b"), 2.0)]);
    store.ingest_series(10.0, [(series("g", "a"), 1.0)]);
    assert_eq!(at(&store, "sum(g)", 5.0), vec![3.0]);
    // b left the scrape at 10 s: gone at once, not five minutes later.
    assert_eq!(at(&store, "sum(g)", 15.0), vec![1.0]);
    // a's last sample is at 10 s: visible for exactly five minutes.
    assert_eq!(at(&store, "sum(g)", 310.0), vec![1.0]);
    assert_eq!(at(&store, "sum(g)", 310.001), Vec::<f64>::new());
}

#[test]
fn or_keeps_the_right_side_only_where_the_left_has_no_match() {
    let store = EmbeddedSource::default();
    store.ingest_series(
        0.0,
        [
            (series("a", "1"), 1.0),
            (series("b", "1"), 10.0),
            (series("b", "2"), 20.0),
        ],
    );
    assert_eq!(at(&store, "a or b", 0.0), vec![1.0, 20.0]);
    assert_eq!(at(&store, "b / on (pod) a", 0.0), vec![10.0]);
    assert_eq!(at(&store, "b > bool 15", 0.0), vec![0.0, 1.0]);
}
