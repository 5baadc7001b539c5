//! A phase of a simulator scenario for the runbook advice: the simulator run to a moment with
//! its samples in an embedded store every simulated scrape, control moves applied on the way,
//! and one round of the console's own evaluation (`app::workers::advice`) at that moment.

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
