//! Batch arithmetic: the unavailability budget holds at every instant over 10,000 random
//! fleets, the cumulative failure budget stops the run, soak and deadlines are honoured, and
//! a failure always waits for the operator.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::Duration;
use warroom::runbook::batch::{
    BatchEvent, Decision, Finished, Next, Pause, Rollout, RolloutConfig,
};

const S: fn(u64) -> Duration = Duration::from_secs;

fn cfg(batch: usize, budget: usize) -> RolloutConfig {
    RolloutConfig {
        batch_size: batch,
        max_unavailable: budget,
        failure_budget: 0,
        soak: S(10),
        settle: S(0),
        instance_deadline: S(120),
        run_deadline: S(100_000),
        gated: true,
    }
}

/// Ground truth of a simulated instance: down from `down_at` until `back_at` (None: never).
#[derive(Clone, Copy)]
struct Truth {
    down: bool,
    back_at: Option<u64>,
}

#[test]
fn ten_thousand_random_fleets_never_exceed_the_budget() {
    let mut violations = 0;
    let mut zero_budget_runs = 0;
    for seed in 0..10_000u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let n = rng.random_range(1..=500usize);
        let pct = rng.random_range(1..=100usize);
        let batch = (n * pct).div_ceil(100).max(1);
        let unhealthy = rng.random_range(0..=n / 10);
        let budget = rng.random_range(0..=(n / 4 + 2));
        let mut c = cfg(batch, budget);
        c.failure_budget = rng.random_range(0..4);
        c.gated = rng.random_bool(0.5);
        let mut truth: Vec<Truth> = (0..n)
            .map(|i| Truth {
                down: i < unhealthy,
                back_at: None,
            })
            .collect();
        let mut down = unhealthy;
        let mut returning: Vec<usize> = Vec::new();
        let targets = (0..n).map(|i| (format!("i{i}"), i >= unhealthy)).collect();
        let mut r = Rollout::new(c, targets);
        let mut started_any = false;
        let mut decisions = 0;
        let mut t = 0u64;
        // Bounded by ticks: every batch takes at most deadline/5 + a few ticks.
        for _ in 0..200_000 {
            let now = S(t);
            returning.retain(|&i| {
                let x = &mut truth[i];
                if x.down && x.back_at.is_some_and(|b| t >= b) {
                    x.down = false;
                    down -= 1;
                    false
                } else {
                    x.down
                }
            });
            if started_any && down > budget {
                violations += 1;
                break;
            }
            match r.next(now) {
                Next::Act { targets, .. } => {
                    started_any = true;
                    for name in targets {
                        let i: usize = name[1..].parse().unwrap();
                        let back = if rng.random_bool(0.97) {
                            Some(t + rng.random_range(1..60))
                        } else {
                            None
                        };
                        if !truth[i].down {
                            down += 1;
                        }
                        truth[i] = Truth {
                            down: true,
                            back_at: back,
                        };
                        if !returning.contains(&i) {
                            returning.push(i);
                        }
                    }
                    // The invariant must hold right after the action too.
                    if down > budget {
                        violations += 1;
                        break;
                    }
                }
                Next::Watch(names) => {
                    for name in names {
                        let i: usize = name[1..].parse().unwrap();
                        r.observe(now, &name, !truth[i].down);
                    }
                    t += 5;
                }
                Next::Gate { .. } => {
                    let ok = rng.random_bool(0.9);
                    r.gate_result(if ok { Ok(()) } else { Err("fail".into()) });
                }
                Next::WaitOperator(p) => {
                    if let Pause::BudgetExhausted { .. } = p
                        && !started_any
                    {
                        zero_budget_runs += 1;
                        assert!(p.to_string().contains("budget"), "{p}");
                        break;
                    }
                    decisions += 1;
                    let d = if decisions > 5 {
                        Decision::Abort
                    } else {
                        [Decision::Continue, Decision::Retry][rng.random_range(0..2)]
                    };
                    r.decide(now, d);
                    t += 1;
                }
                Next::Finished(_) => break,
            }
        }
        if budget == 0 && started_any {
            violations += 1;
        }
    }
    eprintln!("fleets with no room at the start (nothing started): {zero_budget_runs}");
    assert_eq!(violations, 0);
    assert!(zero_budget_runs > 0, "the generator must cover budget 0");
}

