//! Runbook advice on the real simulator (issue 30, points 2 and 7): the labelled phases of
//! `tests/fixtures/advice/phases.toml` (before the fault, at it, after the right moves, after
//! recovery, for the three scenarios) replayed through the console's own evaluation, with its
//! precision (suggestions that are right / suggestions made) and recall (phases that call for
//! a suggestion and got a right one / such phases).

use crate::support::advice::{Move, stage};

#[derive(Debug, serde::Deserialize)]
struct Corpus {
    phase: Vec<Phase>,
}

/// One labelled phase.
#[derive(Debug, serde::Deserialize)]
struct Phase {
    name: String,
    scenario: String,
    at_s: f64,
    /// "suggest", "quiet" or "either".
    headline: String,
    /// The runbooks that recover from here.
    #[serde(default)]
    right: Vec<String>,
    #[serde(default)]
    moves: Vec<Move>,
}

fn corpus() -> Vec<Phase> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/advice/phases.toml"
    ))
    .unwrap();
    toml::from_str::<Corpus>(&text).unwrap().phase
}

#[tokio::test]
async fn the_advice_on_the_simulators_phases_is_never_wrong_and_rarely_silent() {
    let phases = corpus();
    assert!(phases.len() >= 12, "{} phases", phases.len());
    let (mut made, mut right_made, mut wanted, mut found) = (0, 0, 0, 0);
    let mut wrong = Vec::new();
    for p in &phases {
        let advice = stage(&p.scenario, 1, p.at_s, &p.moves).advise().await;
        let headline = advice.headline(advice.at);
        let suggested = advice.suggestion().map(|(name, _)| name.to_string());
        println!(
            "{}: {}",
            p.name,
            headline.as_ref().map_or("(nothing)", |h| h.full.as_str())
        );
        // What the headline shows is what the evaluation suggests.
        assert_eq!(
            headline.as_ref().is_some_and(|h| h.suggests),
            suggested.is_some(),
            "{}",
            p.name
        );
        if let Some(s) = &suggested {
            made += 1;
            if p.right.contains(s) && p.headline != "quiet" {
                right_made += 1;
            } else {
                wrong.push(format!("{}: suggested {s}", p.name));
            }
        }
        match p.headline.as_str() {
            "suggest" => {
                wanted += 1;
                found += usize::from(suggested.as_ref().is_some_and(|s| p.right.contains(s)));
            }
            "quiet" | "either" => {}
            other => panic!("{}: headline {other:?}", p.name),
        }
        // The demo's own rule: never a restart while every request fails, never more
        // instances in planner-peak.
        if p.scenario == "planner-peak" {
            assert_ne!(suggested.as_deref(), Some("scale-headroom"), "{}", p.name);
        }
    }
    let precision = if made == 0 {
        1.0
    } else {
        right_made as f64 / made as f64
    };
    let recall = found as f64 / wanted.max(1) as f64;
    println!(
        "advice corpus: {} phases, precision {:.0} % ({right_made}/{made}), recall {:.0} % ({found}/{wanted})",
        phases.len(),
        precision * 100.0,
        recall * 100.0
    );
    assert!(wrong.is_empty(), "wrong suggestions: {wrong:#?}");
    assert_eq!(precision, 1.0);
    assert!(recall >= 0.8, "recall {recall}");
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
