//! What the timeline records: every kind of event, in the incident's own words.
//!
//! An [`Event`] is the `kind` of a journal record. It is serialized as a JSON object tagged by
//! `"type"` (`{"type":"note","text":"…","tags":["root-cause"]}`). All free text is sanitized
//! once, when the event enters the journal ([`Event::sanitized`]), so nothing that reads the
//! journal later has to think about terminal escapes.

use crate::sanitize;
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
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

/// Action item priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Priority {
    P1,
    P2,
    P3,
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Priority::P1 => "P1",
            Priority::P2 => "P2",
            Priority::P3 => "P3",
        })
    }
}

impl FromStr for Priority {
    type Err = UnknownWord;
    /// `P1`/`high`, `P2`/`medium`, `P3`/`low`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "p1" | "1" | "high" => Ok(Priority::P1),
            "p2" | "2" | "medium" => Ok(Priority::P2),
            "p3" | "3" | "low" => Ok(Priority::P3),
            _ => Err(unknown("priority", s, "P1 (high), P2 (medium), P3 (low)")),
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

/// A runbook run as the journal names it: the run id and the exact runbook version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRef {
    pub run_id: String,
    pub runbook: String,
    /// Hash of the runbook file as run, so the postmortem cites the exact version.
    pub hash: String,
}

/// One thing that happened during an incident.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    IncidentOpened {
        title: String,
        severity: Severity,
    },
    SeverityChanged {
        severity: Severity,
    },
    StatusChanged {
        status: Status,
    },
    TitleChanged {
        title: String,
    },
    ServicesChanged {
        services: Vec<String>,
    },
    /// A note typed by a person; `tags` are parsed from its text by [`Event::note`].
    Note {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tags: Vec<Tag>,
    },
    ActionItem {
        /// `AI-1`, `AI-2`, … in order of creation within the incident.
        id: String,
        action: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        priority: Option<Priority>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        due: Option<NaiveDate>,
    },
    /// The impact began at `at` (when it differs from the first crossing).
    ImpactStart {
        at: DateTime<Utc>,
    },
    /// The impact ended at `at` (when it differs from the recovery).
    ImpactEnd {
        at: DateTime<Utc>,
    },
    /// Supersedes record `supersedes`: `replacement` takes its place, or none to retract it.
    /// The superseded record stays in the journal; nothing is rewritten.
    Correction {
        supersedes: u64,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replacement: Option<Box<Event>>,
    },
    /// A panel's value went past a threshold (`direction` is the way the value moved) or came
    /// back; `at` is the reading where it happened (the record's time is when it was known).
    ThresholdCrossed {
        panel: String,
        level: Level,
        direction: Direction,
        value: f64,
        threshold: f64,
        at: DateTime<Utc>,
    },
    AlertFiring {
        name: String,
        labels: BTreeMap<String, String>,
        source: AlertSource,
    },
    AlertResolved {
        name: String,
        labels: BTreeMap<String, String>,
        source: AlertSource,
    },
    /// A whole run started or ended.
    RunbookRun {
        run: RunRef,
        state: StepState,
    },
    RunbookStep {
        run: RunRef,
        step: String,
        state: StepState,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// Written (and synced) before a mutating request is sent, so a crash between send and
    /// answer leaves evidence: on restart the step is in doubt, not forgotten.
    RunbookIntent {
        run_id: String,
        step: String,
        idempotency_key: String,
        /// What is about to be sent, as the plan shows it (no secrets).
        request: String,
    },
    /// The answer to an intent.
    RunbookAck {
        run_id: String,
        step: String,
        idempotency_key: String,
        outcome: String,
    },
    /// A change from GitHub: a deploy, a merged pull request.
    Change {
        repo: String,
        reference: String,
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
    },
    /// A simulated fault started (`active`) or was cleared, in a rehearsal.
    SimFault {
        fault: String,
        detail: String,
        active: bool,
    },
    /// warroom was interrupted (SIGINT, SIGTERM) while recording.
    Interrupted {
        signal: String,
    },
    /// Something about the journal itself the operator must know (a torn tail cut off, …).
    JournalNotice {
        message: String,
    },
}

