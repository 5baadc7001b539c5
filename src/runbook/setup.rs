//! How a runbook is prepared for a run, whichever front end runs it: its variables resolved
//! (the command line's `--var`, this front end's values, then the config's `[runbooks.vars]`,
//! the environment, the defaults; the one resolver of every front end), the duration fields
//! that name a variable bound, and the plan shown before anything runs. The controls of the
//! runs in progress live here too, so a console can pause or abort any of them.

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
    /// The config file those came from, for errors.
    pub config_file: Option<PathBuf>,
    /// Environment variables this front end was handed, read before the process's own (an
    /// embedding or a test passes a secret without changing the process's environment).
    pub env: Vec<(String, String)>,
    pub(crate) controls: Arc<Mutex<HashMap<String, watch::Sender<Control>>>>,
}

impl RunbookSetup {
    pub fn new(dirs: Vec<PathBuf>, vars: Vec<(String, String)>) -> Self {
        RunbookSetup {
            dirs,
            vars,
            config_vars: Vec::new(),
            config_file: None,
            env: Vec::new(),
            controls: Arc::default(),
        }
    }

    /// The runbook directories `warroom runbook list` searches (the XDG config dir's, the
    /// config's, `./runbooks/`) and the config's `[runbooks.vars]`, with no console values.
    pub fn from_config(config: &crate::config::Config) -> Self {
        RunbookSetup::new(Self::config_dirs(config), Vec::new()).with_config_vars(config)
    }

    /// Where a console, a rehearsal and `warroom runbook` look for runbooks: one list, so a
    /// runbook `runbook list` shows is one `gameday --play` and the console find.
    pub fn config_dirs(config: &crate::config::Config) -> Vec<PathBuf> {
        crate::runbook::catalog::search_dirs(config.runbook_dir.as_deref(), None)
    }

    /// The same setup with the config's `[runbooks.vars]` under this console's own values.
    pub fn with_config_vars(mut self, config: &crate::config::Config) -> Self {
        self.config_vars = config.runbook_vars.clone();
        self.config_file = config.file.clone();
        self
    }

    /// `rb` with its variables resolved and the duration fields that name a variable set:
    /// what a run or a plan uses.
    pub fn bind(&self, rb: &Runbook) -> Result<(Runbook, vars::Resolved), String> {
        self.bind_given(rb, &[], vars::Purpose::Run)
    }

    /// [`Self::bind`] with the command line's `--var KEY=VALUE` on top.
    pub fn bind_given(
        &self,
        rb: &Runbook,
        given: &[String],
        purpose: vars::Purpose,
    ) -> Result<(Runbook, vars::Resolved), String> {
        let resolved = (self.resolve_for(rb, given, purpose)).map_err(|e| e.to_string())?;
        let text = super::catalog::text(rb)?;
        let bound =
            super::load::bind_text(rb, &text, &resolved.values).map_err(|d| d.to_string())?;
        Ok((bound, resolved))
    }

    /// Resolve `rb`'s variables in the order above.
    pub fn resolve(&self, rb: &Runbook) -> Result<vars::Resolved, ResolveError> {
        self.resolve_given(rb, &[])
    }

    /// Resolve `rb`'s variables with `given` (the command line's `--var KEY=VALUE`) first:
    /// unlike this front end's own values, each must name a variable `rb` declares.
    pub fn resolve_given(
        &self,
        rb: &Runbook,
        given: &[String],
    ) -> Result<vars::Resolved, ResolveError> {
        self.resolve_for(rb, given, vars::Purpose::Run)
    }

