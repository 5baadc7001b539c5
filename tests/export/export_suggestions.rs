//! Suggested corrective actions (issue 17) appear only when their pattern is in the data, and
//! never otherwise: one synthetic incident, its signals made from known curves, with each
//! pattern switched on alone and then off.

use crate::support::records;
use chrono::{DateTime, Duration, Utc};
use std::collections::BTreeMap;
use warroom::config::BadWhen;
use warroom::incident::event::{Direction, Event, Level, RunRef, Severity, Source, StepState};
use warroom::incident::record::Record;
use warroom::incident::snapshot::{self, PanelSnapshot, SnapshotSeries, SnapshotWindow};
use warroom::metrics::presets::sim_panels;
use warroom::postmortem::facts::{Evidence, compute_from};
use warroom::postmortem::rules::AlertRule;
use warroom::postmortem::timeline::Mode;

const STEP: f64 = 15.0;

fn t0() -> DateTime<Utc> {
    "2026-07-17T07:00:00Z".parse().unwrap()
}

fn at(min: f64) -> DateTime<Utc> {
    t0() + Duration::milliseconds((min * 60_000.0) as i64)
}

/// What the synthetic incident shows.
#[derive(Debug, Clone, Copy, Default)]
struct Case {
    /// Peak attempts per user request.
    amplification: f64,
    duplicates: f64,
    acquire_timeouts: f64,
    /// A scale-out at minute 20, and how much slower queries got after it.
    scale_out: Option<f64>,
    /// Capacity down to 0 % with instances restarting on their own.
    restart_loop: bool,
    /// An alert rule watches pool saturation (the first signal).
    pool_rule: bool,
}

fn window() -> SnapshotWindow {
    SnapshotWindow {
        from: at(-15.0),
        to: at(60.0),
        step_s: STEP,
    }
}

/// A curve from (minute, value) knots, flat outside.
fn curve(knots: &[(f64, f64)], m: f64) -> f64 {
    if m <= knots[0].0 {
        return knots[0].1;
    }
    for w in knots.windows(2) {
        if m <= w[1].0 {
            let f = (m - w[0].0) / (w[1].0 - w[0].0);
            return w[0].1 + f * (w[1].1 - w[0].1);
        }
    }
    knots[knots.len() - 1].1
}

fn snap(order: usize, p: &warroom::config::PanelConfig, f: &dyn Fn(f64) -> f64) -> PanelSnapshot {
    let w = window();
    let (from, to) = (w.from.timestamp() as f64, w.to.timestamp() as f64);
    let mut points = Vec::new();
    let mut x = from;
    while x <= to {
        points.push([x, f((x - t0().timestamp() as f64) / 60.0)]);
        x += STEP;
    }
    PanelSnapshot {
        order,
        slug: snapshot::slug(&p.title),
        title: p.title.clone(),
        query: p.query.clone(),
        unit: snapshot::unit_name(p.unit).into(),
        warn: p.warn,
        crit: p.crit,
        bad_when: match p.bad_when {
            BadWhen::Above => "above",
            BadWhen::Below => "below",
        }
        .into(),
        legend: None,
        signal: None,
        window: w,
        series: vec![SnapshotSeries {
            labels: BTreeMap::new(),
            points,
        }],
        error: None,
    }
}

fn panels(c: &Case) -> Vec<PanelSnapshot> {
    let bad = |m: f64, v: f64, normal: f64| {
        curve(&[(0.0, normal), (1.0, v), (30.0, v), (31.0, normal)], m)
    };
    let latency = move |m: f64| {
        let base = bad(m, 3.0, 0.04);
        // Slower from the scale-out on, fully within two minutes.
        match c.scale_out {
            Some(x) if m > 20.0 && m < 30.0 => {
                base * (1.0 + (x - 1.0) * ((m - 20.0) / 2.0).min(1.0))
            }
            _ => base,
        }
    };
    sim_panels()
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let f: Box<dyn Fn(f64) -> f64> = match p.title.as_str() {
                "Pool saturation" => Box::new(move |m| bad(m, 1.0, 0.3)),
                "Pool wait p99" => Box::new(move |m| bad(m, 2.0, 0.005)),
                "Query latency p50/p99" => Box::new(latency),
                "Retry amplification" => Box::new(move |m| bad(m, c.amplification.max(1.0), 1.0)),
                "Error ratio" => Box::new(move |m| bad(m, 0.8, 0.0)),
                "Instances up" if c.restart_loop => Box::new(move |m| bad(m, 0.0, 1.0)),
                "Restarts (5m)" if c.restart_loop => Box::new(move |m| bad(m, 12.0, 0.0)),
                "Instances up" => Box::new(|_| 1.0),
                _ => Box::new(|_| 0.0),
            };
            snap(i, p, &*f)
        })
        .collect()
}