#[test]
fn a_budget_of_zero_starts_nothing_and_says_why() {
    let mut r = Rollout::new(cfg(3, 0), vec![("a".into(), true), ("b".into(), true)]);
    match r.next(S(0)) {
        Next::WaitOperator(p @ Pause::BudgetExhausted { .. }) => {
            assert_eq!(
                p.to_string(),
                "unavailability budget exhausted: 0 unavailable (0 unhealthy before the start), budget 0; nothing started"
            );
        }
        other => panic!("{other:?}"),
    }
    // Instances already unhealthy use the budget up too.
    let mut r = Rollout::new(
        cfg(3, 2),
        vec![("a".into(), false), ("b".into(), false), ("c".into(), true)],
    );
    let next = r.next(S(0));
    // a and b are already down: acting on them costs nothing, c would exceed the budget.
    assert_eq!(
        next,
        Next::Act {
            batch: 1,
            targets: vec!["a".into(), "b".into()]
        }
    );
}

#[test]
fn the_cumulative_failure_budget_stops_the_third_batch() {
    let mut c = cfg(8, 10);
    c.failure_budget = 2;
    c.gated = false;
    c.instance_deadline = S(60);
    let targets = (0..80).map(|i| (format!("i{i}"), true)).collect();
    let mut r = Rollout::new(c, targets);
    let mut batches = Vec::new();
    let mut never_back: Vec<String> = Vec::new();
    let mut t = 0;
    let mut events = Vec::new();
    for _ in 0..10_000 {
        match r.next(S(t)) {
            Next::Act { batch, targets } => {
                batches.push(batch);
                never_back.push(targets[0].clone());
            }
            Next::Watch(names) => {
                for n in names {
                    r.observe(S(t), &n, !never_back.contains(&n));
                }
                t += 5;
            }
            Next::WaitOperator(_) => r.decide(S(t), Decision::Continue),
            Next::Gate { .. } => unreachable!(),
            Next::Finished(f) => {
                events.extend(r.take_events());
                assert!(
                    matches!(&f, Finished::Stopped { reason } if reason.contains("failure budget spent: 2")),
                    "{f:?}"
                );
                break;
            }
        }
        events.extend(r.take_events());
    }
    assert_eq!(batches, vec![1, 2], "no third batch starts");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, BatchEvent::Finished(Finished::Stopped { .. })))
    );
    assert_eq!(r.lost(), 2);
}

#[test]
fn an_instance_healthy_nine_seconds_in_ten_never_counts_healthy() {
    let mut c = cfg(1, 1);
    c.instance_deadline = S(1000);
    let mut r = Rollout::new(c, vec![("a".into(), true)]);
    assert!(matches!(r.next(S(0)), Next::Act { .. }));
    // Observed every 500 ms: healthy for 9 s, unhealthy for 1 s, for 500 s.
    for tenth in 0..5000u64 {
        let t = Duration::from_millis(tenth * 100);
        if tenth % 5 == 0 {
            let healthy = (tenth % 100) < 90;
            r.observe(t, "a", healthy);
        }
        let next = r.next(t);
        assert_eq!(next, Next::Watch(vec!["a".into()]), "at {t:?}");
    }
    assert!(
        !r.take_events()
            .iter()
            .any(|e| matches!(e, BatchEvent::InstanceHealthy { .. }))
    );
    // Healthy for the whole soak: it counts.
    for s in 0..=10 {
        r.observe(S(600 + s), "a", true);
    }
    assert_eq!(r.next(S(610)), Next::Gate { batch: 1 });
}

#[test]
fn after_the_run_deadline_no_action_starts_until_the_operator_decides() {
    let mut c = cfg(1, 1);
    c.run_deadline = S(30);
    c.gated = false;
    c.soak = S(0);
    let mut r = Rollout::new(c, (0..5).map(|i| (format!("i{i}"), true)).collect());
    let mut actions_after_deadline = 0;
    let mut t = 0;
    let mut paused = false;
    for _ in 0..200 {
        match r.next(S(t)) {
            Next::Act { .. } if t >= 30 && !paused => actions_after_deadline += 1,
            Next::Act { .. } => {}
            Next::Watch(names) => {
                for n in names {
                    r.observe(S(t), &n, true);
                }
            }
            Next::WaitOperator(p) => {
                assert!(matches!(p, Pause::RunDeadline { .. }), "{p:?}");
                // The operator is away for a while: nothing happens.
                if !paused {
                    for k in 0..10 {
                        assert!(matches!(r.next(S(t + k)), Next::WaitOperator(_)));
                    }
                    paused = true;
                    r.decide(S(t), Decision::Abort);
                }
            }
            Next::Gate { .. } => unreachable!(),
            Next::Finished(f) => {
                assert_eq!(f, Finished::Aborted);
                break;
            }
        }
        t += 7;
    }
    assert!(paused);
    assert_eq!(actions_after_deadline, 0);
}

