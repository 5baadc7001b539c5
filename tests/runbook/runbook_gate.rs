//! Gates: hostile answers are never a success, the failure-limit convention is pinned, and the
//! default gate does not abort a healthy, noisy fleet.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use warroom::metrics::{Point, QueryAnswer, Series, SourceError};
use warroom::runbook::gate::{Condition, Expect, GateRun, GateSpec, Reading, Verdict, judge};
use warroom::runbook::template::Template;

fn series(pod: &str, v: Option<f64>) -> Series {
    Series {
        labels: [("pod".to_string(), pod.to_string())].into(),
        points: v.map(|v| Point { t: 1.0, v }).into_iter().collect(),
    }
}

fn answer(s: Vec<Series>) -> Result<QueryAnswer, SourceError> {
    Ok(QueryAnswer {
        series: s,
        ..Default::default()
    })
}

fn spec(c: Condition) -> GateSpec {
    GateSpec::new(Template::parse("q").unwrap(), c)
}

/// A bad answer of a random shape: empty, several series, NaN, ±Inf, no sample, an error.
fn hostile(rng: &mut impl Rng, cond: Condition) -> Result<QueryAnswer, SourceError> {
    let good = match cond {
        Condition::Above(x) => x + 1.0,
        Condition::Below(x) => x - 1.0,
        Condition::Between(a, b) => (a + b) / 2.0,
    };
    let bad_values = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -f64::NAN];
    match rng.random_range(0..7) {
        0 => answer(vec![]),
        // several series where one was expected, each one satisfying the condition
        1 => answer(
            (0..rng.random_range(2..6))
                .map(|i| series(&format!("api-{i}"), Some(good)))
                .collect(),
        ),
        2 => answer(vec![series(
            "api-0",
            Some(bad_values[rng.random_range(0..4)]),
        )]),
        3 => answer(vec![series("api-0", None)]),
        4 => Err(SourceError::Timeout(std::time::Duration::from_secs(5))),
        5 => Err(SourceError::Malformed("truncated".into())),
        _ => Err(SourceError::Http {
            status: 502,
            summary: "bad gateway".into(),
        }),
    }
}

#[test]
fn ten_thousand_hostile_answers_give_zero_successes() {
    let mut rng = StdRng::seed_from_u64(11);
    let mut successes = 0;
    let mut verdict_successes = 0;
    for _ in 0..10_000 {
        let x: f64 = rng.random_range(-10.0..10.0);
        let cond = match rng.random_range(0..3) {
            0 => Condition::Above(x),
            1 => Condition::Below(x),
            _ => Condition::Between(x, x + rng.random_range(0.0..5.0)),
        };
        let a = hostile(&mut rng, cond);
        let r = judge(cond, Expect::One, &a);
        if r.is_success() {
            successes += 1;
        }
        // And a gate fed only such readings never passes.
        let s = spec(cond);
        let mut run = GateRun::default();
        for _ in 0..5 {
            if run.feed(&s, &r) == Verdict::Success {
                verdict_successes += 1;
            }
        }
    }
    assert_eq!(successes, 0);
    assert_eq!(verdict_successes, 0);
}

#[test]
fn a_good_single_series_is_a_success_and_each_mode_checks_every_series() {
    let c = Condition::Below(0.02);
    assert_eq!(
        judge(c, Expect::One, &answer(vec![series("a", Some(0.01))])),
        Reading::Success(0.01)
    );
    let two = answer(vec![series("a", Some(0.01)), series("b", Some(0.5))]);
    assert_eq!(judge(c, Expect::Each, &two), Reading::Fail(0.5));
    assert!(matches!(
        judge(c, Expect::One, &two),
        Reading::Inconclusive(_)
    ));
    // ±Inf is neither a success nor a failure, whatever the condition: there is no measure.
    for v in [f64::INFINITY, f64::NEG_INFINITY] {
        let inf = answer(vec![series("a", Some(v))]);
        for cond in [c, Condition::Above(1.0), Condition::Between(0.0, 1.0)] {
            let reading = judge(cond, Expect::One, &inf);
            assert!(
                matches!(&reading, Reading::Inconclusive(why) if why.contains("Inf")),
                "{reading}"
            );
        }
    }
}

