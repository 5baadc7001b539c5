//! One journal record and its line format.
//!
//! A record is one line of JSON: the record without its checksum, serialized, with
//! `,"crc":"xxxxxxxx"}` in place of the closing brace, and a newline:
//!
//! ```text
//! {"seq":7,"time":"2026-11-29T14:55:02.125Z","source":"operator","actor":"ana","kind":{"type":"note","text":"pool at 100%"},"crc":"1a2b3c4d"}
//! ```
//!
//! The checksum is CRC-32 over the exact bytes of that canonical JSON (the line up to the
//! checksum, closed with `}`), so verifying never depends on re-serializing. CRC-32 catches
//! every error burst up to 32 bits, so any single damaged byte is always found; the checksum is
//! compared as text (8 lowercase hex digits), so even a case flip inside it is found.

use super::event::{Event, Source};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One entry of the timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// 1, 2, 3, … with no gaps; the journal's order.
    pub seq: u64,
    /// When it happened (UTC, millisecond precision).
    pub time: DateTime<Utc>,
    pub source: Source,
    /// Who: a person's name, a panel, a runbook run, `warroom`.
    pub actor: String,
    /// The machine the author wrote from (the holder's own, or a client's through the holder's
    /// socket). Empty in records written before it was recorded: those lines read, and
    /// re-encode, byte for byte as they were.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
    /// What happened.
    pub kind: Event,
}

const CRC_PREFIX: &[u8] = b",\"crc\":\"";
/// `,"crc":"` + 8 hex digits + `"}`.
const CRC_SUFFIX_LEN: usize = CRC_PREFIX.len() + 8 + 2;

/// Why a line is not a valid record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("the line has no newline at its end (an unfinished write)")]
    Unfinished,
    #[error("the line is empty")]
    Empty,
    #[error("the line does not end with a checksum field")]
    NoChecksum,
    #[error("checksum mismatch: the line says \"{stored}\", its content gives \"{computed}\"")]
    Checksum { stored: String, computed: String },
    #[error("the line is not a valid record: {0}")]
    Json(String),
}

impl Record {
    /// The canonical JSON of the record without its checksum.
    fn body(&self) -> Result<Vec<u8>, serde_json::Error> {
        serde_json::to_vec(self)
    }

    /// The full line to append: canonical JSON, checksum, newline.
    pub fn encode(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut line = self.body()?;
        let crc = crc32fast::hash(&line);
        line.pop(); // the closing brace; the checksum field closes the object instead
        line.extend_from_slice(CRC_PREFIX);
        line.extend_from_slice(format!("{crc:08x}\"}}\n").as_bytes());
        Ok(line)
    }

    /// Reads one line (with its trailing newline) and verifies its checksum.
    pub fn decode(line: &[u8]) -> Result<Record, LineError> {
        let Some(line) = line.strip_suffix(b"\n") else {
            return Err(LineError::Unfinished);
        };
        if line.is_empty() {
            return Err(LineError::Empty);
        }
        if line.len() < CRC_SUFFIX_LEN + 2 || !line.ends_with(b"\"}") {
            return Err(LineError::NoChecksum);
        }
        let split = line.len() - CRC_SUFFIX_LEN;
        let (head, suffix) = line.split_at(split);
        if !suffix.starts_with(CRC_PREFIX) {
            return Err(LineError::NoChecksum);
        }
        let stored = &suffix[CRC_PREFIX.len()..CRC_PREFIX.len() + 8];
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(head);
        hasher.update(b"}");
        let computed = format!("{:08x}", hasher.finalize());
        if stored != computed.as_bytes() {
            return Err(LineError::Checksum {
                stored: crate::sanitize::bytes(stored),
                computed,
            });
        }
        let mut body = Vec::with_capacity(head.len() + 1);
        body.extend_from_slice(head);
        body.push(b'}');
        serde_json::from_slice(&body).map_err(|e| LineError::Json(e.to_string()))
    }

    /// How many checksum fields `bytes` holds: a torn write is a prefix of one record, so it
    /// holds at most one; more means records were damaged, not torn.
    pub fn count_checksums(bytes: &[u8]) -> usize {
        bytes
            .windows(CRC_PREFIX.len())
            .filter(|w| *w == CRC_PREFIX)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Record {
        Record {
            seq: 3,
            time: "2026-11-29T14:55:02.125Z".parse().unwrap(),
            source: Source::Operator,
            actor: "ana".into(),
            host: String::new(),
            kind: Event::note("pool at 100% #impact\nsecond line"),
        }
    }

    #[test]
    fn a_record_round_trips_through_its_line() {
        let line = sample().encode().unwrap();
        assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
        assert_eq!(Record::decode(&line).unwrap(), sample());
        assert_eq!(Record::count_checksums(&line), 1);
    }

    #[test]
    fn the_line_format_is_stable() {
        let line = String::from_utf8(sample().encode().unwrap()).unwrap();
        assert!(line.starts_with(
            "{\"seq\":3,\"time\":\"2026-11-29T14:55:02.125Z\",\"source\":\"operator\",\
             \"actor\":\"ana\",\"kind\":{\"type\":\"note\",\"text\":\"pool at 100% #impact\\nsecond line\",\
             \"tags\":[\"impact\"]},\"crc\":\""
        ), "{line}");
    }

    #[test]
    fn a_case_flip_in_the_checksum_is_caught() {
        // Find a record whose checksum holds a letter, then flip that letter's case.
        let (mut line, pos) = (0..1000)
            .find_map(|seq| {
                let line = Record { seq, ..sample() }.encode().unwrap();
                let end = line.len() - 3;
                let pos = (end - 8..end).find(|i| line[*i].is_ascii_lowercase())?;
                Some((line, pos))
            })
            .expect("some checksum among 1000 holds a hex letter");
        line[pos] = line[pos].to_ascii_uppercase();
        assert!(matches!(
            Record::decode(&line),
            Err(LineError::Checksum { .. })
        ));
    }

    #[test]
    fn missing_newline_and_empty_lines_are_errors() {
        let line = sample().encode().unwrap();
        assert_eq!(
            Record::decode(&line[..line.len() - 1]),
            Err(LineError::Unfinished)
        );
        assert_eq!(Record::decode(b"\n"), Err(LineError::Empty));
        assert_eq!(Record::decode(b"{}\n"), Err(LineError::NoChecksum));
    }
}
