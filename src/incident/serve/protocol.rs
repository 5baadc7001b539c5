//! The holder's wire protocol: one JSON object a line (newline-delimited, at most
//! [`MAX_FRAME`] bytes with its newline), each carrying the protocol version `v`.
//!
//! ```text
//! → {"v":1,"incident":"2026-11-29-1","actor":"ana","host":"laptop","op":{"type":"append","event":{"type":"note","text":"pool at 100%"}}}
//! ← {"v":1,"answer":{"type":"appended","record":{"seq":42,…}}}
//! → {"v":1,"incident":null,"actor":"bo","host":"bastion","op":{"type":"follow","after":0}}
//! ← {"v":1,"answer":{"type":"welcome","incident":"2026-11-29-1","holder":{…},"followers":1}}
//! ← {"v":1,"answer":{"type":"record","record":{…}}}        every record after `after`, then live
//! ← {"v":1,"answer":{"type":"presence","followers":2}}
//! ```
//!
//! A request answered with `appended` is synced: "acknowledged" means what it means locally.
//! Anything the holder cannot take is answered with `error` and a [`ErrorCode`]; a frame it
//! cannot read at all (garbage, too large, cut off, too slow) is answered when possible and
//! the connection closed.

use crate::incident::event::Event;
use crate::incident::record::Record;
use crate::incident::store::Holder;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The protocol version this build speaks.
pub const VERSION: u32 = 1;
/// The longest frame, newline included (a note of a few pages fits; a runaway client does not).
pub const MAX_FRAME: usize = 64 * 1024;
/// The socket's file name inside the incident directory.
pub const SOCKET_FILE: &str = "incident.sock";

/// What a client asks, with who is asking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub v: u32,
    /// The incident the client means (checked against the holder's; `None` for any, as a
    /// follower through an explicit `--socket` may not know it yet).
    pub incident: Option<String>,
    /// The author: recorded as the record's actor.
    pub actor: String,
    /// The machine the author is on: recorded as the record's host.
    pub host: String,
    pub op: Op,
}

/// The operations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// Record one event (a note, status, severity, services, title, action item, correction or
    /// impact mark); answered `appended` once synced.
    Append { event: Event },
    /// Stream every record with a sequence number above `after`, then each new one as it is
    /// appended, and the follower count as it changes.
    Follow { after: u64 },
    /// Ask the holder's operator to run a runbook (only the holder runs runbooks, after its own
    /// confirmation), with the variables and the reason the proposer gives; recorded as a note
    /// by the proposer and answered `proposed`.
    Propose {
        runbook: String,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        variables: BTreeMap<String, String>,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        reason: String,
    },
    /// Ask the holder's operator to record a note in the proposer's name (it accepts or
    /// declines); the proposal is recorded as a note by the proposer and answered `proposed`.
    ProposeNote { text: String },
    /// Who holds the incident; answered `welcome`.
    Hello,
}

/// The envelope of every answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    pub v: u32,
    pub answer: Answer,
}

/// What the holder says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Answer {
    /// Who holds which incident, and how many follow it.
    Welcome {
        incident: String,
        holder: Holder,
        followers: usize,
    },
    /// The record as written and synced.
    Appended {
        record: Record,
    },
    /// A record, streamed to a follower.
    Record {
        record: Record,
    },
    /// The number of followers changed.
    Presence {
        followers: usize,
    },
    /// The proposal reached the holder's operator; `record` is its note on the timeline.
    Proposed {
        record: Record,
    },
    Error {
        code: ErrorCode,
        message: String,
    },
}

/// Why a request was not done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The line is not a request (not JSON, or not of this shape).
    BadFrame,
    /// The line is longer than [`MAX_FRAME`].
    TooLarge,
    /// The client speaks another protocol version.
    Version,
    /// The request names another incident than the one held.
    WrongIncident,
    /// The event is not one a client may record, or is not valid (the same checks as local
    /// input).
    Refused,
    /// The journal did not take it: nothing was recorded.
    NotRecorded,
    /// No operator at the holder (a headless recorder or game day) to consider a proposal.
    NoOperator,
    /// Too many clients at once: try again in a moment.
    Busy,
    /// A code this version does not know (sent by a newer holder).
    #[serde(other)]
    Other,
}

impl Request {
    /// A request of this version.
    pub fn new(incident: Option<&str>, actor: &str, host: &str, op: Op) -> Request {
        Request {
            v: VERSION,
            incident: incident.map(str::to_string),
            actor: actor.to_string(),
            host: host.to_string(),
            op,
        }
    }
}

/// One frame's bytes: the value as one JSON line.
pub fn frame<T: Serialize>(value: &T) -> Vec<u8> {
    // Our own types always serialize (floats were checked finite before they got here).
    let mut line = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
    line.push(b'\n');
    line
}

/// An answer frame.
pub fn answer_frame(answer: Answer) -> Vec<u8> {
    frame(&Reply { v: VERSION, answer })
}

/// An error answer frame.
pub fn error_frame(code: ErrorCode, message: impl Into<String>) -> Vec<u8> {
    answer_frame(Answer::Error {
        code,
        message: message.into(),
    })
}

