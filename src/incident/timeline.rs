//! The timeline in words: one line per record, for `warroom incident timeline`, the console's
//! timeline pane and the postmortem.

use super::event::{Direction, Event, StepState};
use super::record::Record;
use super::summary::summarize;
use crate::sanitize;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use std::collections::BTreeMap;
use std::fmt::Write;

/// How a record written after a rehearsal ended is marked (in `incident timeline` and the
/// draft): it is stamped at the end, so only its place says it came later.
pub const ADDED_AFTER_REHEARSAL: &str = "[added after the rehearsal]";

fn labels(map: &BTreeMap<String, String>) -> String {
    if map.is_empty() {
        return String::new();
    }
    let inner: Vec<String> = map.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    format!(" {{{}}}", inner.join(", "))
}

fn step_state(s: StepState) -> &'static str {
    match s {
        StepState::Started => "started",
        StepState::Succeeded => "succeeded",
        StepState::Failed => "FAILED",
        StepState::TimedOut => "TIMED OUT",
        StepState::Cancelled => "cancelled",
        StepState::InDoubt => "IN DOUBT",
    }
}

/// A reading as the journal and Prometheus write it: `+Inf`, `-Inf` and `NaN` by name.
fn reading(v: f64) -> String {
    crate::strings::non_finite(v).map_or_else(|| v.to_string(), str::to_string)
}

/// One line describing `event`, free of control characters (newlines in notes are shown as
/// `\n`).
pub fn describe(event: &Event) -> String {
    let text = match event {
        Event::IncidentOpened { title, severity } => {
            format!("Incident opened: {title} ({severity})")
        }
        Event::SeverityChanged { severity } => format!("Severity set to {severity}"),
        Event::StatusChanged { status } => format!("Status: {status}"),
        Event::TitleChanged { title } => format!("Title: {title}"),
        Event::ServicesChanged { services } => {
            format!("Affected services: {}", services.join(", "))
        }
        Event::Note { text, .. } => text.clone(),
        Event::ActionItem {
            id,
            action,
            owner,
            priority,
            due,
        } => {
            let mut s = format!("Action item {id}: {action}");
            if let Some(o) = owner {
                let _ = write!(s, " (owner {o})");
            }
            if let Some(p) = priority {
                let _ = write!(s, " [{p}]");
            }
            if let Some(d) = due {
                let _ = write!(s, " due {d}");
            }
            s
        }
        Event::ImpactStart { at } => format!("Impact start set to {}", at.to_rfc3339()),
        Event::ImpactEnd { at } => format!("Impact end set to {}", at.to_rfc3339()),
        Event::Correction {
            supersedes,
            reason,
            replacement,
        } => match replacement {
            Some(r) => format!("Corrects #{supersedes} ({reason}): {}", describe(r)),
            None => format!("Retracts #{supersedes} ({reason})"),
        },
        Event::ThresholdCrossed {
            panel,
            level,
            direction,
            value,
            threshold,
            ..
        } => {
            let level = level.word();
            let verb = match direction {
                Direction::Up => "rose above",
                Direction::Down => "fell below",
            };
            format!(
                "{panel} {verb} {level} {threshold} (at {})",
                reading(*value)
            )
        }
        Event::AlertFiring {
            name, labels: l, ..
        } => {
            format!("Alert firing: {name}{}", labels(l))
        }
        Event::AlertResolved {
            name, labels: l, ..
        } => {
            format!("Alert resolved: {name}{}", labels(l))
        }
        Event::RunProposed {
            runbook,
            variables,
            to,
        } => {
            let with: Vec<String> = variables.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let with = match with.is_empty() {
                true => String::new(),
                false => format!(" with {}", with.join(", ")),
            };
            format!(
                "Proposes running runbook {runbook}{with} to {to}, who holds the executor lease"
            )
        }
        Event::RunbookRun { run, state } => format!(
            "Runbook {} run {} {}",
            run.runbook,
            run.run_id,
            step_state(*state)
        ),
        Event::RunbookStep {
            run,
            step,
            state,
            detail,
        } => {
            let mut s = format!("{} step {step} {}", run.runbook, step_state(*state));
            if let Some(d) = detail {
                let _ = write!(s, ": {d}");
            }
            s
        }
        Event::RunbookIntent {
            step,
            idempotency_key,
            request,
            ..
        } => format!("Step {step} about to send {request} (key {idempotency_key})"),
        Event::RunbookAck {
            step,
            idempotency_key,
            outcome,
            ..
        } => format!("Step {step} answered: {outcome} (key {idempotency_key})"),
        Event::Change {
            repo,
            reference,
            title,
            ..
        } => format!("Change in {repo} {reference}: {title}"),
        Event::SimFault {
            fault,
            detail,
            active,
            ..
        } => {
            let verb = if *active { "started" } else { "cleared" };
            format!("Simulated fault {fault} {verb}: {detail}")
        }
        Event::SimAction { action, wrong } => match wrong {
            Some(why) => format!("Simulator applied {action} (a wrong move: {why})"),
            None => format!("Simulator applied {action}"),
        },
        Event::RehearsalEnded { scenario, .. } => {
            format!("Rehearsal {scenario} ended: what follows was added afterwards")
        }
        Event::Interrupted { signal } => format!("warroom interrupted by {signal}"),
        Event::JournalNotice { message } => format!("Journal: {message}"),
        Event::IncidentUid { uid } => format!("Global incident id: {uid}"),
        Event::Silence(s) => s.sentence(Tz::UTC),
        Event::Responder { who, change, .. } => presence(who, *change),
    };
    sanitize::line(&text).into_owned()
}

