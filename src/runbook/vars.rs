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

/// Resolved values and the masker that hides the secret ones.
#[derive(Clone)]
pub struct Resolved {
    pub values: Values,
    pub masker: Masker,
    /// Values to show or record: secrets replaced by the mask.
    pub shown: BTreeMap<String, String>,
}

impl std::fmt::Debug for Resolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolved")
            .field("values", &self.shown)
            .finish()
    }
}

/// Resolve `overrides` (`KEY=VALUE`) against the runbook; `env` reads the environment.
pub fn resolve(
    rb: &Runbook,
    overrides: &[String],
    env: impl Fn(&str) -> Option<String>,
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
    for v in &rb.variables {
        let value = given
            .remove(&v.name)
            .or_else(|| v.env.as_deref().and_then(&env))
            .or_else(|| v.default.clone());
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
                crate::sanitize::line(&value).into_owned()
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
    Ok(Resolved {
        values,
        masker,
        shown,
    })
}
