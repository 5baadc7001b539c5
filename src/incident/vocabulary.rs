//! The fixed words of the timeline: sources, severities, statuses, note tags, priorities,
//! threshold levels and step states, each with the one spelling the journal uses and a parser
//! for what people type.

use crate::sanitize;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Where a record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A panel's metric (threshold crossings).
    Metric,
    /// Prometheus or Alertmanager alerts.
    Alert,
    /// A runbook run.
    Runbook,
    /// A person: notes, status, action items, corrections.
    Operator,
    /// Changes from GitHub (deploys, merged pull requests).
    Github,
    /// The outage simulator in a rehearsal.
    Sim,
    /// warroom itself: journal notices and interruptions.
    System,
}

impl Source {
    /// Every source, in display order.
    pub const ALL: [Source; 7] = [
        Source::Metric,
        Source::Alert,
        Source::Runbook,
        Source::Operator,
        Source::Github,
        Source::Sim,
        Source::System,
    ];

    /// The lowercase name used in the journal and on screen.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Metric => "metric",
            Source::Alert => "alert",
            Source::Runbook => "runbook",
            Source::Operator => "operator",
            Source::Github => "github",
            Source::Sim => "sim",
            Source::System => "system",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A value the operator typed that is not one of the allowed words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} \"{given}\" is not known; use one of: {allowed}")]
pub struct UnknownWord {
    pub what: &'static str,
    pub given: String,
    pub allowed: &'static str,
}

fn unknown(what: &'static str, given: &str, allowed: &'static str) -> UnknownWord {
    UnknownWord {
        what,
        given: sanitize::line(given).into_owned(),
        allowed,
    }
}

/// Incident severity, SEV-1 (worst) to SEV-4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Severity {
    #[serde(rename = "SEV-1")]
    Sev1,
    #[serde(rename = "SEV-2")]
    Sev2,
    #[serde(rename = "SEV-3")]
    Sev3,
    #[serde(rename = "SEV-4")]
    Sev4,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = match self {
            Severity::Sev1 => 1,
            Severity::Sev2 => 2,
            Severity::Sev3 => 3,
            Severity::Sev4 => 4,
        };
        write!(f, "SEV-{n}")
    }
}

impl FromStr for Severity {
    type Err = UnknownWord;
    /// Accepts `SEV-1`, `sev1`, `1` and the like, case-insensitively.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        let digits = t
            .trim_start_matches("sev")
            .trim_start_matches(['-', ' ', '_']);
        match digits {
            "1" => Ok(Severity::Sev1),
            "2" => Ok(Severity::Sev2),
            "3" => Ok(Severity::Sev3),
            "4" => Ok(Severity::Sev4),
            _ => Err(unknown("severity", s, "SEV-1, SEV-2, SEV-3, SEV-4")),
        }
    }
}

/// Where the response stands (the status-page words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Investigating,
    Identified,
    Monitoring,
    Resolved,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Investigating => "investigating",
            Status::Identified => "identified",
            Status::Monitoring => "monitoring",
            Status::Resolved => "resolved",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Status {
    type Err = UnknownWord;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "investigating" => Ok(Status::Investigating),
            "identified" => Ok(Status::Identified),
            "monitoring" => Ok(Status::Monitoring),
            "resolved" => Ok(Status::Resolved),
            _ => Err(unknown(
                "status",
                s,
                "investigating, identified, monitoring, resolved",
            )),
        }
    }
}

/// Tags on notes that the postmortem draft uses to place them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tag {
    Summary,
    Impact,
    RootCause,
    Factor,
    Detection,
    WentWell,
    WentPoorly,
    Lesson,
}

impl Tag {
    /// Every tag, in the postmortem's order.
    pub const ALL: [Tag; 8] = [
        Tag::Summary,
        Tag::Impact,
        Tag::RootCause,
        Tag::Factor,
        Tag::Detection,
        Tag::WentWell,
        Tag::WentPoorly,
        Tag::Lesson,
    ];

