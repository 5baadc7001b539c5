//! The Alertmanager silences an incident made, as its journal records them (issue 35): each one
//! made, extended or expired is an [`Event::Silence`](super::Event::Silence) with the silence's
//! id, matchers, end and author. [`live`] folds the records into the silences still in force;
//! [`SilenceRecord::sentence`] says one in words for `incident timeline` and the postmortem.
//!
//! A silence belongs to an incident by its comment, which starts with [`IncidentMark`]'s words
//! (`warroom incident 2026-12-04-1: …`): Alertmanager keeps no other field of ours.

use crate::sanitize;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use std::fmt;

/// How a matcher compares a label's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MatchOp {
    #[serde(rename = "=")]
    Equal,
    #[serde(rename = "!=")]
    NotEqual,
    #[serde(rename = "=~")]
    Regex,
    #[serde(rename = "!~")]
    NotRegex,
}

impl MatchOp {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchOp::Equal => "=",
            MatchOp::NotEqual => "!=",
            MatchOp::Regex => "=~",
            MatchOp::NotRegex => "!~",
        }
    }

    /// Whether the value is a regular expression.
    pub fn is_regex(self) -> bool {
        matches!(self, MatchOp::Regex | MatchOp::NotRegex)
    }

    /// Whether the matcher selects what it names (`=`, `=~`) rather than what it does not.
    pub fn is_equal(self) -> bool {
        matches!(self, MatchOp::Equal | MatchOp::Regex)
    }

    /// The operator of Alertmanager's two flags.
    pub fn from_flags(is_regex: bool, is_equal: bool) -> MatchOp {
        match (is_regex, is_equal) {
            (false, true) => MatchOp::Equal,
            (false, false) => MatchOp::NotEqual,
            (true, true) => MatchOp::Regex,
            (true, false) => MatchOp::NotRegex,
        }
    }
}

/// One label matcher of a silence: `name op value`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Matcher {
    pub name: String,
    pub op: MatchOp,
    pub value: String,
}

/// A matcher typed as `k=v`, `k!=v`, `k=~re` or `k!~re` that is none of them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "\"{0}\" is not a matcher; write name=value, name!=value, name=~regex or name!~regex, \
     e.g. alertname=PoolSaturated"
)]
pub struct BadMatcher(pub String);

impl Matcher {
    pub fn new(name: impl Into<String>, op: MatchOp, value: impl Into<String>) -> Matcher {
        Matcher {
            name: name.into(),
            op,
            value: value.into(),
        }
    }

    /// `alertname="X"`, as Alertmanager and PromQL write matchers.
    pub fn shown(&self) -> String {
        format!("{}{}{:?}", self.name, self.op.as_str(), self.value)
    }

    /// The matchers equal to an alert's labels, `alertname` first.
    pub fn of_labels<'a>(
        name: &str,
        labels: impl IntoIterator<Item = (&'a String, &'a String)>,
    ) -> Vec<Matcher> {
        std::iter::once(Matcher::new("alertname", MatchOp::Equal, name))
            .chain(
                labels
                    .into_iter()
                    .filter(|(k, _)| k.as_str() != "alertname")
                    .map(|(k, v)| Matcher::new(k.clone(), MatchOp::Equal, v.clone())),
            )
            .collect()
    }

    /// Whether it selects the alert `name` with `labels`, by Alertmanager's rules: a label the
    /// alert lacks has the empty value, a regular expression matches the whole value.
    pub fn matches(&self, name: &str, labels: &std::collections::BTreeMap<String, String>) -> bool {
        let value = match self.name.as_str() {
            "alertname" => name,
            label => labels.get(label).map_or("", String::as_str),
        };
        let hit = match self.op {
            MatchOp::Equal | MatchOp::NotEqual => self.value == value,
            MatchOp::Regex | MatchOp::NotRegex => {
                regex::Regex::new(&format!("^(?:{})$", self.value)).is_ok_and(|r| r.is_match(value))
            }
        };
        hit == self.op.is_equal()
    }

    /// The matchers as one line: `alertname="X", job="api"`.
    pub fn list(matchers: &[Matcher]) -> String {
        let shown: Vec<String> = matchers.iter().map(Matcher::shown).collect();
        shown.join(", ")
    }

    /// The matcher with its name and value as one sanitized line each.
    pub fn sanitized(mut self) -> Matcher {
        self.name = sanitize::line(&self.name).into_owned();
        self.value = sanitize::line(&self.value).into_owned();
        self
    }
}

