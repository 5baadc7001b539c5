//! The simulator's faults on the rehearsal's incident timeline, as they land (its control
//! actions are recorded by the runbooks that make them).

use crate::sim::SimService;
use std::sync::Arc;
use std::time::Duration;

/// Put the rehearsal's faults on the incident's timeline as they land (its control actions are
/// recorded by the runbooks that make them). Each append's result goes to `report`; the task
/// ends once `alive` says whoever listens (the console, the game day) has gone.
pub async fn record_faults(
    service: Arc<SimService>,
    journal: crate::incident::JournalWriter,
    clock: Arc<dyn crate::clock::Clock + Send + Sync>,
    report: impl Fn(Result<crate::incident::Record, String>) + Send,
    alive: impl Fn() -> bool + Send,
) {
    use crate::incident::{Event, Source as RecordSource};
    let mut seen = service.with_sim(|s| s.events().len());
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    while alive() {
        tick.tick().await;
        let new: Vec<crate::sim::model::Event> =
            service.with_sim(|s| s.events().iter().skip(seen).cloned().collect());
        seen += new.len();
        let (now, sim_now) = (clock.now(), service.with_sim(|s| s.now()));
        for e in new.into_iter().filter(|e| !e.mitigation) {
            // When it happened, not when this poll saw it (up to a poll's worth of simulated
            // time later).
            let lag = chrono::Duration::milliseconds(((sim_now - e.at_s).max(0.0) * 1000.0) as i64);
            let event = Event::SimFault {
                fault: e.what.trim_start_matches("fault: ").to_string(),
                detail: format!("injected at simulated second {:.0}", e.at_s),
                active: true,
                at: Some(now - lag),
            };
            let result = journal
                .append(RecordSource::Sim, "simulator", event)
                .await
                .map_err(|e| e.to_string());
            report(result);
        }
    }
}
