//! Variable values for a run: `--var` overrides, then the environment (for variables that name
//! one), then the runbook's default. Secret values go into the [`Masker`] at once.

use super::mask::{MASK, Masker};
use super::model::Runbook;
use super::template::Values;
use std::collections::BTreeMap;

/// Why the variables cannot be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VarError {
    #[error("--var \"{0}\" is not KEY=VALUE; expected e.g. --var base_url=http://127.0.0.1:9187")]
    Malformed(String),
    #[error("--var \"{0}\": the runbook has no variable \"{0}\"; it has: {1}")]
    Unknown(String, String),
    #[error("variable \"{0}\" has no value; set it with --var {0}=VALUE{1}")]
    Missing(String, String),
    #[error("variable \"{0}\" is \"{1}\"; expected a {2}")]
    BadValue(String, String, String),
    #[error(
        "variable \"{0}\" is secret: set it in the environment variable \"{1}\", never on the command line"
    )]
    SecretOnCommandLine(String, String),
}

impl VarError {
    /// The variable the error is about (none for a malformed `KEY=VALUE`).
    pub fn name(&self) -> Option<&str> {
        match self {
            VarError::Malformed(_) => None,
            VarError::Unknown(n, _)
            | VarError::Missing(n, _)
            | VarError::BadValue(n, _, _)
            | VarError::SecretOnCommandLine(n, _) => Some(n),
        }
    }
}

/// What a plan shows for a secret variable that has no value yet.
pub const NOT_SET: &str = "<not set>";

/// Resolved values and the masker that hides the secret ones.
#[derive(Clone)]
pub struct Resolved {
    pub values: Values,
    pub masker: Masker,
    /// Values to show or record: secrets replaced by the mask.
    pub shown: BTreeMap<String, String>,
    /// Secret variables left without a value (only when resolved for a plan, which shows them
    /// as [`NOT_SET`]): each with the environment variable that would give it.
    pub unset: Vec<(String, Option<String>)>,
}

impl std::fmt::Debug for Resolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolved")
            .field("values", &self.shown)
            .finish()
    }
}

/// What the values are resolved for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A run (or a check): every variable needs a value.
    Run,
    /// A plan to read: a secret without a value is shown as [`NOT_SET`] and listed as needed.
    Plan,
}

/// Resolve `overrides` (`KEY=VALUE`) against the runbook for a run; `env` reads the
/// environment.
pub fn resolve(
    rb: &Runbook,
    overrides: &[String],
    env: impl Fn(&str) -> Option<String>,
) -> Result<Resolved, VarError> {
    resolve_for(rb, overrides, env, Purpose::Run)
}

/// [`resolve`], for a run or for a plan (where a secret may stay unset).
pub fn resolve_for(
    rb: &Runbook,
    overrides: &[String],
    env: impl Fn(&str) -> Option<String>,
    purpose: Purpose,
) -> Result<Resolved, VarError> {
    let mut given = BTreeMap::new();
    for o in overrides {
        let Some((k, v)) = o.split_once('=') else {
            return Err(VarError::Malformed(crate::sanitize::line(o).into_owned()));
        };
        let k = k.trim();
        let Some(var) = rb.variables.iter().find(|x| x.name == k) else {
            let names: Vec<&str> = rb.variables.iter().map(|x| x.name.as_str()).collect();
            return Err(VarError::Unknown(
                crate::sanitize::line(k).into_owned(),
                names.join(", "),
            ));
        };
        if var.secret {
            return Err(VarError::SecretOnCommandLine(
                var.name.clone(),
                var.env.clone().unwrap_or_default(),
            ));
        }
        given.insert(k.to_string(), v.to_string());
    }
    let mut values = Values::new();
    let mut masker = Masker::new();
    let mut shown = BTreeMap::new();
    let mut unset = Vec::new();
    for v in &rb.variables {
        let value = given
            .remove(&v.name)
            .or_else(|| v.env.as_deref().and_then(&env))
            .or_else(|| v.default.clone());
        if value.is_none() && v.secret && purpose == Purpose::Plan {
            unset.push((v.name.clone(), v.env.clone()));
            shown.insert(v.name.clone(), NOT_SET.to_string());
            values.insert(v.name.clone(), NOT_SET.to_string());
            continue;
        }
        let Some(value) = value else {
            let hint = v
                .env
                .as_ref()
                .map(|e| format!(" or the environment variable {e}"))
                .unwrap_or_default();
            return Err(VarError::Missing(v.name.clone(), hint));
        };
        if !super::load::kind_accepts(v.kind, &value) {
            let shown = if v.secret {
                super::mask::MASK.to_string()
            } else {
                Masker::new().mask(&crate::sanitize::line(&value))
            };
            return Err(VarError::BadValue(
                v.name.clone(),
                shown,
                format!("{:?}", v.kind).to_lowercase(),
            ));
        }
        if v.secret {
            masker.add(&value);
            shown.insert(v.name.clone(), MASK.to_string());
        } else {
            shown.insert(v.name.clone(), value.clone());
        }
        values.insert(v.name.clone(), value);
    }
    // A value that holds a secret of another kind (a DSN with `password=…`, a URL with one)
    // is shown and recorded masked too.
    for v in shown.values_mut() {
        *v = masker.mask(v);
    }
    Ok(Resolved {
        values,
        masker,
        shown,
        unset,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DSN or URL given in an ordinary variable may carry a password: it is shown (and so
    /// recorded in the run's file) masked.
    #[test]
    fn a_password_inside_an_ordinary_value_is_shown_masked() {
        let src = "name = \"t\"\n[variables]\npg = { default = \"host=h dbname=d\" }\nurl = { default = \"http://h\" }\n\n[[step]]\nid = \"n\"\nkind = \"note\"\ntext = \"x\"\n";
        let rb = super::super::load::parse("t.toml", std::path::Path::new("t.toml"), src).unwrap();
        let given = [
            "pg=host=h user=app password=hunter2-canary dbname=d".to_string(),
            "url=postgresql://app:hunter3-canary@h/d".to_string(),
        ];
        let r = resolve(&rb, &given, |_| None).unwrap();
        let shown = format!("{:?} {:?}", r.shown, r);
        assert!(!shown.contains("canary"), "{shown}");
        assert_eq!(r.shown["pg"], "host=h user=app password=*** dbname=d");
        assert_eq!(r.shown["url"], "postgresql://app:***@h/d");
        // The value itself is untouched: the step needs it.
        assert!(r.values["pg"].contains("hunter2-canary"));
    }
}
