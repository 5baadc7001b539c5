//! The timeline pane's rows, as people read them: one row per record, except a runbook step,
//! whose start, progress (batches, confirmations, attempts) and outcome fold into one row;
//! values in the panel's unit; record numbers shown (`c` asks for one), a record a correction
//! superseded marked as such; words, never JSON or Debug text. Also the pane's scroll and
//! search, which `update` changes and `ui::timeline` reads.

use crate::config::Unit;
use crate::incident::event::{Direction, Level, StepState};
use crate::incident::{Event, Record, Source};
use crate::runbook::journal::detail::words;
use chrono::{DateTime, Utc};

/// The pane's scroll and search.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TimelinePane {
    /// Rows scrolled past at the top.
    pub scroll: usize,
    /// The search in force (`/`): matching rows are marked, enter finds the next.
    pub find: Option<String>,
}

/// How a row reads at a glance (a symbol goes with it: never colour alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Plain,
    /// Worse: a crossing up, an alert firing, a failed step.
    Bad,
    /// Worst: a crossing up into the critical level.
    Critical,
    /// Better: a recovery, a step done.
    Good,
    /// Under way.
    Running,
}

/// One row of the pane.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The record the row starts at (its number is shown).
    pub seq: u64,
    /// Every record folded into the row (a step's start, progress and end).
    pub seqs: Vec<u64>,
    pub time: DateTime<Utc>,
    pub source: Source,
    pub text: String,
    pub tone: Tone,
    /// The correction that superseded this record.
    pub superseded_by: Option<u64>,
    /// Who wrote the record, and on which host (shown when several people write).
    pub actor: String,
    pub host: String,
}

/// The rows of `records`, in journal order (oldest first); a crossing shows the time it
/// happened. `unit` gives a panel's unit by its title.
pub fn rows(records: &[Record], unit: &dyn Fn(&str) -> Option<Unit>) -> Vec<Row> {
    let corrected = crate::incident::summary::summarize(records).corrected;
    let mut out: Vec<Row> = Vec::new();
    // (run id, step) → the row of its current attempt.
    let mut open: std::collections::HashMap<(String, String), usize> = Default::default();
    let mut steps: std::collections::HashMap<usize, StepRow> = Default::default();
    for r in records {
        let folded = match &r.kind {
            Event::RunbookStep {
                run,
                step,
                state,
                detail,
            } => Some((
                run.run_id.clone(),
                step.clone(),
                Some((*state, detail.clone())),
            )),
            // A batch's per-target acts ("STEP/TARGET/BATCH") fold into their step's row.
            Event::RunbookIntent { run_id, step, .. } | Event::RunbookAck { run_id, step, .. } => {
                Some((run_id.clone(), scope_of(step).0.to_string(), None))
            }
            _ => None,
        };
        if let Some((run_id, step, state)) = folded {
            let key = (run_id, step.clone());
            let starts = matches!(&state, Some((StepState::Started, Some(d))) if is_start(d));
            let i = match open.get(&key) {
                Some(i) if !starts => *i,
                _ => {
                    out.push(Row {
                        seq: r.seq,
                        seqs: Vec::new(),
                        time: r.time,
                        source: r.source,
                        text: String::new(),
                        tone: Tone::Running,
                        superseded_by: corrected.get(&r.seq).copied(),
                        actor: r.actor.clone(),
                        host: r.host.clone(),
                    });
                    let i = out.len() - 1;
                    open.insert(key, i);
                    steps.insert(i, StepRow::new(&step));
                    i
                }
            };
            let s = steps.get_mut(&i).expect("every open row has its step");
            s.take(&r.kind);
            out[i].seqs.push(r.seq);
            out[i].text = s.text();
            out[i].tone = s.tone();
            continue;
        }
        let (text, tone) = describe(&r.kind, unit);
        // A crossing reads at the time it happened: one seen while the console only watched
        // is recorded when the incident is declared, a recovery once it has held; the row
        // stays in journal order (newest at the top) and its number says so.
        let time = match &r.kind {
            Event::ThresholdCrossed { at, .. } => *at,
            _ => r.time,
        };
        out.push(Row {
            seq: r.seq,
            seqs: vec![r.seq],
            time,
            source: r.source,
            text,
            tone,
            superseded_by: corrected.get(&r.seq).copied(),
            actor: r.actor.clone(),
            host: r.host.clone(),
        });
    }
    out
}

