//! Durations: literal (`"15s"`) or a whole-field reference to a duration variable
//! (`"{{soak}}"`), which takes the run's value when the runbook is bound to its variables.

use super::super::model::*;
use super::{Checker, parse_with};
use crate::diagnostic::{Diagnostic, Diagnostics};
use serde_spanned::Spanned;
use std::collections::BTreeMap;
use std::time::Duration;

/// The runbook `rb` with the duration fields that name a variable set from `values` (the
/// resolved variables of a run). The file is read again; its hash must not have changed.
pub fn bind(rb: &Runbook, values: &BTreeMap<String, String>) -> Result<Runbook, Diagnostics> {
    if !rb.variables.iter().any(|v| v.kind == VarKind::Duration) {
        return Ok(rb.clone());
    }
    let name = rb.file.display().to_string();
    let source = super::read_again(&rb.file)
        .map_err(|e| Diagnostics(vec![Diagnostic::at(&name, "", None, e)]))?;
    bind_text(rb, &source, values)
}

/// [`bind`] with the runbook's text given (a runbook built into the binary has no file).
pub fn bind_text(
    rb: &Runbook,
    source: &str,
    values: &BTreeMap<String, String>,
) -> Result<Runbook, Diagnostics> {
    if !rb.variables.iter().any(|v| v.kind == VarKind::Duration) {
        return Ok(rb.clone());
    }
    let name = rb.file.display().to_string();
    let bound = parse_with(&name, &rb.file, source, values)?;
    if bound.hash != rb.hash {
        return Err(Diagnostics(vec![Diagnostic::at(
            &name,
            "",
            None,
            "the runbook changed while it was being prepared; run the command again",
        )]));
    }
    Ok(bound)
}

impl Checker<'_> {
    pub(super) fn duration(&mut self, d: &Option<Spanned<String>>, default: Duration) -> Duration {
        let Some(d) = d else { return default };
        let written = d.get_ref().trim();
        let var = written
            .strip_prefix("{{")
            .and_then(|t| t.strip_suffix("}}"))
            .map(str::trim);
        let (text, from) = match var {
            None => (written.to_string(), String::new()),
            Some(name) => {
                match (self.typed.get(name), self.values.get(name)) {
                    (Some(VarKind::Duration), Some(v)) => {
                        (v.clone(), format!(" (the value of variable \"{name}\")"))
                    }
                    (Some(VarKind::Duration), None) => {
                        self.err(
                        d.span(),
                        format!("variable \"{name}\" has no value; give it a default such as \"15s\""),
                    );
                        return default;
                    }
                    _ => {
                        self.err(
                        d.span(),
                        format!(
                            "\"{name}\" is not a duration variable; expected a variable declared with type = \"duration\""
                        ),
                    );
                        return default;
                    }
                }
            }
        };
        match humantime::parse_duration(&text) {
            Ok(x) if !x.is_zero() => x,
            _ => {
                self.err(
                    d.span(),
                    format!(
                        "\"{text}\"{from} is not a duration; expected a positive duration such as \"10s\", \"2m\" or \"1h 30m\""
                    ),
                );
                default
            }
        }
    }
}
