//! `warroom import grafana`: a Grafana dashboard turned into `[[panel]]` entries.
//!
//! Three JSON models are read (reference/exporter-metrics.md §12): the **classic** dashboard
//! (`panels[]`, rows with nested `panels`, the `rows[].panels[]` of very old dashboards, or the
//! `{"dashboard": …}` the HTTP API answers), the **V1 resource** that wraps it in `spec`, and the
//! **V2 resource** (`spec.elements`, `spec.layout`, `spec.variables`) as far as it goes.
//!
//! The work is pure except for one step: [`parse`] reads the file into a [`Dashboard`],
//! [`Dashboard::resolve`] asks a [`VariableResolver`] (a Prometheus) for the values of query
//! variables (`label_values(…)`, `query_result(…)` …), and [`Dashboard::convert`] builds the
//! panels and the report. [`import`] does the three. Nothing is ever silently lost: every panel
//! or query not converted is in [`Import::skipped`] with its JSON path and the reason, and
//! everything converted with a caveat (a unit shown as a count, thresholds dropped) is in
//! [`Import::warnings`]. Every converted query is one clean line of PromQL that the parser
//! accepts, with no `$name` left in it; titles and legends are sanitized.
//!
//! One Grafana query becomes one panel (`convert`), units are scaled to warroom's base units
//! (`units`), threshold colours decide `warn`, `crit` and `bad_when` where Grafana draws the
//! thresholds at all (`thresholds`; the rest are reported, not imported), and
//! variables and `$__interval`-style globals are filled in by Grafana's rules
//! ([`crate::variables`], which the console uses too).

mod classic;
mod convert;
mod datasource;
mod json;
mod thresholds;
mod titles;
mod units;
mod v2;

use crate::config::panels::PanelConfig;
use crate::variables::{Bindings, Variable};
use std::time::Duration;

pub use crate::variables::promql::MAX_EXPR_BYTES;
pub use crate::variables::{Finding, MAX_LOOKUPS, ResolveError, VariableResolver};

pub use units::{Factor, UnitMapping, map_unit};

/// Largest file read, in bytes; dashboards are rarely over 1 MiB.
pub const MAX_INPUT_BYTES: usize = 16 * 1024 * 1024;
/// Most panels converted from one dashboard; the rest are listed as skipped.
pub const MAX_PANELS: usize = 500;
/// Most panels and queries examined; past this one finding says how many were left.
pub const MAX_EXAMINED: usize = 5_000;

/// Which of Grafana's dashboard models the file was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// The classic JSON (`panels[]`), also inside the HTTP API's `{"dashboard": …}`.
    Classic,
    /// `dashboard.grafana.app/v0alpha1`, `v1alpha1`, `v1beta1`: the classic JSON in `spec`.
    V1Resource,
    /// `dashboard.grafana.app/v2alpha1`, `v2beta1`: elements, layout, variables (best effort).
    V2Resource,
}

impl Model {
    /// A short name for the report.
    pub fn name(self) -> &'static str {
        match self {
            Model::Classic => "classic dashboard JSON",
            Model::V1Resource => "V1 dashboard resource",
            Model::V2Resource => "V2 dashboard resource",
        }
    }
}

/// What an import gives: the panels, and a report of everything that needs a look.
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    pub model: Model,
    /// The dashboard's own title (sanitized), if it has one.
    pub title: Option<String>,
    pub panels: Vec<PanelConfig>,
    /// The query variables the panels' queries still use (an import without a Prometheus):
    /// `[[variable]]` entries the console resolves when it opens, with the dashboard's
    /// current values.
    pub variables: Vec<Variable>,
    /// Converted, but with a caveat the user should read.
    pub warnings: Vec<Finding>,
    /// Not converted: the JSON path of the panel or query, and why.
    pub skipped: Vec<Finding>,
}

/// Why a file could not be read as a dashboard at all. Problems with single panels are never
/// errors: they are [`Import::skipped`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrafanaError {
    #[error(
        "the file is {size} bytes, over the {limit} bytes a dashboard is read up to: is it a \
         Grafana dashboard JSON export?"
    )]
    TooLarge { size: usize, limit: usize },
    #[error(
        "the file is not valid JSON at line {line}, column {column}: {message}; export the \
         dashboard again (Share > Export > Save to file)"
    )]
    Json {
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "the file is not a Grafana dashboard: {found}; expected a JSON object with \"panels\" \
         (the classic model) or a dashboard resource with \"spec\" (V1 or V2)"
    )]
    NotADashboard { found: String },
}

/// Defaults for what the file does not say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImportOptions {
    /// The scrape interval assumed when a panel sets no minimum interval (Grafana's own
    /// default is 15 s). `$__rate_interval` is at least four of it.
    pub scrape_interval: Duration,
    /// What `$__range` stands for when the dashboard's time range is not `now-…` to `now`.
    pub range: Duration,
    /// Time for all the `label_values` look-ups of one dashboard together.
    pub resolve_budget: Duration,
}

