//! A phase of a simulator scenario for the runbook advice: the simulator run to a moment with
//! its samples in an embedded store every simulated scrape, control moves applied on the way,
//! and one round of the console's own evaluation (`app::workers::advice`) at that moment. The
//! labelled phases of `tests/fixtures/advice/phases.toml`, and the tally of precision and
//! recall that the simulator's and the real stack's phases share.

use std::sync::Arc;
use std::time::Duration;
use warroom::app::workers::advice::Evaluator;
use warroom::app::workers::advice::judge::Advice;
use warroom::clock::{Clock, ManualClock};
use warroom::metrics::embedded::EmbeddedSource;
use warroom::sim::{Scenario, Sim, SimService};

/// Simulated second 0.
pub const EPOCH: &str = "2026-07-17T07:00:00Z";
/// The simulator's scrape interval, as the rehearsal's stage scrapes.
const SCRAPE_S: f64 = 5.0;

/// A control move at a simulated second (`endpoint`, JSON body).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Move {
    pub at_s: f64,
    pub endpoint: String,
    #[serde(default = "empty")]
    pub body: String,
}

fn empty() -> String {
    "{}".into()
}

/// A scenario run to a moment.
pub struct Staged {
    pub service: Arc<SimService>,
    pub store: EmbeddedSource,
    pub clock: ManualClock,
    pub label: String,
}

/// Run `scenario` (seed `seed`) from twenty-five minutes before its fault to `at_s`, applying
/// `moves` (`pod` "*" restarts every instance), scraping every five simulated seconds.
pub fn stage(scenario: &str, seed: u64, at_s: f64, moves: &[Move]) -> Staged {
    let sc = Scenario::load(scenario).expect("scenario");
    let label = sc.service.clone();
    let start = (sc.fault_at().unwrap_or(0.0) - 1500.0).max(0.0);
    let service = Arc::new(SimService::new(Sim::new(sc, seed), 1.0));
    let store = EmbeddedSource::new(Duration::from_secs(7200));
    let epoch: chrono::DateTime<chrono::Utc> = EPOCH.parse().unwrap();
    let mut pending: Vec<&Move> = moves.iter().collect();
    pending.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    let mut pending = pending.into_iter().peekable();
    let mut t = start;
    while t <= at_s + 1e-9 {
        while let Some(m) = pending.next_if(|m| m.at_s <= t) {
            apply(&service, m);
        }
        service.advance_to(t);
        let (samples, now) = service.samples();
        store.ingest(epoch.timestamp() as f64 + now, &samples);
        t += SCRAPE_S;
    }
    let clock = ManualClock::new(epoch + chrono::Duration::milliseconds((at_s * 1000.0) as i64));
    Staged {
        service,
        store,
        clock,
        label,
    }
}

fn apply(service: &SimService, m: &Move) {
    if m.endpoint == "restart" && m.body.contains("\"*\"") {
        let pods: Vec<String> = service.with_sim(|s| {
            let state = warroom::sim::state::state(s, 1.0);
            state["instances"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|i| i["pod"].as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        });
        for pod in pods {
            let body = format!("{{\"pod\": \"{pod}\"}}");
            let r = service.control(&m.endpoint, body.as_bytes(), None);
            assert!(r.status == 200, "restart {pod}: {:?}", r.body);
        }
        return;
    }
    let r = service.control(&m.endpoint, m.body.as_bytes(), None);
    assert!(r.status == 200, "{} {}: {:?}", m.endpoint, m.body, r.body);
}

impl Staged {
    /// One round of the console's evaluation of the shipped runbooks, as a rehearsal's
    /// console makes it.
    pub async fn advise(&self) -> Advice {
        let setup = warroom::rehearsal::runbooks::setup(
            &warroom::config::Config::default(),
            "http://127.0.0.1:9",
            &self.label,
        );
        let runbooks: Vec<_> = warroom::runbook::catalog::load(&[])
            .into_iter()
            .filter_map(|e| e.runbook().cloned())
            .filter(|rb| rb.applies.as_ref().is_some_and(|a| a.symptom.is_some()))
            .collect();
        let evaluator = Evaluator {
            setup,
            source: Arc::new(self.store.clone()),
            clock: Arc::new(self.clock.clone()) as Arc<dyn Clock>,
            sim: Some(self.service.clone()),
        };
        evaluator.round(&runbooks).await
    }
}

/// One labelled phase of a simulator scenario.
#[derive(Debug, serde::Deserialize)]
pub struct Phase {
    pub name: String,
    pub scenario: String,
    pub at_s: f64,
    /// "suggest", "quiet" or "either".
    pub headline: String,
    /// The runbooks that recover from here.
    #[serde(default)]
    pub right: Vec<String>,
    #[serde(default)]
    pub moves: Vec<Move>,
}

#[derive(Debug, serde::Deserialize)]
struct Corpus {
    phase: Vec<Phase>,
}

/// The simulator's labelled phases.
pub fn corpus() -> Vec<Phase> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/advice/phases.toml"
    ))
    .unwrap();
    toml::from_str::<Corpus>(&text).unwrap().phase
}