    /// [`RunbookSetup::resolve_given`], for a run or for a plan (which lets a secret be unset).
    pub fn resolve_for(
        &self,
        rb: &Runbook,
        given: &[String],
        purpose: vars::Purpose,
    ) -> Result<vars::Resolved, ResolveError> {
        // Later overrides win in `vars::resolve`: the config first, then this front end's
        // values, then the command line's.
        let declared = |k: &str| rb.variables.iter().any(|v| v.name == k && !v.secret);
        let mut overrides = overrides_for(&self.config_vars, rb)?;
        overrides.extend(
            (self.vars.iter())
                .filter(|(k, _)| declared(k))
                .map(|(k, v)| format!("{k}={v}")),
        );
        overrides.extend(given.iter().cloned());
        let env = |k: &str| {
            (self.env.iter().find(|(name, _)| name == k))
                .map(|(_, v)| v.clone())
                .or_else(|| std::env::var(k).ok())
        };
        vars::resolve_for(rb, &overrides, env, purpose).map_err(|error| {
            let Some(name) = error.name() else {
                return ResolveError::Var(error);
            };
            let set_later = self.vars.iter().any(|(k, _)| k == name && declared(k))
                || (given.iter()).any(|g| g.split_once('=').is_some_and(|(k, _)| k.trim() == name));
            if self.config_vars.iter().any(|(k, _)| k == name) && !set_later {
                ResolveError::FromConfig {
                    error,
                    file: self.config_file.clone(),
                }
            } else {
                ResolveError::Var(error)
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

/// Why a runbook's variables cannot be resolved, and where the refused value came from.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// `[runbooks.vars]` sets a secret variable: its value belongs in its environment variable.
    #[error(
        "[runbooks.vars] {name}: variable \"{name}\" of runbook \"{runbook}\" is secret: remove it from warroom.toml and set the environment variable \"{env}\""
    )]
    SecretInConfig {
        name: String,
        runbook: String,
        env: String,
    },
    /// The config's value for a variable is refused.
    #[error("{error} (set in [runbooks.vars]{})", of_file(.file.as_deref()))]
    FromConfig {
        error: vars::VarError,
        file: Option<PathBuf>,
    },
    /// A value from the command line, the front end, the environment, or none at all.
    #[error(transparent)]
    Var(#[from] vars::VarError),
}

fn of_file(file: Option<&std::path::Path>) -> String {
    file.map(|f| format!(" of \"{}\"", f.display()))
        .unwrap_or_default()
}

/// The config's values for the variables `rb` declares, as `KEY=VALUE` overrides. A name `rb`
/// does not declare is left out: it belongs to another runbook. A secret variable is refused:
/// its value belongs in its environment variable, never in the config file.
pub fn overrides_for(vars: &[(String, String)], rb: &Runbook) -> Result<Vec<String>, ResolveError> {
    let mut out = Vec::new();
    for (k, v) in vars {
        let Some(var) = rb.variables.iter().find(|x| &x.name == k) else {
            continue;
        };
        if var.secret {
            return Err(ResolveError::SecretInConfig {
                name: k.clone(),
                runbook: rb.name.clone(),
                env: var.env.clone().unwrap_or_default(),
            });
        }
        out.push(format!("{k}={v}"));
    }
    Ok(out)
}

/// The names in `vars` that none of `runbooks` declares (`warroom runbook check` says so).
pub fn undeclared<'a>(vars: &'a [(String, String)], runbooks: &[Runbook]) -> Vec<&'a str> {
    vars.iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| {
            !runbooks
                .iter()
                .any(|rb| rb.variables.iter().any(|v| v.name == *k))
        })
        .collect()
}

