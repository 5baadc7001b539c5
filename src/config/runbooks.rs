//! `[runbooks]`: where the console and `warroom runbook` find runbooks besides the shipped ones,
//! and variable values for every runbook that declares the variable.
//!
//! ```toml
//! [runbooks]
//! dir = "ops/runbooks"          # the older top-level `runbook_dir` still works (not both)
//!
//! [runbooks.vars]
//! base_url = "http://127.0.0.1:9187"
//! interval = "2s"
//! retries_enabled = false       # strings, booleans and numbers; written as text
//! ```
//!
//! A value overrides the variable's default (and its environment variable) in every runbook
//! that declares a variable of that name; a runbook without it ignores it, because one config
//! serves many runbooks. `--var` on the command line wins over the config. Secret variables
//! cannot be set here: secrets are never written in this file.

use serde::Deserialize;
use serde_spanned::Spanned;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::PathBuf;

/// The `[runbooks]` section, validated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunbooksConfig {
    pub dir: Option<PathBuf>,
    /// `[runbooks.vars]` in name order, values as text.
    pub vars: Vec<(String, String)>,
}

/// `[runbooks]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRunbooks {
    dir: Option<Spanned<PathBuf>>,
    #[serde(default)]
    vars: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
}

impl RawRunbooks {
    /// Checks the section; `runbook_dir` is the top-level key, which may not be set as well.
    pub(super) fn validate(
        self,
        runbook_dir: Option<&Spanned<PathBuf>>,
    ) -> Result<RunbooksConfig, (Range<usize>, String)> {
        if let (Some(dir), Some(_)) = (&self.dir, runbook_dir) {
            return Err((
                dir.span(),
                "[runbooks] dir and the top-level runbook_dir are both set: keep one (runbook_dir is the older spelling of [runbooks] dir)".into(),
            ));
        }
        let mut vars = Vec::with_capacity(self.vars.len());
        for (name, value) in self.vars {
            if !valid_name(name.get_ref()) {
                return Err((
                    name.span(),
                    format!(
                        "[runbooks.vars]: \"{}\" cannot be a variable name; expected letters, digits, '_' or '-'",
                        crate::sanitize::line(name.get_ref())
                    ),
                ));
            }
            let span = value.span();
            let text = match value.into_inner() {
                toml::Value::String(s) => s,
                toml::Value::Boolean(b) => b.to_string(),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(f) => f.to_string(),
                other => {
                    let what = match other {
                        toml::Value::Array(_) => "an array",
                        toml::Value::Table(_) => "a table",
                        _ => "a date",
                    };
                    return Err((
                        span,
                        format!(
                            "[runbooks.vars] {}: {what} is not a variable value; expected a string, a boolean or a number, e.g. {} = \"2s\"",
                            name.get_ref(),
                            name.get_ref()
                        ),
                    ));
                }
            };
            vars.push((name.into_inner(), text));
        }
        Ok(RunbooksConfig {
            dir: self.dir.map(Spanned::into_inner),
            vars,
        })
    }
}

/// The names runbooks accept for variables (`load.rs` checks the same in a runbook).
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The config's values for the variables `rb` declares, as `KEY=VALUE` overrides (in front of
/// any `--var`, which therefore win). A name `rb` does not declare is left out: it belongs to
/// another runbook. A secret variable is refused: its value belongs in its environment
/// variable, never in the config file.
pub fn overrides_for(
    vars: &[(String, String)],
    rb: &crate::runbook::model::Runbook,
) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for (k, v) in vars {
        let Some(var) = rb.variables.iter().find(|x| &x.name == k) else {
            continue;
        };
        if var.secret {
            return Err(format!(
                "[runbooks.vars] {k}: variable \"{k}\" of runbook \"{}\" is secret: remove it from warroom.toml and set the environment variable \"{}\"",
                rb.name,
                var.env.as_deref().unwrap_or_default()
            ));
        }
        out.push(format!("{k}={v}"));
    }
    Ok(out)
}

/// The names in `vars` that none of `runbooks` declares (`warroom runbook check` says so).
pub fn undeclared<'a>(
    vars: &'a [(String, String)],
    runbooks: &[crate::runbook::model::Runbook],
) -> Vec<&'a str> {
    vars.iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| {
            !runbooks
                .iter()
                .any(|rb| rb.variables.iter().any(|v| v.name == *k))
        })
        .collect()
}

