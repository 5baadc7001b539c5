//! Runbooks off the loop: loading the list, preparing a plan, and running the executor in its
//! own task with the console as its operator and sink. Pause and abort reach a run through a
//! `watch` channel the executor checks between actions.

use super::msg::Msg;
use super::operator::ConsoleOperator;
use super::run_record::{ConsoleIntents, ConsoleSink};
use crate::clock::SharedClock;
use crate::incident::JournalWriter;
use crate::incident::event::RunRef;
use crate::metrics::Source;
use crate::runbook::executor::{Control, Executor};
use crate::runbook::model::{Runbook, StepKind};
use crate::runbook::record::{MemoryIntents, MemorySink, RunOutcome};
use crate::runbook::{http, plan, vars};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// A plan ready to show.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub lines: Vec<String>,
    /// Batches per batch step, from the targets known now.
    pub batches: BTreeMap<String, usize>,
}

/// What runs need from the runtime: where runbooks are, the variables set for this console,
/// and the controls of the runs in progress.
#[derive(Clone, Default)]
pub struct RunbookSetup {
    /// Directories searched besides the shipped runbooks.
    pub dirs: Vec<PathBuf>,
    /// Variable values for every runbook that has the variable (the demo sets `base_url` and
    /// `service`); a runbook without it is not affected.
    pub vars: Vec<(String, String)>,
    controls: Arc<Mutex<HashMap<String, watch::Sender<Control>>>>,
}

impl RunbookSetup {
    pub fn new(dirs: Vec<PathBuf>, vars: Vec<(String, String)>) -> Self {
        RunbookSetup {
            dirs,
            vars,
            controls: Arc::default(),
        }
    }

    /// Resolve `rb`'s variables: this console's values for the variables it has, then the
    /// environment and defaults.
    /// `rb` with its variables resolved and the duration fields that name a variable set:
    /// what a run or a plan uses.
    pub fn bind(&self, rb: &Runbook) -> Result<(Runbook, vars::Resolved), String> {
        let resolved = self.resolve(rb)?;
        let shipped = super::catalog::SHIPPED
            .iter()
            .find(|(f, _)| std::path::Path::new(f) == rb.file)
            .map(|(_, text)| (*text).to_string());
        let text = match shipped {
            Some(t) => t,
            None => std::fs::read_to_string(&rb.file)
                .map_err(|e| format!("cannot read \"{}\" again: {e}", rb.file.display()))?,
        };
        let bound = crate::runbook::load::bind_text(rb, &text, &resolved.values)
            .map_err(|d| d.to_string())?;
        Ok((bound, resolved))
    }

    pub fn resolve(&self, rb: &Runbook) -> Result<vars::Resolved, String> {
        let overrides: Vec<String> = self
            .vars
            .iter()
            .filter(|(k, _)| rb.variables.iter().any(|v| &v.name == k && !v.secret))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        vars::resolve(rb, &overrides, |k| std::env::var(k).ok()).map_err(|e| e.to_string())
    }

    /// Ask the run `run_id` to pause, resume or abort; false when it is not running.
    pub fn control(&self, run_id: &str, c: Control) -> bool {
        let Ok(map) = self.controls.lock() else {
            return false;
        };
        map.get(run_id).is_some_and(|tx| tx.send(c).is_ok())
    }
}

fn executor_for(
    rb: &Runbook,
    resolved: vars::Resolved,
    source: Arc<dyn Source>,
    run_id: &str,
    clock: SharedClock,
) -> Result<Executor, String> {
    Ok(Executor {
        runbook: rb.clone(),
        vars: resolved,
        source: Some(source),
        sender: http::Sender::new(crate::backoff::Backoff::default(), http::run_retry_budget())
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?,
        sink: Arc::new(MemorySink::default()),
        intents: Arc::new(MemoryIntents::default()),
        operator: Arc::new(crate::runbook::operator::AssumeYes),
        control: watch::channel(Control::Run).1,
        clock,
        run_id: run_id.to_string(),
        dry_run: true,
    })
}

/// The plan of `rb`: variables resolved, batch targets asked of `source` (a dry probe: no
/// request that changes anything, no process).
pub async fn prepare_plan(
    rb: &Runbook,
    setup: &RunbookSetup,
    source: Arc<dyn Source>,
    clock: SharedClock,
) -> Result<Plan, String> {
    let (bound, resolved) = setup.bind(rb)?;
    let rb = &bound;
    let probe = executor_for(rb, resolved.clone(), source, "plan", clock)?;
    let mut targets = BTreeMap::new();
    let mut batches = BTreeMap::new();
    for s in &rb.steps {
        if let StepKind::Batch(b) = &s.kind
            && let Ok(Ok(t)) =
                tokio::time::timeout(Duration::from_secs(10), probe.resolve_targets(b)).await
        {
            let size = b.size.resolve(t.len());
            batches.insert(s.id.clone(), t.len().div_ceil(size.max(1)));
            targets.insert(s.id.clone(), t);
        }
    }
    let text = plan::render(rb, &resolved, &targets, &crate::backoff::Backoff::default());
    Ok(Plan {
        lines: text
            .lines()
            .map(|l| crate::sanitize::line(l).into_owned())
            .collect(),
        batches,
    })
}

/// Start a run of `rb` in its own task. Its events go to the journal (if any) and the console;
/// its questions come to the console as dialogs.
pub fn start(
    rb: &Runbook,
    run_id: String,
    setup: &RunbookSetup,
    source: Arc<dyn Source>,
    journal: Option<JournalWriter>,
    clock: SharedClock,
    tx: &mpsc::UnboundedSender<Msg>,
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
    let mut exec = match executor_for(rb, resolved, source, &run_id, clock) {
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
    exec.intents = Arc::new(ConsoleIntents::new(&run_id, journal, tx.clone()));
    let (tx, controls) = (tx.clone(), setup.controls.clone());
    tokio::spawn(async move {
        let outcome = exec.run().await;
        if let Ok(mut map) = controls.lock() {
            map.remove(&exec.run_id);
        }
        let _ = tx.send(Msg::RunEnded {
            run_id: exec.run_id.clone(),
            outcome,
        });
    });
}
