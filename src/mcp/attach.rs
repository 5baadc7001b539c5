//! Where the MCP server reads the incident from, and how its proposals reach the holder.
//!
//! On this host the journal is read from its file on every call (read-only, no lock taken: a
//! holder's console or recorder goes on as if nobody looked). Through an explicit socket (the
//! incident's directory may be on another host) the server follows the holder the way a
//! follower console does, on a thread of its own, and keeps what it was sent.

use crate::incident::StoreError;
use crate::incident::serve::{Answer, Client, ClientError, Following};
use crate::incident::store::{IncidentId, Store};
use crate::incident::{Record, serve};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The incident the server answers about.
#[derive(Debug, Clone)]
pub struct Attached {
    /// The incident's id, as its holder or the store names it.
    pub id: String,
    /// The store and id when the incident is on this host.
    pub local: Option<(Store, IncidentId)>,
    /// The holder's socket (the incident directory's, or the one given).
    pub socket: PathBuf,
    /// What a followed holder sent (through an explicit socket only).
    followed: Option<Arc<Mutex<Vec<Record>>>>,
}

/// Why the incident cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    /// No thread to follow the holder on.
    #[error("cannot start following the holder: {0}")]
    Thread(std::io::Error),
    /// No such incident, or its journal cannot be read.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// The holder behind the socket cannot be followed.
    #[error("{0}")]
    Client(#[from] ClientError),
}

impl Attached {
    /// The incident `id` of `store`, read from its journal.
    pub fn local(store: &Store, id: &str) -> Result<Attached, AttachError> {
        let found = store.find(id)?;
        Ok(Attached {
            id: found.to_string(),
            socket: store.dir(&found).join(serve::SOCKET_FILE),
            local: Some((store.clone(), found)),
            followed: None,
        })
    }

    /// The incident held behind `socket`, followed from its first record as `actor`.
    pub fn follow(socket: PathBuf, actor: &str) -> Result<Attached, AttachError> {
        let following = Client::new(&socket, actor).follow(None, 0)?;
        let id = following.welcome.incident.clone();
        let records = Arc::new(Mutex::new(Vec::new()));
        let keep = records.clone();
        std::thread::Builder::new()
            .name("mcp-follow".into())
            .spawn(move || keep_following(following, &keep))
            .map_err(AttachError::Thread)?;
        Ok(Attached {
            id,
            local: None,
            socket,
            followed: Some(records),
        })
    }

    /// The journal now.
    pub fn records(&self) -> Result<Vec<Record>, AttachError> {
        match (&self.followed, &self.local) {
            (Some(kept), _) => Ok(kept.lock().map(|r| r.clone()).unwrap_or_default()),
            (None, Some((store, id))) => Ok(store.read(id)?.records),
            (None, None) => Ok(Vec::new()),
        }
    }
}

/// Keeps every record the holder sends until it goes away (what it sent stays readable).
fn keep_following(mut following: Following, kept: &Mutex<Vec<Record>>) {
    while let Some(Ok(answer)) = following.next_answer() {
        if let Answer::Record { record } = answer
            && let Ok(mut all) = kept.lock()
        {
            all.push(record);
        }
    }
}
