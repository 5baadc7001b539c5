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

/// The wrong answers issue 21 listed, each with the answer Prometheus gives. Values marked
/// 2.42 were read from the Prometheus 2.42 installed here on the same samples; the two where
/// 2.42 and 2.55 differ (compensated sums, the counter's zero point) carry 2.55's answer, from
/// its own test files.
mod prometheus_answers {
    use super::super::EmbeddedSource;
    use crate::metrics::{InstantQuery, Labels};

    fn labels(name: &str, pairs: &[(&str, &str)]) -> Labels {
        let mut l: Labels = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        l.insert("__name__".into(), name.into());
        l
    }

    /// A series: name, labels, value.
    type One<'a> = (&'a str, &'a [(&'a str, &'a str)], f64);

    /// One sample per series at t = 100 s.
    fn store(series: &[One<'_>]) -> EmbeddedSource {
        let s = EmbeddedSource::default();
        s.append(series.iter().map(|(n, l, v)| (labels(n, l), 100.0, *v)));
        s
    }

    fn query(s: &EmbeddedSource, q: &str) -> Result<Vec<(Labels, f64)>, String> {
        s.instant_now(&InstantQuery {
            query: q.into(),
            time: Some(100.0),
        })
        .map(|a| {
            a.series
                .into_iter()
                .map(|x| (x.labels, x.points[0].v))
                .collect()
        })
        .map_err(|e| e.to_string())
    }

    fn values(s: &EmbeddedSource, q: &str) -> Vec<f64> {
        query(s, q)
            .unwrap_or_else(|e| panic!("{q}: {e}"))
            .into_iter()
            .map(|x| x.1)
            .collect()
    }

    fn one(s: &EmbeddedSource, q: &str) -> f64 {
        let v = values(s, q);
        assert_eq!(v.len(), 1, "{q}: {v:?}");
        v[0]
    }

    fn error(s: &EmbeddedSource, q: &str) -> String {
        match query(s, q) {
            Ok(v) => panic!("{q} should fail, answered {v:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn sort_desc_orders_from_the_largest_with_nan_last() {
        let s = store(&[
            ("m", &[("p", "a")], 1.0),
            ("m", &[("p", "b")], 3.0),
            ("m", &[("p", "c")], 2.0),
            ("m", &[("p", "d")], f64::NAN),
        ]);
        // 2.42: b=3, c=2, a=1, d=NaN; sort: a, c, b, d.
        let d = values(&s, "sort_desc(m)");
        assert_eq!(&d[..3], &[3.0, 2.0, 1.0]);
        assert!(d[3].is_nan());
        let a = values(&s, "sort(m)");
        assert_eq!(&a[..3], &[1.0, 2.0, 3.0]);
        assert!(a[3].is_nan());
    }

    #[test]
    fn avg_of_opposite_infinities_is_nan() {
        let inf = f64::INFINITY;
        let s = store(&[
            ("x", &[("p", "a")], inf),
            ("x", &[("p", "b")], inf),
            ("x", &[("p", "c")], -inf),
            ("y", &[("p", "a")], inf),
            ("y", &[("p", "b")], 2.0),
        ]);
        assert!(one(&s, "avg(x)").is_nan());
        assert_eq!(one(&s, "avg(y)"), inf);
    }

    #[test]
    fn sums_are_compensated() {
        // 2.55 (aggregators.test, functions.test): 10, 2.5, 2, 0.5. Prometheus 2.42 answers
        // 0 for the sum: it summed without compensation.
        let s = store(&[
            ("k", &[("p", "a")], 2.0),
            ("k", &[("p", "b")], 8.0),
            ("k", &[("p", "c")], 1e100),
            ("k", &[("p", "d")], -1e100),
        ]);
        assert_eq!(one(&s, "sum(k)"), 10.0);
        assert_eq!(one(&s, "avg(k)"), 2.5);
        let t = EmbeddedSource::default();
        let l = labels("metric", &[]);
        t.append(
            [1.0, 1e100, 1.0, -1e100]
                .into_iter()
                .enumerate()
                .map(|(i, v)| (l.clone(), 40.0 + 10.0 * i as f64, v)),
        );
        assert_eq!(
            values(&t, "sum_over_time(metric[1m])"),
            vec![2.0],
            "sum_over_time"
        );
        assert_eq!(values(&t, "avg_over_time(metric[1m])"), vec![0.5]);
    }

    #[test]
    fn a_nan_clamp_bound_gives_nan() {
        let s = store(&[("m", &[("p", "a")], -50.0), ("m", &[("p", "b")], 5.0)]);
        // 2.42: NaN for every element in all four.
        for q in [
            "clamp(m, NaN, 10)",
            "clamp(m, 0, NaN)",
            "clamp_min(m, NaN)",
            "clamp_max(m, NaN)",
        ] {
            let v = values(&s, q);
            assert!(v.len() == 2 && v.iter().all(|v| v.is_nan()), "{q}: {v:?}");
        }
        assert_eq!(values(&s, "clamp(m, 0, 10)"), vec![0.0, 5.0]);
        assert!(values(&s, "clamp(m, 10, 0)").is_empty());
    }

    #[test]
    fn absent_drops_a_label_matched_more_than_once() {
        let s = EmbeddedSource::default();
        // 2.42: {}, {b="2"}, {a="1"}.
        let absent = |q: &str| query(&s, q).unwrap_or_else(|e| panic!("{q}: {e}"));
        assert_eq!(
            absent(r#"absent(nope{a="1", a="2"})"#),
            vec![(Labels::new(), 1.0)]
        );
        assert_eq!(
            absent(r#"absent(nope{a="1", b="2", a="1"})"#),
            vec![(
                labels("x", &[("b", "2")])
                    .into_iter()
                    .filter(|l| l.0 != "__name__")
                    .collect(),
                1.0
            )]
        );
        assert_eq!(
            absent(r#"absent(nope{job="x", job=~"y", foo="bar"})"#)[0].0,
            [("foo".to_string(), "bar".to_string())].into()
        );
    }

    #[test]
    fn an_invalid_label_replace_target_is_refused() {
        let s = store(&[("m", &[("p", "a")], 1.0)]);
        // 2.42: "invalid destination label name in label_replace(): invalid-name".
        let e = error(&s, r#"label_replace(m, "invalid-name", "x", "p", "(.*)")"#);
        assert!(e.contains("invalid destination label name"), "{e}");
        assert!(error(&s, r#"label_join(m, "1x", "-", "p")"#).contains("destination"));
    }

    #[test]
    fn names_dropped_into_one_label_set_are_refused() {
        let s = EmbeddedSource::default();
        for name in ["x", "y"] {
            let l = labels(name, &[("env", "1")]);
            s.append((0..4).map(|i| (l.clone(), 40.0 + 20.0 * f64::from(i), f64::from(i))));
        }
        // 2.42: "vector cannot contain metrics with the same labelset" (rate drops both
        // names, leaving two {env="1"}); grouping by the name without rate is fine.
        let e = error(&s, r#"sum by (__name__) (rate({env="1"}[1m]))"#);
        assert!(e.contains("same labelset"), "{e}");
        assert_eq!(
            query(&s, r#"sum by (__name__) ({env="1"})"#).map(|v| v.len()),
            Ok(2)
        );
        assert!(error(&s, r#"-{env="1"}"#).contains("same labelset"));
    }

    #[test]
    fn topk_refuses_a_nan_k() {
        let s = store(&[("m", &[("p", "a")], 1.0), ("m", &[("p", "b")], 3.0)]);
        // 2.42: "Scalar value NaN overflows int64" for both.
        assert!(error(&s, "topk(NaN, m)").contains("overflows int64"));
        assert!(error(&s, "bottomk(NaN, m)").contains("overflows int64"));
        assert_eq!(values(&s, "topk(1, m)"), vec![3.0]);
    }

    #[test]
    fn stddev_over_nan_and_inf_follows_prometheus_2() {
        let s = store(&[
            ("one_nan", &[("p", "a")], f64::NAN),
            ("one_inf", &[("p", "a")], f64::INFINITY),
            ("nanv", &[("p", "a")], f64::NAN),
            ("nanv", &[("p", "b")], 1.0),
            ("infv", &[("p", "a")], 1.0),
            ("infv", &[("p", "b")], f64::INFINITY),
        ]);
        // 2.42 and 2.55 alike: a NaN or Inf among other values gives NaN; alone it gives 0
        // (Prometheus 3 answers NaN there too).
        assert!(one(&s, "stddev(nanv)").is_nan());
        assert!(one(&s, "stddev(infv)").is_nan());
        assert!(one(&s, "stdvar(infv)").is_nan());
        assert_eq!(one(&s, "stddev(one_nan)"), 0.0);
        assert_eq!(one(&s, "stddev(one_inf)"), 0.0);
    }

    #[test]
    fn increase_stops_at_the_counters_zero_point() {
        let s = EmbeddedSource::default();
        let dings = labels("http_requests", &[("path", "/dings")]);
        let bumms = labels("http_requests", &[("path", "/bumms")]);
        for i in 0..=10 {
            let t = 300.0 * f64::from(i);
            s.append([
                (dings.clone(), t, 10.0 + 10.0 * f64::from(i)),
                (bumms.clone(), t, 1.0 + 10.0 * f64::from(i)),
            ]);
        }
        let q = InstantQuery {
            query: "increase(http_requests[100m])".into(),
            time: Some(3000.0),
        };
        let a = s.instant_now(&q).expect("answers");
        let by_path = |p: &str| {
            a.series
                .iter()
                .find(|x| x.labels.get("path").map(String::as_str) == Some(p))
                .map(|x| x.points[0].v)
        };
        // 2.55 (functions.test): the start extrapolates half an interval (2m30s) unless the
        // counter's zero point is nearer: 105 and 101. 2.42 answers 110 and 101.
        assert!(
            (by_path("/dings").unwrap_or(0.0) - 105.0).abs() < 1e-9,
            "{a:?}"
        );
        assert!(
            (by_path("/bumms").unwrap_or(0.0) - 101.0).abs() < 1e-9,
            "{a:?}"
        );
        let legacy = s
            .clone()
            .with_legacy_extrapolation()
            .instant_now(&q)
            .expect("answers");
        let v: Vec<f64> = legacy.series.iter().map(|x| x.points[0].v).collect();
        assert!(
            v.iter().any(|v| (v - 110.0).abs() < 1e-9)
                && v.iter().any(|v| (v - 101.0).abs() < 1e-9),
            "as 2.42: {v:?}"
        );
    }

    #[test]
    fn one_to_one_comparisons_must_match_one_element() {
        let s = store(&[
            ("l", &[("a", "1"), ("b", "x")], 2.0),
            ("l", &[("a", "1"), ("b", "y")], 3.0),
            ("r", &[("a", "1")], 1.0),
        ]);
        // 2.42: "multiple matches for labels: many-to-one matching must be explicit
        // (group_left/group_right)" for all three; group_left answers both.
        for q in ["l > on(a) r", "l > bool on(a) r", "l + on(a) r"] {
            assert!(
                error(&s, q).contains("many-to-one matching must be explicit"),
                "{q}"
            );
        }
        assert_eq!(values(&s, "l > on(a) group_left r"), vec![2.0, 3.0]);
    }
}

#[test]
fn a_gap_is_not_stale_but_a_series_missing_from_a_scrape_is() {
    // Appended one by one: b has no sample at 10 s, which is a gap, so b still answers
    // from its sample at 0 s.
    let appended = EmbeddedSource::default();
    appended.append([
        (series("g", "a"), 0.0, 1.0),
        (series("g", "b"), 0.0, 2.0),
        (series("g", "a"), 10.0, 1.0),
    ]);
    assert_eq!(at(&appended, "sum(g)", 15.0), vec![3.0]);
    // An explicit marker ends it.
    assert!(appended.mark_stale(&series("g", "b"), 12.0));
    assert_eq!(at(&appended, "sum(g)", 15.0), vec![1.0]);
    assert!(
        !appended.mark_stale(&series("g", "b"), 11.0),
        "older than its newest"
    );
    // Scraped: b missing from the scrape at 10 s is stale from then on.
    let scraped = EmbeddedSource::default();
    scraped.ingest_series(0.0, [(series("g", "a"), 1.0), (series("g", "b"), 2.0)]);
    scraped.ingest_series(10.0, [(series("g", "a"), 1.0)]);
    assert_eq!(at(&scraped, "sum(g)", 15.0), vec![1.0]);
}

#[test]
fn subqueries_read_the_multiples_of_their_step() {
    let store = EmbeddedSource::default();
    // x = t (seconds) every 10 s from 0 to 600.
    store.append((0..=60).map(|i| (series("x", "a"), f64::from(i) * 10.0, f64::from(i) * 10.0)));
    // [5m:1m] at 330 s reads 60, 120, 180, 240, 300 (the multiples of 1m in [30 s, 330 s]).
    assert_eq!(at(&store, "sum_over_time(x[5m:1m])", 330.0), vec![900.0]);
    assert_eq!(at(&store, "count_over_time(x[5m:1m])", 330.0), vec![5.0]);
    // Without a step: the default one minute; with an offset the window moves back.
    assert_eq!(at(&store, "count_over_time(x[5m:])", 330.0), vec![5.0]);
    assert_eq!(
        at(&store, "max_over_time(x[5m:1m] offset 1m)", 330.0),
        vec![240.0]
    );
    assert_eq!(
        at(&store, "max_over_time(x[2m:30s] @ 100)", 500.0),
        vec![90.0]
    );
    // A rate inside: x grows by 1 a second.
    assert_eq!(
        at(&store, "max_over_time(rate(x[1m])[10m:])", 600.0),
        vec![1.0]
    );
    let range = store
        .range_now(&crate::metrics::RangeQuery {
            query: "min_over_time(x[1m:20s])".into(),
            start: 100.0,
            end: 160.0,
            step: 30.0,
        })
        .expect("range");
    let v: Vec<f64> = range.series[0].points.iter().map(|p| p.v).collect();
    // Windows [40, 100] and [70, 130] and [100, 160]: first multiples of 20 s are 40, 80, 100.
    assert_eq!(v, vec![40.0, 80.0, 100.0]);
}

#[test]
fn the_new_functions_answer() {
    let store = EmbeddedSource::default();
    store.append((0..=6).map(|i| (series("x", "a"), f64::from(i) * 10.0, f64::from(i) * 2.0)));
    assert_eq!(at(&store, "deriv(x[1m])", 60.0), vec![0.2]);
    assert_eq!(at(&store, "predict_linear(x[1m], 30)", 60.0), vec![18.0]);
    assert_eq!(at(&store, "timestamp(x)", 65.0), vec![60.0]);
    assert_eq!(at(&store, "timestamp(x offset 15s)", 65.0), vec![50.0]);
    assert_eq!(
        at(&store, "absent_over_time(x[1m])", 60.0),
        Vec::<f64>::new()
    );
    assert_eq!(at(&store, "absent_over_time(nope[1m])", 60.0), vec![1.0]);
    assert_eq!(
        at(&store, "stdvar_over_time(x[20s])", 60.0),
        vec![8.0 / 3.0]
    );
    assert_eq!(at(&store, "pi()", 0.0), vec![std::f64::consts::PI]);
    assert_eq!(at(&store, "count_values(\"v\", x)", 60.0), vec![1.0]);
    assert_eq!(at(&store, "limitk(1, x)", 60.0), vec![12.0]);
    assert_eq!(at(&store, "year(vector(1136239445))", 0.0), vec![2006.0]);
    assert_eq!(at(&store, "cos(vector(0))", 0.0), vec![1.0]);
    assert_eq!(
        at(&store, "holt_winters(x[1m], 0.5, 0.5)", 60.0).len(),
        1,
        "the 2.x name of double_exponential_smoothing"
    );
}
