//! What the timeline records: every kind of event, in the incident's own words.
//!
//! An [`Event`] is the `kind` of a journal record. It is serialized as a JSON object tagged by
//! `"type"` (`{"type":"note","text":"…","tags":["root-cause"]}`). All free text is sanitized
//! once, when the event enters the journal ([`Event::sanitized`]), so nothing that reads the
//! journal later has to think about terminal escapes.

pub use super::silence::{Matcher, SilenceChange, SilenceRecord};
pub use super::vocabulary::{
    AlertSource, Direction, Level, Priority, Severity, Source, Status, StepState, Tag, UnknownWord,
};
use crate::sanitize;
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
        /// The reading; ±Inf is written as `"+Inf"`/`"-Inf"`, as Prometheus writes it (JSON
        /// has no infinities), so a panel at +Inf is recorded as the screen shows it.
        #[serde(with = "reading")]
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
    /// A responder asks the holder of the incident's executor lease (`to`, as the lease names
    /// its holder) to run a runbook (issue 36): shared on the engine like every record, the
    /// holder's console asks its operator, who runs it after their own confirmation.
    RunProposed {
        runbook: String,
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        variables: std::collections::BTreeMap<String, String>,
        to: String,
    },
    /// A change from GitHub: a deploy, a release, a merged pull request.
    Change {
        repo: String,
        reference: String,
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
        /// When it happened on GitHub (the record's time is when warroom learned of it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<DateTime<Utc>>,
    },
    /// A simulated fault started (`active`) or was cleared, in a rehearsal.
    SimFault {
        fault: String,
        detail: String,
        active: bool,
        /// When the simulator applied it (the record's time is when warroom learned of it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<DateTime<Utc>>,
    },
    /// The incident's globally unique id, which the markers warroom writes on GitHub carry
    /// (the local id `2026-12-01-1` repeats across machines and data dirs). Recorded once: when
    /// the incident is created, or, for a journal older than the id, on its first publication.
    IncidentUid {
        uid: String,
    },
    /// A control action the simulator applied in a rehearsal (whoever sent it: a runbook, a
    /// person with curl); `wrong` says why the scenario counts it as a wrong move.
    SimAction {
        action: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wrong: Option<String>,
    },
    /// The rehearsal reached its end (its record's time). Whatever is recorded after it was
    /// added afterwards, and is stamped at the end. `figures` are the simulator's own count.
    RehearsalEnded {
        scenario: String,
        figures: RehearsalFigures,
    },
    /// warroom was interrupted (SIGINT, SIGTERM) while recording.
    Interrupted {
        signal: String,
    },
    /// Something about the journal itself the operator must know (a torn tail cut off, …).
    JournalNotice {
        message: String,
    },
    /// An Alertmanager silence of the incident made, extended or expired (issue 35).
    Silence(SilenceRecord),
    /// A responder joined or left an incident shared through an engine (issue 36). The
    /// record's actor is who recorded it: the responder itself, or for [`Presence::Silent`]
    /// the responder that noticed.
    Responder {
        /// The responder's writer on the engine.
        writer: String,
        /// Who and where, as the lease names a holder ("ana on laptop-3").
        who: String,
        change: Presence,
    },
}

/// How a responder's presence changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    /// Started working the shared incident (a console or a recorder with `--share`).
    Joined,
    /// Closed its console or stopped its recorder.
    Left,
    /// Not heard from for `seconds`: its machine slept, crashed or lost the network.
    Silent { seconds: u64 },
    /// Heard from again after it was recorded silent, `seconds` after its last word.
    Back { seconds: u64 },
}

/// The simulator's own figures at the end of a rehearsal: the system side of the score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RehearsalFigures {
    /// The objective the figures are measured against: the error ratio the scenario allows.
    pub objective_error_ratio: f64,
    /// When the first fault struck.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_at: Option<DateTime<Utc>>,
    /// The start of the first five minutes under the objective after the outage showed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovered_at: Option<DateTime<Utc>>,
    /// Logical requests that failed for good.
    pub failed_requests: f64,
    pub duplicate_writes: f64,
    /// Whole minutes with the error ratio over the objective.
    pub minutes_over_objective: u32,
    /// Simulated seconds per wall second, and the noise seed.
    pub speed: f64,
    pub seed: u64,
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

/// A new globally unique incident id: 128 random bits as 32 lowercase hex digits.
pub fn new_uid() -> String {
    let v: u128 = rand::random();
    format!("{v:032x}")
}