/// An intent's scope, `STEP` or `STEP/TARGET/BATCH`: the step, and the target and batch of a
/// batch's act (a target may hold a `/`, as HAProxy's `backend/server`; a step id never does).
fn scope_of(scope: &str) -> (&str, Option<(&str, &str)>) {
    match scope.split_once('/') {
        Some((step, rest)) => (step, rest.rsplit_once('/')),
        None => (scope, None),
    }
}

/// `api-3 (batch 2): ` for a batch's act, nothing for the step's own.
fn target_words(scope: &str) -> String {
    match scope_of(scope).1 {
        Some((target, batch)) => format!("{target} (batch {batch}): "),
        None => String::new(),
    }
}

/// A request as the plan shows it, its JSON body in words: `POST …/restart {"pod":"api-3"}`
/// → `POST …/restart (pod=api-3)`.
fn request_words(request: &str) -> String {
    let Some(at) = request.find(['{', '[']) else {
        return request.to_string();
    };
    let (head, body) = request.split_at(at);
    let Ok(v) = serde_json::from_str::<serde_json::Value>(body.trim()) else {
        return request.to_string();
    };
    let scalar = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let body = match &v {
        serde_json::Value::Object(m) if m.values().all(|v| !v.is_object() && !v.is_array()) => (m
            .iter())
        .map(|(k, v)| format!("{k}={}", scalar(v)))
        .collect::<Vec<_>>()
        .join(", "),
        serde_json::Value::Array(a) if a.iter().all(|v| !v.is_object() && !v.is_array()) => {
            a.iter().map(scalar).collect::<Vec<_>>().join(", ")
        }
        _ => "with a body".to_string(),
    };
    format!("{} ({body})", head.trim_end())
}

/// A step's start detail is `kind: title`.
fn is_start(detail: &str) -> bool {
    detail.split_once(": ").is_some_and(|(k, _)| {
        crate::runbook::model::Kind::ALL
            .iter()
            .any(|x| x.name() == k)
    })
}

/// A step's row while its records arrive.
struct StepRow {
    step: String,
    title: String,
    progress: Option<String>,
    outcome: Option<(StepState, String)>,
    effects: usize,
}

impl StepRow {
    fn new(step: &str) -> StepRow {
        StepRow {
            step: step.to_string(),
            title: String::new(),
            progress: None,
            outcome: None,
            effects: 0,
        }
    }

    fn take(&mut self, e: &Event) {
        match e {
            Event::RunbookStep { state, detail, .. } => {
                let d = detail.clone().unwrap_or_default();
                match state {
                    StepState::Started if is_start(&d) => {
                        self.title = d.split_once(": ").map_or(d.clone(), |(_, t)| t.into());
                        self.outcome = None;
                    }
                    StepState::Started => self.progress = Some(words(&d)),
                    s => self.outcome = Some((*s, words(&d))),
                }
            }
            Event::RunbookIntent { request, step, .. } => {
                let what = request_words(&crate::sanitize::line(request));
                self.progress = Some(format!("{}sending {what}", target_words(step)));
            }
            Event::RunbookAck { outcome, step, .. } => {
                self.effects += 1;
                let answer = words(outcome);
                self.progress = Some(format!("{}answered {answer}", target_words(step)));
            }
            _ => {}
        }
    }

    fn text(&self) -> String {
        let mut s = format!("step {}", self.step);
        if !self.title.is_empty() {
            s.push_str(&format!(" · {}", self.title));
        }
        match &self.outcome {
            Some((state, detail)) => {
                let (sym, word) = step_word(*state);
                s.push_str(&format!(" → {sym} {word}"));
                if !detail.is_empty() {
                    s.push_str(&format!(": {detail}"));
                }
            }
            None => {
                if let Some(p) = &self.progress {
                    s.push_str(&format!(" … {p}"));
                }
            }
        }
        if self.effects > 1 {
            s.push_str(&format!(" ({} requests answered)", self.effects));
        }
        s
    }

    fn tone(&self) -> Tone {
        match self.outcome {
            None => Tone::Running,
            Some((StepState::Succeeded, _)) => Tone::Good,
            Some((StepState::Started, _)) => Tone::Running,
            Some(_) => Tone::Bad,
        }
    }
}

fn step_word(s: StepState) -> (&'static str, &'static str) {
    match s {
        StepState::Started => ("▶", "started"),
        StepState::Succeeded => ("✓", "done"),
        StepState::Failed => ("✖", "failed"),
        StepState::TimedOut => ("✖", "timed out"),
        StepState::Cancelled => ("■", "stopped"),
        StepState::InDoubt => ("?", "in doubt"),
    }
}

