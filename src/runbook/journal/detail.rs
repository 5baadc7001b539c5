//! The words of a run's journal records, defined once: [`StepDetail`] is what a `RunbookStep`
//! record in state `started` says (a step's start `KIND: TITLE`, or a note about it beginning
//! with a fixed word), [`Attempted`] what an acknowledgement's outcome says, and [`finished`] /
//! [`outcome_of`] how a step's outcome is kept in a finishing record. The journal sink writes
//! them with `detail()`; resume, the console's timeline and the postmortem read them with
//! `parse`, so a wording changed here is changed for the writer and every reader. Journals
//! already written read the same: the tests parse details in the format they hold.

use crate::incident::event::StepState;
use crate::runbook::batch::{BatchEvent, Decision, ROLLOUT};
use crate::runbook::report::StepOutcome;

/// A step's outcome that the journal's states do not have is kept as a detail prefix.
pub const SKIPPED: &str = "skipped: ";
pub const DECLINED: &str = "declined: ";
/// An operator's decision at a pause (resume needs it: "continue" passes over a failed step).
pub const DECISION: &str = "decision: ";
pub const CONFIRMED: &str = "confirmed: ";
pub const NOT_CONFIRMED: &str = "not confirmed: ";
pub const PAUSED: &str = "paused: ";
pub const SPAWNED: &str = "spawned: ";
pub const ATTEMPT: &str = "attempt ";
/// Every word a note begins with; no step kind is one of them, so a start reads unambiguously.
pub const NOTES: [&str; 9] = [
    CONFIRMED,
    NOT_CONFIRMED,
    PAUSED,
    DECISION,
    ROLLOUT,
    SPAWNED,
    ATTEMPT,
    SKIPPED,
    DECLINED,
];

const TYPED: &str = "the operator typed ";
const ASSUMED: &str = "assumed (--yes), ";
const NOT_TYPED: &str = " was not typed";

/// Who confirmed a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirmation {
    /// A person typed the word.
    Typed,
    /// `--yes` or a rehearsal's play: nobody typed it.
    Assumed,
    /// A confirmation in a wording this version does not know, kept as recorded.
    Other,
}

/// What a run's `started` step record says.
#[derive(Debug, Clone, PartialEq)]
pub enum StepDetail {
    /// The step's start: `KIND: TITLE` (the kind as written; the journal's reader checks it
    /// names one of [`crate::runbook::model::Kind::ALL`]).
    Start { kind: String, title: String },
    /// `confirmed: the operator typed "WHAT"`, `confirmed: assumed (--yes), "WHAT" was not
    /// typed`; for [`Confirmation::Other`], `what` is the text after `confirmed: `.
    Confirmed { by: Confirmation, what: String },
    /// `not confirmed: "WHAT" was not typed`.
    NotConfirmed { what: String },
    /// `paused: REASON`.
    Paused { reason: String },
    /// `decision: continue`.
    Decided(Decision),
    /// `rollout: {JSON}` ([`BatchEvent::detail`]).
    Batch(BatchEvent),
    /// `spawned: ["argv",…] on TARGET`.
    Spawned {
        argv: Vec<String>,
        target: Option<String>,
    },
    /// `attempt N on TARGET: METHOD URL: ANSWER`: an HTTP attempt without an idempotency key.
    Attempt { attempt: Attempted, request: String },
    /// A note beginning with one of [`NOTES`] whose rest this version cannot read (a batch
    /// event of a newer version, say): the word and the rest, as recorded.
    Unread { word: &'static str, rest: String },
}

/// Quoted as the journal quotes a confirmation's word (a JSON-like `"…"`, unescaped).
fn quoted(what: &str) -> String {
    format!("\"{what}\"")
}

fn unquoted(s: &str) -> Option<&str> {
    s.strip_prefix('"')?.strip_suffix('"')
}

impl StepDetail {
    /// The detail as the journal records it.
    pub fn detail(&self) -> String {
        match self {
            StepDetail::Start { kind, title } => format!("{kind}: {title}"),
            StepDetail::Confirmed { by, what } => match by {
                Confirmation::Typed => format!("{CONFIRMED}{TYPED}{}", quoted(what)),
                Confirmation::Assumed => {
                    format!("{CONFIRMED}{ASSUMED}{}{NOT_TYPED}", quoted(what))
                }
                Confirmation::Other => format!("{CONFIRMED}{what}"),
            },
            StepDetail::NotConfirmed { what } => {
                format!("{NOT_CONFIRMED}{}{NOT_TYPED}", quoted(what))
            }
            StepDetail::Paused { reason } => format!("{PAUSED}{reason}"),
            StepDetail::Decided(d) => format!("{DECISION}{}", d.word()),
            StepDetail::Batch(e) => e.detail(),
            StepDetail::Spawned { argv, target } => format!(
                "{SPAWNED}{}{}",
                serde_json::to_string(argv).unwrap_or_default(),
                on(target.as_deref())
            ),
            StepDetail::Attempt { attempt, request } => format!(
                "{ATTEMPT}{}{}: {request}: {}",
                attempt.attempt,
                on(attempt.target.as_deref()),
                attempt.answer
            ),
            StepDetail::Unread { word, rest } => format!("{word}{rest}"),
        }
    }