/// Suggestions counted against their labels: precision is right suggestions over suggestions
/// made, recall phases that call for one and got a right one over such phases.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub phases: usize,
    pub made: usize,
    pub right_made: usize,
    pub wanted: usize,
    pub found: usize,
    /// The suggestions that were wrong, by phase.
    pub wrong: Vec<String>,
}

impl Tally {
    /// Count one phase: `suggested` (the runbook the advice suggests, if any) against `right`
    /// (the runbooks that recover from here) and whether the phase calls for a suggestion
    /// (`wanted`) or must have none (`quiet`).
    pub fn count(
        &mut self,
        phase: &str,
        suggested: Option<&str>,
        right: &[String],
        wanted: bool,
        quiet: bool,
    ) {
        self.phases += 1;
        let is_right = suggested.is_some_and(|s| right.iter().any(|r| r == s));
        if let Some(s) = suggested {
            self.made += 1;
            if is_right && !quiet {
                self.right_made += 1;
            } else {
                self.wrong.push(format!("{phase}: suggested {s}"));
            }
        }
        if wanted {
            self.wanted += 1;
            self.found += usize::from(is_right);
        }
    }

    pub fn add(&mut self, other: &Tally) {
        self.phases += other.phases;
        self.made += other.made;
        self.right_made += other.right_made;
        self.wanted += other.wanted;
        self.found += other.found;
        self.wrong.extend(other.wrong.iter().cloned());
    }

    /// Right suggestions over suggestions made (1 when none was made).
    pub fn precision(&self) -> f64 {
        match self.made {
            0 => 1.0,
            n => self.right_made as f64 / n as f64,
        }
    }

    /// Phases with a right suggestion over phases that call for one.
    pub fn recall(&self) -> f64 {
        self.found as f64 / self.wanted.max(1) as f64
    }

    /// The bar: no wrong suggestion (precision 100 %), recall at least 80 %.
    pub fn assert_trusted(&self) {
        assert!(
            self.wrong.is_empty(),
            "wrong suggestions: {:#?}",
            self.wrong
        );
        assert_eq!(self.precision(), 1.0);
        assert!(self.recall() >= 0.8, "recall {}", self.recall());
    }

    /// "14 phases, precision 100 % (5/5), recall 100 % (5/5)".
    pub fn figures(&self) -> String {
        format!(
            "{} phases, precision {:.0} % ({}/{}), recall {:.0} % ({}/{})",
            self.phases,
            self.precision() * 100.0,
            self.right_made,
            self.made,
            self.recall() * 100.0,
            self.found,
            self.wanted
        )
    }
}

/// The simulator's phases replayed through the console's evaluation, each said as it goes.
pub async fn simulator_tally() -> Tally {
    let mut tally = Tally::default();
    for p in &corpus() {
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
        let (wanted, quiet) = match p.headline.as_str() {
            "suggest" => (true, false),
            "quiet" => (false, true),
            "either" => (false, false),
            other => panic!("{}: headline {other:?}", p.name),
        };
        tally.count(&p.name, suggested.as_deref(), &p.right, wanted, quiet);
        // The demo's own rule: never more instances in planner-peak.
        if p.scenario == "planner-peak" {
            assert_ne!(suggested.as_deref(), Some("scale-headroom"), "{}", p.name);
        }
    }
    tally
}