/// A record in words, with its tone; crossings in the panel's unit.
pub fn describe(e: &Event, unit: &dyn Fn(&str) -> Option<Unit>) -> (String, Tone) {
    match e {
        Event::ThresholdCrossed {
            panel,
            level,
            direction,
            value,
            threshold,
            ..
        } => {
            let u = unit(panel).unwrap_or(Unit::Count);
            let up = match level {
                Level::Crit => Tone::Critical,
                _ => Tone::Bad,
            };
            let level = level.word();
            let (verb, tone, sym) = match direction {
                Direction::Up => ("rose above", up, "▲"),
                Direction::Down => ("fell below", Tone::Good, "▼"),
            };
            (
                format!(
                    "{sym} {panel} {verb} {level} {}: {}",
                    u.format(*threshold),
                    u.format(*value)
                ),
                tone,
            )
        }
        Event::AlertFiring { .. } => (crate::incident::timeline::describe(e), Tone::Bad),
        Event::AlertResolved { .. } => (crate::incident::timeline::describe(e), Tone::Good),
        Event::RunbookRun { run, state } => {
            let (sym, word) = match state {
                StepState::Started => ("▶", "started"),
                StepState::Succeeded => ("✓", "succeeded"),
                StepState::Failed | StepState::TimedOut => ("✖", "failed"),
                StepState::Cancelled => ("■", "aborted"),
                StepState::InDoubt => ("?", "in doubt"),
            };
            let tone = match state {
                StepState::Succeeded => Tone::Good,
                StepState::Started => Tone::Running,
                _ => Tone::Bad,
            };
            (
                format!("{sym} runbook {} {word} (run {})", run.runbook, run.run_id),
                tone,
            )
        }
        Event::ImpactStart { at } | Event::ImpactEnd { at } => {
            let what = if matches!(e, Event::ImpactStart { .. }) {
                "started"
            } else {
                "ended"
            };
            (
                format!("impact {what} at {}", at.format("%Y-%m-%d %H:%M:%S UTC")),
                Tone::Plain,
            )
        }
        _ => (crate::incident::timeline::describe(e), Tone::Plain),
    }
}

impl TimelinePane {
    /// The rows in display order (newest first unless `oldest_first`), only `filter`'s source.
    pub fn shown(all: Vec<Row>, filter: Option<Source>, oldest_first: bool) -> Vec<Row> {
        let mut v: Vec<Row> = all
            .into_iter()
            .filter(|r| filter.is_none_or(|s| r.source == s))
            .collect();
        // In time order: a crossing shows when it happened, which may be before records
        // written ahead of it (ties keep the journal's order).
        v.sort_by_key(|r| r.time);
        if !oldest_first {
            v.reverse();
        }
        v
    }

