//! The runbook file as TOML spells it: every field optional or spanned so that `load` can say
//! exactly where a problem is. Unknown keys are errors (`deny_unknown_fields`). A step's and a
//! batch action's fields are declared once, by `raw_step_and_action!`.

use serde::Deserialize;
use serde_spanned::Spanned;
use std::collections::BTreeMap;
use std::ops::Range;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRunbook {
    pub name: Spanned<String>,
    pub description: Option<String>,
    #[serde(default)]
    pub variables: BTreeMap<Spanned<String>, Spanned<RawVariable>>,
    #[serde(default)]
    pub step: Vec<Spanned<RawStep>>,
    pub applies: Option<Spanned<RawApplies>>,
}

/// `[applies]`: where the runbook acts and the symptom it answers (issue 30).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawApplies {
    pub on: Spanned<String>,
    pub symptom: Option<Spanned<RawGate>>,
    /// The symptom's reading in words (`label::Label`).
    pub label: Option<Spanned<String>>,
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

/// The kinds, as `kind = "…"` names them: the model's [`Kind`], declared once there.
pub(crate) use super::model::Kind as RawKind;

/// Declares [`RawStep`] and [`RawAction`] from one list of a step's fields, in the order a
/// runbook's error messages list them; those marked `act` are a batch action's too. A field
/// added here is in both structs, in `present_fields` (for "not allowed in a … step") and in
/// `as_action`.
macro_rules! raw_step_and_action {
    (@split [$($all:tt)*] [$($act:tt)*]) => {
        raw_step_and_action!(@emit [$($all)*] [$($act)*]);
    };
    (@split [$($all:tt)*] [$($act:tt)*] act $f:ident: $t:ty, $($rest:tt)*) => {
        raw_step_and_action!(@split [$($all)* $f: $t,] [$($act)* $f: $t,] $($rest)*);
    };
    (@split [$($all:tt)*] [$($act:tt)*] $f:ident: $t:ty, $($rest:tt)*) => {
        raw_step_and_action!(@split [$($all)* $f: $t,] [$($act)*] $($rest)*);
    };
    (@emit [$($f:ident: $t:ty,)+] [$($af:ident: $at:ty,)+]) => {
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct RawStep {
            pub id: Spanned<String>,
            pub kind: Spanned<RawKind>,
            pub title: Option<String>,
            pub mutating: Option<Spanned<bool>>,
            pub skippable: Option<Spanned<bool>>,
            pub precondition: Option<Spanned<bool>>,
            /// A precondition's reading in words (`label::Label`).
            pub label: Option<Spanned<String>>,
            $(pub $f: $t,)+
        }

        /// One action of a batch (`[step.action]`, or each of `[[step.actions]]`): the fields
        /// of an `http`, `exec`, `sql` or `haproxy` step. Without `kind`, `url` means http and
        /// `argv` exec.
        #[derive(Debug, Clone, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct RawAction {
            pub kind: Option<Spanned<RawKind>>,
            $(pub $af: $at,)+
        }

        impl RawStep {
            /// The kind-specific fields present, with their spans, in the file's order (for
            /// "not allowed in a … step").
            pub fn present_fields(&self) -> Vec<(&'static str, Range<usize>)> {
                let mut v = Vec::new();
                $(if let Some(span) = self.$f.field_span() { v.push((stringify!($f), span)); })+
                v.sort_by_key(|(_, span)| span.start);
                v
            }

            /// The acting fields of this step, as a batch action would carry them.
            pub fn as_action(&self) -> RawAction {
                RawAction {
                    kind: Some(self.kind.clone()),
                    $($af: self.$af.clone(),)+
                }
            }
        }

        impl RawAction {
            /// The fields present, with their spans, in the file's order.
            pub fn present_fields(&self) -> Vec<(&'static str, Range<usize>)> {
                let mut v = Vec::new();
                $(if let Some(span) = self.$af.field_span() { v.push((stringify!($af), span)); })+
                v.sort_by_key(|(_, span)| span.start);
                v
            }
        }

        /// Every kind-specific field of a step, by name.
        #[cfg(test)]
        const STEP_FIELDS: &[&str] = &[$(stringify!($f),)+];
    };
    ($($fields:tt)*) => {
        raw_step_and_action!(@split [] [] $($fields)*);
    };
}

/// Where a field present in the file is.
trait FieldSpan {
    fn field_span(&self) -> Option<Range<usize>>;
}

impl<T> FieldSpan for Option<Spanned<T>> {
    fn field_span(&self) -> Option<Range<usize>> {
        self.as_ref().map(Spanned::span)
    }
}

/// A table (`headers`) is where its first entry is.
impl FieldSpan for Option<BTreeMap<String, Spanned<String>>> {
    fn field_span(&self) -> Option<Range<usize>> {
        self.as_ref()?.values().next().map(Spanned::span)
    }
}

