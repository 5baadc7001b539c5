//! The game-day score, read from the incident's journal: how fast the team noticed, acted and
//! recovered, the wrong moves the scenario knows, the gates passed over and the steps declined,
//! and the simulator's own figures recorded at the rehearsal's end. Every figure says what it
//! is measured against.

use crate::incident::Record;
use crate::incident::event::{Direction, Event, RehearsalFigures, Source, StepState};
use chrono::{DateTime, Utc};

/// One moment of the response: when, and what the journal says happened then.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Moment {
    pub at: DateTime<Utc>,
    pub what: String,
}

/// The response to a rehearsal, as its journal tells it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Response {
    pub scenario: Option<String>,
    /// The first simulated fault.
    pub fault: Option<Moment>,
    /// The first threshold crossing upwards or alert firing at or after the fault.
    pub first_signal: Option<Moment>,
    /// The first record a person made after the fault (a note, a status, an action item, a
    /// runbook started).
    pub first_human: Option<Moment>,
    /// The first control action the simulator applied after the fault.
    pub first_mitigation: Option<Moment>,
    /// From the first signal to the first human record (zero when a person was first).
    pub time_to_detect_s: Option<f64>,
    /// From the fault to the first control action.
    pub time_to_first_mitigation_s: Option<f64>,
    /// From the fault to the start of the first five minutes under the objective.
    pub time_to_recovery_s: Option<f64>,
    /// Control actions the scenario counts as wrong, with why.
    pub wrong_moves: Vec<Moment>,
    /// Runbook steps that failed and were continued past (a gate not met, passed over).
    pub gates_skipped: Vec<Moment>,
    /// Runbook steps the operator did not confirm.
    pub steps_declined: Vec<Moment>,
    /// The simulator's own figures at the end (absent while the rehearsal runs).
    pub figures: Option<RehearsalFigures>,
    /// When the rehearsal ended, and how many records were added afterwards.
    pub ended_at: Option<DateTime<Utc>>,
    pub added_afterwards: usize,
}

/// Whether a record is one a person made (not the rehearsal's own header records).
fn human(r: &Record) -> bool {
    match (&r.source, &r.kind) {
        (_, Event::IncidentOpened { .. }) => false,
        (Source::Operator, _) => true,
        (Source::Runbook, Event::RunbookRun { state, .. }) => *state == StepState::Started,
        _ => false,
    }
}

/// "Pool saturation rose above 95% (at 97.2%)": in the simulator panel's unit (a rehearsal
/// shows the simulator's panels), bare numbers only for a panel it does not have.
fn rose(panel: &str, value: f64, threshold: f64) -> String {
    let unit = (crate::metrics::presets::sim_panels().into_iter())
        .find(|p| p.title == panel)
        .map(|p| p.unit);
    match unit {
        Some(u) => {
            let (r, t) = crate::postmortem::words::reading_pair(u, value, threshold);
            format!("{panel} rose above {t} (at {r})")
        }
        None => format!("{panel} rose above {threshold} (at {value:.3})"),
    }
}

fn moment(r: &Record, what: impl Into<String>) -> Moment {
    Moment {
        at: r.time,
        what: crate::sanitize::line(&what.into()).into_owned(),
    }
}