    /// What `detail` says; `None` for a detail that is neither a note nor `KIND: TITLE` with
    /// a kind of lowercase letters (an empty detail, free text).
    pub fn parse(detail: &str) -> Option<StepDetail> {
        if let Some(word) = NOTES.iter().copied().find(|w| detail.starts_with(w)) {
            let rest = &detail[word.len()..];
            return Some(
                Self::note(word, rest).unwrap_or_else(|| StepDetail::Unread {
                    word,
                    rest: rest.to_string(),
                }),
            );
        }
        let (kind, title) = detail.split_once(": ")?;
        let simple = !kind.is_empty() && kind.chars().all(|c| c.is_ascii_lowercase());
        simple.then(|| StepDetail::Start {
            kind: kind.to_string(),
            title: title.to_string(),
        })
    }

    /// The note beginning with `word`, when its `rest` reads.
    fn note(word: &'static str, rest: &str) -> Option<StepDetail> {
        Some(match word {
            CONFIRMED => {
                let typed = rest.strip_prefix(TYPED).and_then(unquoted);
                let assumed = rest
                    .strip_prefix(ASSUMED)
                    .and_then(|r| r.strip_suffix(NOT_TYPED))
                    .and_then(unquoted);
                let (by, what) = match (typed, assumed) {
                    (Some(w), _) => (Confirmation::Typed, w),
                    (_, Some(w)) => (Confirmation::Assumed, w),
                    _ => (Confirmation::Other, rest),
                };
                StepDetail::Confirmed {
                    by,
                    what: what.to_string(),
                }
            }
            NOT_CONFIRMED => StepDetail::NotConfirmed {
                what: unquoted(rest.strip_suffix(NOT_TYPED)?)?.to_string(),
            },
            PAUSED => StepDetail::Paused {
                reason: rest.to_string(),
            },
            DECISION => StepDetail::Decided(
                [Decision::Continue, Decision::Retry, Decision::Abort]
                    .into_iter()
                    .find(|d| d.word() == rest)?,
            ),
            ROLLOUT => StepDetail::Batch(BatchEvent::from_detail(&format!("{ROLLOUT}{rest}"))?),
            SPAWNED => {
                // The argv is one JSON value at the start; the target follows it.
                let mut values = serde_json::Deserializer::from_str(rest).into_iter();
                let argv = values.next()?.ok()?;
                let target = match &rest[values.byte_offset()..] {
                    "" => None,
                    t => Some(t.strip_prefix(" on ")?.to_string()),
                };
                StepDetail::Spawned { argv, target }
            }
            ATTEMPT => {
                let (head, rest) = rest.split_once(": ")?;
                let (request, answer) = rest.split_once(": ")?;
                StepDetail::Attempt {
                    attempt: Attempted::parse(&format!("{ATTEMPT}{head}: {answer}"))?,
                    request: request.to_string(),
                }
            }
            _ => return None,
        })
    }
}

/// ` on TARGET`, or nothing without a target: how every note names the instance acted on.
pub fn on(target: Option<&str>) -> String {
    target.map(|t| format!(" on {t}")).unwrap_or_default()
}

/// An HTTP attempt's outcome, as an acknowledgement records it: `attempt N on TARGET: ANSWER`.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempted {
    pub attempt: u32,
    pub target: Option<String>,
    /// [`answer`]: `HTTP 200`, or the error.
    pub answer: String,
}

/// An attempt's answer in words: `HTTP 200`, else the error.
pub fn answer(status: Option<u16>, error: Option<&str>) -> String {
    status
        .map(|s| format!("HTTP {s}"))
        .or_else(|| error.map(String::from))
        .unwrap_or_default()
}

