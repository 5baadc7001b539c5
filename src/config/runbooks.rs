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
}