/// An event that cannot be recorded as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidEvent(pub String);

fn one(s: &mut String) {
    if let std::borrow::Cow::Owned(clean) = sanitize::line(s) {
        *s = clean;
    }
}

fn many_lines(s: &mut String) {
    if let std::borrow::Cow::Owned(clean) = sanitize::multiline(s) {
        *s = clean;
    }
}

fn run(r: &mut RunRef) {
    one(&mut r.run_id);
    one(&mut r.runbook);
    one(&mut r.hash);
}

fn labels(map: &mut BTreeMap<String, String>) {
    let taken = std::mem::take(map);
    for (k, v) in taken {
        map.insert(
            sanitize::line(&k).into_owned(),
            sanitize::line(&v).into_owned(),
        );
    }
}

impl Event {
    /// A note with its tags parsed from the text.
    pub fn note(text: impl Into<String>) -> Event {
        let text = text.into();
        let tags = Tag::parse_all(&text);
        Event::Note { text, tags }
    }

    /// The event with every free-text field sanitized (notes keep newlines and tabs; every other
    /// field is one line).
    pub fn sanitized(mut self) -> Event {
        match &mut self {
            Event::IncidentOpened { title, .. } | Event::TitleChanged { title } => one(title),
            Event::ServicesChanged { services } => services.iter_mut().for_each(one),
            Event::Note { text, tags } => {
                many_lines(text);
                // Tags are whatever the stored text says, so they never disagree with it.
                *tags = Tag::parse_all(text);
            }
            Event::ActionItem {
                id, action, owner, ..
            } => {
                one(id);
                one(action);
                owner.iter_mut().for_each(one);
            }
            Event::Correction {
                reason,
                replacement,
                ..
            } => {
                many_lines(reason);
                if let Some(r) = replacement.take() {
                    *replacement = Some(Box::new(r.sanitized()));
                }
            }
            Event::ThresholdCrossed { panel, .. } => one(panel),
            Event::AlertFiring {
                name, labels: l, ..
            }
            | Event::AlertResolved {
                name, labels: l, ..
            } => {
                one(name);
                labels(l);
            }
            Event::RunbookRun { run: r, .. } => run(r),
            Event::RunbookStep {
                run: r,
                step,
                detail,
                ..
            } => {
                run(r);
                one(step);
                detail.iter_mut().for_each(many_lines);
            }
            Event::RunbookIntent {
                run_id,
                step,
                idempotency_key,
                request: text,
            }
            | Event::RunbookAck {
                run_id,
                step,
                idempotency_key,
                outcome: text,
            } => {
                one(run_id);
                one(step);
                one(idempotency_key);
                many_lines(text);
            }
            Event::Change {
                repo,
                reference,
                title,
                url,
            } => {
                one(repo);
                one(reference);
                one(title);
                url.iter_mut().for_each(one);
            }
            Event::SimFault { fault, detail, .. } => {
                one(fault);
                many_lines(detail);
            }
            Event::Interrupted { signal } => one(signal),
            Event::JournalNotice { message } => many_lines(message),
            Event::SeverityChanged { .. }
            | Event::StatusChanged { .. }
            | Event::ImpactStart { .. }
            | Event::ImpactEnd { .. } => {}
        }
        self
    }

    /// Checks what JSON cannot carry faithfully: a NaN or infinite value would be written as
    /// `null` and could never be read back, so it is refused before it reaches the journal.
    pub fn check(&self) -> Result<(), InvalidEvent> {
        match self {
            Event::ThresholdCrossed {
                panel,
                value,
                threshold,
                ..
            } if !value.is_finite() || !threshold.is_finite() => Err(InvalidEvent(format!(
                "threshold crossing on panel \"{panel}\" has a value that is not a finite number \
                 (value {value}, threshold {threshold}); it was not recorded"
            ))),
            Event::Correction {
                replacement: Some(r),
                ..
            } => r.check(),
            _ => Ok(()),
        }
    }
}
