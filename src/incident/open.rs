//! Opening an incident for writing, the same way for every holder (the console, the demo, a
//! headless game day): a new one is created and its header recorded, an existing one is
//! continued with any new title or severity recorded, and its journal's one writer thread is
//! started. How the lock is taken stays with the caller (the console may offer to take over
//! from a recorder; a game day never does).

use super::event::{Event, Source};
use super::journal::{Recovery, TornTail};
use super::record::Record;
use super::store::{IncidentId, OpenIncident, Role, Store, StoreError};
use super::vocabulary::Severity;
use super::writer::{JournalWriter, WriteError};
use crate::backoff::Backoff;
use crate::clock::SharedClock;
use chrono::{DateTime, Utc};
use std::time::{Duration, Instant};

/// The title of an incident opened without one.
pub const UNTITLED: &str = "Untitled incident";

/// Which incident to open.
#[derive(Debug, Clone, Copy)]
pub enum Which<'a> {
    /// A new one, created at this time.
    New(DateTime<Utc>),
    /// An existing one, by id or unique prefix.
    Existing(&'a str),
}

/// The incident's header as the opener asks for it.
#[derive(Debug, Clone, Default)]
pub struct Header {
    /// A new incident's title (default [`UNTITLED`]), or a new title for an existing one.
    pub title: Option<String>,
    /// A new incident's severity (default SEV-3), or a new severity for an existing one.
    pub severity: Option<Severity>,
}

/// An incident whose lock is held, its journal read, not yet written to.
pub struct Locked {
    pub incident: OpenIncident,
    pub recovery: Recovery,
    /// Whether it was created for this opening.
    pub new: bool,
}

/// An incident open for writing.
pub struct Opened {
    pub id: IncidentId,
    /// Whether it was created now.
    pub new: bool,
    /// Its one writer.
    pub writer: JournalWriter,
    /// Everything it holds, the header records just written included.
    pub records: Vec<Record>,
    /// A torn last line that was set aside while opening, if there was one.
    pub torn: Option<TornTail>,
}

/// Why an incident could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot start the journal writer of incident \"{id}\": {source}")]
    Writer {
        id: String,
        #[source]
        source: std::io::Error,
    },
    #[error("incident \"{id}\": its header could not be recorded: {source}")]
    Header {
        id: String,
        #[source]
        source: WriteError,
    },
}

/// The id of the incident to open: `which`'s, found or created. Returns whether it is new.
pub fn resolve(store: &Store, which: Which<'_>) -> Result<(IncidentId, bool), StoreError> {
    match which {
        Which::New(now) => Ok((store.create(now)?, true)),
        Which::Existing(id) => Ok((store.find(id)?, false)),
    }
}

/// Find or create `which` and take its lock as `role`. A short `warroom incident` command
/// holding it (a note takes milliseconds) is waited for, as [`open_waiting`] does; any other
/// holder is an error that says who it is (no takeover here).
pub fn lock(store: &Store, which: Which<'_>, role: Role) -> Result<Locked, StoreError> {
    let (id, new) = resolve(store, which)?;
    let (incident, recovery) = open_waiting(store, &id, role)?;
    Ok(Locked {
        incident,
        recovery,
        new,
    })
}

/// Start writing a locked incident: stamp its records by `clock` when given (a rehearsal's
/// simulated time), start its writer, and record the header `actor` asked for.
pub async fn begin(
    locked: Locked,
    header: Header,
    actor: &str,
    clock: Option<SharedClock>,
) -> Result<Opened, OpenError> {
    let Locked {
        mut incident,
        recovery,
        new,
    } = locked;
    match clock {
        Some(clock) => incident.journal.set_clock(clock),
        None => stamp_after_rehearsal(&mut incident, &recovery.records),
    }
    let id = incident.id.clone();
    let writer = JournalWriter::spawn(incident).map_err(|source| OpenError::Writer {
        id: id.to_string(),
        source,
    })?;
    let mut records = recovery.records;
    let events = if new {
        vec![Event::IncidentOpened {
            title: header.title.unwrap_or_else(|| UNTITLED.into()),
            severity: header.severity.unwrap_or(Severity::Sev3),
        }]
    } else {
        let title = header.title.map(|title| Event::TitleChanged { title });
        let severity = (header.severity).map(|severity| Event::SeverityChanged { severity });
        title.into_iter().chain(severity).collect()
    };
    let header = |source| OpenError::Header {
        id: id.to_string(),
        source,
    };
    for event in events {
        let record = writer.append(Source::Operator, actor, event).await;
        records.push(record.map_err(header)?);
    }
    // A new incident's globally unique identity (GitHub markers carry it).
    if new {
        let uid = Event::new_incident_uid();
        let record = writer.append(Source::System, "warroom", uid).await;
        records.push(record.map_err(header)?);
    }
    Ok(Opened {
        id,
        new,
        writer,
        records,
        torn: recovery.torn,
    })
}

