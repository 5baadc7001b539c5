//! Property tests of the draft's sentences (issue 17): whatever the readings, no sentence
//! says "rose" of a value that fell (or "fell" of one that rose), and no reading is written so
//! that it reads the same as the threshold it is set beside.

use crate::support::records;
use proptest::prelude::*;
use warroom::config::Unit;
use warroom::incident::event::{Direction, Event, Level, Source};
use warroom::postmortem::phrases::{self, Crossed};
use warroom::postmortem::timeline::{self, Input, Mode};
use warroom::postmortem::words;

fn unit() -> impl Strategy<Value = Unit> {
    prop_oneof![
        Just(Unit::Percent),
        Just(Unit::Seconds),
        Just(Unit::Ratio),
        Just(Unit::Count),
        Just(Unit::Bytes),
        Just(Unit::PerSecond),
    ]
}

fn level() -> impl Strategy<Value = Level> {
    prop_oneof![Just(Level::Warn), Just(Level::Crit)]
}

/// A threshold and a reading near it (often very near: the hard case), or anywhere.
fn pair() -> impl Strategy<Value = (f64, f64)> {
    (0.0001f64..5000.0).prop_flat_map(|t| {
        prop_oneof![
            (Just(t), (-1e-6f64..1e-6).prop_map(move |d| t * (1.0 + d))),
            (Just(t), (-0.05f64..0.05).prop_map(move |d| t * (1.0 + d))),
            (Just(t), 0.0f64..10_000.0),
            (Just(t), Just(t)),
        ]
    })
}

/// The text inside "(reading …)" and after "threshold of ", when both are there.
fn reading_and_threshold(s: &str) -> Option<(String, String)> {
    let r = s.split("(reading ").nth(1)?.split(')').next()?.to_string();
    let t = s
        .split("threshold of ")
        .nth(1)?
        .split(" (reading")
        .next()?
        .to_string();
    Some((r, t))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn a_crossing_never_says_rose_of_a_falling_value_nor_reads_as_its_threshold(
        unit in unit(),
        level in level(),
        (threshold, value) in pair(),
        bad_above in any::<bool>(),
        went_bad in any::<bool>(),
    ) {
        let s = phrases::crossed(unit, bad_above, went_bad, Crossed { level, value, threshold });
        if s.contains("rose") {
            prop_assert!(value > threshold, "{s} ({value} vs {threshold})");
        }
        if s.contains("fell") {
            prop_assert!(value < threshold, "{s} ({value} vs {threshold})");
        }
        if s.contains("returned below") {
            prop_assert!(value < threshold, "{s}");
        }
        if s.contains("returned above") {
            prop_assert!(value > threshold, "{s}");
        }
        match reading_and_threshold(&s) {
            Some((r, t)) => prop_assert_ne!(r, t, "{}", s),
            None => prop_assert!(value == threshold && s.contains("reached"), "{s}"),
        }
    }

    #[test]
    fn both_thresholds_at_once_never_read_as_either(
        unit in unit(),
        (crit, value) in pair(),
        gap in 0.01f64..0.9,
        bad_above in any::<bool>(),
    ) {
        let warn = if bad_above { crit * (1.0 - gap) } else { crit * (1.0 + gap) };
        let c = |level, threshold| Crossed { level, value, threshold };
        let s = phrases::crossed_both(unit, bad_above, c(Level::Warn, warn), c(Level::Crit, crit));
        // One sentence for both, or one clause for each.
        for clause in s.split(", and ") {
            let t = if clause.contains("warning threshold") { warn } else { crit };
            if clause.contains("rose") {
                prop_assert!(value > t, "{s}");
            }
            if clause.contains("fell") {
                prop_assert!(value < t, "{s}");
            }
            if let Some(r) = clause.split("(reading ").nth(1).and_then(|r| r.split(')').next()) {
                for shown in clause.split(['(', ')']).skip(1).step_by(2) {
                    if !shown.starts_with("reading") {
                        prop_assert_ne!(r, shown, "{}", s);
                    }
                }
                if let Some((rd, th)) = reading_and_threshold(clause) {
                    prop_assert_ne!(rd, th, "{}", s);
                }
            }
        }
    }

    #[test]
    fn a_reading_never_reads_as_a_different_threshold(
        unit in unit(),
        (threshold, value) in pair(),
    ) {
        prop_assume!(value != threshold);
        let (r, t) = words::reading_pair(unit, value, threshold);
        prop_assert_ne!(r, t);
    }

    #[test]
    fn before_and_after_say_rose_only_when_it_rose(
        unit in unit(),
        (before, after) in pair(),
    ) {
        let s = phrases::moved(unit, before, after);
        if s.starts_with("rose") {
            prop_assert!(after > before, "{s}");
        }
        if s.starts_with("fell") {
            prop_assert!(after < before, "{s}");
        }
        let c = phrases::change(unit, before, after);
        if before != after {
            let (b, a) = c.split_once(" → ").unwrap();
            prop_assert!(b != a || c.contains("just"), "{c} for {before} → {after}");
        }
    }

    /// The whole timeline, folded and full, of one panel's random crossings: every row that
    /// says "rose" is of a crossing whose value went up past its threshold.
    #[test]
    fn timeline_rows_never_say_rose_of_a_falling_value(
        steps in prop::collection::vec((level(), any::<bool>(), 0.0f64..2.0), 1..12),
        threshold in 0.05f64..1.5,
        bad_above in any::<bool>(),
    ) {
        let t0: chrono::DateTime<chrono::Utc> = "2026-07-17T07:00:00Z".parse().unwrap();
        let records = records::numbered(steps.iter().enumerate().map(|(i, (level, up, value))| {
            let at = t0 + chrono::Duration::minutes(3 * i as i64);
            let kind = Event::ThresholdCrossed {
                panel: "Instances up".into(),
                level: *level,
                direction: if *up { Direction::Up } else { Direction::Down },
                value: *value,
                threshold,
                at,
            };
            (at, Source::Metric, "Instances up", kind)
        }));
        let events = timeline::effective(&records);
        let crossings = timeline::crossings(&events, &|_| Some(bad_above));
        for mode in [Mode::Folded, Mode::Full] {
            let rows = timeline::rows(
                &Input {
                    events: &events,
                    crossings: &crossings,
                    steps: &[],
                    planned: &[],
                    impact: None,
                    unit: &|_| Unit::Percent,
                    standing: &|_| false,
                    last: t0 + chrono::Duration::hours(1),
                    tz: chrono_tz::UTC,
                },
                mode,
            );
            for r in &rows {
                // A row may hold two crossings ("…, then at 07:03 …"): each clause on its own.
                for clause in r.event.split(", then at ").flat_map(|c| c.split(", and ")) {
                    let reading: Option<f64> = clause
                        .split("(reading ")
                        .nth(1)
                        .and_then(|s| s.split('%').next())
                        .map(|s| s.trim_start_matches("just over ").trim_start_matches("just under "))
                        .and_then(|s| s.replace(',', "").parse().ok());
                    if clause.contains("rose") {
                        prop_assert!(
                            reading.is_some_and(|v| v / 100.0 > threshold - 1e-9),
                            "{} (threshold {threshold})", r.event
                        );
                    }
                    if clause.contains("fell") {
                        prop_assert!(
                            reading.is_some_and(|v| v / 100.0 < threshold + 1e-9),
                            "{} (threshold {threshold})", r.event
                        );
                    }
                    if let Some((rd, th)) = reading_and_threshold(clause) {
                        prop_assert_ne!(rd, th.trim_end_matches(['.', ',']).to_string(), "{}", r.event);
                    }
                }
            }
        }
    }
}
