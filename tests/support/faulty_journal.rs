//! A new incident whose journal is written through a [`FaultyStorage`]: the test arms its
//! [`Faults`] (a failed or stalled sync) while a run writes.

use std::sync::Arc;
use warroom::incident::IncidentId;
use warroom::incident::journal::Journal;
use warroom::incident::storage::{Faults, FaultyStorage};
use warroom::incident::store::{OpenIncident, Role, Store};
use warroom::incident::writer::JournalWriter;

/// Creates an incident in `store`, locked as `role`, and starts its journal's writer.
pub fn writer(store: &Store, role: Role) -> (IncidentId, JournalWriter, Faults) {
    let id = store.create(chrono::Utc::now()).unwrap();
    let lock = store.lock(&id, role).unwrap();
    let faults = Faults::default();
    let f = faults.clone();
    let (journal, _) = Journal::open_with(
        &store.journal_path(&id),
        Arc::new(warroom::clock::WallClock),
        move |file| Box::new(FaultyStorage::new(file, f)),
    )
    .unwrap();
    let w = JournalWriter::spawn(OpenIncident {
        id: id.clone(),
        dir: store.dir(&id),
        journal,
        lock,
    })
    .unwrap();
    (id, w, faults)
}
