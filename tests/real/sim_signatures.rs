//! Each scenario's signature (issue 3, Acceptance), asserted by driving the model directly.

use warroom::sim::{Control, Scenario, Sim};

fn sim(name: &str, seed: u64) -> Sim {
    Sim::new(Scenario::load(name).expect("built-in scenario"), seed)
}

fn act(sim: &mut Sim, endpoint: &str, body: &str) {
    let c = Control::parse(endpoint, body.as_bytes()).expect("valid control body");
    sim.apply(&c).expect("control applies");
}

fn fault_at(sim: &Sim) -> f64 {
    sim.scenario().fault_at().expect("the scenario has a fault")
}

/// Restart all pods in batches of `size`, one batch every `gap_s`.
fn batch_restart(sim: &mut Sim, size: usize, gap_s: f64) {
    let pods: Vec<String> = sim.instances().iter().map(|i| i.name.clone()).collect();
    for batch in pods.chunks(size) {
        for pod in batch {
            act(sim, "restart", &format!("{{\"pod\":\"{pod}\"}}"));
        }
        let t = sim.now() + gap_s;
        sim.run_until(t);
    }
}

#[test]
fn planner_peak_before_and_after_the_bad_deploy() {
    for seed in [1, 7] {
        let mut s = sim("planner-peak", seed);
        let fault = fault_at(&s);
        s.run_until(fault);
        let before = s.window(fault - 600.0, fault);
        assert!(
            (before.query_p50 - 0.042).abs() < 0.005,
            "median query before the fault: {}",
            before.query_p50
        );
        assert!(before.error_ratio < 0.01, "{}", before.error_ratio);

        // At the peak, with the bad version everywhere.
        let peak = s.scenario().traffic.peak_at_s;
        s.run_until(peak + 300.0);
        let after = s.window(peak - 300.0, peak + 300.0);
        assert!(after.query_p50 > 5.0, "median query {}", after.query_p50);
        assert!(
            after.min_saturation > 0.999,
            "saturation {}",
            after.min_saturation
        );
        assert!(
            after.error_ratio > 0.75,
            "error ratio {}",
            after.error_ratio
        );
        assert!(
            (2.3..=2.9).contains(&after.amplification),
            "attempts per logical request {}",
            after.amplification
        );
    }
}

#[test]
fn planner_peak_rollback_alone_does_not_recover() {
    let mut s = sim("planner-peak", 1);
    let rollback = fault_at(&s) + 1200.0;
    s.run_until(rollback);
    act(&mut s, "rollback", "{}");
    // Give the rollout its minute, then ten minutes must all stay above 50 % errors.
    let start = rollback + s.scenario().fleet.rollout_s;
    s.run_until(start + 600.0);
    for minute in 0..10 {
        let from = start + 60.0 * minute as f64;
        let w = s.window(from, from + 60.0);
        assert!(
            w.error_ratio > 0.5,
            "minute {minute}: error ratio {}",
            w.error_ratio
        );
    }
    // The bad query is gone: what keeps it down is the retries and the queued work.
    assert!(s.window(start + 540.0, start + 600.0).query_p50 < 1.0);
}