#[test]
fn boundaries_follow_the_documented_convention() {
    // (condition, value, holds)
    let table = [
        (Condition::Above(1.0), 1.0, false),
        (Condition::Above(1.0), 1.000001, true),
        (Condition::Below(0.02), 0.02, false),
        (Condition::Below(0.02), 0.019999, true),
        (Condition::Between(0.5, 1.0), 0.5, true),
        (Condition::Between(0.5, 1.0), 1.0, true),
        (Condition::Between(0.5, 1.0), 1.0001, false),
    ];
    for (c, v, holds) in table {
        assert_eq!(c.holds(v), holds, "{c} at {v}");
    }
    // failure_limit: "more than the limit fails" (Argo: failed > failureLimit).
    for limit in 0..4u32 {
        let mut s = spec(Condition::Below(1.0));
        s.failure_limit = limit;
        s.consecutive = 100;
        let mut run = GateRun::default();
        let mut failed_at = None;
        for n in 1..=10u32 {
            if matches!(run.feed(&s, &Reading::Fail(2.0)), Verdict::Fail(_)) {
                failed_at = Some(n);
                break;
            }
        }
        assert_eq!(failed_at, Some(limit + 1), "limit {limit}");
    }
    assert!(
        spec(Condition::Below(1.0))
            .describe_rule()
            .contains("failed readings > 1")
    );
}

#[test]
fn min_samples_and_consecutive_successes_are_required() {
    let mut s = spec(Condition::Below(1.0));
    s.consecutive = 2;
    s.min_samples = 4;
    let mut run = GateRun::default();
    let ok = Reading::Success(0.1);
    let verdicts: Vec<Verdict> = (0..4).map(|_| run.feed(&s, &ok)).collect();
    assert_eq!(
        verdicts[..3],
        [Verdict::Pending, Verdict::Pending, Verdict::Pending]
    );
    assert_eq!(verdicts[3], Verdict::Success);
    // A failure resets the run of successes.
    let mut run = GateRun::default();
    s.min_samples = 1;
    assert_eq!(run.feed(&s, &ok), Verdict::Pending);
    assert_eq!(run.feed(&s, &Reading::Fail(5.0)), Verdict::Pending);
    assert_eq!(run.feed(&s, &ok), Verdict::Pending);
    assert_eq!(run.feed(&s, &ok), Verdict::Success);
}

/// A standard normal sample (Box-Muller).
fn normal(rng: &mut impl Rng) -> f64 {
    let u1: f64 = rng.random_range(f64::EPSILON..1.0);
    let u2: f64 = rng.random_range(0.0..1.0);
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// One reading of a healthy fleet's error ratio: about 0.4 % with noise, a 2 % chance of a
/// spike over the 2 % threshold (a slow scrape, a burst), a 1 % chance of a missed scrape.
fn healthy_reading(rng: &mut impl Rng) -> Result<QueryAnswer, SourceError> {
    let r: f64 = rng.random_range(0.0..1.0);
    if r < 0.01 {
        return answer(vec![]);
    }
    let v = if r < 0.03 {
        0.02 + rng.random_range(0.0..0.03)
    } else {
        (0.004 + 0.002 * normal(rng)).max(0.0)
    };
    answer(vec![series("all", Some(v))])
}

fn abort_rate(failure_limit: u32, windows: u32, seed: u64) -> f64 {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut s = spec(Condition::Below(0.02));
    s.failure_limit = failure_limit;
    let mut aborts = 0;
    for _ in 0..windows {
        let mut run = GateRun::default();
        let mut verdict = Verdict::Pending;
        for _ in 0..30 {
            let r = judge(s.condition, s.expect, &healthy_reading(&mut rng));
            verdict = run.feed(&s, &r);
            if verdict.is_final() {
                break;
            }
        }
        if verdict != Verdict::Success {
            aborts += 1;
        }
    }
    f64::from(aborts) / f64::from(windows)
}

#[test]
fn the_default_gate_rarely_aborts_a_healthy_fleet() {
    let default_limit = spec(Condition::Below(0.02)).failure_limit;
    let rate = abort_rate(default_limit, 10_000, 5);
    eprintln!(
        "false aborts with the default gate: {:.3} %; with failure_limit 0: {:.3} %",
        rate * 100.0,
        abort_rate(0, 10_000, 5) * 100.0
    );
    assert!(rate <= 0.01, "false abort rate {rate}");
}