impl Attempted {
    /// The outcome as an acknowledgement records it.
    pub fn outcome(&self) -> String {
        format!(
            "{ATTEMPT}{}{}: {}",
            self.attempt,
            on(self.target.as_deref()),
            self.answer
        )
    }

    /// The outcome read back; `None` when it is not one.
    pub fn parse(outcome: &str) -> Option<Attempted> {
        let (head, answer) = outcome.strip_prefix(ATTEMPT)?.split_once(": ")?;
        let (n, target) = match head.split_once(" on ") {
            Some((n, t)) => (n, Some(t.to_string())),
            None => (head, None),
        };
        Some(Attempted {
            attempt: n.parse().ok()?,
            target,
            answer: answer.to_string(),
        })
    }

    /// The HTTP status the answer names, if it names one.
    pub fn status(&self) -> Option<u16> {
        let digits = self.answer.strip_prefix("HTTP ")?.get(..3)?;
        digits.parse().ok()
    }
}

/// A finishing record's state and detail for a step that ended with `outcome`.
pub fn finished(outcome: StepOutcome, detail: &str) -> (StepState, String) {
    let (state, prefix) = match outcome {
        StepOutcome::Succeeded => (StepState::Succeeded, ""),
        StepOutcome::Skipped => (StepState::Succeeded, SKIPPED),
        StepOutcome::Failed => (StepState::Failed, ""),
        StepOutcome::TimedOut => (StepState::TimedOut, ""),
        StepOutcome::Cancelled => (StepState::Cancelled, ""),
        StepOutcome::Declined => (StepState::Cancelled, DECLINED),
    };
    (state, format!("{prefix}{detail}"))
}

/// The outcome a finishing record says; `None` for a record that does not finish a step.
pub fn outcome_of(state: StepState, detail: &str) -> Option<StepOutcome> {
    Some(match state {
        StepState::Succeeded if detail.starts_with(SKIPPED) => StepOutcome::Skipped,
        StepState::Succeeded => StepOutcome::Succeeded,
        StepState::Failed => StepOutcome::Failed,
        StepState::TimedOut => StepOutcome::TimedOut,
        StepState::Cancelled if detail.starts_with(DECLINED) => StepOutcome::Declined,
        StepState::Cancelled => StepOutcome::Cancelled,
        StepState::Started | StepState::InDoubt => return None,
    })
}

/// A run's detail in words: batch events (recorded as JSON; one this version cannot read is
/// shown as it is), spawned argv (a JSON list), and the Debug-printed verdicts and outcomes
/// that journals written before 2026-12-04 hold (this version writes words).
pub fn words(detail: &str) -> String {
    let d = crate::sanitize::line(detail);
    match StepDetail::parse(&d) {
        Some(StepDetail::Batch(ev)) => ev.to_string(),
        Some(StepDetail::Spawned { argv, target }) => {
            format!("ran {}{}", argv.join(" "), on(target.as_deref()))
        }
        _ => verdict(&d),
    }
}

/// `Fail(2.59)` → `fail (2.59)`, `Inconclusive("no data")` → `inconclusive: no data`,
/// `Pending` → `pending`: the executor's verdicts as words.
pub fn verdict(s: &str) -> String {
    let names = [
        ("Success", "success"),
        ("Fail", "fail"),
        ("Failure", "failure"),
        ("Pending", "pending"),
        ("Inconclusive", "inconclusive"),
        ("Error", "error"),
    ];
    let mut out = s.to_string();
    for (debug, word) in names {
        // `Name(arg)` with the argument's quotes dropped.
        while let Some(i) = find_word(&out, &format!("{debug}(")) {
            let open = i + debug.len();
            let Some(close) = matching(&out, open) else {
                break;
            };
            let arg = out[open + 1..close].trim_matches('"').to_string();
            let arg = if arg.parse::<f64>().is_ok() {
                format!(" ({})", trim_number(&arg))
            } else {
                format!(": {arg}")
            };
            out.replace_range(i..=close, &format!("{word}{arg}"));
        }
        while let Some(i) = find_word(&out, debug) {
            out.replace_range(i..i + debug.len(), word);
        }
    }
    out
}

fn find_word(s: &str, w: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(k) = s[from..].find(w) {
        let i = from + k;
        let before = s[..i].chars().next_back();
        let after = s[i + w.len()..].chars().next();
        let word_end = w.ends_with('(') || !after.is_some_and(char::is_alphanumeric);
        if !before.is_some_and(char::is_alphanumeric) && word_end {
            return Some(i);
        }
        from = i + w.len();
    }
    None
}

