//! How a runbook is prepared for a run, whichever front end runs it: its variables resolved
//! (this front end's values, then the config's `[runbooks.vars]`, the environment, the
//! defaults), the duration fields that name a variable bound, and the plan shown before
//! anything runs. The controls of the runs in progress live here too, so a console can pause
//! or abort any of them.

use super::executor::Control;
use super::model::{Runbook, StepKind};
use super::{plan, vars};
use crate::clock::SharedClock;
use crate::metrics::Source;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// A plan ready to show.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub lines: Vec<String>,
    /// Batches per batch step, from the targets known now.
    pub batches: BTreeMap<String, usize>,
    /// Each step's title with the variables filled in (secrets masked), as the run shows it.
    pub titles: BTreeMap<String, String>,
    /// The variables' values as resolved (secrets masked), for a front end to show and edit.
    pub values: BTreeMap<String, String>,
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
    pub(crate) controls: Arc<Mutex<HashMap<String, watch::Sender<Control>>>>,
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
        let text = super::catalog::text(rb)?;
        let bound =
            super::load::bind_text(rb, &text, &resolved.values).map_err(|d| d.to_string())?;
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
    let probe = super::launch::executor(rb, resolved.clone(), Some(source), "plan", clock)
        .map_err(|e| e.to_string())?;
    let targets = super::launch::probe_targets(&probe).await;
    let mut batches = BTreeMap::new();
    for s in &rb.steps {
        if let (StepKind::Batch(b), Some(t)) = (&s.kind, targets.get(&s.id)) {
            let size = b.size.resolve(t.len());
            batches.insert(s.id.clone(), t.len().div_ceil(size.max(1)));
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
        values: resolved.shown.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use std::time::Duration;

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
        assert_eq!(resolved.values["soak"], "2m", "defaults stay");
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
