//! Threshold crossings as a pure function: table tests over readings (issue 6, "Automatic
//! events").

use chrono::{DateTime, Duration as Span, Utc};
use std::time::Duration;
use warroom::incident::crossing::{Crossing, Rule, Worse, detect};
use warroom::incident::event::{Direction, Level};

fn t(secs: i64) -> DateTime<Utc> {
    DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap() + Span::seconds(secs)
}

fn rule(min_secs: u64) -> Rule {
    Rule {
        warn: Some(0.8),
        crit: Some(0.95),
        worse: Worse::Above,
        hysteresis: Some(0.05),
        min_duration: Duration::from_secs(min_secs),
    }
}

/// Readings every 15 s from t=0.
fn every_15s(values: &[f64]) -> Vec<(DateTime<Utc>, f64)> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| (t(i as i64 * 15), *v))
        .collect()
}

/// (seconds after t=0 it happened, level, direction) for compact tables.
type Brief = (i64, Level, Direction);

fn brief(crossings: &[Crossing]) -> Vec<Brief> {
    crossings
        .iter()
        .map(|c| ((c.at - t(0)).num_seconds(), c.level, c.direction))
        .collect()
}

use Direction::{Down, Up};
use Level::{Crit, Warn};

#[test]
fn crossings_table() {
    let nan = f64::NAN;
    let cases: &[(&str, Vec<f64>, u64, Vec<Brief>)] = &[
        ("never crosses", vec![0.1, 0.5, 0.79, 0.5], 60, vec![]),
        (
            "warn only, comes back and settles",
            vec![0.5, 0.85, 0.9, 0.5, 0.5, 0.5, 0.5, 0.5],
            60,
            vec![(15, Warn, Up), (45, Warn, Down)],
        ),
        (
            "jumps past both at once, back at once",
            vec![0.5, 0.99, 0.99, 0.1, 0.1, 0.1],
            30,
            vec![
                (15, Warn, Up),
                (15, Crit, Up),
                (45, Crit, Down),
                (45, Warn, Down),
            ],
        ),
        (
            "not back for long enough yet",
            vec![0.5, 0.9, 0.5, 0.5],
            60,
            vec![(15, Warn, Up)],
        ),
        (
            "inside the hysteresis band is not back",
            vec![0.5, 0.9, 0.77, 0.77, 0.77, 0.77, 0.77, 0.77],
            30,
            vec![(15, Warn, Up)],
        ),
        (
            "a bad reading restarts the wait",
            vec![0.9, 0.5, 0.5, 0.9, 0.5, 0.5, 0.5],
            30,
            vec![(0, Warn, Up), (60, Warn, Down)],
        ),
        (
            "missing readings change nothing",
            vec![0.9, nan, 0.5, nan, 0.5, 0.5],
            30,
            vec![(0, Warn, Up), (30, Warn, Down)],
        ),
        (
            "exactly at the threshold is past it",
            vec![0.8, 0.5, 0.5],
            15,
            vec![(0, Warn, Up), (15, Warn, Down)],
        ),
        (
            "zero minimum duration",
            vec![0.9, 0.5, 0.9, 0.5],
            0,
            vec![
                (0, Warn, Up),
                (15, Warn, Down),
                (30, Warn, Up),
                (45, Warn, Down),
            ],
        ),
    ];
    for (name, values, min, expected) in cases {
        let got = detect(rule(*min), &every_15s(values));
        assert_eq!(brief(&got), *expected, "{name}");
        for c in &got {
            assert!(c.detected >= c.at, "{name}: detected before it happened");
        }
    }
}

#[test]
fn lower_is_worse_crosses_downward_first() {
    let r = Rule {
        warn: Some(0.99),
        crit: Some(0.9),
        worse: Worse::Below,
        hysteresis: Some(0.005),
        min_duration: Duration::from_secs(30),
    };
    let got = detect(r, &every_15s(&[1.0, 0.95, 0.5, 1.0, 1.0, 1.0]));
    assert_eq!(
        brief(&got),
        vec![
            (15, Warn, Down),
            (30, Crit, Down),
            (45, Crit, Up),
            (45, Warn, Up)
        ]
    );
    assert_eq!(got[0].threshold, 0.99);
    assert_eq!(got[2].value, 1.0);
}

#[test]
fn a_value_flapping_every_scrape_yields_at_most_one_pair_per_minimum_duration() {
    let min = 120;
    // One hour of 15 s scrapes flapping across the warn threshold, then a settled tail.
    let mut values: Vec<f64> = (0..240)
        .map(|i| if i % 2 == 0 { 0.82 } else { 0.7 })
        .collect();
    values.extend(std::iter::repeat_n(0.5, 20));
    let got = detect(rule(min), &every_15s(&values));
    let span = (values.len() as i64 - 1) * 15;
    let pairs = got.iter().filter(|c| c.direction == Up).count();
    let allowed = (span / min as i64).max(1) as usize;
    println!(
        "flapping: {} readings over {span} s gave {} events ({pairs} pair(s)), allowed {allowed}",
        values.len(),
        got.len()
    );
    assert!(pairs <= allowed);
    assert_eq!(brief(&got), vec![(0, Warn, Up), (239 * 15, Warn, Down)]);

    // Slow flapping: bad for a scrape, then clearly back for longer than the minimum duration.
    let slow: Vec<f64> = (0..100)
        .map(|i| if i % 10 == 0 { 0.9 } else { 0.5 })
        .collect();
    let got = detect(rule(min), &every_15s(&slow));
    let ups: Vec<i64> = got
        .iter()
        .filter(|c| c.direction == Up)
        .map(|c| (c.at - t(0)).num_seconds())
        .collect();
    assert!(!ups.is_empty());
    for w in ups.windows(2) {
        assert!(
            w[1] - w[0] >= min as i64,
            "pairs closer than the minimum duration: {ups:?}"
        );
    }
}

#[test]
fn out_of_order_readings_are_ignored() {
    let readings = vec![(t(30), 0.9), (t(15), 0.5), (t(45), 0.5), (t(75), 0.5)];
    assert_eq!(
        brief(&detect(rule(30), &readings)),
        vec![(30, Warn, Up), (45, Warn, Down)]
    );
}
