//! The console on a rehearsal: the simulator's faults and actions on the timeline as they
//! happen, and at the rehearsal's end its record in the journal and the announcement (the
//! score read back from the journal, the incident, the next commands).

use crate::app::msg::Msg;
use crate::app::workers::Services;
use crate::incident::JournalWriter;
use crate::rehearsal::stage::Live;
use tokio::sync::mpsc;

/// Record the rehearsal's faults and actions, and announce its end.
pub fn spawn(
    live: Live,
    journal: JournalWriter,
    services: &Services,
    tx: &mpsc::UnboundedSender<Msg>,
) {
    let (report, alive) = (tx.clone(), tx.clone());
    tokio::spawn(crate::rehearsal::faults::record_faults(
        live.service.clone(),
        live.pacer.time().clone(),
        live.journal_in_sim_time.then_some(live.epoch),
        journal.clone(),
        move |r| {
            let _ = report.send(Msg::Recorded(r));
        },
        move || !alive.is_closed(),
    ));
    let (tx, export) = (tx.clone(), services.export.clone());
    tokio::spawn(async move {
        live.pacer.ended().await;
        let end = live.record_end(&journal).await.map_err(|e| e.to_string());
        let ended_at = end.as_ref().ok().map(|r| r.time);
        let _ = tx.send(Msg::Recorded(end));
        let text = match export {
            Some(e) => {
                let records = e.store.read(&e.id).map(|r| r.records).unwrap_or_default();
                announcement(&live, &e.id.to_string(), &records, ended_at, e.timezone)
            }
            None => format!("{} is over.", live.scenario),
        };
        let _ = tx.send(Msg::RehearsalEnded(text));
    });
}

/// What a rehearsal's console leaves when it closes, and the words to print. Quit at its
/// briefing, nothing was rehearsed: its incident is removed. Quit before its end, the end is
/// recorded then (the simulator's figures as they stand), so that what is printed is the
/// report the end overlay shows, read back from the journal like it.
pub async fn close(briefing_up: bool, services: Services) -> Option<String> {
    use crate::incident::Event;
    let (Some(live), Some(export)) = (services.rehearsal.clone(), services.export.clone()) else {
        return None;
    };
    let id = export.id.to_string();
    if briefing_up {
        // The journal (and its lock) closed before its directory goes.
        drop(services);
        return Some(
            match std::fs::remove_dir_all(export.store.dir(&export.id)) {
                Ok(()) => format!(
                    "The rehearsal of {} was quit at its briefing: nothing was rehearsed, and no incident was kept.",
                    live.scenario
                ),
                Err(e) => format!(
                    "The rehearsal of {} was quit at its briefing, but its incident {id} could not be removed: {e}",
                    live.scenario
                ),
            },
        );
    }
    let ended = |records: &[crate::incident::Record]| {
        (records.iter().rev())
            .find_map(|r| matches!(r.kind, Event::RehearsalEnded { .. }).then_some(r.time))
    };
    let mut records = (export.store.read(&export.id)).map_or_else(|_| Vec::new(), |r| r.records);
    // The end record written here is the one the journal now ends with: no second read.
    if ended(&records).is_none()
        && let Some(journal) = &services.journal
        && let Ok(end) = live.record_end(journal).await
    {
        records.push(end);
    }
    let ended_at = ended(&records);
    Some(announcement(
        &live,
        &id,
        &records,
        ended_at,
        export.timezone,
    ))
}

/// What the console says at the end of a rehearsal.
pub fn announcement(
    live: &Live,
    id: &str,
    records: &[crate::incident::Record],
    ended_at: Option<chrono::DateTime<chrono::Utc>>,
    tz: chrono_tz::Tz,
) -> String {
    let score = crate::rehearsal::score::response(records);
    let at = ended_at.map_or(String::new(), |t| {
        format!(" at {} (simulated)", t.with_timezone(&tz).format("%H:%M"))
    });
    format!(
        "The rehearsal of {} is over{at}; its time has stopped.\n\n{}\nIncident {id}:\n  warroom export {id}    the postmortem draft\n  warroom replay {id}    play it back\n  warroom gameday history {}    compare with earlier rehearsals",
        live.scenario,
        crate::rehearsal::score::response_text(&score, tz),
        live.scenario,
    )
}