impl Event {
    /// The record of a new globally unique id for an incident ([`Event::IncidentUid`]).
    pub fn new_incident_uid() -> Event {
        Event::IncidentUid { uid: new_uid() }
    }

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
            Event::RunProposed {
                runbook,
                variables,
                to,
            } => {
                one(runbook);
                one(to);
                *variables = std::mem::take(variables)
                    .into_iter()
                    .map(|(mut k, mut v)| {
                        one(&mut k);
                        one(&mut v);
                        (k, v)
                    })
                    .collect();
            }
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
                ..
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
            Event::SimAction { action, wrong } => {
                one(action);
                wrong.iter_mut().for_each(one);
            }
            Event::RehearsalEnded { scenario, .. } => one(scenario),
            Event::Interrupted { signal } => one(signal),
            Event::IncidentUid { uid } => one(uid),
            Event::JournalNotice { message } => many_lines(message),
            Event::Silence(r) => *r = r.clone().sanitized(),
            Event::Responder { writer, who, .. } => {
                one(writer);
                one(who);
            }
            Event::SeverityChanged { .. }
            | Event::StatusChanged { .. }
            | Event::ImpactStart { .. }
            | Event::ImpactEnd { .. } => {}
        }
        self
    }

    /// Checks what the journal cannot carry faithfully. A reading may be ±Inf or NaN (a ratio
    /// over zero requests is an ordinary reading): it is written as `"+Inf"`, `"-Inf"` or
    /// `"NaN"` and read back exactly. A threshold is configuration and always finite; a
    /// rehearsal's figures are computed and finite too: anything else there is refused.
    pub fn check(&self) -> Result<(), InvalidEvent> {
        match self {
            Event::ThresholdCrossed {
                panel, threshold, ..
            } if !threshold.is_finite() => Err(InvalidEvent(format!(
                "threshold crossing on panel \"{panel}\" has a threshold that is not a finite \
                 number ({threshold}); it was not recorded"
            ))),
            Event::Correction {
                replacement: Some(r),
                ..
            } => r.check(),
            Event::RehearsalEnded { figures: f, .. }
                if !(f.objective_error_ratio.is_finite()
                    && f.failed_requests.is_finite()
                    && f.duplicate_writes.is_finite()
                    && f.speed.is_finite()) =>
            {
                Err(InvalidEvent(format!(
                    "the rehearsal's end has a figure that is not a finite number ({f:?}); it was not recorded"
                )))
            }
            _ => Ok(()),
        }
    }
}

/// A reading in the journal: a JSON number, or `"+Inf"`/`"-Inf"`/`"NaN"` where JSON has none.
/// Finite values are written as before, so old journals and their checksums are unchanged.
mod reading {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else if v.is_nan() {
            s.serialize_str("NaN")
        } else if *v > 0.0 {
            s.serialize_str("+Inf")
        } else {
            s.serialize_str("-Inf")
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(f64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(v) => Ok(v),
            Raw::Text(t) => match t.as_str() {
                "+Inf" | "Inf" | "inf" | "+inf" => Ok(f64::INFINITY),
                "-Inf" | "-inf" => Ok(f64::NEG_INFINITY),
                "NaN" | "nan" => Ok(f64::NAN),
                other => Err(serde::de::Error::custom(format!(
                    "\"{}\" is not a reading: expected a number, \"+Inf\", \"-Inf\" or \"NaN\"",
                    crate::sanitize::line(other)
                ))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_text_is_sanitized_on_entry_and_tags_follow_the_stored_text() {
        let e = Event::Note {
            text: "pool\u{1b}[2J full\n#impact #lesson\u{2028}x".into(),
            tags: vec![Tag::Summary],
        }
        .sanitized();
        let Event::Note { text, tags } = &e else {
            panic!("{e:?}")
        };
        assert!(sanitize::is_clean(text, true), "{text}");
        assert!(text.contains('\n'), "notes keep their lines");
        assert_eq!(*tags, vec![Tag::Impact]);

        let mut labels = BTreeMap::new();
        labels.insert("pod\u{7}".to_string(), "api-1\u{1b}]0;x\u{7}".to_string());
        let e = Event::AlertFiring {
            name: "DBPool\nSaturated".into(),
            labels,
            source: AlertSource::Prometheus,
        }
        .sanitized();
        let json = serde_json::to_string(&e).unwrap();
        assert!(
            !json.contains("\\u001b") && !json.contains("\\u0007"),
            "{json}"
        );
    }

    #[test]
    fn values_json_cannot_carry_are_refused_even_inside_a_correction() {
        let crossing = |value: f64, threshold: f64| Event::ThresholdCrossed {
            panel: "p".into(),
            level: Level::Warn,
            direction: Direction::Up,
            value,
            threshold,
            at: DateTime::<Utc>::UNIX_EPOCH,
        };
        for reading in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 2.0] {
            assert!(
                crossing(reading, 1.0).check().is_ok(),
                "{reading} is a reading"
            );
        }
        let bad = crossing(2.0, f64::INFINITY);
        assert!(bad.check().is_err());
        let wrapped = Event::Correction {
            supersedes: 1,
            reason: "r".into(),
            replacement: Some(Box::new(bad)),
        };
        assert!(wrapped.check().is_err());
        assert!(Event::note("fine").check().is_ok());
    }

    #[test]
    fn an_infinite_reading_is_recorded_and_read_back_and_a_finite_one_as_before() {
        let crossing = |value: f64| Event::ThresholdCrossed {
            panel: "Error ratio".into(),
            level: Level::Crit,
            direction: Direction::Up,
            value,
            threshold: 0.1,
            at: DateTime::parse_from_rfc3339("2026-12-01T10:00:00Z")
                .unwrap()
                .with_timezone(&Utc),
        };
        for (v, shown) in [
            (f64::INFINITY, "\"+Inf\""),
            (f64::NEG_INFINITY, "\"-Inf\""),
            (f64::NAN, "\"NaN\""),
        ] {
            let text = serde_json::to_string(&crossing(v)).unwrap();
            assert!(text.contains(&format!("\"value\":{shown}")), "{text}");
            let back: Event = serde_json::from_str(&text).unwrap();
            // NaN is not equal to itself: compare what is written, which must be stable.
            assert_eq!(serde_json::to_string(&back).unwrap(), text);
        }
        let text = serde_json::to_string(&crossing(0.25)).unwrap();
        assert!(text.contains("\"value\":0.25"), "{text}");
    }
}