/// Reads a request line: the version is checked before the shape, so a newer client is told
/// which versions this holder speaks rather than that its request is garbage.
pub fn parse_request(line: &[u8]) -> Result<Request, (ErrorCode, String)> {
    let value: serde_json::Value = serde_json::from_slice(line).map_err(|e| {
        (
            ErrorCode::BadFrame,
            format!("the request is not JSON ({e}); send one JSON object a line"),
        )
    })?;
    match value.get("v").and_then(serde_json::Value::as_u64) {
        Some(v) if v == u64::from(VERSION) => {}
        Some(v) => {
            return Err((
                ErrorCode::Version,
                format!("protocol version {v} is not spoken here; this holder speaks {VERSION}"),
            ));
        }
        None => {
            return Err((
                ErrorCode::BadFrame,
                "the request has no protocol version (\"v\")".into(),
            ));
        }
    }
    serde_json::from_value(value).map_err(|e| {
        (
            ErrorCode::BadFrame,
            format!("the request is not of a known shape: {e}"),
        )
    })
}

/// Reads an answer line.
pub fn parse_reply(line: &[u8]) -> Result<Reply, String> {
    let reply: Reply = serde_json::from_slice(line)
        .map_err(|e| format!("the holder's answer cannot be read: {e}"))?;
    if reply.v != VERSION {
        return Err(format!(
            "the holder speaks protocol version {}, this warroom {VERSION}; use the same \
             warroom version on both ends",
            reply.v
        ));
    }
    Ok(reply)
}

/// The checks a client's event passes before it reaches the journal: only what a person
/// records may come through the socket, and it must be what local input would accept (the
/// journal sanitizes every text field on entry, as for local records).
pub fn check_client_event(event: &Event, now: chrono::DateTime<chrono::Utc>) -> Result<(), String> {
    let blank = |s: &str| s.trim().is_empty();
    match event {
        Event::Note { text, .. } if blank(text) => Err("the note is empty".into()),
        Event::TitleChanged { title } if blank(title) => Err("the title is empty".into()),
        Event::ServicesChanged { services } if services.iter().any(|s| blank(s)) => {
            Err("a service name is empty".into())
        }
        Event::ActionItem { action, .. } if blank(action) => {
            Err("the action item is empty: say what must be done".into())
        }
        Event::Correction { reason, .. } if blank(reason) => {
            Err("say why the record is wrong".into())
        }
        Event::Correction {
            replacement: Some(r),
            ..
        } if !matches!(**r, Event::Note { .. }) => Err(
            "only a note can be replaced; retract the record (no replacement) and record the \
             right one"
                .into(),
        ),
        Event::ImpactStart { at } | Event::ImpactEnd { at }
            if *at > now + chrono::Duration::minutes(1) =>
        {
            Err(format!("the impact time {at} is in the future"))
        }
        Event::Note { .. }
        | Event::StatusChanged { .. }
        | Event::SeverityChanged { .. }
        | Event::TitleChanged { .. }
        | Event::ServicesChanged { .. }
        | Event::ActionItem { .. }
        | Event::Correction { .. }
        | Event::ImpactStart { .. }
        | Event::ImpactEnd { .. }
        | Event::Silence(_) => Ok(()),
        other => Err(format!(
            "only the holder records {}; a client may record notes, status, severity, title, \
             services, action items, corrections, impact marks and silences",
            kind_name(other)
        )),
    }
}

/// The event's `type` word, for messages.
fn kind_name(event: &Event) -> String {
    serde_json::to_value(event)
        .ok()
        .and_then(|v| v.get("type")?.as_str().map(str::to_string))
        .unwrap_or_else(|| "that kind of record".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_and_the_version_is_checked_first() {
        let r = Request::new(
            Some("2026-11-29-1"),
            "ana",
            "laptop",
            Op::Append {
                event: Event::note("pool at 100%"),
            },
        );
        let line = frame(&r);
        assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
        assert_eq!(parse_request(line.trim_ascii_end()).unwrap(), r);
        let newer = br#"{"v":2,"op":{"type":"teleport"}}"#;
        assert_eq!(parse_request(newer).unwrap_err().0, ErrorCode::Version);
        assert_eq!(
            parse_request(b"\x00\x01garbage").unwrap_err().0,
            ErrorCode::BadFrame
        );
        assert_eq!(
            parse_request(br#"{"v":1,"op":{"type":"append"}}"#)
                .unwrap_err()
                .0,
            ErrorCode::BadFrame
        );
        let unknown: Reply = serde_json::from_slice(
            br#"{"v":1,"answer":{"type":"error","code":"new","message":"m"}}"#,
        )
        .unwrap();
        assert!(matches!(
            unknown.answer,
            Answer::Error {
                code: ErrorCode::Other,
                ..
            }
        ));
    }

    #[test]
    fn clients_record_what_people_record_and_only_valid_input() {
        let now = chrono::Utc::now();
        assert!(check_client_event(&Event::note("fine"), now).is_ok());
        assert!(check_client_event(&Event::note("  \n"), now).is_err());
        let intent = Event::RunbookIntent {
            run_id: "r".into(),
            step: "s".into(),
            idempotency_key: "k".into(),
            request: "POST".into(),
        };
        let e = check_client_event(&intent, now).unwrap_err();
        assert!(e.contains("runbook_intent"), "{e}");
        let future = Event::ImpactEnd {
            at: now + chrono::Duration::hours(1),
        };
        assert!(check_client_event(&future, now).is_err());
        let replace_status = Event::Correction {
            supersedes: 1,
            reason: "wrong".into(),
            replacement: Some(Box::new(Event::StatusChanged {
                status: crate::incident::event::Status::Resolved,
            })),
        };
        assert!(check_client_event(&replace_status, now).is_err());
    }
}