impl std::str::FromStr for Matcher {
    type Err = BadMatcher;

    /// `name=value`, `name!=value`, `name=~regex`, `name!~regex`; the value may be quoted.
    fn from_str(s: &str) -> Result<Matcher, BadMatcher> {
        let bad = || BadMatcher(sanitize::line(s).into_owned());
        let at = s.find(['=', '!']).ok_or_else(bad)?;
        let (name, rest) = s.split_at(at);
        let (op, value) = [
            ("!=", MatchOp::NotEqual),
            ("=~", MatchOp::Regex),
            ("!~", MatchOp::NotRegex),
            ("=", MatchOp::Equal),
        ]
        .into_iter()
        .find_map(|(text, op)| rest.strip_prefix(text).map(|v| (op, v)))
        .ok_or_else(bad)?;
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        Ok(Matcher::new(name.trim(), op, value))
    }
}

impl fmt::Display for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown())
    }
}

/// What happened to a silence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SilenceChange {
    Made,
    /// Its end moved to the record's `until`.
    Extended,
    /// Expired (by warroom or seen expired in Alertmanager); `until` is when.
    Expired,
    /// The console warned that it lapses at `until` (five minutes before), offering to extend it.
    Lapsing,
}

/// The marker an incident's silences carry at the start of their comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncidentMark(String);

impl IncidentMark {
    pub fn new(incident: &str) -> IncidentMark {
        IncidentMark(format!("warroom incident {incident}"))
    }

    /// The comment of a silence of this incident: the marker, then the user's note.
    pub fn comment(&self, note: &str) -> String {
        let note = sanitize::line(note.trim());
        if note.is_empty() {
            format!("{}: silenced from warroom", self.0)
        } else {
            format!("{}: {note}", self.0)
        }
    }

    /// Whether `comment` marks a silence of this incident (and not of `…-11` when it is `…-1`).
    pub fn marks(&self, comment: &str) -> bool {
        comment
            .strip_prefix(&self.0)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(':'))
    }
}

/// A silence made, extended or expired, as the journal records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SilenceRecord {
    pub change: SilenceChange,
    /// Alertmanager's id of the silence.
    pub id: String,
    pub matchers: Vec<Matcher>,
    /// Its end; for an expiry, when it was expired.
    pub until: DateTime<Utc>,
    /// Its `createdBy`, or who extended or expired it.
    pub author: String,
}

impl SilenceRecord {
    /// The record with every text one sanitized line.
    pub fn sanitized(mut self) -> SilenceRecord {
        self.id = sanitize::line(&self.id).into_owned();
        self.author = sanitize::line(&self.author).into_owned();
        self.matchers = self.matchers.into_iter().map(Matcher::sanitized).collect();
        self
    }

    /// The record in words, times in `tz`: "ana silenced alertname="X" until 2026-12-04
    /// 16:00:00 UTC (silence 1a2b3c4d)".
    pub fn sentence(&self, tz: Tz) -> String {
        let when = self.until.with_timezone(&tz).format("%Y-%m-%d %H:%M:%S %Z");
        let (who, what, id) = (&self.author, Matcher::list(&self.matchers), short(&self.id));
        match self.change {
            SilenceChange::Made => format!("{who} silenced {what} until {when} (silence {id})"),
            SilenceChange::Extended => {
                format!("{who} extended the silence of {what} to {when} (silence {id})")
            }
            SilenceChange::Expired => {
                format!("{who} expired the silence of {what} at {when} (silence {id})")
            }
            SilenceChange::Lapsing => {
                format!(
                    "the silence of {what} lapses at {when} (silence {id}): extend it or let it go"
                )
            }
        }
    }
}