/// The response of the rehearsal recorded in `records` (a whole journal, in its order).
pub fn response(records: &[Record]) -> Response {
    let end = records
        .iter()
        .position(|r| matches!(r.kind, Event::RehearsalEnded { .. }));
    let (during, after) = records.split_at(end.unwrap_or(records.len()));
    let (scenario, figures, ended_at) = match after.first() {
        Some(Record {
            kind: Event::RehearsalEnded { scenario, figures },
            time,
            ..
        }) => (Some(scenario.clone()), Some(figures.clone()), Some(*time)),
        _ => (None, None, None),
    };
    let fault = during
        .iter()
        .find(|r| matches!(r.kind, Event::SimFault { active: true, .. }))
        .map(|r| match &r.kind {
            Event::SimFault { fault, .. } => moment(r, format!("fault: {fault}")),
            _ => moment(r, "fault"),
        });
    let fault_at = fault
        .as_ref()
        .map(|f| f.at)
        .or(figures.as_ref().and_then(|f| f.fault_at));
    let after_fault = |r: &&Record| fault_at.is_none_or(|f| r.time >= f);
    let first_signal = during
        .iter()
        .filter(after_fault)
        .find_map(|r| match &r.kind {
            Event::ThresholdCrossed {
                panel,
                direction: Direction::Up,
                value,
                threshold,
                at,
                ..
            } => Some(Moment {
                at: *at,
                what: rose(panel, *value, *threshold),
            }),
            Event::AlertFiring { name, .. } => Some(moment(r, format!("alert {name} fired"))),
            _ => None,
        });
    let first_human = during
        .iter()
        .filter(after_fault)
        .find(|r| human(r))
        .map(|r| moment(r, crate::runbook::journal::describe(&r.kind)));
    let first_mitigation = during
        .iter()
        .filter(after_fault)
        .find_map(|r| match &r.kind {
            Event::SimAction { action, .. } => Some(moment(r, action.clone())),
            _ => None,
        });
    let wrong_moves = during
        .iter()
        .filter_map(|r| match &r.kind {
            Event::SimAction {
                action,
                wrong: Some(why),
            } => Some(moment(r, format!("{action}: {why}"))),
            _ => None,
        })
        .collect();
    let step_detail = |r: &Record| match &r.kind {
        Event::RunbookStep {
            run,
            step,
            detail: Some(d),
            ..
        } => Some((format!("{} step {step}", run.runbook), d.clone())),
        _ => None,
    };
    let decision = format!("{}continue", crate::runbook::journal::DECISION);
    let gates_skipped = during
        .iter()
        .filter_map(|r| {
            let (what, d) = step_detail(r)?;
            (d == decision).then(|| moment(r, format!("{what} failed and was continued past")))
        })
        .collect();
    let steps_declined = during
        .iter()
        .filter_map(|r| {
            let (what, d) = step_detail(r)?;
            (d.starts_with(crate::runbook::journal::DECLINED))
                .then(|| moment(r, format!("{what} declined")))
        })
        .collect();
    let secs = |from: Option<DateTime<Utc>>, to: Option<DateTime<Utc>>| match (from, to) {
        (Some(a), Some(b)) => Some(((b - a).num_milliseconds() as f64 / 1000.0).max(0.0)),
        _ => None,
    };
    Response {
        scenario,
        time_to_detect_s: secs(
            first_signal.as_ref().map(|m| m.at),
            first_human.as_ref().map(|m| m.at),
        ),
        time_to_first_mitigation_s: secs(fault_at, first_mitigation.as_ref().map(|m| m.at)),
        time_to_recovery_s: secs(fault_at, figures.as_ref().and_then(|f| f.recovered_at)),
        fault,
        first_signal,
        first_human,
        first_mitigation,
        wrong_moves,
        gates_skipped,
        steps_declined,
        figures,
        ended_at,
        added_afterwards: after.len().saturating_sub(1),
    }
}

/// Minutes, to a tenth.
fn minutes(s: Option<f64>) -> String {
    s.map_or("—".into(), |s| format!("{:.1} min", s / 60.0))
}

/// The response score as lines of text, times in `tz`.
pub fn response_text(r: &Response, tz: chrono_tz::Tz) -> String {
    let t = |m: &Option<Moment>| {
        m.as_ref().map_or("none recorded".to_string(), |m| {
            format!("{} {}", m.at.with_timezone(&tz).format("%H:%M:%S"), m.what)
        })
    };
    let objective = r
        .figures
        .as_ref()
        .map_or("the scenario's objective".into(), |f| {
            format!("error ratio under {}", percent(f.objective_error_ratio))
        });
    let mut out = String::from("Response (from the incident's journal)\n");
    let mut line = |name: &str, figure: String, against: String| {
        out.push_str(&format!("  {name:<26}{figure:<12}{against}\n"));
    };
    line(
        "time to detect",
        minutes(r.time_to_detect_s),
        format!(
            "from the first signal ({}) to the first human record ({})",
            t(&r.first_signal),
            t(&r.first_human)
        ),
    );
    line(
        "time to first mitigation",
        minutes(r.time_to_first_mitigation_s),
        format!(
            "from the fault ({}) to the first control action ({})",
            t(&r.fault),
            t(&r.first_mitigation)
        ),
    );
    line(
        "time to recovery",
        minutes(r.time_to_recovery_s),
        format!(
            "from the fault to the first five minutes in a row within the objective: {objective}"
        ),
    );
    // "what they are: 23:05 a; 23:10 b", or only what they are when there are none.
    let listed = |what: &str, v: &[Moment]| {
        let l: Vec<String> = v
            .iter()
            .map(|m| format!("{} {}", m.at.with_timezone(&tz).format("%H:%M"), m.what))
            .collect();
        match l.is_empty() {
            true => what.to_string(),
            false => format!("{what}: {}", l.join("; ")),
        }
    };
    let moves = r.wrong_moves.len();
    line(
        "wrong moves",
        moves.to_string(),
        if moves == 0 {
            "moves the scenario knows make it worse: none made".into()
        } else {
            listed("moves the scenario knows make it worse", &r.wrong_moves)
        },
    );
    line(
        "gates skipped",
        r.gates_skipped.len().to_string(),
        listed(
            "runbook steps that failed and were continued past",
            &r.gates_skipped,
        ),
    );
    line(
        "steps declined",
        r.steps_declined.len().to_string(),
        listed("runbook steps not confirmed", &r.steps_declined),
    );
    if let Some(f) = &r.figures {
        out.push_str("System (the simulator's own count)\n");
        let mut line = |name: &str, figure: String, against: String| {
            out.push_str(&format!("  {name:<26}{figure:<12}{against}\n"));
        };
        line(
            "minutes over objective",
            f.minutes_over_objective.to_string(),
            format!("whole minutes with the error ratio over the objective ({objective})"),
        );
        line(
            "failed requests",
            format!("{:.0}", f.failed_requests),
            "user requests that failed for good, after every retry".into(),
        );
        line(
            "duplicate writes",
            format!("{:.0}", f.duplicate_writes),
            "writes that repeated an earlier one (retries without idempotency keys)".into(),
        );
    }
    out
}

