//! The headless run's progress: one line per transition on standard output, sanitized.

use super::report::{RecordError, RunEvent, RunRecord, RunSink, StepOutcome};
use std::io::Write;

/// Prints one progress line per transition.
pub struct Progress;

impl RunSink for Progress {
    fn record(&self, r: &RunRecord) -> Result<(), RecordError> {
        let mut o = std::io::stdout().lock();
        let _ = writeln!(o, "{}", line(r, &r.at.format("%H:%M:%SZ").to_string()));
        Ok(())
    }
}

/// The progress line of one transition, stamped with `t`, sanitized.
pub fn line(r: &RunRecord, t: &str) -> String {
    {
        let line = match &r.event {
            RunEvent::RunStarted {
                runbook,
                hash,
                dry_run,
                ..
            } => {
                format!(
                    "{t} run {} of \"{runbook}\" ({hash}){}",
                    r.run_id,
                    if *dry_run { " DRY RUN" } else { "" }
                )
            }
            RunEvent::RunResumed { from_step } => {
                format!("{t} run {} resumed at {from_step}", r.run_id)
            }
            RunEvent::StepStarted { step, kind, title } => format!("{t} ▶ {step} ({kind}) {title}"),
            RunEvent::StepFinished {
                step,
                outcome,
                detail,
            } => {
                format!(
                    "{t} {} {step}: {} {detail}",
                    if *outcome == StepOutcome::Succeeded {
                        "✓"
                    } else {
                        "•"
                    },
                    outcome.word()
                )
            }
            RunEvent::Attempt {
                attempt,
                method,
                url,
                status,
                error,
                target,
                ..
            } => format!(
                "{t}   {method} {url}{} attempt {attempt}: {}",
                target
                    .as_ref()
                    .map(|x| format!(" [{x}]"))
                    .unwrap_or_default(),
                status
                    .map(|s| s.to_string())
                    .or(error.clone())
                    .unwrap_or_default()
            ),
            RunEvent::GateReading {
                reading, verdict, ..
            } => format!("{t}   gate {reading} → {verdict}"),
            RunEvent::Batch { batch_event, .. } => format!("{t}   {batch_event}"),
            RunEvent::Paused { step, reason } => format!("{t} ‖ {step} paused: {reason}"),
            RunEvent::Decided { step, decision } => {
                format!("{t}   {step}: operator chose {}", decision.word())
            }
            RunEvent::Output { line, .. } => format!("{t}   | {line}"),
            RunEvent::Spawned { argv, .. } => format!("{t}   exec {}", argv.join(" ")),
            RunEvent::Confirmed { what, .. } => format!("{t}   confirmed \"{what}\""),
            RunEvent::Declined { what, .. } => format!("{t}   NOT confirmed \"{what}\""),
            RunEvent::RunFinished { outcome } => format!("{t} run finished: {}", outcome.word()),
        };
        crate::sanitize::line(&line).into_owned()
    }
}