/// `rb`'s variables for `warroom runbook plan/run`: `--var` (`cli`) first, then the config's
/// `[runbooks.vars]` for the variables `rb` declares, then the environment and the defaults.
/// A bad value that came from the config says so, and where.
pub fn resolve(
    cfg: &super::Config,
    rb: &crate::runbook::model::Runbook,
    cli: &[String],
) -> Result<crate::runbook::vars::Resolved, String> {
    // Later overrides win in `vars::resolve`: the config first, `--var` after.
    let mut overrides = overrides_for(&cfg.runbook_vars, rb)?;
    overrides.extend(cli.iter().cloned());
    crate::runbook::vars::resolve(rb, &overrides, |k| std::env::var(k).ok()).map_err(|e| {
        let e = e.to_string();
        let from_config = cfg.runbook_vars.iter().any(|(k, _)| {
            e.contains(&format!("\"{k}\"")) && !cli.iter().any(|c| c.starts_with(&format!("{k}=")))
        });
        match (from_config, &cfg.file) {
            (true, Some(f)) => format!("{e} (set in [runbooks.vars] of \"{}\")", f.display()),
            (true, None) => format!("{e} (set in [runbooks.vars])"),
            _ => e,
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, ConfigError};

    fn err(text: &str) -> String {
        match Config::parse("w.toml", text) {
            Err(ConfigError::Invalid(d)) => d.to_string(),
            other => panic!("expected an error for {text:?}, got {other:?}"),
        }
    }

    #[test]
    fn vars_of_every_kind_become_text_and_the_dir_is_kept() {
        let c = Config::parse(
            "w.toml",
            "[runbooks]\ndir = \"ops\"\n[runbooks.vars]\nbase_url = \"http://127.0.0.1:1\"\nretries_enabled = false\nbatch = 3\n",
        )
        .unwrap();
        assert_eq!(c.runbook_dir, Some("ops".into()));
        assert_eq!(
            c.runbook_vars,
            vec![
                ("base_url".to_string(), "http://127.0.0.1:1".to_string()),
                ("batch".into(), "3".into()),
                ("retries_enabled".into(), "false".into()),
            ]
        );
    }

    #[test]
    fn the_old_runbook_dir_still_works_alone() {
        let c = Config::parse("w.toml", "runbook_dir = \"old\"\n").unwrap();
        assert_eq!(c.runbook_dir, Some("old".into()));
        assert!(c.runbook_vars.is_empty());
        let c = Config::parse(
            "w.toml",
            "runbook_dir = \"old\"\n[runbooks.vars]\nx = \"1\"\n",
        )
        .unwrap();
        assert_eq!(c.runbook_dir, Some("old".into()));
        assert_eq!(c.runbook_vars.len(), 1);
    }

    #[test]
    fn errors_point_at_the_line_and_say_what_to_do() {
        let e = err("runbook_dir = \"a\"\n[runbooks]\ndir = \"b\"\n");
        assert!(e.starts_with("w.toml:3:7:"), "{e}");
        assert!(e.contains("keep one"), "{e}");
        let e = err("[runbooks.vars]\nwindow = [\"1m\"]\n");
        assert!(e.starts_with("w.toml:2:10:"), "{e}");
        assert!(
            e.contains("expected a string, a boolean or a number"),
            "{e}"
        );
        let e = err("[runbooks.vars]\n\"bad name\" = \"x\"\n");
        assert!(e.starts_with("w.toml:2:1:"), "{e}");
        assert!(e.contains("cannot be a variable name"), "{e}");
        let e = err("[runbooks]\nvariables = {}\n");
        assert!(e.starts_with("w.toml:2:"), "{e}");
    }

    fn pool_exhaustion() -> crate::runbook::model::Runbook {
        let (file, text) = crate::runbook::catalog::SHIPPED
            .iter()
            .find(|(f, _)| f.ends_with("pool-exhaustion.toml"))
            .unwrap();
        crate::runbook::load::parse(file, std::path::Path::new(file), text).unwrap()
    }

    #[test]
    fn the_command_line_wins_over_the_config_which_wins_over_defaults() {
        let cfg = Config::parse(
            "w.toml",
            "[runbooks.vars]\nwindow = \"3s\"\ninterval = \"1s\"\nunrelated = \"x\"\n",
        )
        .unwrap();
        let rb = pool_exhaustion();
        let r = super::resolve(&cfg, &rb, &["window=9s".into()]).unwrap();
        assert_eq!(r.values["window"], "9s");
        assert_eq!(r.values["interval"], "1s");
        assert_eq!(r.values["soak"], "2m");
        // A bad value from the config says where it came from; from --var it does not.
        let bad = Config::parse("w.toml", "[runbooks.vars]\ninterval = \"soon\"\n").unwrap();
        let e = super::resolve(&bad, &rb, &[]).unwrap_err();
        assert!(
            e.contains("\"soon\"") && e.contains("[runbooks.vars]"),
            "{e}"
        );
        let e = super::resolve(&cfg, &rb, &["interval=never".into()]).unwrap_err();
        assert!(
            e.contains("\"never\"") && !e.contains("[runbooks.vars]"),
            "{e}"
        );
        // Unknown names on the command line are still refused.
        let e = super::resolve(&cfg, &rb, &["unrelated=1".into()]).unwrap_err();
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
            super::overrides_for(&vars, &rb).unwrap(),
            vec!["base_url=http://y".to_string()]
        );
        assert_eq!(
            super::undeclared(&vars, std::slice::from_ref(&rb)),
            vec!["other"]
        );
        let e = super::overrides_for(&[("token".into(), "s3cret".into())], &rb).unwrap_err();
        assert!(e.contains("is secret") && e.contains("\"TOKEN\""), "{e}");
        assert!(!e.contains("s3cret"), "{e}");
    }
}