/// The fact queries: counters growing at the rates the case gives.
fn facts(c: &Case) -> Vec<PanelSnapshot> {
    let rate = |per_min: f64| move |m: f64| ((m + 15.0) * per_min).max(0.0).floor();
    snapshot::fact_panels()
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let f: Box<dyn Fn(f64) -> f64> = match p.title.as_str() {
                snapshot::fact::USER_REQUESTS => Box::new(rate(6000.0)),
                snapshot::fact::SERVED => Box::new(rate(3000.0)),
                snapshot::fact::DUPLICATES => Box::new(rate(c.duplicates / 75.0)),
                snapshot::fact::ACQUIRE_TIMEOUTS => Box::new(rate(c.acquire_timeouts / 75.0)),
                _ => Box::new(|_| 400e6),
            };
            snap(i, p, &*f)
        })
        .collect()
}

fn records(c: &Case) -> Vec<Record> {
    let mut out = Vec::new();
    let mut add = |min: f64, source: Source, kind: Event| out.push((at(min), source, "ana", kind));
    add(
        0.0,
        Source::Operator,
        Event::IncidentOpened {
            title: "Synthetic".into(),
            severity: Severity::Sev1,
        },
    );
    let cross = |panel: &str, level, direction, value: f64, threshold: f64, min: f64| {
        Event::ThresholdCrossed {
            panel: panel.into(),
            level,
            direction,
            value,
            threshold,
            at: at(min),
        }
    };
    use Direction::{Down, Up};
    use Level::Crit;
    add(
        1.0,
        Source::Metric,
        cross("Pool saturation", Crit, Up, 1.0, 0.95, 0.5),
    );
    add(
        1.0,
        Source::Metric,
        cross("Error ratio", Crit, Up, 0.8, 0.05, 1.0),
    );
    if c.restart_loop {
        add(
            1.0,
            Source::Metric,
            cross("Instances up", Crit, Down, 0.0, 0.7, 1.0),
        );
        add(
            1.0,
            Source::Metric,
            cross("Restarts (5m)", Crit, Up, 12.0, 5.0, 1.0),
        );
    }
    if c.scale_out.is_some() {
        let run = RunRef {
            run_id: "scale-out-1".into(),
            runbook: "scale-out".into(),
            hash: "h".into(),
        };
        let step = |state, detail: &str| Event::RunbookStep {
            run: run.clone(),
            step: "scale".into(),
            state,
            detail: Some(detail.into()),
        };
        add(
            20.0,
            Source::Runbook,
            step(
                StepState::Started,
                "http: Scale the API tier out to 15 instances",
            ),
        );
        add(
            20.0,
            Source::Runbook,
            step(StepState::Succeeded, "HTTP 200 {}"),
        );
    }
    add(
        31.0,
        Source::Metric,
        cross("Error ratio", Crit, Down, 0.0, 0.05, 31.0),
    );
    records::numbered(out)
}

fn patterns(c: &Case) -> Vec<String> {
    let (recs, snaps, fact_snaps) = (records(c), panels(c), facts(c));
    let pool_rule = [AlertRule {
        name: "PoolSaturated".into(),
        query: "max(db_pool_connections_in_use / db_pool_connections_max) > 0.95".into(),
    }];
    let f = compute_from(
        "2026-07-17-1",
        &Evidence {
            records: &recs,
            panels: &snaps,
            facts: &fact_snaps,
            rules: Some(if c.pool_rule { &pool_rule } else { &[] }),
            public_names: &Default::default(),
        },
        chrono_tz::UTC,
        Mode::Folded,
    );
    for s in &f.suggestions {
        assert!(!s.evidence.is_empty(), "{s:?}");
    }
    f.suggestions
        .iter()
        .map(|s| s.pattern.to_string())
        .collect()
}

#[test]
fn each_suggestion_appears_with_its_pattern_and_only_then() {
    // Nothing but the outage: the first signal (pool saturation) has no rule on it.
    let quiet = Case {
        amplification: 1.0,
        pool_rule: true,
        ..Case::default()
    };
    assert_eq!(patterns(&quiet), Vec::<String>::new());

    let cases: [(&str, Case); 6] = [
        (
            "retry-amplification",
            Case {
                amplification: 2.6,
                ..quiet
            },
        ),
        (
            "unalerted-first-signal",
            Case {
                pool_rule: false,
                ..quiet
            },
        ),
        (
            "pool-wait-at-timeout",
            Case {
                acquire_timeouts: 500.0,
                ..quiet
            },
        ),
        (
            "scale-out-worse-latency",
            Case {
                scale_out: Some(1.5),
                ..quiet
            },
        ),
        (
            "duplicates",
            Case {
                duplicates: 120.0,
                ..quiet
            },
        ),
        (
            "restart-loop",
            Case {
                restart_loop: true,
                ..quiet
            },
        ),
    ];
    for (pattern, case) in cases {
        assert_eq!(patterns(&case), [pattern], "{case:?}");
    }
    // Just below each pattern's edge: nothing.
    for (what, case) in [
        (
            "amplification of exactly 2",
            Case {
                amplification: 2.0,
                ..quiet
            },
        ),
        (
            "a scale-out with latency 10 % worse",
            Case {
                scale_out: Some(1.1),
                ..quiet
            },
        ),
        (
            "no duplicate",
            Case {
                duplicates: 0.0,
                ..quiet
            },
        ),
    ] {
        assert_eq!(patterns(&case), Vec::<String>::new(), "{what}");
    }
}