#[test]
fn a_lost_instance_pauses_and_retry_acts_on_it_again() {
    let mut c = cfg(2, 2);
    c.instance_deadline = S(20);
    c.failure_budget = 5;
    c.soak = S(0);
    c.gated = false;
    let mut r = Rollout::new(
        c,
        vec![("a".into(), true), ("b".into(), true), ("c".into(), true)],
    );
    assert!(matches!(r.next(S(0)), Next::Act { .. }));
    r.observe(S(5), "a", true);
    r.observe(S(5), "b", false);
    assert_eq!(r.next(S(5)), Next::Watch(vec!["b".into()]));
    let p = r.next(S(25));
    assert!(
        matches!(p, Next::WaitOperator(Pause::InstancesLost { .. })),
        "{p:?}"
    );
    // Never continues silently.
    assert!(matches!(r.next(S(500)), Next::WaitOperator(_)));
    r.decide(S(30), Decision::Retry);
    // b again (already down, so it costs nothing) and c, which fits the budget of 2.
    assert_eq!(
        r.next(S(30)),
        Next::Act {
            batch: 2,
            targets: vec!["b".into(), "c".into()]
        }
    );
}

#[test]
fn readings_right_after_the_action_are_ignored() {
    let mut c = cfg(1, 1);
    c.soak = S(2);
    c.settle = S(5);
    let mut r = Rollout::new(c, vec![("a".into(), true)]);
    assert!(matches!(r.next(S(0)), Next::Act { .. }));
    // A stale "healthy" scraped before the restart, for the whole settle period.
    for t in 0..5 {
        r.observe(S(t), "a", true);
        assert_eq!(r.next(S(t)), Next::Watch(vec!["a".into()]));
    }
    r.observe(S(5), "a", true);
    assert_eq!(r.next(S(6)), Next::Watch(vec!["a".into()]));
    r.observe(S(7), "a", true);
    assert_eq!(r.next(S(7)), Next::Gate { batch: 1 });
}

/// Issue 33, point 1: a person who takes 14 s to type "batch 1" loses nothing. The instance
/// deadline (10 s here) starts when the actions are sent, and the run deadline (20 s) does not
/// count the wait either; without `sent`, the same timeline loses the whole batch.
#[test]
fn time_at_the_confirmation_is_not_counted_against_the_deadlines() {
    for told in [true, false] {
        let mut c = cfg(3, 3);
        c.gated = false;
        c.soak = S(0);
        c.instance_deadline = S(10);
        c.run_deadline = S(20);
        let targets = (0..6).map(|i| (format!("api-{i}"), true)).collect();
        let mut r = Rollout::new(c, targets);
        let Next::Act { targets, .. } = r.next(S(0)) else {
            panic!("the first batch is proposed at 0 s");
        };
        // Typed at 14 s; the instances are back 6 s after their action.
        if told {
            r.sent(S(14), S(14));
        }
        for n in &targets {
            r.observe(S(16), n, false);
        }
        let at_16 = r.next(S(16));
        if !told {
            assert!(
                matches!(&at_16, Next::WaitOperator(Pause::InstancesLost { targets, .. }) if targets.len() == 3),
                "the control: counting the wait loses the batch: {at_16:?}"
            );
            continue;
        }
        assert!(matches!(at_16, Next::Watch(_)), "{at_16:?}");
        for n in &targets {
            r.observe(S(20), n, true);
        }
        let at_20 = r.next(S(20));
        assert!(
            matches!(at_20, Next::Act { batch: 2, .. }),
            "the run deadline (20 s) does not count the 14 s wait: {at_20:?}"
        );
    }
}