/// The plan of `rb`: variables resolved, batch targets asked of `source` (a dry probe: no
/// request that changes anything, no process).
pub async fn prepare_plan(
    rb: &Runbook,
    setup: &RunbookSetup,
    source: Arc<dyn Source>,
    clock: SharedClock,
) -> Result<Plan, String> {
    // A plan to read: a secret not set yet shows as `<not set>` (the run dialog asks for it).
    let (bound, resolved) = setup.bind_given(rb, &[], vars::Purpose::Plan)?;
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
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"interval\" is \"soon\""), "{e}");
        assert!(e.contains("[runbooks.vars]"), "{e}");
    }

    #[test]
    fn the_command_line_wins_over_the_config_which_wins_over_defaults() {
        let cfg = Config::parse(
            "w.toml",
            "[runbooks.vars]\nwindow = \"3s\"\ninterval = \"1s\"\nunrelated = \"x\"\n",
        )
        .unwrap();
        let setup = RunbookSetup::from_config(&cfg);
        let rb = pool_exhaustion();
        let r = setup.resolve_given(&rb, &["window=9s".into()]).unwrap();
        assert_eq!(r.values["window"], "9s");
        assert_eq!(r.values["interval"], "1s");
        assert_eq!(r.values["soak"], "2m");
        // A bad value from the config says where it came from; from --var it does not.
        let mut bad = Config::parse("w.toml", "[runbooks.vars]\ninterval = \"soon\"\n").unwrap();
        bad.file = Some("w.toml".into());
        let e = RunbookSetup::from_config(&bad).resolve(&rb).unwrap_err();
        assert!(
            matches!(&e, ResolveError::FromConfig { file: Some(f), .. } if f.ends_with("w.toml")),
            "{e:?}"
        );
        let e = e.to_string();
        assert!(
            e.contains("\"soon\"") && e.contains("(set in [runbooks.vars] of \"w.toml\")"),
            "{e}"
        );
        let e = setup
            .resolve_given(&rb, &["interval=never".into()])
            .unwrap_err();
        assert!(matches!(e, ResolveError::Var(_)), "{e:?}");
        let e = e.to_string();
        assert!(
            e.contains("\"never\"") && !e.contains("[runbooks.vars]"),
            "{e}"
        );
        // The config's bad value overridden on the command line is not blamed on the config.
        let r = RunbookSetup::from_config(&bad).resolve_given(&rb, &["interval=2s".into()]);
        assert_eq!(r.unwrap().values["interval"], "2s");
        // Unknown names on the command line are still refused; unknown config names ignored.
        let e = setup
            .resolve_given(&rb, &["unrelated=1".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("no variable \"unrelated\""), "{e}");
    }

    #[test]
    fn only_declared_variables_apply_and_secrets_are_refused() {
        let rb = crate::runbook::load::parse(
            "r.toml",
            std::path::Path::new("r.toml"),
            "name = \"r\"\ndescription = \"d\"\n[variables]\nbase_url = { default = \"http://x\" }\ntoken = { secret = true, env = \"TOKEN\" }\n[[step]]\nid = \"n\"\nkind = \"note\"\ntext = \"{{base_url}}\"\n",
        )
        .unwrap();
        let vars = vec![
            ("base_url".to_string(), "http://y".to_string()),
            ("other".into(), "1".into()),
        ];
        assert_eq!(
            overrides_for(&vars, &rb).unwrap(),
            vec!["base_url=http://y".to_string()]
        );
        assert_eq!(undeclared(&vars, std::slice::from_ref(&rb)), vec!["other"]);
        let e = overrides_for(&[("token".into(), "s3cret".into())], &rb).unwrap_err();
        assert!(matches!(&e, ResolveError::SecretInConfig { name, .. } if name == "token"));
        let e = e.to_string();
        assert!(e.contains("is secret") && e.contains("\"TOKEN\""), "{e}");
        assert!(!e.contains("s3cret"), "{e}");
        // A front end's value for a secret is never used.
        let front = RunbookSetup::new(vec![], vec![("token".into(), "s3cret".into())]);
        let r = front.resolve(&rb);
        assert!(r.is_err_and(|e| !e.to_string().contains("s3cret")));
        // The environment it was handed is read for the secret's variable, and masked.
        let mut handed = RunbookSetup::new(vec![], vec![]);
        handed.env = vec![("TOKEN".into(), "s3cret".into())];
        let r = handed.resolve(&rb).unwrap();
        assert_eq!(r.values.get("token").map(String::as_str), Some("s3cret"));
        assert_eq!(r.masker.mask("token s3cret"), "token ***");
    }
}
