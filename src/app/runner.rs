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
    /// Each step's title with the variables filled in (secrets masked), as the run shows it.
    pub titles: BTreeMap<String, String>,
}

/// What runs need from the runtime: where runbooks are, the variables set for this console,
/// and the controls of the runs in progress.
///
/// A variable's value, first found wins: this console's own values (`vars`: a rehearsal's
/// simulator), then the config's `[runbooks.vars]` (`config_vars`), then the variable's
/// environment variable, then its default. A name a runbook does not declare is ignored for
/// that runbook: one config serves every runbook.
#[derive(Clone, Default)]
pub struct RunbookSetup {
    /// Directories searched besides the shipped runbooks.
    pub dirs: Vec<PathBuf>,
    /// Variable values for every runbook that has the variable (the demo sets `base_url` and
    /// `service`); a runbook without it is not affected.
    pub vars: Vec<(String, String)>,
    /// `[runbooks.vars]` of the config file.
    pub config_vars: Vec<(String, String)>,
    controls: Arc<Mutex<HashMap<String, watch::Sender<Control>>>>,
}

impl RunbookSetup {
    pub fn new(dirs: Vec<PathBuf>, vars: Vec<(String, String)>) -> Self {
        RunbookSetup {
            dirs,
            vars,
            config_vars: Vec::new(),
            controls: Arc::default(),
        }
    }

    /// The config's runbook directory and `[runbooks.vars]`, with no console values.
    pub fn from_config(config: &crate::config::Config) -> Self {
        RunbookSetup::new(config.runbook_dir.iter().cloned().collect(), Vec::new())
            .with_config_vars(config)
    }

    /// The same setup with the config's `[runbooks.vars]` under this console's own values.
    pub fn with_config_vars(mut self, config: &crate::config::Config) -> Self {
        self.config_vars = config.runbook_vars.clone();
        self
    }

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

    /// Resolve `rb`'s variables in the order above.
    pub fn resolve(&self, rb: &Runbook) -> Result<vars::Resolved, String> {
        // Later overrides win in `vars::resolve`: the config first, this console's values after.
        let mut overrides = crate::config::runbooks::overrides_for(&self.config_vars, rb)?;
        overrides.extend(
            self.vars
                .iter()
                .filter(|(k, _)| rb.variables.iter().any(|v| &v.name == k && !v.secret))
                .map(|(k, v)| format!("{k}={v}")),
        );
        vars::resolve(rb, &overrides, |k| std::env::var(k).ok()).map_err(|e| {
            let e = e.to_string();
            match self
                .config_vars
                .iter()
                .find(|(k, _)| e.contains(&format!("\"{k}\"")))
            {
                Some(_) => format!("{e} (check [runbooks.vars] in warroom.toml)"),
                None => e,
            }
        })
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
    let titles = (rb.steps.iter())
        .map(|s| {
            let title = resolved.masker.mask(&s.title_rendered(&resolved.values));
            (s.id.clone(), crate::sanitize::line(&title).into_owned())
        })
        .collect();
    Ok(Plan {
        lines: text
            .lines()
            .map(|l| crate::sanitize::line(l).into_owned())
            .collect(),
        batches,
        titles,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn pool_exhaustion() -> Runbook {
        super::super::catalog::load(&[])
            .into_iter()
            .find_map(|e| e.runbook().filter(|r| r.name == "pool-exhaustion").cloned())
            .unwrap()
    }

    #[test]
    fn config_vars_override_defaults_and_bind_durations_and_the_console_wins() {
        let config = Config::parse(
            "w.toml",
            "[runbooks.vars]\nbase_url = \"http://127.0.0.1:5\"\ninterval = \"1s\"\nwindow = \"4s\"\nnot_in_any_runbook = \"x\"\n",
        )
        .unwrap();
        let setup = RunbookSetup::from_config(&config);
        let (bound, resolved) = setup.bind(&pool_exhaustion()).unwrap();
        assert_eq!(resolved.values["base_url"], "http://127.0.0.1:5");
        assert_eq!(resolved.values["window"], "4s");
        assert_eq!(resolved.values["soak"], "15s", "defaults stay");
        assert!(!resolved.values.contains_key("not_in_any_runbook"));
        let wait = bound.steps.iter().find(|s| s.id == "recovered").unwrap();
        let StepKind::Wait { gate, .. } = &wait.kind else {
            panic!("{wait:?}")
        };
        assert_eq!(gate.interval, Duration::from_secs(1));
        // A rehearsal's own values come before the config's.
        let demo = RunbookSetup::new(vec![], vec![("base_url".into(), "http://sim".into())])
            .with_config_vars(&config);
        assert_eq!(
            demo.resolve(&pool_exhaustion()).unwrap().values["base_url"],
            "http://sim"
        );
    }

    #[test]
    fn a_bad_config_value_names_the_config() {
        let config = Config::parse("w.toml", "[runbooks.vars]\ninterval = \"soon\"\n").unwrap();
        let e = RunbookSetup::from_config(&config)
            .resolve(&pool_exhaustion())
            .unwrap_err();
        assert!(e.contains("\"interval\" is \"soon\""), "{e}");
        assert!(e.contains("[runbooks.vars]"), "{e}");
    }
}