/// A responder's presence in words: "ana on laptop-3 joined the shared incident".
pub fn presence(who: &str, change: crate::incident::event::Presence) -> String {
    use crate::incident::event::Presence;
    match change {
        Presence::Joined => format!("{who} joined the shared incident"),
        Presence::Left => format!("{who} left the shared incident"),
        Presence::Silent { seconds } => {
            format!("{who} left the shared incident: not heard from for {seconds} s")
        }
        Presence::Back { seconds } => format!("{who} is back, {seconds} s after its last word"),
    }
}

/// `at` in `tz`, with the zone's abbreviation; the date too when `with_date`.
pub fn format_time(at: DateTime<Utc>, tz: Tz, with_date: bool) -> String {
    let local = at.with_timezone(&tz);
    if with_date {
        local.format("%Y-%m-%d %H:%M:%S %Z").to_string()
    } else {
        local.format("%H:%M:%S %Z").to_string()
    }
}

/// The timeline as a plain-text table in `tz`. Dates are shown on every row only when the
/// incident spans more than one day there; otherwise once, above the table. Records that a
/// correction superseded are marked. Rows are in time order (`--json` keeps the journal's).
pub fn render_table(records: &[Record], tz: Tz, describe: &dyn Fn(&Event) -> String) -> String {
    let corrected = summarize(records).corrected;
    // In time order, as the console shows it: a crossing or an alert is stamped when it
    // happened, which may be before records written ahead of it (ties keep the journal's
    // order; SEQ keeps the journal's numbering).
    let mut ordered: Vec<&Record> = records.iter().collect();
    ordered.sort_by_key(|r| r.time);
    let day = |r: &&Record| r.time.with_timezone(&tz).date_naive();
    let multi_day = ordered.first().map(day) != ordered.last().map(day);
    let mut out = String::new();
    match ordered.first() {
        None => {
            out.push_str("(no records)\n");
            return out;
        }
        Some(first) if !multi_day => {
            let _ = writeln!(
                out,
                "{}",
                first.time.with_timezone(&tz).format("%A %Y-%m-%d")
            );
        }
        Some(_) => {}
    }
    // A rehearsal's records after its end were added afterwards (and stamped at the end).
    let ended = records
        .iter()
        .find(|r| matches!(r.kind, Event::RehearsalEnded { .. }))
        .map(|r| r.seq);
    let rows: Vec<[String; 5]> = ordered
        .iter()
        .map(|r| {
            let mut what = describe(&r.kind);
            if let Some(by) = corrected.get(&r.seq) {
                let _ = write!(what, "  [corrected by #{by}]");
            }
            if ended.is_some_and(|end| r.seq > end) {
                let _ = write!(what, "  {ADDED_AFTER_REHEARSAL}");
            }
            [
                format!("#{}", r.seq),
                format_time(r.time, tz, multi_day),
                r.source.to_string(),
                sanitize::line(&r.actor).into_owned(),
                what,
            ]
        })
        .collect();
    let header = ["SEQ", "TIME", "SOURCE", "ACTOR", "EVENT"];
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut line = |cells: [&str; 5]| {
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i == 4 {
                out.push_str(cell);
            } else {
                let _ = write!(out, "{cell:<w$}  ");
            }
        }
        out.push('\n');
    };
    line(header);
    for row in &rows {
        line([&row[0], &row[1], &row[2], &row[3], &row[4]]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incident::event::{Severity, Source};

    #[test]
    fn a_responders_presence_reads_as_a_sentence_and_keeps_its_figure_in_the_journal() {
        use crate::incident::event::Presence;
        let silent = Event::Responder {
            writer: "laptop-3-0a1b2c3d".into(),
            who: "cy on laptop-3".into(),
            change: Presence::Silent { seconds: 31 },
        };
        let json = serde_json::to_value(&silent).unwrap();
        assert_eq!(
            json["change"],
            serde_json::json!({"silent": {"seconds": 31}})
        );
        assert_eq!(serde_json::from_value::<Event>(json).unwrap(), silent);
        assert_eq!(
            describe(&silent),
            "cy on laptop-3 left the shared incident: not heard from for 31 s"
        );
        let joined = presence("ana on laptop-1", Presence::Joined);
        assert_eq!(joined, "ana on laptop-1 joined the shared incident");
    }

    fn rec(seq: u64, secs: i64, kind: Event) -> Record {
        Record {
            seq,
            time: DateTime::from_timestamp(secs, 0).unwrap(),
            source: Source::Operator,
            actor: "ana".into(),
            host: String::new(),
            kind,
        }
    }

    #[test]
    fn one_day_shows_the_date_once_and_multi_day_on_every_row() {
        let t0 = 1_795_000_000; // 2026-11-18 ~ 08:26 UTC
        let opened = Event::IncidentOpened {
            title: "pool".into(),
            severity: Severity::Sev1,
        };
        let one_day = render_table(
            &[
                rec(1, t0, opened.clone()),
                rec(2, t0 + 60, Event::note("a\nb")),
            ],
            Tz::UTC,
            &describe,
        );
        assert_eq!(one_day.lines().count(), 4, "{one_day}");
        assert!(
            one_day.contains("UTC") && one_day.contains("a\\nb"),
            "{one_day}"
        );
        let days = render_table(
            &[rec(1, t0, opened), rec(2, t0 + 86_400, Event::note("x"))],
            Tz::America__New_York,
            &describe,
        );
        assert_eq!(days.lines().count(), 3, "{days}");
        // Written after a later record, shown where it happened: #3 (07:09) before #2 (07:10).
        let late = render_table(
            &[
                rec(1, t0, Event::note("first")),
                rec(2, t0 + 120, Event::note("second")),
                rec(3, t0 + 60, Event::note("crossed earlier")),
            ],
            Tz::UTC,
            &describe,
        );
        let seqs: Vec<&str> = (late.lines().skip(2))
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        assert_eq!(seqs, ["#1", "#3", "#2"], "{late}");
        assert!(
            days.contains("2026-11-19") && days.contains("EST"),
            "{days}"
        );
    }
}
