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

/// The kinds, as `kind = "…"` names them: the model's [`Kind`], declared once there.
pub(crate) use super::model::Kind as RawKind;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStep {
    pub id: Spanned<String>,
    pub kind: Spanned<RawKind>,
    pub title: Option<String>,
    pub mutating: Option<Spanned<bool>>,
    pub skippable: Option<Spanned<bool>>,
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
    // sql
    pub dsn: Option<Spanned<String>>,
    pub password: Option<Spanned<String>>,
    pub password_env: Option<Spanned<String>>,
    pub password_file: Option<Spanned<String>>,
    pub statement: Option<Spanned<String>>,
    pub statement_timeout: Option<Spanned<String>>,
    pub read_only: Option<Spanned<bool>>,
    // sql, haproxy
    pub expect: Option<Spanned<RawExpect>>,
    pub wait: Option<Spanned<String>>,
    pub interval: Option<Spanned<String>>,
    // haproxy
    pub socket: Option<Spanned<String>>,
    pub server: Option<Spanned<String>>,
    pub state: Option<Spanned<String>>,
    pub weight: Option<Spanned<toml::Value>>,
    pub show: Option<Spanned<String>>,
    pub backend: Option<Spanned<String>>,
    pub drain_wait: Option<Spanned<String>>,
    // batch
    pub targets: Option<Spanned<Vec<String>>>,
    pub targets_query: Option<Spanned<String>>,
    pub target_label: Option<Spanned<String>>,
    pub targets_haproxy: Option<Spanned<RawHaproxyTargets>>,
    pub size: Option<Spanned<i64>>,
    pub percent: Option<Spanned<i64>>,
    pub max_unavailable: Option<Spanned<i64>>,
    pub failure_budget: Option<Spanned<i64>>,
    pub soak: Option<Spanned<String>>,
    pub settle: Option<Spanned<String>>,
    pub instance_deadline: Option<Spanned<String>>,
    pub action: Option<Spanned<RawAction>>,
    pub actions: Option<Spanned<Vec<Spanned<RawAction>>>>,
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
            dsn,
            password,
            password_env,
            password_file,
            statement,
            statement_timeout,
            read_only,
            expect,
            wait,
            interval,
            socket,
            server,
            state,
            weight,
            show,
            backend,
            drain_wait,
            targets,
            targets_query,
            target_label,
            targets_haproxy,
            size,
            percent,
            max_unavailable,
            failure_budget,
            soak,
            settle,
            instance_deadline,
            action,
            actions,
            instance
        );
        if let Some(h) = &self.headers
            && let Some((_, first)) = h.iter().next()
        {
            v.push(("headers", first.span()));
        }
        v
    }

    /// The acting fields of this step, as a batch action would carry them.
    pub fn as_action(&self) -> RawAction {
        RawAction {
            kind: Some(self.kind.clone()),
            method: self.method.clone(),
            url: self.url.clone(),
            headers: self.headers.clone(),
            json: self.json.clone(),
            argv: self.argv.clone(),
            timeout: self.timeout.clone(),
            deadline: self.deadline.clone(),
            grace: self.grace.clone(),
            dsn: self.dsn.clone(),
            password: self.password.clone(),
            password_env: self.password_env.clone(),
            password_file: self.password_file.clone(),
            statement: self.statement.clone(),
            statement_timeout: self.statement_timeout.clone(),
            read_only: self.read_only.clone(),
            expect: self.expect.clone(),
            wait: self.wait.clone(),
            interval: self.interval.clone(),
            socket: self.socket.clone(),
            server: self.server.clone(),
            state: self.state.clone(),
            weight: self.weight.clone(),
            show: self.show.clone(),
            backend: self.backend.clone(),
            drain_wait: self.drain_wait.clone(),
        }
    }
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

/// One action of a batch (`[step.action]`, or each of `[[step.actions]]`): the fields of an
/// `http`, `exec`, `sql` or `haproxy` step. Without `kind`, `url` means http and `argv` exec.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAction {
    pub kind: Option<Spanned<RawKind>>,
    pub method: Option<Spanned<String>>,
    pub url: Option<Spanned<String>>,
    pub headers: Option<BTreeMap<String, Spanned<String>>>,
    pub json: Option<Spanned<toml::Value>>,
    pub argv: Option<Spanned<Vec<Spanned<String>>>>,
    pub timeout: Option<Spanned<String>>,
    pub deadline: Option<Spanned<String>>,
    pub grace: Option<Spanned<String>>,
    pub dsn: Option<Spanned<String>>,
    pub password: Option<Spanned<String>>,
    pub password_env: Option<Spanned<String>>,
    pub password_file: Option<Spanned<String>>,
    pub statement: Option<Spanned<String>>,
    pub statement_timeout: Option<Spanned<String>>,
    pub read_only: Option<Spanned<bool>>,
    pub expect: Option<Spanned<RawExpect>>,
    pub wait: Option<Spanned<String>>,
    pub interval: Option<Spanned<String>>,
    pub socket: Option<Spanned<String>>,
    pub server: Option<Spanned<String>>,
    pub state: Option<Spanned<String>>,
    pub weight: Option<Spanned<toml::Value>>,
    pub show: Option<Spanned<String>>,
    pub backend: Option<Spanned<String>>,
    pub drain_wait: Option<Spanned<String>>,
}

impl RawAction {
    /// The fields present, with their spans.
    pub fn present_fields(&self) -> Vec<(&'static str, std::ops::Range<usize>)> {
        let mut v = Vec::new();
        macro_rules! field {
            ($($f:ident),*) => {$(
                if let Some(x) = &self.$f { v.push((stringify!($f), x.span())); }
            )*};
        }
        field!(
            method,
            url,
            json,
            argv,
            timeout,
            deadline,
            grace,
            dsn,
            password,
            password_env,
            password_file,
            statement,
            statement_timeout,
            read_only,
            expect,
            wait,
            interval,
            socket,
            server,
            state,
            weight,
            show,
            backend,
            drain_wait
        );
        if let Some(h) = &self.headers
            && let Some((_, first)) = h.iter().next()
        {
            v.push(("headers", first.span()));
        }
        v
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