    /// Whether `row` matches the search.
    pub fn matches(&self, row: &Row) -> bool {
        self.find.as_ref().is_some_and(|f| {
            let f = f.to_lowercase();
            row.text.to_lowercase().contains(&f) || format!("#{}", row.seq) == f
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incident::event::RunRef;
    use crate::runbook::journal::detail::verdict;

    fn rec(seq: u64, kind: Event) -> Record {
        Record {
            seq,
            time: DateTime::parse_from_rfc3339("2026-07-17T08:30:00Z")
                .unwrap()
                .with_timezone(&Utc)
                + chrono::Duration::seconds(seq as i64),
            source: Source::Runbook,
            actor: "warroom".into(),
            host: String::new(),
            kind,
        }
    }

    fn step(seq: u64, state: StepState, detail: &str) -> Record {
        rec(
            seq,
            Event::RunbookStep {
                run: RunRef {
                    run_id: "r1".into(),
                    runbook: "batch-restart".into(),
                    hash: "h".into(),
                },
                step: "restart".into(),
                state,
                detail: Some(detail.into()),
            },
        )
    }

    #[test]
    fn a_step_is_one_row_from_start_to_outcome_in_words() {
        let records = vec![
            step(
                1,
                StepState::Started,
                "batch: Restart planner-api in batches",
            ),
            step(
                2,
                StepState::Started,
                r#"rollout: {"batch":1,"event":"batch_started","targets":["api-0"]}"#,
            ),
            step(
                3,
                StepState::Started,
                r#"rollout: {"batch":1,"event":"gate_passed"}"#,
            ),
            step(
                4,
                StepState::Started,
                "confirmed: the operator typed \"batch 2\"",
            ),
        ];
        let r = rows(&records, &|_| None);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].seqs, vec![1, 2, 3, 4]);
        assert_eq!(r[0].tone, Tone::Running);
        assert!(
            r[0].text.contains("Restart planner-api in batches"),
            "{}",
            r[0].text
        );
        let mut done = records.clone();
        done.push(step(5, StepState::Succeeded, "4 batches"));
        let r = rows(&done, &|_| None);
        assert_eq!(r.len(), 1);
        assert!(r[0].text.ends_with("→ ✓ done: 4 batches"), "{}", r[0].text);
        assert_eq!(r[0].tone, Tone::Good);
        let mid = rows(&records[..3], &|_| None);
        assert!(
            mid[0].text.contains("health gate passed after batch 1"),
            "{}",
            mid[0].text
        );
        for row in rows(&done, &|_| None).iter().chain(&mid) {
            assert!(
                !row.text.contains('{') && !row.text.contains('"'),
                "{}",
                row.text
            );
        }
        // A retried step starts a row of its own.
        done.push(step(
            6,
            StepState::Started,
            "batch: Restart planner-api in batches",
        ));
        assert_eq!(rows(&done, &|_| None).len(), 2);
    }

    #[test]
    fn crossings_read_in_the_panels_unit_and_verdicts_in_words() {
        let e = Event::ThresholdCrossed {
            panel: "Pool wait p99".into(),
            level: Level::Warn,
            direction: Direction::Up,
            value: 29.23598341665651,
            threshold: 0.1,
            at: Utc::now(),
        };
        let (text, tone) = describe(&e, &|p| (p == "Pool wait p99").then_some(Unit::Seconds));
        assert_eq!(tone, Tone::Bad);
        // Into crit is drawn in the crit style, out of it as a recovery.
        let crit = |direction| Event::ThresholdCrossed {
            panel: "Pool wait p99".into(),
            level: Level::Crit,
            direction,
            value: 3.0,
            threshold: 1.0,
            at: Utc::now(),
        };
        assert_eq!(describe(&crit(Direction::Up), &|_| None).1, Tone::Critical);
        assert_eq!(describe(&crit(Direction::Down), &|_| None).1, Tone::Good);
        assert!(!text.contains("29.235"), "{text}");
        assert!(
            text.contains(&Unit::Seconds.format(29.23598341665651)),
            "{text}"
        );
        assert!(text.contains(&Unit::Seconds.format(0.1)), "{text}");
        assert_eq!(verdict("Fail(2.5912345)"), "fail (2.591)");
        assert_eq!(
            verdict("gate: Fail(2.59) → Pending"),
            "gate: fail (2.59) → pending"
        );
        assert_eq!(
            verdict("Inconclusive(\"no data\")"),
            "inconclusive: no data"
        );
        assert_eq!(verdict("Successful"), "Successful", "only whole words");
        assert_eq!(
            words("spawned: [\"kubectl\",\"rollout\"] on api-0"),
            "ran kubectl rollout on api-0"
        );
    }

    /// Batch events read back typed, as older journals wrote them; one this version cannot
    /// read is shown as it was recorded.
    #[test]
    fn batch_events_are_read_back_typed_or_shown_as_recorded() {
        let cases = [
            (
                r#"rollout: {"batch":2,"event":"batch_started","targets":["api-0","api-1"]}"#,
                "batch 2 started: api-0, api-1",
            ),
            (
                r#"rollout: {"event":"instance_lost","target":"api-1"}"#,
                "api-1 lost",
            ),
            (
                r#"rollout: {"event":"paused","reason":"gate_not_passed","batch":1,"verdict":"fail (0.3)"}"#,
                "paused: gate not passed",
            ),
            (
                r#"rollout: {"event":"decided","decision":"retry"}"#,
                "operator chose retry",
            ),
            (
                r#"rollout: {"event":"finished","outcome":"stopped","reason":"budget"}"#,
                "batches finished: stopped",
            ),
            (
                r#"rollout: {"event":"batch_resized","size":3}"#,
                r#"rollout: {"event":"batch_resized","size":3}"#,
            ),
        ];
        for (detail, said) in cases {
            assert_eq!(words(detail), said, "{detail}");
        }
    }

    #[test]
    fn a_superseded_record_is_marked() {
        let mut note = rec(1, Event::note("pool at 100%"));
        note.source = Source::Operator;
        let fix = rec(
            2,
            Event::Correction {
                supersedes: 1,
                reason: "wrong pool".into(),
                replacement: None,
            },
        );
        let r = rows(&[note, fix], &|_| None);
        assert_eq!(r[0].superseded_by, Some(2));
        assert_eq!(r[1].superseded_by, None);
    }

    #[test]
    fn a_crossing_recorded_later_reads_at_the_time_it_happened() {
        let now = Utc::now();
        let t = |m: i64| now - chrono::Duration::minutes(m);
        let mut opened = rec(1, Event::note("incident opened"));
        opened.time = t(0);
        let mut crossing = rec(
            2,
            Event::ThresholdCrossed {
                panel: "Pool saturation".into(),
                level: Level::Crit,
                direction: Direction::Up,
                value: 0.99,
                threshold: 0.95,
                at: t(9),
            },
        );
        crossing.time = t(0);
        let r = rows(&[opened, crossing], &|_| None);
        assert_eq!((r[0].seq, r[1].seq), (1, 2), "journal order: {r:?}");
        assert_eq!(r[1].time, t(9), "the crossing's own time, not the record's");
        assert_eq!(r[0].time, t(0));
    }

    #[test]
    fn a_batchs_acts_fold_into_its_step_in_words() {
        let run = RunRef {
            runbook: "pool-exhaustion".into(),
            run_id: "r1".into(),
            hash: "h".into(),
        };
        let start = rec(
            1,
            Event::RunbookStep {
                run: run.clone(),
                step: "restart".into(),
                state: StepState::Started,
                detail: Some("batch: Restart planner-api in batches".into()),
            },
        );
        let intent = |seq, target: &str, batch| {
            rec(
                seq,
                Event::RunbookIntent {
                    run_id: "r1".into(),
                    step: format!("restart/{target}/{batch}"),
                    idempotency_key: "k".into(),
                    request: format!(
                        "POST http://127.0.0.1:9/control/restart {{\"pod\":\"{target}\",\"force\":false}}"
                    ),
                },
            )
        };
        let ack = rec(
            4,
            Event::RunbookAck {
                run_id: "r1".into(),
                step: "be/web-1/2".into(),
                idempotency_key: "k".into(),
                outcome: "200 OK".into(),
            },
        );
        let records = vec![start, intent(2, "api-0", 1), intent(3, "api-1", 1)];
        let r = rows(&records, &|_| None);
        assert_eq!(r.len(), 1, "one row for the step: {r:?}");
        assert_eq!(r[0].seqs, [1, 2, 3]);
        assert!(
            r[0].text.ends_with(
                "… api-1 (batch 1): sending POST http://127.0.0.1:9/control/restart (force=false, pod=api-1)"
            ),
            "{}",
            r[0].text
        );
        assert!(!r[0].text.contains('{'), "{}", r[0].text);
        // A target with a slash (HAProxy's backend/server) keeps it.
        assert_eq!(target_words("drain/be/web-1/2"), "be/web-1 (batch 2): ");
        assert_eq!(target_words("drain"), "");
        let r = rows(&[ack], &|_| None);
        assert!(r[0].text.starts_with("step be"), "{}", r[0].text);
        assert_eq!(request_words("POST /x [\"a\",1]"), "POST /x (a, 1)");
        assert_eq!(
            request_words("POST /x {\"a\":{\"b\":1}}"),
            "POST /x (with a body)"
        );
        assert_eq!(request_words("GET /health"), "GET /health");
    }
}

#[cfg(test)]
mod order_tests {
    use super::*;
    use crate::incident::event::{Direction, Level};

    #[test]
    fn a_crossing_recorded_late_is_shown_at_its_own_time() {
        let t = |s: i64| {
            DateTime::parse_from_rfc3339("2026-07-17T07:09:00Z")
                .unwrap()
                .with_timezone(&Utc)
                + chrono::Duration::seconds(s)
        };
        let note = Record {
            seq: 46,
            time: t(75),
            source: Source::Operator,
            actor: "op".into(),
            host: String::new(),
            kind: Event::note("rolling back"),
        };
        // Written after the note, it happened before it.
        let crossing = Record {
            seq: 47,
            time: t(80),
            source: Source::Metric,
            actor: "warroom".into(),
            host: String::new(),
            kind: Event::ThresholdCrossed {
                panel: "Error ratio".into(),
                level: Level::Crit,
                direction: Direction::Up,
                value: 0.07,
                threshold: 0.05,
                at: t(8),
            },
        };
        let all = rows(&[note, crossing], &|_| None);
        let seqs = |oldest| {
            (TimelinePane::shown(all.clone(), None, oldest).iter())
                .map(|r| r.seq)
                .collect::<Vec<_>>()
        };
        assert_eq!(seqs(true), [47, 46]);
        assert_eq!(seqs(false), [46, 47]);
    }
}