fn percent(x: f64) -> String {
    let p = x * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0} %")
    } else {
        format!("{p:.1} %")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incident::event::{Level, RunRef};

    fn at(min: i64) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-07-17T07:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
            + chrono::Duration::minutes(min)
    }

    fn rec(seq: u64, min: i64, source: Source, kind: Event) -> Record {
        Record {
            seq,
            time: at(min),
            source,
            actor: "x".into(),
            host: String::new(),
            kind,
        }
    }

    #[test]
    fn the_response_is_read_from_the_journal_against_its_references() {
        let run = RunRef {
            run_id: "r1".into(),
            runbook: "pool-exhaustion".into(),
            hash: "h".into(),
        };
        let step = |seq, min, detail: &str| {
            rec(
                seq,
                min,
                Source::Runbook,
                Event::RunbookStep {
                    run: run.clone(),
                    step: "restart".into(),
                    state: StepState::Started,
                    detail: Some(detail.into()),
                },
            )
        };
        let records = vec![
            rec(
                1,
                -5,
                Source::Operator,
                Event::IncidentOpened {
                    title: "Rehearsal".into(),
                    severity: crate::incident::event::Severity::Sev2,
                },
            ),
            rec(
                2,
                0,
                Source::Sim,
                Event::SimFault {
                    fault: "deploy".into(),
                    detail: String::new(),
                    active: true,
                    at: None,
                },
            ),
            rec(
                3,
                21,
                Source::Metric,
                Event::ThresholdCrossed {
                    panel: "Pool saturation".into(),
                    level: Level::Crit,
                    direction: Direction::Up,
                    value: 1.0,
                    threshold: 0.95,
                    at: at(18),
                },
            ),
            rec(4, 25, Source::Operator, Event::note("pools full")),
            rec(
                5,
                44,
                Source::Sim,
                Event::SimAction {
                    action: "scale to 15 replicas".into(),
                    wrong: Some("more connections".into()),
                },
            ),
            step(6, 50, "decision: continue"),
            step(7, 51, "declined: not confirmed"),
            rec(
                8,
                120,
                Source::Sim,
                Event::RehearsalEnded {
                    scenario: "planner-peak".into(),
                    figures: RehearsalFigures {
                        objective_error_ratio: 0.02,
                        fault_at: Some(at(0)),
                        recovered_at: Some(at(113)),
                        failed_requests: 10.0,
                        duplicate_writes: 0.0,
                        minutes_over_objective: 100,
                        speed: 60.0,
                        seed: 1,
                    },
                },
            ),
            rec(9, 120, Source::Operator, Event::note("written later")),
        ];
        let r = response(&records);
        assert_eq!(r.scenario.as_deref(), Some("planner-peak"));
        // The crossing's own reading time, not when it was recorded.
        assert_eq!(r.time_to_detect_s, Some(7.0 * 60.0));
        assert_eq!(r.time_to_first_mitigation_s, Some(44.0 * 60.0));
        assert_eq!(r.time_to_recovery_s, Some(113.0 * 60.0));
        // The first signal in the panel's unit, as the dashboard showed it.
        let signal = r.first_signal.as_ref().map(|m| m.what.as_str());
        assert_eq!(signal, Some("Pool saturation rose above 95% (at 100%)"));
        assert_eq!(r.wrong_moves.len(), 1);
        assert_eq!(r.gates_skipped.len(), 1);
        assert_eq!(r.steps_declined.len(), 1);
        assert_eq!(r.added_afterwards, 1);
        let text = response_text(&r, chrono_tz::UTC);
        assert!(text.contains("objective: error ratio under 2 %"), "{text}");
        assert!(text.contains("from the first signal (07:18:00"), "{text}");
        assert!(
            text.contains("07:44 scale to 15 replicas: more connections"),
            "{text}"
        );
    }
}
