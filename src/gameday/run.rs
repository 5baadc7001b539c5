//! A play of a headless game day: a runbook run in this process by the same executor as
//! `warroom runbook run --yes`, recorded on the rehearsal's incident through its one journal
//! writer, its transitions stamped in simulated time and printed on stderr.

use crate::clock::SharedClock;
use crate::incident::JournalWriter;
use crate::incident::event::RunRef;
use crate::metrics::Source;
use crate::runbook::executor::Control;
use crate::runbook::journal::{JournalIntents, JournalSink};
use crate::runbook::record::{RecordError, RunOutcome, RunRecord, RunSink, Tee};
use crate::runbook::setup::RunbookSetup;
use std::sync::Arc;
use tokio::sync::watch;

/// A play in progress: its control (abort at the end of the rehearsal) and its task.
pub struct Running {
    pub control: watch::Sender<Control>,
    pub task: tokio::task::JoinHandle<RunOutcome>,
}

/// Starts `runbook` (a name or a file stem among the shipped runbooks and the configured
/// directory), its variables bound by `setup` (the stage's control URL, the service and the
/// durations scaled to simulated time), reading gates from `source`.
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
            let names: Vec<String> = entries.iter().map(|e| e.name()).collect();
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
    let run_id = format!(
        "{}-{}",
        bound.name,
        clock.now().format("%Y%m%dT%H%M%S%.3fZ")
    );
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
