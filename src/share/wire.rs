//! What travels on the incident's stream: one record of one writer, and the checks a message
//! passes before it may be merged.

use crate::incident::{IncidentId, Record};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The largest message merged: a note is a few hundred bytes; anything near this is hostile.
pub const MAX_MESSAGE: usize = 64 * 1024;

/// A responder's stable name on the engine: `host-xxxxxxxx`, letters, digits, `-` and `_`
/// only, so it is one token of a subject.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct WriterId(String);

impl WriterId {
    /// Checks a name read from outside (a subject, a message, a file).
    pub fn parse(s: &str) -> Result<WriterId, Refused> {
        let ok = !s.is_empty()
            && s.len() <= 64
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if ok {
            Ok(WriterId(s.to_owned()))
        } else {
            Err(Refused::BadWriter(crate::sanitize::line(s).into_owned()))
        }
    }

    /// This machine's writer for an incident: read from `writer-id` in the incident's
    /// directory, made (host name and a random suffix) the first time, so a restarted responder
    /// goes on as the same writer.
    pub fn for_incident(dir: &Path) -> std::io::Result<WriterId> {
        let path = dir.join("writer-id");
        if let Ok(text) = std::fs::read_to_string(&path)
            && let Ok(id) = WriterId::parse(text.trim())
        {
            return Ok(id);
        }
        let host: String = crate::incident::store::this_host()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .take(40)
            .collect();
        let id = WriterId(format!("{host}-{:08x}", rand::random::<u32>()));
        std::fs::create_dir_all(dir)?;
        std::fs::write(&path, format!("{}\n", id.0))?;
        Ok(id)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for WriterId {
    type Error = Refused;
    fn try_from(s: String) -> Result<WriterId, Refused> {
        WriterId::parse(&s)
    }
}

impl From<WriterId> for String {
    fn from(w: WriterId) -> String {
        w.0
    }
}

impl std::fmt::Display for WriterId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One record as shared: who wrote it and the record, whose `seq` is the writer's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shared {
    pub writer: WriterId,
    pub record: Record,
}

/// Why a message on the stream is not merged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("a message of {0} bytes, over the {MAX_MESSAGE} a record may take")]
    TooLarge(usize),
    #[error("a message that is not a record: {0}")]
    Unparsable(String),
    #[error("a message on {subject}'s subject claims to be written by {claimed}")]
    Impostor { subject: String, claimed: String },
    #[error("a writer name that is not one subject token: \"{0}\"")]
    BadWriter(String),
    #[error("a message on a subject outside the incident: \"{0}\"")]
    Subject(String),
}

/// The subjects of an incident: `warroom.<incident>.<writer>`.
pub fn subject(incident: &IncidentId, writer: &WriterId) -> String {
    format!("warroom.{incident}.{writer}")
}

/// Every writer's subject of an incident.
pub fn all_subjects(incident: &IncidentId) -> String {
    format!("warroom.{incident}.*")
}

/// The stream that holds an incident (stream names take no dots).
pub fn stream_name(incident: &IncidentId) -> String {
    format!("warroom-{incident}")
}

/// The `Nats-Msg-Id` of a record: its identity, so a record published twice is stored once.
pub fn message_id(writer: &WriterId, seq: u64) -> String {
    format!("{writer}:{seq}")
}

impl Shared {
    pub fn encode(&self) -> Result<Vec<u8>, serde_json::Error> {
        serde_json::to_vec(self)
    }

    /// Reads a message of the stream: the size first, then the JSON, then the writer it
    /// claims against the writer of its subject. Free text is sanitized as it enters.
    pub fn decode(subject: &str, payload: &[u8]) -> Result<Shared, Refused> {
        if payload.len() > MAX_MESSAGE {
            return Err(Refused::TooLarge(payload.len()));
        }
        let from = subject
            .rsplit_once('.')
            .map(|(_, w)| w)
            .filter(|_| subject.starts_with("warroom."))
            .ok_or_else(|| Refused::Subject(crate::sanitize::line(subject).into_owned()))?;
        let from = WriterId::parse(from)?;
        let mut shared: Shared = serde_json::from_slice(payload)
            .map_err(|e| Refused::Unparsable(crate::sanitize::line(&e.to_string()).into_owned()))?;
        if shared.writer != from {
            return Err(Refused::Impostor {
                subject: from.0,
                claimed: shared.writer.0,
            });
        }
        shared.record.kind = shared.record.kind.sanitized();
        shared.record.actor = crate::sanitize::line(&shared.record.actor).into_owned();
        shared.record.host = crate::sanitize::line(&shared.record.host).into_owned();
        Ok(shared)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incident::{Event, Source};

    fn shared(writer: &str) -> Shared {
        Shared {
            writer: WriterId::parse(writer).unwrap(),
            record: Record {
                seq: 4,
                time: "2026-12-04T10:00:00.000Z".parse().unwrap(),
                source: Source::Operator,
                actor: "ana".into(),
                host: "laptop".into(),
                kind: Event::note("pool full"),
            },
        }
    }

    #[test]
    fn a_record_round_trips_through_its_message() {
        let s = shared("a-1");
        let back = Shared::decode("warroom.2026-12-04-1.a-1", &s.encode().unwrap()).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn a_message_claiming_another_writer_is_refused() {
        let s = shared("a-1");
        let got = Shared::decode("warroom.2026-12-04-1.b-2", &s.encode().unwrap());
        assert!(matches!(got, Err(Refused::Impostor { .. })), "{got:?}");
    }

    #[test]
    fn garbage_and_oversized_messages_are_refused() {
        assert!(matches!(
            Shared::decode("warroom.x.a-1", b"{not json"),
            Err(Refused::Unparsable(_))
        ));
        let big = vec![b' '; MAX_MESSAGE + 1];
        assert!(matches!(
            Shared::decode("warroom.x.a-1", &big),
            Err(Refused::TooLarge(_))
        ));
        assert!(WriterId::parse("a.b").is_err());
        assert!(WriterId::parse("a*").is_err());
    }
}