fn matching(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in s[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `2.5912345678` → `2.59`: a reading as people read it.
fn trim_number(s: &str) -> String {
    match s.parse::<f64>() {
        Ok(v) if v.fract() != 0.0 => {
            let t = format!("{v:.3}");
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        }
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Details as journals already hold them (copied from the journal, timeline and
    /// postmortem tests and from what the sink wrote before this module) read as the same
    /// notes, and are written back byte for byte.
    #[test]
    fn details_in_the_journals_format_read_back_and_are_written_the_same() {
        let cases = [
            (
                "http: Roll back the deploy",
                StepDetail::Start {
                    kind: "http".into(),
                    title: "Roll back the deploy".into(),
                },
            ),
            (
                "confirmed: the operator typed \"rollback\"",
                StepDetail::Confirmed {
                    by: Confirmation::Typed,
                    what: "rollback".into(),
                },
            ),
            (
                "confirmed: assumed (--yes), \"batch 1\" was not typed",
                StepDetail::Confirmed {
                    by: Confirmation::Assumed,
                    what: "batch 1".into(),
                },
            ),
            (
                "confirmed: by hand",
                StepDetail::Confirmed {
                    by: Confirmation::Other,
                    what: "by hand".into(),
                },
            ),
            (
                "not confirmed: \"rollback\" was not typed",
                StepDetail::NotConfirmed {
                    what: "rollback".into(),
                },
            ),
            (
                "decision: continue",
                StepDetail::Decided(Decision::Continue),
            ),
            (
                r#"rollout: {"batch":1,"event":"batch_started","targets":["api-0"]}"#,
                StepDetail::Batch(BatchEvent::BatchStarted {
                    batch: 1,
                    targets: vec!["api-0".into()],
                }),
            ),
            (
                r#"rollout: {"batch":1}"#,
                StepDetail::Unread {
                    word: ROLLOUT,
                    rest: r#"{"batch":1}"#.into(),
                },
            ),
            (
                "spawned: [\"kubectl\",\"rollout\"] on api-0",
                StepDetail::Spawned {
                    argv: vec!["kubectl".into(), "rollout".into()],
                    target: Some("api-0".into()),
                },
            ),
            (
                "attempt 2 on api-1: POST http://x:8080/restart: connection refused: os error 111",
                StepDetail::Attempt {
                    attempt: Attempted {
                        attempt: 2,
                        target: Some("api-1".into()),
                        answer: "connection refused: os error 111".into(),
                    },
                    request: "POST http://x:8080/restart".into(),
                },
            ),
        ];
        for (text, note) in cases {
            assert_eq!(StepDetail::parse(text).as_ref(), Some(&note), "{text}");
            assert_eq!(note.detail(), text);
        }
        // No step kind is a note's word: every kind's start reads as a start.
        for k in crate::runbook::model::Kind::ALL {
            let start = format!("{}: a title", k.name());
            assert!(
                matches!(StepDetail::parse(&start), Some(StepDetail::Start { .. })),
                "{start}"
            );
        }
        assert_eq!(StepDetail::parse(""), None);
        assert_eq!(StepDetail::parse("4 batches"), None);
        assert_eq!(StepDetail::parse("Restart: now"), None, "not a kind");
    }

    #[test]
    fn acknowledgements_and_endings_read_back() {
        let ack = Attempted::parse("attempt 1 on api-0: HTTP 200").unwrap();
        assert_eq!(ack.target.as_deref(), Some("api-0"));
        assert_eq!(ack.status(), Some(200));
        assert_eq!(ack.outcome(), "attempt 1 on api-0: HTTP 200");
        let err = Attempted::parse("attempt 3: timed out").unwrap();
        assert_eq!((err.target.as_deref(), err.status()), (None, None));
        for o in [
            StepOutcome::Succeeded,
            StepOutcome::Skipped,
            StepOutcome::Failed,
            StepOutcome::TimedOut,
            StepOutcome::Cancelled,
            StepOutcome::Declined,
        ] {
            let (state, detail) = finished(o, "HTTP 200");
            assert_eq!(outcome_of(state, &detail), Some(o));
        }
        assert_eq!(
            outcome_of(StepState::Succeeded, "skipped: the pool is healthy"),
            Some(StepOutcome::Skipped)
        );
    }
}
