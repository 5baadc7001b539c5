//! Plays: the runbooks a headless rehearsal runs, and when (`pool-exhaustion@+3m`). A play is a
//! runbook run in this process by the same executor as `warroom runbook run --yes`, recorded on
//! the rehearsal's incident through its one journal writer, its transitions stamped in
//! simulated time and printed on stderr.

use crate::clock::SharedClock;
use crate::incident::JournalWriter;
use crate::incident::event::RunRef;
use crate::metrics::Source;
use crate::runbook::executor::Control;
use crate::runbook::journal::{JournalIntents, JournalSink};
use crate::runbook::report::{RecordError, RunOutcome, RunRecord, RunSink, Tee};
use crate::runbook::setup::RunbookSetup;
use chrono::NaiveTime;
use std::time::Duration;

use std::sync::Arc;
use tokio::sync::watch;

/// When a play starts, in the scenario's terms.
#[derive(Debug, Clone, PartialEq)]
pub enum When {
    /// This long after the scenario's first fault.
    AfterFault(Duration),
    /// At this time on the scenario's clock (its `start_clock` is simulated second 0).
    Clock(NaiveTime),
}

/// One runbook run at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct Play {
    pub runbook: String,
    pub when: When,
}

impl Play {
    /// Parses `RUNBOOK@+DURATION` or `RUNBOOK@HH:MM[:SS]`.
    pub fn parse(text: &str) -> Result<Play, String> {
        let Some((runbook, when)) = text.rsplit_once('@') else {
            return Err(format!(
                "--play \"{text}\": expected RUNBOOK@WHEN, e.g. \"pool-exhaustion@+3m\" or \"disable-retries@07:05\""
            ));
        };
        if runbook.is_empty() {
            return Err(format!("--play \"{text}\": the runbook name is empty"));
        }
        let when = if let Some(after) = when.strip_prefix('+') {
            When::AfterFault(humantime::parse_duration(after).map_err(|e| {
                format!("--play \"{text}\": \"{after}\" is not a duration such as 3m or 90s ({e})")
            })?)
        } else {
            let time = NaiveTime::parse_from_str(when, "%H:%M:%S")
                .or_else(|_| NaiveTime::parse_from_str(when, "%H:%M"))
                .map_err(|_| {
                    format!("--play \"{text}\": \"{when}\" is neither +DURATION nor HH:MM")
                })?;
            When::Clock(time)
        };
        Ok(Play {
            runbook: runbook.to_string(),
            when,
        })
    }

    /// The simulated second at which the play starts, for a scenario whose clock starts at
    /// `start_clock` and whose first fault is at `fault_at` (if any).
    pub fn at(&self, start_clock: NaiveTime, fault_at: Option<f64>) -> Result<f64, String> {
        match &self.when {
            When::AfterFault(d) => fault_at.map(|f| f + d.as_secs_f64()).ok_or_else(|| {
                format!(
                    "--play \"{}\": the scenario has no fault to count from; use HH:MM",
                    self.runbook
                )
            }),
            When::Clock(t) => {
                let secs = (*t - start_clock).num_seconds();
                // A time before the start is on the next day, as on a night shift.
                Ok(secs.rem_euclid(86_400) as f64)
            }
        }
    }
}

/// A play in progress: its control (abort at the end of the rehearsal) and its task.
pub struct Running {
    pub control: watch::Sender<Control>,
    pub task: tokio::task::JoinHandle<RunOutcome>,
}

/// Starts `runbook` (a name or a file stem among the shipped runbooks and the configured
/// directory), its variables bound by `setup` (the stage's control URL and the service),
/// reading gates from `source`, every duration on `clock` (the rehearsal's).
pub fn start(
    runbook: &str,
    setup: &RunbookSetup,
    source: Arc<dyn Source>,
    journal: JournalWriter,
    clock: SharedClock,
    tz: chrono_tz::Tz,
) -> Result<Running, String> {
    let entries = crate::runbook::catalog::load(&setup.dirs);
    let entry = entries
        .iter()
        .find(|e| {
            e.name() == runbook
                || e.runbook()
                    .is_some_and(|rb| rb.file.file_stem().and_then(|s| s.to_str()) == Some(runbook))
        })
        .ok_or_else(|| {
            let names: Vec<String> = entries
                .iter()
                .map(super::super::runbook::catalog::Entry::name)
                .collect();
            format!(
                "no runbook \"{}\"; known: {}",
                crate::sanitize::line(runbook),
                names.join(", ")
            )
        })?;
    let rb = match entry {
        crate::runbook::catalog::Entry::Ready(rb) => rb,
        crate::runbook::catalog::Entry::Broken { error, .. } => {
            return Err(format!("runbook \"{runbook}\" does not load: {error}"));
        }
    };
    let (bound, resolved) = setup.bind(rb)?;
    let run_id = bound.run_id(clock.now());
    let run = RunRef {
        run_id: run_id.clone(),
        runbook: bound.name.clone(),
        hash: bound.hash.clone(),
    };
    // The journal first: a line on stderr says a transition is recorded.
    let sink = Tee(vec![
        Box::new(JournalSink::new(journal.clone(), run)),
        Box::new(Stamped { tz }),
    ]);
    let (control, watched) = watch::channel(Control::Run);
    let mut exec = crate::runbook::launch::executor(&bound, resolved, Some(source), &run_id, clock)
        .map_err(|e| e.to_string())?;
    exec.sink = Arc::new(sink);
    exec.intents = Arc::new(JournalIntents::new(journal, &run_id, &[]));
    exec.control = watched;
    exec.dry_run = false;
    Ok(Running {
        control,
        task: tokio::spawn(async move { exec.run().await }),
    })
}

/// Prints each transition on stderr with its simulated time in the configured zone.
struct Stamped {
    tz: chrono_tz::Tz,
}

impl RunSink for Stamped {
    fn record(&self, r: &RunRecord) -> Result<(), RecordError> {
        let t =
            r.at.with_timezone(&self.tz)
                .format("[%H:%M:%S]")
                .to_string();
        eprintln!("{}", crate::runbook::progress::line(r, &t));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(s: &str) -> NaiveTime {
        NaiveTime::parse_from_str(s, "%H:%M").unwrap()
    }

    #[test]
    fn plays_parse_in_both_forms() {
        let p = Play::parse("pool-exhaustion@+3m").unwrap();
        assert_eq!(p.runbook, "pool-exhaustion");
        assert_eq!(p.when, When::AfterFault(Duration::from_secs(180)));
        assert_eq!(p.at(clock("06:40"), Some(1200.0)).unwrap(), 1380.0);
        let p = Play::parse("disable-retries@07:05").unwrap();
        assert_eq!(p.at(clock("06:40"), None).unwrap(), 1500.0);
        // A night shift: 00:10 after a 22:30 start is the next day.
        let p = Play::parse("x@00:10").unwrap();
        assert_eq!(p.at(clock("22:30"), None).unwrap(), 6000.0);
    }

    #[test]
    fn bad_plays_say_what_was_expected() {
        for bad in ["pool-exhaustion", "@+3m", "x@+soon", "x@25:99"] {
            let e = Play::parse(bad).unwrap_err();
            assert!(e.contains("--play"), "{bad}: {e}");
        }
        let p = Play::parse("x@+1m").unwrap();
        assert!(p.at(clock("06:40"), None).unwrap_err().contains("no fault"));
    }
}
