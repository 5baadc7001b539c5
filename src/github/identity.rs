//! The incident's global id for publishing. Incidents created since it exists have one in
//! their journal from the start ([`Event::IncidentUid`]); an older journal gets one on its
//! first publication, recorded in the journal, or, while a console holds the incident (the
//! journal then takes no other writer), in the outbox beside it, where every later
//! publication finds it and the next one that can writes it into the journal.

use super::outbox::{Entry, Outbox, OutboxError};
use crate::incident::event::{Event, Source};
use crate::incident::store::{IncidentId, Store, StoreError};
use crate::incident::summary::summarize;
use chrono::{DateTime, Utc};
use std::path::Path;

/// The actor of the identity record.
pub const ACTOR: &str = "warroom publish";

/// Why the incident's global id could not be settled.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Outbox(#[from] OutboxError),
    #[error(
        "cannot record the global id of incident {id} in its journal: {reason}; nothing was \
         sent to GitHub"
    )]
    Journal { id: String, reason: String },
}

/// The global id an earlier publication kept in the outbox of the incident in `dir`, if any.
pub fn kept(dir: &Path) -> Result<Option<String>, OutboxError> {
    Ok(Outbox::new(dir)
        .entries()?
        .into_iter()
        .find_map(|e| match e {
            Entry::Identity { uid, .. } => Some(uid),
            _ => None,
        }))
}

/// Appends the identity record when nobody holds the incident; false when someone does.
fn record(store: &Store, id: &IncidentId, uid: &str) -> Result<bool, IdentityError> {
    match store.open_incident(id, crate::incident::store::Role::Publish) {
        Ok((mut incident, _)) => {
            incident
                .journal
                .append(
                    Source::System,
                    ACTOR,
                    Event::IncidentUid {
                        uid: uid.to_string(),
                    },
                )
                .map_err(|e| IdentityError::Journal {
                    id: id.to_string(),
                    reason: e.to_string(),
                })?;
            Ok(true)
        }
        Err(StoreError::Held { .. }) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// The incident's global id: the journal's; else the outbox's (written into the journal now
/// when it can be); else a new one, recorded. Blocking (journal and outbox syncs).
pub fn ensure(store: &Store, id: &IncidentId, now: DateTime<Utc>) -> Result<String, IdentityError> {
    let journal_uid =
        || -> Result<Option<String>, IdentityError> { Ok(summarize(&store.read(id)?.records).uid) };
    if let Some(uid) = journal_uid()? {
        return Ok(uid);
    }
    let dir = store.dir(id);
    if let Some(uid) = kept(&dir)? {
        record(store, id, &uid)?;
        return Ok(journal_uid()?.unwrap_or(uid));
    }
    let uid = crate::incident::event::new_uid();
    if !record(store, id, &uid)? {
        Outbox::new(&dir).append(&Entry::Identity {
            at: now,
            uid: uid.clone(),
        })?;
        return Ok(uid);
    }
    // Another process may have recorded one first: the first in the journal wins.
    Ok(journal_uid()?.unwrap_or(uid))
}
