//! Template variables, read as Grafana reads them: what a variable is ([`Variable`]), the
//! values it takes ([`Bindings`], by Grafana's rules: `label_values`, `query_result`, chained
//! variables, `All`, multi-value, regex, custom, constant, textbox, interval), and its
//! references in queries, titles and legends (`$name`, `${name:format}`, `[[name]]`).
//!
//! A domain room of its own because two others use it: the Grafana importer fills in a
//! dashboard's variables while converting it, and the config's `[[variable]]` entries are the
//! ones an offline import left, which the console and the recorder resolve against their
//! Prometheus when they start (and again when the user picks a value). One resolver for both:
//! the values come through a [`VariableResolver`] (Prometheus's is in
//! `metrics::prometheus::variables`), so this room does no I/O of its own and names no other
//! domain room.

pub mod bindings;
pub mod interpolate;
pub mod promql;
pub mod var_query;

pub use bindings::{Bindings, MAX_SPELT_VALUES, MAX_VARIABLES};
pub use interpolate::{Binding, Builtins, Mode, Outcome, interpolate};

use futures::future::BoxFuture;
use std::fmt;
use std::time::Duration;

/// Most variable look-ups sent for one dashboard.
pub const MAX_LOOKUPS: usize = 50;

/// Variable kinds, Grafana's classic names (V2 kinds map onto them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VarKind {
    Query,
    Custom,
    Constant,
    Interval,
    Textbox,
    Datasource,
    Adhoc,
    GroupBy,
    Switch,
    Other(String),
}

impl VarKind {
    /// The kind's name as Grafana's classic model and `[[variable]] kind` write it.
    pub fn name(&self) -> &str {
        match self {
            VarKind::Query => "query",
            VarKind::Custom => "custom",
            VarKind::Constant => "constant",
            VarKind::Interval => "interval",
            VarKind::Textbox => "textbox",
            VarKind::Datasource => "datasource",
            VarKind::Adhoc => "adhoc",
            VarKind::GroupBy => "groupby",
            VarKind::Switch => "switch",
            VarKind::Other(k) => k,
        }
    }
}

/// One template variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    /// Where it is defined, for findings: `templating.list[0]`, or `[[variable]] pod`.
    pub path: String,
    pub name: String,
    pub kind: VarKind,
    /// The query as text: `label_values(…)`, a custom list, a constant's value, an interval
    /// list, a data source plugin id.
    pub query: Option<String>,
    /// `current.value` (a list for multi-value variables): the value chosen, kept when it is
    /// still offered; `$__all` for "All".
    pub current: Vec<String>,
    pub options: Vec<String>,
    pub multi: bool,
    pub include_all: bool,
    pub all_value: Option<String>,
    pub regex: Option<String>,
    /// How the values are sorted, Grafana's `VariableSort` 0 to 8 (V2's names read as the
    /// same numbers): 0 as found, then ascending and descending pairs of alphabetical,
    /// numerical, case-insensitive and natural order.
    pub sort: u8,
    /// Adhoc filters set in the file.
    pub filters: usize,
}

impl Variable {
    /// A variable of `kind` with nothing else set.
    pub fn new(path: impl Into<String>, name: impl Into<String>, kind: VarKind) -> Self {
        Variable {
            path: path.into(),
            name: name.into(),
            kind,
            query: None,
            current: Vec::new(),
            options: Vec::new(),
            multi: false,
            include_all: false,
            all_value: None,
            regex: None,
            sort: 0,
            filters: 0,
        }
    }
}

/// One thing said about one place: a dashboard's JSON path or a `[[variable]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Where: `panels[3].panels[1]`, `spec.elements["panel-2"]`, `templating.list[0]`,
    /// `[[variable]] pod`, or `dashboard` for a file as a whole.
    pub path: String,
    /// What happened and, where there is something to do, what to do (sanitized).
    pub message: String,
}

impl Finding {
    pub(crate) fn new(path: impl Into<String>, message: impl AsRef<str>) -> Self {
        Finding {
            path: path.into(),
            message: crate::sanitize::line(message.as_ref()).into_owned(),
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// What the global variables and the look-ups go by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// The scrape interval assumed (`$__interval` in a variable's query; `$__rate_interval` is
    /// four of it).
    pub scrape_interval: Duration,
    /// What `$__range` stands for.
    pub range: Duration,
    /// Time for all the look-ups together.
    pub budget: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            scrape_interval: Duration::from_secs(15),
            range: Duration::from_secs(3600),
            budget: Duration::from_secs(20),
        }
    }
}

/// The variables `text` names (`$name`, `${name:format}`, `[[name]]`), each once, in order:
/// not Grafana's globals (`$__interval` …) nor PromQL's `$1`.
pub fn references(text: &str) -> Vec<String> {
    let none = |_: &str| None;
    let builtins = bindings::builtins(&Options::default());
    interpolate(text, &none, &builtins, Mode::Query).unresolved
}

/// A dashboard's variables as the console and `warroom record` resolve them when they start
/// (and the console again after a choice): through `resolver`, by Grafana's rules; without
/// one, the query variables have no value and say `without`. The findings say what needs a
/// look.
pub async fn resolve_dashboard(
    vars: &[Variable],
    opts: &Options,
    resolver: Option<&dyn VariableResolver>,
    without: &str,
) -> (Bindings, Vec<Finding>) {
    match resolver {
        Some(r) => Bindings::resolve_all(vars, opts, r).await,
        None => {
            let mut findings = Vec::new();
            let mut b = Bindings::offline(vars, &[], opts, &mut findings);
            b.leave_unresolved(vars, without);
            (b, findings)
        }
    }
}

/// Why a look-up gave no values (the text says what happened; it is shown in a warning).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ResolveError(pub String);

/// Answers the queries of template variables as Grafana's Prometheus data source does:
/// `label_values`, `label_names`, `metrics` and `query_result` (`metrics::prometheus` has the
/// real one).
pub trait VariableResolver: Send + Sync {
    /// Where values come from, for messages (`prometheus http://…`).
    fn describe(&self) -> String;
    /// The values `label` takes among the series matching `selector` (all series when
    /// `None`), raw as stored.
    fn label_values(
        &self,
        label: &str,
        selector: Option<&str>,
    ) -> BoxFuture<'static, Result<Vec<String>, ResolveError>>;
    /// The label names on the series matching `selector` (all series when `None`).
    fn label_names(
        &self,
        _selector: Option<&str>,
    ) -> BoxFuture<'static, Result<Vec<String>, ResolveError>> {
        let why = format!("{} does not answer label_names", self.describe());
        Box::pin(async move { Err(ResolveError(why)) })
    }
    /// `query_result(expr)`: the instant query now, each series as Grafana writes it for a
    /// variable, `name{a="x",b="y"} value timestamp_ms` (a scalar or string: its value).
    fn query_result(&self, _expr: &str) -> BoxFuture<'static, Result<Vec<String>, ResolveError>> {
        let why = format!("{} does not answer query_result", self.describe());
        Box::pin(async move { Err(ResolveError(why)) })
    }
}
