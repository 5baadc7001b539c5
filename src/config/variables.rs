//! `[[variable]]`: a Grafana template variable the panels' queries use as `$name`,
//! `${name:format}` or `[[name]]`. `warroom import grafana` without `--prometheus` writes one
//! for each query variable it could not look up; the console and `warroom record` resolve them
//! against their Prometheus when they start, by Grafana's rules ([`crate::variables`]), and
//! the console's variable chooser sets them.

use super::{KeyList, PanelConfig};
use crate::variables::{Bindings, Finding, Mode, Options, VarKind, Variable, VariableResolver};
use serde::{Deserialize, Serialize};

/// The kinds a `[[variable]]` may be.
const KINDS: [VarKind; 5] = [
    VarKind::Query,
    VarKind::Custom,
    VarKind::Constant,
    VarKind::Textbox,
    VarKind::Interval,
];

/// One `[[variable]]` entry as written.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawVariable {
    pub name: String,
    /// `query` (the default), `custom`, `constant`, `textbox` or `interval`.
    #[serde(default = "query_kind")]
    pub kind: String,
    /// `label_values(up, instance)`, `query_result(…)`, a custom list `a,b,c`, a constant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The value chosen (a list for a multi-value variable; `$__all` for "All"): kept while
    /// it is among the values found, else the first is used, as Grafana does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<KeyList>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub multi: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_all: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_value: Option<String>,
    /// Grafana's `/pattern/flags`: keep matching values, the `value` or first group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// Grafana's `VariableSort`, 0 (as found) to 8.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sort: u8,
}

fn query_kind() -> String {
    "query".into()
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

impl From<&Variable> for RawVariable {
    fn from(v: &Variable) -> Self {
        RawVariable {
            name: v.name.clone(),
            kind: v.kind.name().to_string(),
            query: v.query.clone(),
            current: match v.current.as_slice() {
                [] => None,
                [one] if !v.multi => Some(KeyList::One(one.clone())),
                many => Some(KeyList::Many(many.to_vec())),
            },
            multi: v.multi,
            include_all: v.include_all,
            all_value: v.all_value.clone(),
            regex: v.regex.clone(),
            sort: v.sort,
        }
    }
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with("__")
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl RawVariable {
    /// Check the entry and make it a variable; the message says what is wrong and what was
    /// expected.
    pub fn validate(self) -> Result<Variable, String> {
        if !is_name(&self.name) {
            return Err(format!(
                "variable name \"{}\" is not a name: expected letters, digits and '_' (not \
                 starting with \"__\"), as the queries write it after '$'",
                self.name
            ));
        }
        let Some(kind) = KINDS.iter().find(|k| k.name() == self.kind) else {
            return Err(format!(
                "variable ${}: kind \"{}\" is not one warroom resolves: expected query, custom, \
                 constant, textbox or interval",
                self.name, self.kind
            ));
        };
        let needs_query = matches!(kind, VarKind::Query | VarKind::Custom | VarKind::Constant);
        if needs_query && self.query.as_deref().is_none_or(|q| q.trim().is_empty()) {
            return Err(format!(
                "variable ${} of kind {} has no query: expected e.g. query = \
                 'label_values(up, instance)'",
                self.name, self.kind
            ));
        }
        if self.sort > 8 {
            return Err(format!(
                "variable ${}: sort {} is not one of Grafana's orders 0 to 8",
                self.name, self.sort
            ));
        }
        let mut v = Variable::new(
            format!("[[variable]] {}", self.name),
            self.name,
            kind.clone(),
        );
        v.query = self.query;
        v.current = (self.current.iter())
            .flat_map(|c| c.keys().into_iter().map(String::from))
            .collect();
        v.multi = self.multi;
        v.include_all = self.include_all;
        v.all_value = self.all_value;
        v.regex = self.regex;
        v.sort = self.sort;
        Ok(v)
    }
}

/// `[[variable]]` entries for `vars`, in the shape `warroom.toml` reads.
pub fn render_toml(vars: &[Variable]) -> String {
    #[derive(Serialize)]
    struct File {
        variable: Vec<RawVariable>,
    }
    if vars.is_empty() {
        return String::new();
    }
    let file = File {
        variable: vars.iter().map(RawVariable::from).collect(),
    };
    toml::to_string(&file).unwrap_or_default()
}

/// The first name a query refers to that is neither declared nor one of Grafana's globals
/// (`$__interval` …), if any.
pub fn undeclared(query: &str, declared: &[Variable]) -> Option<String> {
    (crate::variables::references(query).into_iter())
        .find(|n| !declared.iter().any(|v| &v.name == n))
}

/// Whether the panel's query, title or legend names one of `vars`: it is then sent and shown
/// only with their values ([`with_values`]).
pub fn uses(panel: &PanelConfig, vars: &[Variable]) -> bool {
    let texts = [
        Some(&panel.query),
        Some(&panel.title),
        panel.legend.as_ref(),
    ];
    (texts.into_iter().flatten())
        .flat_map(|t| crate::variables::references(t))
        .any(|n| vars.iter().any(|v| v.name == n))
}

/// The panel as it is sent and shown once the variables are resolved, as Grafana fills them
/// in: the query by the Prometheus data source's formatting, the title in the values' text
/// (`a + b`, `All`), the legend in glob (`{a,b}`). `Err` says which variable has no value and
/// why: the query is then not sent, so no `$name` ever reaches Prometheus. The console and
/// `warroom record` both fill their panels in here.
pub fn with_values(
    panel: &PanelConfig,
    bindings: &Bindings,
    opts: &Options,
) -> Result<PanelConfig, String> {
    let query = bindings.apply(&panel.query, opts)?;
    let text =
        |raw: &str, mode| crate::sanitize::line(&bindings.text(raw, opts, mode)).into_owned();
    Ok(PanelConfig {
        query,
        title: text(&panel.title, Mode::Text),
        legend: (panel.legend.as_deref()).map(|l| text(l, Mode::Legend)),
        ..panel.clone()
    })
}

/// What became of a config's panels once its variables were resolved.
#[derive(Debug, Clone, Default)]
pub struct Filled {
    /// The panels to query: those that use no variable, and those whose variables all have
    /// a value, filled in.
    pub panels: Vec<PanelConfig>,
    /// `(title as configured, why)` for each panel not queried: a variable it uses has no
    /// value.
    pub refused: Vec<(String, String)>,
    /// What the resolution said (a saved value no longer offered, a failed look-up).
    pub findings: Vec<Finding>,
}

/// `panels` with the values of `vars` resolved through `resolver` as the console resolves
/// them when it opens ([`crate::variables::resolve_dashboard`], [`with_values`]): for the
/// commands that query a config's panels without a console (`warroom record`, `warroom
/// export`). Without a variable, nothing is looked up.
pub async fn fill_panels(
    panels: Vec<PanelConfig>,
    vars: &[Variable],
    resolver: &dyn VariableResolver,
) -> Filled {
    if !panels.iter().any(|p| uses(p, vars)) {
        return Filled {
            panels,
            ..Filled::default()
        };
    }
    let opts = Options::default();
    let (bindings, findings) =
        crate::variables::resolve_dashboard(vars, &opts, Some(resolver), "").await;
    let mut filled = Filled {
        findings,
        ..Filled::default()
    };
    for p in panels {
        if !uses(&p, vars) {
            filled.panels.push(p);
            continue;
        }
        match with_values(&p, &bindings, &opts) {
            Ok(p) => filled.panels.push(p),
            Err(why) => filled.refused.push((p.title, why)),
        }
    }
    filled
}