impl ImportOptions {
    /// What the variables' look-ups go by.
    pub(crate) fn variables(&self) -> crate::variables::Options {
        crate::variables::Options {
            scrape_interval: self.scrape_interval,
            range: self.range,
            budget: self.resolve_budget,
        }
    }
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            scrape_interval: Duration::from_secs(15),
            range: Duration::from_secs(3600),
            resolve_budget: Duration::from_secs(20),
        }
    }
}

/// A dashboard read from its JSON, its variables not yet looked up.
#[derive(Debug, Clone)]
pub struct Dashboard {
    board: json::Board,
    options: ImportOptions,
    bindings: Bindings,
    /// Warnings found while reading and resolving, before any panel.
    warnings: Vec<Finding>,
    resolved: bool,
}

/// Read a dashboard (any of the three models). Pure; never panics on any input.
pub fn parse(text: &str, options: ImportOptions) -> Result<Dashboard, GrafanaError> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(GrafanaError::TooLarge {
            size: text.len(),
            limit: MAX_INPUT_BYTES,
        });
    }
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| GrafanaError::Json {
        line: e.line(),
        column: e.column(),
        message: crate::sanitize::sanitize(&e.to_string(), false, 200).into_owned(),
    })?;
    let board = json::read_board(&value)?;
    let mut warnings = board.warnings.clone();
    let constants = board.constants();
    let bindings = Bindings::offline(
        &board.variables,
        &constants,
        &options.variables(),
        &mut warnings,
    );
    Ok(Dashboard {
        board,
        options,
        bindings,
        warnings,
        resolved: false,
    })
}

impl Dashboard {
    /// Which model the file was.
    pub fn model(&self) -> Model {
        self.board.model
    }

    /// The query variables that need a look-up, as `(name, query)`.
    pub fn lookups(&self) -> Vec<(String, String)> {
        crate::variables::bindings::lookups(&self.board.variables)
    }

    /// Look up the query variables through `resolver`, each after the variables its query
    /// uses (chained variables), else in the order the dashboard declares them. At most
    /// [`MAX_LOOKUPS`] requests, one at a time, all within
    /// [`ImportOptions::resolve_budget`]; a failure leaves the variable without a value, with
    /// a warning, and the queries that use it are not converted.
    pub async fn resolve(&mut self, resolver: &dyn VariableResolver) {
        if self.resolved {
            return;
        }
        self.resolved = true;
        let mut warnings = Vec::new();
        self.bindings
            .resolve(
                &self.board.variables,
                &self.options.variables(),
                resolver,
                &mut warnings,
            )
            .await;
        self.warnings.extend(warnings);
    }

    /// Build the panels and the report. Pure. A query that uses a variable without a value
    /// (no resolver, or a failed look-up) is not converted: it is listed in
    /// [`Import::skipped`], and the variable says why once in [`Import::warnings`].
    pub fn convert(&self) -> Import {
        let mut warnings = self.warnings.clone();
        if !self.resolved {
            self.bindings
                .warn_unresolved(&self.board.variables, &mut warnings);
        }
        // Variable warnings in the order the dashboard declares its variables.
        let order = |f: &Finding| {
            self.board
                .variables
                .iter()
                .position(|v| v.path == f.path)
                .unwrap_or(usize::MAX)
        };
        warnings.sort_by_key(order);
        let mut skipped = Vec::new();
        let mut used = Vec::new();
        let panels = convert::panels(
            &self.board,
            &self.bindings,
            &self.options,
            &mut warnings,
            &mut skipped,
            &mut used,
        );
        Import {
            model: self.board.model,
            title: self.board.title.clone(),
            variables: self.left_for_the_console(used),
            panels,
            warnings,
            skipped,
        }
    }
}

impl Dashboard {
    /// The query variables `used` (and those their queries use, chained), in the order the
    /// dashboard declares them, each query with the values the import filled in.
    fn left_for_the_console(&self, mut used: Vec<String>) -> Vec<Variable> {
        let vars = &self.board.variables;
        let opts = self.options.variables();
        let mut out: Vec<Variable> = Vec::new();
        // Each round adds the variables the last ones use; a chain is at most all of them.
        for _ in 0..=vars.len() {
            let before = out.len();
            for v in vars {
                if !used.contains(&v.name)
                    || !self.bindings.is_pending(vars, &v.name)
                    || out.iter().any(|o| o.name == v.name)
                {
                    continue;
                }
                let mut kept = v.clone();
                if let Some(q) = &v.query {
                    let (text, refs) = self.bindings.partial(q, &opts);
                    kept.query = Some(text);
                    used.extend(refs);
                }
                kept.options.clear();
                kept.path = format!("[[variable]] {}", v.name);
                out.push(kept);
            }
            if out.len() == before {
                break;
            }
        }
        out.sort_by_key(|o| vars.iter().position(|v| v.name == o.name));
        out
    }
}

/// [`parse`], [`Dashboard::resolve`] when a resolver is given, then [`Dashboard::convert`].
pub async fn import(
    text: &str,
    resolver: Option<&dyn VariableResolver>,
    options: ImportOptions,
) -> Result<Import, GrafanaError> {
    let mut dashboard = parse(text, options)?;
    if let Some(r) = resolver {
        dashboard.resolve(r).await;
    }
    Ok(dashboard.convert())
}