raw_step_and_action! {
    // check, wait, batch
    gate: Option<Spanned<RawGate>>,
    // wait, http, exec, haproxy
    act timeout: Option<Spanned<String>>,
    // http
    act method: Option<Spanned<String>>,
    act url: Option<Spanned<String>>,
    act headers: Option<BTreeMap<String, Spanned<String>>>,
    act json: Option<Spanned<toml::Value>>,
    act deadline: Option<Spanned<String>>,
    // exec
    act argv: Option<Spanned<Vec<Spanned<String>>>>,
    act grace: Option<Spanned<String>>,
    // manual, note
    text: Option<Spanned<String>>,
    // sql
    act dsn: Option<Spanned<String>>,
    act password: Option<Spanned<String>>,
    act password_env: Option<Spanned<String>>,
    act password_file: Option<Spanned<String>>,
    act statement: Option<Spanned<String>>,
    act statement_timeout: Option<Spanned<String>>,
    act read_only: Option<Spanned<bool>>,
    // sql, haproxy
    act expect: Option<Spanned<RawExpect>>,
    act wait: Option<Spanned<String>>,
    act interval: Option<Spanned<String>>,
    // haproxy
    act socket: Option<Spanned<String>>,
    act server: Option<Spanned<String>>,
    act state: Option<Spanned<String>>,
    act weight: Option<Spanned<toml::Value>>,
    act show: Option<Spanned<String>>,
    act backend: Option<Spanned<String>>,
    act drain_wait: Option<Spanned<String>>,
    // batch
    targets: Option<Spanned<Vec<String>>>,
    targets_query: Option<Spanned<String>>,
    target_label: Option<Spanned<String>>,
    targets_haproxy: Option<Spanned<RawHaproxyTargets>>,
    size: Option<Spanned<i64>>,
    percent: Option<Spanned<i64>>,
    max_unavailable: Option<Spanned<i64>>,
    failure_budget: Option<Spanned<i64>>,
    soak: Option<Spanned<String>>,
    settle: Option<Spanned<String>>,
    instance_deadline: Option<Spanned<String>>,
    action: Option<Spanned<RawAction>>,
    actions: Option<Spanned<Vec<Spanned<RawAction>>>>,
    instance: Option<Spanned<RawGate>>,
}

/// The fields of a `sql` step or action.
const SQL_FIELDS: &[&str] = &[
    "dsn",
    "password",
    "password_env",
    "password_file",
    "statement",
    "statement_timeout",
    "read_only",
    "deadline",
    "expect",
    "wait",
    "interval",
];

/// The fields of an `haproxy` step or action.
const HAPROXY_FIELDS: &[&str] = &[
    "socket",
    "server",
    "state",
    "weight",
    "show",
    "backend",
    "drain_wait",
    "timeout",
    "expect",
    "wait",
    "interval",
];

/// The fields each kind accepts besides `id`, `kind`, `title`, `mutating`, `skippable`.
pub(crate) fn allowed_fields(kind: RawKind) -> &'static [&'static str] {
    match kind {
        RawKind::Check => &["gate"],
        RawKind::Wait => &["gate", "timeout"],
        RawKind::Http => &["method", "url", "headers", "json", "timeout", "deadline"],
        RawKind::Exec => &["argv", "timeout", "grace"],
        RawKind::Sql => SQL_FIELDS,
        RawKind::Haproxy => HAPROXY_FIELDS,
        RawKind::Batch => &[
            "targets",
            "targets_query",
            "target_label",
            "targets_haproxy",
            "size",
            "percent",
            "max_unavailable",
            "failure_budget",
            "soak",
            "settle",
            "instance_deadline",
            "deadline",
            "action",
            "actions",
            "instance",
            "gate",
        ],
        RawKind::Manual | RawKind::Note => &["text"],
    }
}

/// A condition on a `sql` or `haproxy show` result.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawExpect {
    pub column: Option<Spanned<String>>,
    #[serde(rename = "where")]
    pub filter: Option<BTreeMap<String, Spanned<toml::Value>>>,
    pub each: Option<Spanned<bool>>,
    pub above: Option<Spanned<f64>>,
    pub below: Option<Spanned<f64>>,
    pub between: Option<Spanned<Vec<f64>>>,
    pub equals: Option<Spanned<toml::Value>>,
}

/// A batch's targets from HAProxy: the servers of one backend.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawHaproxyTargets {
    pub socket: Option<Spanned<String>>,
    pub backend: Option<Spanned<String>>,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field a kind allows is a field of a step (a misspelt name would never be allowed).
    #[test]
    fn every_allowed_field_is_a_step_field() {
        for k in RawKind::ALL {
            for f in allowed_fields(*k) {
                assert!(STEP_FIELDS.contains(f), "{}: {f}", k.name());
            }
        }
    }
}