#[test]
fn planner_peak_rollback_retries_off_and_batch_restarts_recover() {
    let mut s = sim("planner-peak", 1);
    let rollback = fault_at(&s) + 1200.0;
    s.run_until(rollback);
    act(&mut s, "rollback", "{}");
    act(&mut s, "retries", r#"{"layer":"all","enabled":false}"#);
    batch_restart(&mut s, 3, 30.0);
    let deadline = rollback + 1200.0;
    s.run_until(deadline);
    let w = s.window(deadline - 60.0, deadline);
    assert!(
        w.error_ratio < 0.02,
        "error ratio 20 minutes later: {}",
        w.error_ratio
    );

    // The game-day score of this run.
    let score = s.score();
    assert_eq!(score.time_to_first_mitigation_s, Some(1200.0));
    let recovery = score.time_to_recovery_s.expect("recovered");
    assert!(
        (1200.0..1800.0).contains(&recovery),
        "recovery after {recovery} s"
    );
    assert!(
        (20..=30).contains(&score.minutes_over_objective),
        "{score:?}"
    );
    let w = s.window(0.0, deadline);
    assert!((score.failed_logical_requests - w.logical_failed).abs() < 1.0);
}

#[test]
fn planner_peak_scaling_out_makes_queries_slower() {
    let at = |s: &Sim| fault_at(s) + 600.0;
    let mut base = sim("planner-peak", 3);
    let mut scaled = sim("planner-peak", 3);
    let t = at(&base);
    base.run_until(t);
    scaled.run_until(t);
    act(&mut scaled, "scale", r#"{"replicas":15}"#);
    base.run_until(t + 600.0);
    scaled.run_until(t + 600.0);
    let b = base.window(t + 120.0, t + 600.0).query_p50;
    let s = scaled.window(t + 120.0, t + 600.0).query_p50;
    assert!(s > b * 1.2, "median query scaled out {s} vs {b}");
}

#[test]
fn bird_count_surge_transaction_time_and_duplicates() {
    let mut s = sim("bird-count", 1);
    let fault = fault_at(&s);
    let usual_peak = s.scenario().traffic.peak_rps;
    s.run_until(fault);
    let quiet = s.window(fault - 300.0, fault);
    assert!(
        (quiet.query_p50 - 1.4).abs() < 0.1,
        "tx time {}",
        quiet.query_p50
    );

    s.run_until(fault + 3600.0);
    let storm = s.window(fault + 600.0, fault + 3600.0);
    let ratio = storm.peak_rps / usual_peak;
    assert!(
        (5.5..=7.0).contains(&ratio),
        "surge is {ratio}x the usual peak"
    );
    let dup_share = storm.duplicates / storm.logical;
    assert!((0.02..=0.06).contains(&dup_share), "duplicates {dup_share}");

    // Without media validation in the transaction: 180 ms.
    let mut fixed = sim("bird-count", 1);
    act(&mut fixed, "deploy", r#"{"version":"ingest-2026.05.01"}"#);
    fixed.run_until(300.0);
    let w = fixed.window(120.0, 300.0);
    assert!((w.query_p50 - 0.18).abs() < 0.02, "tx time {}", w.query_p50);
}

#[test]
fn bird_count_idempotency_enforced_means_no_duplicates() {
    let mut s = sim("bird-count", 1);
    act(&mut s, "idempotency", r#"{"enforced":true}"#);
    let fault = fault_at(&s);
    s.run_until(fault + 2400.0);
    let w = s.window(fault, fault + 2400.0);
    assert!(
        w.error_ratio > 0.5,
        "the storm still happens: {}",
        w.error_ratio
    );
    assert_eq!(w.duplicates, 0.0);
    assert_eq!(s.score().duplicate_writes, 0.0);
}

#[test]
fn crash_loop_cascades_and_more_instances_and_memory_stop_it() {
    let mut s = sim("crash-loop", 1);
    let fault = fault_at(&s);
    s.run_until(fault + 1200.0);
    let storm = s.window(fault + 300.0, fault + 1200.0);
    assert!(storm.restarts >= 10.0, "restarts {}", storm.restarts);
    // The cascade keeps going: restarts in each third of the window.
    for third in 0..3 {
        let from = fault + 300.0 + 300.0 * third as f64;
        assert!(
            s.window(from, from + 300.0).restarts >= 2.0,
            "third {third}"
        );
    }
    let n = s.instances().len() * 2;
    let limit = s.settings().memory_limit_mb as u32 * 2;
    act(&mut s, "scale", &format!("{{\"replicas\":{n}}}"));
    act(&mut s, "memory", &format!("{{\"limit_mb\":{limit}}}"));
    let t = s.now();
    s.run_until(t + 1500.0);
    let after = s.window(t + 300.0, t + 1500.0);
    assert_eq!(after.restarts, 0.0, "restarts after five minutes");
    assert!(after.error_ratio < 0.02, "{}", after.error_ratio);
}

#[test]
fn a_different_seed_changes_noise_not_signature() {
    let mut a = sim("planner-peak", 11);
    let mut b = sim("planner-peak", 12);
    a.run_until(900.0);
    b.run_until(900.0);
    let (wa, wb) = (a.window(0.0, 900.0), b.window(0.0, 900.0));
    assert_ne!(wa.logical, wb.logical, "the noise differs");
    assert!((wa.logical / wb.logical - 1.0).abs() < 0.01);
    assert!((wa.query_p50 - wb.query_p50).abs() < 0.005);
}

#[test]
fn the_same_seed_gives_byte_identical_metrics() {
    use warroom::sim::exposition::render;
    let run = |seed| {
        let mut s = sim("planner-peak", seed);
        s.run_until(1500.0);
        act(&mut s, "rollback", "{}");
        s.run_until(1600.0);
        render(&s)
    };
    let (a, b, c) = (run(5), run(5), run(6));
    assert_eq!(a, b);
    assert_ne!(a, c, "another seed changes the noise");
}

#[test]
fn planner_peak_load_shedding_keeps_simple_requests_alive() {
    // Share of next-departure requests (the simple kind) answered in time during the fault.
    let simple_ok = |shed: bool| {
        let mut s = sim("planner-peak", 4);
        let t = fault_at(&s) + 600.0;
        s.run_until(t);
        if shed {
            act(&mut s, "load-shedding", r#"{"enabled":true}"#);
        }
        s.run_until(t + 900.0);
        let w = s.window(t + 300.0, t + 900.0);
        let share = s.scenario().requests[1].share;
        (
            w.ok_by_kind[1] / (w.logical * share),
            w.ok_by_kind[0] / w.logical,
        )
    };
    let (without, _) = simple_ok(false);
    let (with, journeys) = simple_ok(true);
    assert!(without < 0.1, "without shedding {without}");
    assert!(with > 0.9, "with shedding {with}");
    assert!(
        journeys < 0.5,
        "the expensive journeys still fail: {journeys}"
    );
}

#[test]
fn error_ratios_are_ratios_in_every_minute() {
    for name in ["planner-peak", "bird-count", "crash-loop"] {
        let mut s = sim(name, 9);
        s.run_until(2400.0);
        for m in 0..40 {
            let w = s.window(60.0 * m as f64, 60.0 * (m + 1) as f64);
            assert!(
                (0.0..=1.0 + 1e-9).contains(&w.error_ratio),
                "{name} minute {m}: {w:?}"
            );
            assert!(
                w.answered <= w.attempts * 1.5 + 1.0,
                "{name} minute {m}: {w:?}"
            );
        }
    }
}
