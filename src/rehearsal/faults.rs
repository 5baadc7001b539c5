//! What the simulator does and has done to it, on the rehearsal's incident timeline: its faults
//! and every control action it applied (whoever sent it), each dated at the simulated second it
//! happened, however late the recorder saw it.

use super::clock::{SimTime, at};
use crate::incident::{Event, JournalWriter, Record, Source as RecordSource};
use crate::sim::SimService;
use chrono::{DateTime, Utc};
use std::sync::Arc;

/// Put the rehearsal's faults and the control actions the simulator applied on the incident's
/// timeline as they happen: the task wakes whenever the simulated time moves (so at any speed
/// a fault is recorded before the scrape that shows its effect is read), and stamps each
/// record with the event's own simulated second (`epoch` is simulated second 0; without it the
/// journal's own clock stamps them, as when it keeps the wall clock). Each append's result
/// goes to `report`; the task ends once `alive` says whoever listens (the console, the game
/// day) has gone.
pub async fn record_faults(
    service: Arc<SimService>,
    time: Arc<SimTime>,
    epoch: Option<DateTime<Utc>>,
    journal: JournalWriter,
    report: impl Fn(Result<Record, String>) + Send,
    alive: impl Fn() -> bool + Send,
) {
    let mut seen = service.with_sim(|s| s.events().len());
    let mut moved = time.watch();
    loop {
        let new: Vec<crate::sim::model::Event> =
            service.with_sim(|s| s.events().iter().skip(seen).cloned().collect());
        seen += new.len();
        for e in new {
            let event = timeline_event(&e);
            let appended = match epoch {
                Some(epoch) => {
                    let when = at(epoch, e.at_s);
                    journal
                        .append_at(when, RecordSource::Sim, "simulator", event)
                        .await
                }
                None => journal.append(RecordSource::Sim, "simulator", event).await,
            };
            let result = appended.map_err(|e| e.to_string());
            report(result);
        }
        // Checked after a last look at the events, so what happened before the end is in.
        if !alive() {
            break;
        }
        tokio::select! {
            changed = moved.changed() => if changed.is_err() { break },
            // While the time stands still (paused, ended), only to see whether to stop.
            _ = tokio::time::sleep(LIVENESS) => {}
        }
    }
}

/// How often a recorder whose time stands still checks that someone still listens.
const LIVENESS: std::time::Duration = std::time::Duration::from_millis(250);

/// The timeline's words for one of the simulator's events.
pub fn timeline_event(e: &crate::sim::model::Event) -> Event {
    if e.mitigation {
        Event::SimAction {
            action: e.what.clone(),
            wrong: e.wrong.clone(),
        }
    } else {
        Event::SimFault {
            fault: e.what.trim_start_matches("fault: ").to_string(),
            detail: format!("injected at simulated second {:.0}", e.at_s),
            active: true,
            // The record itself is stamped at the simulated second it happened.
            at: None,
        }
    }
}