/// When the rehearsal recorded in `records` has ended: the simulated time it ended at.
pub fn rehearsal_end(records: &[crate::incident::Record]) -> Option<chrono::DateTime<chrono::Utc>> {
    records
        .iter()
        .find(|r| matches!(r.kind, Event::RehearsalEnded { .. }))
        .map(|r| r.time)
}

/// A rehearsal's incident after its end: what is added now is stamped at the end (its
/// records are in simulated time, which has stopped), and its place after the end record
/// marks it as added afterwards.
fn stamp_after_rehearsal(incident: &mut OpenIncident, records: &[crate::incident::Record]) {
    if let Some(end) = rehearsal_end(records) {
        incident
            .journal
            .set_clock(std::sync::Arc::new(crate::clock::ManualClock::new(end)));
    }
}

/// Locks and opens an incident for `role`. Another short `warroom incident` command holding
/// the lock is waited for (a few seconds at most, with backoff); a console or recorder is not.
pub fn open_waiting(
    store: &Store,
    id: &IncidentId,
    role: Role,
) -> Result<(OpenIncident, Recovery), StoreError> {
    let backoff = Backoff {
        base: Duration::from_millis(10),
        cap: Duration::from_millis(250),
        max_attempts: 30,
    };
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut rng = rand::rng();
    let mut attempts = 0;
    loop {
        attempts += 1;
        match store.open_incident(id, role) {
            Ok((mut incident, recovery)) => {
                stamp_after_rehearsal(&mut incident, &recovery.records);
                return Ok((incident, recovery));
            }
            Err(StoreError::Held { holder, .. })
                if (holder.role == Role::Cli || holder.pid == 0)
                    && backoff.may_retry(attempts)
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(backoff.delay(attempts - 1, &mut rng));
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_new_incident_records_its_header_and_a_continued_one_only_what_changed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let locked = lock(&store, Which::New(Utc::now()), Role::Console).unwrap();
        assert!(locked.new);
        let header = Header {
            title: Some("Pools full".into()),
            severity: None,
        };
        let opened = begin(locked, header, "ana", None).await.unwrap();
        let id = opened.id.clone();
        // The header, then the incident's global identity.
        assert_eq!(opened.records.len(), 2);
        assert!(matches!(opened.records[1].kind, Event::IncidentUid { .. }));
        assert!(matches!(
            &opened.records[0].kind,
            Event::IncidentOpened { title, severity: Severity::Sev3 } if title == "Pools full"
        ));
        assert_eq!(opened.records[0].actor, "ana");
        drop(opened);

        let again = id.to_string();
        // The first writer's thread lets go of the lock a moment after its last handle is gone.
        let mut reopened = lock(&store, Which::Existing(&again), Role::Console);
        for _ in 0..200 {
            if reopened.is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
            reopened = lock(&store, Which::Existing(&again), Role::Console);
        }
        let locked = reopened.unwrap();
        assert!(!locked.new);
        let header = Header {
            title: None,
            severity: Some(Severity::Sev1),
        };
        let opened = begin(locked, header, "bo", None).await.unwrap();
        let kinds: Vec<_> = opened.records.iter().map(|r| &r.kind).collect();
        assert_eq!(kinds.len(), 3, "{kinds:?}");
        assert!(matches!(
            kinds[2],
            Event::SeverityChanged {
                severity: Severity::Sev1
            }
        ));
    }

    /// A game day or a console waits for a note's brief hold on the lock instead of refusing
    /// to start (issue 28, point 5); a console holding it is still an error at once.
    #[test]
    fn a_brief_cli_hold_is_waited_for_and_a_console_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let id = store.create(Utc::now()).unwrap();
        let text = id.to_string();
        let note = store.lock(&id, Role::Cli).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(note);
        });
        let t = Instant::now();
        let locked = lock(&store, Which::Existing(&text), Role::Gameday).unwrap();
        assert!(
            t.elapsed() >= Duration::from_millis(250),
            "{:?}",
            t.elapsed()
        );
        release.join().unwrap();
        let t = Instant::now();
        match lock(&store, Which::Existing(&text), Role::Console) {
            Err(StoreError::Held { holder, .. }) => assert_eq!(holder.role, Role::Gameday),
            other => panic!("{:?}", other.map(|_| ())),
        }
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
        drop(locked);
    }
}