/// The first eight characters of a silence id, as lists show it.
pub fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// The silences `records` made and did not expire, whose end is after `now`, in the order made
/// (each as made, with its last end).
pub fn live(records: &[super::Record], now: DateTime<Utc>) -> Vec<SilenceRecord> {
    let mut known: Vec<SilenceRecord> = Vec::new();
    for r in records {
        let super::Event::Silence(s) = &r.kind else {
            continue;
        };
        let at = known.iter().position(|k| k.id == s.id);
        match (s.change, at) {
            // An extension under a new id (Alertmanager replaced the silence) is one in force.
            (SilenceChange::Made | SilenceChange::Extended, None) => known.push(s.clone()),
            (SilenceChange::Made | SilenceChange::Extended, Some(i)) => known[i].until = s.until,
            (SilenceChange::Expired, Some(i)) => {
                known.remove(i);
            }
            (SilenceChange::Expired, None) | (SilenceChange::Lapsing, _) => {}
        }
    }
    known.retain(|k| k.until > now);
    known
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incident::{Event, Record, Source};

    #[test]
    fn matchers_parse_every_operator_and_quoted_values() {
        let m: Matcher = "alertname=PoolSaturated".parse().unwrap();
        assert_eq!(
            m,
            Matcher::new("alertname", MatchOp::Equal, "PoolSaturated")
        );
        let m: Matcher = "job!=\"api\"".parse().unwrap();
        assert_eq!(m, Matcher::new("job", MatchOp::NotEqual, "api"));
        let m: Matcher = "pod=~api-.*".parse().unwrap();
        assert_eq!((m.op, m.value.as_str()), (MatchOp::Regex, "api-.*"));
        let m: Matcher = "pod!~\"x|y\"".parse().unwrap();
        assert_eq!((m.op, m.value.as_str()), (MatchOp::NotRegex, "x|y"));
        let m: Matcher = "url=http://a=b".parse().unwrap();
        assert_eq!(m.value, "http://a=b");
        assert!("justaname".parse::<Matcher>().is_err());
        assert_eq!(m.shown(), "url=\"http://a=b\"");
    }

    #[test]
    fn an_alerts_labels_make_equal_matchers_alertname_first() {
        let labels: std::collections::BTreeMap<String, String> =
            [("alertname", "X"), ("job", "api"), ("pod", "api-1")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        let m = Matcher::of_labels("PoolSaturated", &labels);
        assert_eq!(
            Matcher::list(&m),
            "alertname=\"PoolSaturated\", job=\"api\", pod=\"api-1\""
        );
    }

    #[test]
    fn the_mark_tells_this_incident_from_one_whose_id_extends_it() {
        let mark = IncidentMark::new("2026-12-04-1");
        let c = mark.comment("pager storm");
        assert_eq!(c, "warroom incident 2026-12-04-1: pager storm");
        assert!(mark.marks(&c));
        assert!(!mark.marks(&IncidentMark::new("2026-12-04-11").comment("x")));
        assert!(!mark.marks("someone else's silence"));
    }

    #[test]
    fn live_silences_follow_made_extended_and_expired() {
        let t = |s: i64| DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap();
        let m = vec![Matcher::new("alertname", MatchOp::Equal, "X")];
        let rec = |seq, change, id: &str, until| Record {
            seq,
            time: t(0),
            source: Source::Operator,
            actor: "ana".into(),
            host: String::new(),
            kind: Event::Silence(SilenceRecord {
                change,
                id: id.into(),
                matchers: m.clone(),
                until,
                author: "ana".into(),
            }),
        };
        let records = [
            rec(1, SilenceChange::Made, "a", t(100)),
            rec(2, SilenceChange::Made, "b", t(100)),
            rec(3, SilenceChange::Extended, "a", t(500)),
            rec(4, SilenceChange::Expired, "b", t(50)),
        ];
        let now = live(&records, t(200));
        assert_eq!(now.len(), 1);
        assert_eq!((now[0].id.as_str(), now[0].until), ("a", t(500)));
        assert!(live(&records, t(600)).is_empty());
    }
}