    /// The tag as typed, without `#`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tag::Summary => "summary",
            Tag::Impact => "impact",
            Tag::RootCause => "root-cause",
            Tag::Factor => "factor",
            Tag::Detection => "detection",
            Tag::WentWell => "went-well",
            Tag::WentPoorly => "went-poorly",
            Tag::Lesson => "lesson",
        }
    }

    /// The known tags in `text` (`#root-cause`, case-insensitive), each once, in order of
    /// first appearance. Unknown `#words` stay plain text.
    pub fn parse_all(text: &str) -> Vec<Tag> {
        let mut tags = Vec::new();
        for word in text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')')) {
            let Some(name) = word.strip_prefix('#') else {
                continue;
            };
            let name = name
                .trim_end_matches(['.', ':', '!', '?'])
                .to_ascii_lowercase();
            if let Some(tag) = Tag::ALL.into_iter().find(|t| t.as_str() == name)
                && !tags.contains(&tag)
            {
                tags.push(tag);
            }
        }
        tags
    }
}

/// Action item priority, P0 (the house's most urgent, as both house postmortems use it) to P3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Priority {
    P0,
    P1,
    P2,
    P3,
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Priority::P0 => "P0",
            Priority::P1 => "P1",
            Priority::P2 => "P2",
            Priority::P3 => "P3",
        })
    }
}

impl FromStr for Priority {
    type Err = UnknownWord;
    /// `P0`, `P1`/`high`, `P2`/`medium`, `P3`/`low`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "p0" | "0" => Ok(Priority::P0),
            "p1" | "1" | "high" => Ok(Priority::P1),
            "p2" | "2" | "medium" => Ok(Priority::P2),
            "p3" | "3" | "low" => Ok(Priority::P3),
            _ => Err(unknown("priority", s, "P0, P1/high, P2/medium, P3/low")),
        }
    }
}

/// Which threshold a panel crossed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Warn,
    Crit,
}

impl Level {
    /// `warn` or `crit`, as the timeline says it.
    pub fn word(self) -> &'static str {
        match self {
            Level::Warn => "warn",
            Level::Crit => "crit",
        }
    }
}

/// Whether the value went over the threshold (`up`) or came back under it (`down`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Up,
    Down,
}

/// Which system reported an alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertSource {
    Prometheus,
    Alertmanager,
}

/// The state of a runbook run or step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepState {
    Started,
    Succeeded,
    Failed,
    TimedOut,
    Cancelled,
    /// A mutating request was sent (its intent is recorded) but no answer came: whether it took
    /// effect is unknown until someone checks.
    InDoubt,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_found_once_each_whatever_the_punctuation() {
        assert_eq!(
            Tag::parse_all("pool at 100% #Impact, #root-cause. (#lesson) #impact #nope x#factor"),
            vec![Tag::Impact, Tag::RootCause, Tag::Lesson]
        );
        assert!(Tag::parse_all("no tags # here").is_empty());
        for tag in Tag::ALL {
            assert_eq!(Tag::parse_all(&format!("#{}", tag.as_str())), vec![tag]);
        }
    }

    #[test]
    fn words_people_type_are_accepted_and_others_named() {
        for s in ["SEV-1", "sev1", "1", " Sev-1 "] {
            assert_eq!(s.parse::<Severity>(), Ok(Severity::Sev1), "{s}");
        }
        assert_eq!(Severity::Sev2.to_string(), "SEV-2");
        assert_eq!("Resolved".parse::<Status>(), Ok(Status::Resolved));
        assert_eq!("low".parse::<Priority>(), Ok(Priority::P3));
        assert_eq!("P0".parse::<Priority>(), Ok(Priority::P0));
        assert_eq!(Priority::P0.to_string(), "P0");
        let err = "SEV-\u{1b}[2J".parse::<Severity>().unwrap_err().to_string();
        assert!(sanitize::is_clean(&err, false), "{err}");
        assert!(err.contains("SEV-1, SEV-2"), "{err}");
    }

    #[test]
    fn the_journal_spelling_is_stable() {
        let json = serde_json::to_string(&(
            Source::Github,
            Severity::Sev1,
            Status::Monitoring,
            Tag::WentPoorly,
            Priority::P2,
            Level::Crit,
            Direction::Down,
            AlertSource::Alertmanager,
            StepState::InDoubt,
        ))
        .unwrap();
        assert_eq!(
            json,
            r#"["github","SEV-1","monitoring","went-poorly","P2","crit","down","alertmanager","in-doubt"]"#
        );
    }
}
