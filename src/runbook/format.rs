//! The runbook file as TOML spells it: every field optional or spanned so that `load` can say
//! exactly where a problem is. Unknown keys are errors (`deny_unknown_fields`).

use serde::Deserialize;
use serde_spanned::Spanned;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRunbook {
    pub name: Spanned<String>,
    pub description: Option<String>,
    #[serde(default)]
    pub variables: BTreeMap<Spanned<String>, Spanned<RawVariable>>,
    #[serde(default)]
    pub step: Vec<Spanned<RawStep>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawVariable {
    pub default: Option<String>,
    pub description: Option<String>,
    #[serde(default)]
    pub secret: bool,
    pub env: Option<Spanned<String>>,
    #[serde(rename = "type")]
    pub kind: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawKind {
    Check,
    Wait,
    Http,
    Exec,
    Batch,
    Manual,
    Note,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStep {
    pub id: Spanned<String>,
    pub kind: Spanned<RawKind>,
    pub title: Option<String>,
    pub mutating: Option<bool>,
    // check, wait, batch
    pub gate: Option<Spanned<RawGate>>,
    // wait, http, exec
    pub timeout: Option<Spanned<String>>,
    // http
    pub method: Option<Spanned<String>>,
    pub url: Option<Spanned<String>>,
    pub headers: Option<BTreeMap<String, Spanned<String>>>,
    pub json: Option<Spanned<toml::Value>>,
    pub deadline: Option<Spanned<String>>,
    // exec
    pub argv: Option<Spanned<Vec<Spanned<String>>>>,
    pub grace: Option<Spanned<String>>,
    // manual, note
    pub text: Option<Spanned<String>>,
    // batch
    pub targets: Option<Spanned<Vec<String>>>,
    pub targets_query: Option<Spanned<String>>,
    pub target_label: Option<Spanned<String>>,
    pub size: Option<Spanned<i64>>,
    pub percent: Option<Spanned<i64>>,
    pub max_unavailable: Option<Spanned<i64>>,
    pub failure_budget: Option<Spanned<i64>>,
    pub soak: Option<Spanned<String>>,
    pub settle: Option<Spanned<String>>,
    pub instance_deadline: Option<Spanned<String>>,
    pub action: Option<Spanned<RawAction>>,
    pub instance: Option<Spanned<RawGate>>,
}

impl RawStep {
    /// The kind-specific fields present, with their spans (for "not allowed in a … step").
    pub fn present_fields(&self) -> Vec<(&'static str, std::ops::Range<usize>)> {
        let mut v = Vec::new();
        macro_rules! field {
            ($($f:ident),*) => {$(
                if let Some(x) = &self.$f { v.push((stringify!($f), x.span())); }
            )*};
        }
        field!(
            gate,
            timeout,
            method,
            url,
            json,
            deadline,
            argv,
            grace,
            text,
            targets,
            targets_query,
            target_label,
            size,
            percent,
            max_unavailable,
            failure_budget,
            soak,
            settle,
            instance_deadline,
            action,
            instance
        );
        if let Some(h) = &self.headers
            && let Some((_, first)) = h.iter().next()
        {
            v.push(("headers", first.span()));
        }
        v
    }
}

/// The fields each kind accepts besides `id`, `kind`, `title`, `mutating`.
pub(crate) fn allowed_fields(kind: RawKind) -> &'static [&'static str] {
    match kind {
        RawKind::Check => &["gate"],
        RawKind::Wait => &["gate", "timeout"],
        RawKind::Http => &["method", "url", "headers", "json", "timeout", "deadline"],
        RawKind::Exec => &["argv", "timeout", "grace"],
        RawKind::Batch => &[
            "targets",
            "targets_query",
            "target_label",
            "size",
            "percent",
            "max_unavailable",
            "failure_budget",
            "soak",
            "settle",
            "instance_deadline",
            "deadline",
            "action",
            "instance",
            "gate",
        ],
        RawKind::Manual | RawKind::Note => &["text"],
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAction {
    pub method: Option<Spanned<String>>,
    pub url: Option<Spanned<String>>,
    pub headers: Option<BTreeMap<String, Spanned<String>>>,
    pub json: Option<Spanned<toml::Value>>,
    pub argv: Option<Spanned<Vec<Spanned<String>>>>,
    pub timeout: Option<Spanned<String>>,
    pub deadline: Option<Spanned<String>>,
    pub grace: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGate {
    pub query: Option<Spanned<String>>,
    pub above: Option<Spanned<f64>>,
    pub below: Option<Spanned<f64>>,
    pub between: Option<Spanned<Vec<f64>>>,
    pub series: Option<Spanned<String>>,
    pub consecutive: Option<Spanned<i64>>,
    pub failure_limit: Option<Spanned<i64>>,
    pub inconclusive_limit: Option<Spanned<i64>>,
    pub error_limit: Option<Spanned<i64>>,
    pub min_samples: Option<Spanned<i64>>,
    pub interval: Option<Spanned<String>>,
}
