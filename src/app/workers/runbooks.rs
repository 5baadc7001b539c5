//! Runbooks off the loop: loading the list, preparing a plan, and running the executor on its
//! own thread with the console as its operator and sink. Pause and abort reach a run through a
//! `watch` channel the executor checks between actions.

use crate::app::msg::Msg;
use crate::app::workers::operator::ConsoleOperator;
use crate::app::workers::run_sink::{ConsoleIntents, ConsoleSink};
use crate::clock::SharedClock;
use crate::incident::JournalWriter;
use crate::incident::event::RunRef;
use crate::metrics::Source;
use crate::runbook::executor::Control;
use crate::runbook::model::Runbook;
use crate::runbook::report::RunOutcome;
use crate::runbook::setup::RunbookSetup;
use std::sync::Arc;
use tokio::sync::{mpsc, watch};

/// Start a run of `rb` on its own thread (or resume it: the same id, from a step, with the
/// keys its intents recorded). Its events go to the journal (if any) and the console; its
/// questions come to the console as dialogs.
#[allow(clippy::too_many_arguments)]
pub fn start(
    rb: &Runbook,
    run_id: String,
    setup: &RunbookSetup,
    source: Arc<dyn Source>,
    journal: Option<JournalWriter>,
    clock: SharedClock,
    tx: &mpsc::UnboundedSender<Msg>,
    resume: Option<crate::app::effect::Resume>,
) {
    let ended = |outcome| Msg::RunEnded {
        run_id: run_id.clone(),
        outcome,
    };
    let (bound, resolved) = match setup.bind(rb) {
        Ok(r) => r,
        Err(e) => {
            let _ = tx.send(Msg::Planned {
                name: rb.name.clone(),
                result: Err(e),
            });
            let _ = tx.send(ended(RunOutcome::Failed));
            return;
        }
    };
    let rb = &bound;
    let mut exec =
        match crate::runbook::launch::executor(rb, resolved, Some(source), &run_id, clock) {
            Ok(e) => e,
            Err(e) => {
                tracing::error!("cannot start run {run_id}: {e}");
                let _ = tx.send(ended(RunOutcome::Failed));
                return;
            }
        };
    let (control_tx, control) = watch::channel(Control::Run);
    if let Ok(mut map) = setup.controls.lock() {
        map.insert(run_id.clone(), control_tx);
    }
    exec.control = control;
    exec.dry_run = false;
    exec.operator = Arc::new(ConsoleOperator {
        run_id: run_id.clone(),
        tx: tx.clone(),
    });
    exec.sink = Arc::new(ConsoleSink::new(
        RunRef {
            run_id: run_id.clone(),
            runbook: rb.name.clone(),
            hash: rb.hash.clone(),
        },
        journal.clone(),
        tx.clone(),
    ));
    let records = resume.as_ref().map_or(&[][..], |r| &r.records[..]);
    exec.intents = Arc::new(ConsoleIntents::new(&run_id, journal, tx.clone(), records));
    let from = resume.as_ref().map(|r| r.from);
    let (tx, controls) = (tx.clone(), setup.controls.clone());
    let run = async move {
        let outcome = tokio::select! {
            // First: once the console has quit (its loop dropped the receiver) the run is
            // never polled again. It stops where it is, as when the process is killed, and
            // `--resume` goes on from its journal. Polled after the runtime's drivers have
            // gone, its timers would panic.
            biased;
            () = tx.closed() => return,
            outcome = exec.run_from(from) => outcome,
        };
        if let Ok(mut map) = controls.lock() {
            map.remove(&exec.run_id);
        }
        let _ = tx.send(Msg::RunEnded {
            run_id: exec.run_id.clone(),
            outcome,
        });
    };
    // The executor's sinks are synchronous: each record is synced before the run goes on
    // (`runbook::journal`). On its own blocking-pool thread a sync waits there, not on the
    // thread that draws frames and reads keys: the console's runtime has only that one
    // (`main.rs`). Its timers and sockets are still the runtime's, driven by that thread.
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || runtime.block_on(run));
}

/// A run that needs the executor lease: on which engine and incident, and which run.
pub struct LeasedRun {
    pub engine: crate::share::Engine,
    pub incident: crate::incident::IncidentId,
    pub run_id: String,
    /// The runbook's name (a refused run can be proposed to the lease's holder).
    pub runbook: String,
}

/// A run of a runbook that changes something, on an incident shared across machines: started
/// by `launch` only once this console holds the incident's executor lease (one responder runs
/// at a time), which is renewed while the run lasts and given back when it ends. Held by
/// another responder: the run does not start, and the console says who holds it and offers to
/// propose the run to them (`Msg::LeaseBusy`). Lost during
/// the run (the engine out of reach past the lease's timeout): the run is aborted, no new
/// action, since another responder may hold it by then.
pub fn with_lease(
    run: LeasedRun,
    setup: RunbookSetup,
    tx: mpsc::UnboundedSender<Msg>,
    launch: impl FnOnce() + Send + 'static,
) {
    use crate::share::lease::{ForRun, TIMEOUT, for_run};
    let LeasedRun {
        engine,
        incident,
        run_id,
        runbook,
    } = run;
    tokio::spawn(async move {
        let holder = crate::share::lease::holder_name();
        let refused = |text: String| {
            let _ = tx.send(Msg::RunEnded {
                run_id: run_id.clone(),
                outcome: RunOutcome::Aborted,
            });
            let _ = tx.send(Msg::Lease(text));
        };
        let held = match for_run(&engine, &incident, &holder).await {
            Ok(ForRun::Held(held)) => held,
            Ok(ForRun::Busy { by }) => {
                let _ = tx.send(Msg::RunEnded {
                    run_id: run_id.clone(),
                    outcome: RunOutcome::Aborted,
                });
                let _ = tx.send(Msg::LeaseBusy {
                    by,
                    runbook,
                    lapses_s: TIMEOUT.as_secs(),
                });
                return;
            }
            Err(e) => return refused(format!("not run: the executor lease: {e}")),
        };
        launch();
        let mut lost = held.lost.clone();
        let running = |setup: &RunbookSetup| {
            setup
                .controls
                .lock()
                .is_ok_and(|map| map.contains_key(&run_id))
        };
        // The run registers its control as it starts and removes it as it ends.
        loop {
            tokio::select! {
                _ = lost.wait_for(Option::is_some) => {
                    let why = held.lost.borrow().clone().unwrap_or_default();
                    setup.control(&run_id, Control::Abort);
                    let _ = tx.send(Msg::Lease(format!("{why}: the run is aborted, no new action")));
                    return;
                }
                () = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
            }
            if !running(&setup) {
                break;
            }
        }
        if let Err(e) = held.release().await {
            let _ = tx.send(Msg::Lease(format!(
                "the executor lease was not given back ({e}); it lapses by itself"
            )));
        }
    });
}
