//! Runbook advice on the real simulator (issue 30, points 2 and 7): the labelled phases of
//! `tests/fixtures/advice/phases.toml` (before the fault, at it, after the right moves, after
//! recovery, for the three scenarios) replayed through the console's own evaluation, with its
//! precision (suggestions that are right / suggestions made) and recall (phases that call for
//! a suggestion and got a right one / such phases).

use crate::support::advice::{corpus, simulator_tally, stage};

#[tokio::test]
async fn the_advice_on_the_simulators_phases_is_never_wrong_and_rarely_silent() {
    let tally = simulator_tally().await;
    assert!(tally.phases >= 12, "{} phases", tally.phases);
    println!("advice corpus: {}", tally.figures());
    tally.assert_trusted();
}

/// `warroom demo`'s scenario at the fault: the suggestion recovers it and is never
/// batch-restart (errors are at 100 %) nor scale-headroom (the scenario's wrong move); after
/// recovery nothing is suggested.
#[tokio::test]
async fn the_demo_at_its_fault_suggests_what_recovers_it_and_after_recovery_nothing() {
    let phases = corpus();
    let phase = |name: &str| phases.iter().find(|p| p.name == name).unwrap();
    let fault = phase("planner-peak at the fault");
    let staged = stage(&fault.scenario, 1, fault.at_s, &fault.moves);
    let advice = staged.advise().await;
    let (name, why) = advice.suggestion().expect("a suggestion at the fault");
    assert_eq!(name, "pool-exhaustion", "{why}");
    // In the runbook's words (its `[applies] label`).
    assert_eq!(
        why,
        "pools at 100 % of their size since a new version, errors past 5 %, retries amplifying"
    );
    let verdict = |n: &str| {
        let f = advice.findings.iter().find(|f| f.runbook == n).unwrap();
        format!("{:?}", f.verdict)
    };
    assert!(
        verdict("scale-headroom").contains("wrong move"),
        "{}",
        verdict("scale-headroom")
    );
    assert!(verdict("batch-restart").starts_with("Not("));
    let after = phase("planner-peak recovered");
    let advice = stage(&after.scenario, 1, after.at_s, &after.moves)
        .advise()
        .await;
    assert_eq!(advice.headline(advice.at), None, "{:#?}", advice.findings);
}
