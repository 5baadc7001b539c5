//! Template variables to values, by Grafana's rules.
//!
//! Constant, textbox, custom, interval, switch and group-by variables take the value the file
//! gives (a custom variable's options come from its query, as Grafana reads it). A query
//! variable is looked up through a [`VariableResolver`] (`var_query` reads its query), after
//! the variables its query uses; its values are filtered by its regex, sorted by its `sort`,
//! and one is chosen as Grafana's variables choose (`MultiValueVariable`): with no values, an
//! include-all variable is "All" of nothing, a multi-value one no value, another the empty
//! string; "All" (`$__all`) is the custom all value or every value; a multi-value selection
//! keeps the saved values still offered, else the first; a single value the saved one if
//! offered, else the first. What cannot be resolved (no resolver, a failed look-up, a variable
//! it depends on without a value) has no binding: the queries that use it are not converted.

use super::interpolate::{Binding, Builtins, Mode, interpolate};
use super::var_query::{self, VarQuery};
use super::{Finding, MAX_LOOKUPS, Options, VarKind, Variable, VariableResolver};
use std::time::{Duration, Instant};

/// Most variables read from one dashboard.
pub const MAX_VARIABLES: usize = 200;
/// Most values "All" is spelt out with; more become `.*` (with a warning).
pub const MAX_SPELT_VALUES: usize = 1000;

/// What each variable stands for, and which still need a look-up.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bindings {
    bound: Vec<(String, Binding)>,
    /// Indices into the variables of query variables not yet looked up.
    pending: Vec<usize>,
    /// The values each variable offered (after its regex and sort), for a chooser.
    offered: Vec<(String, Vec<String>)>,
    /// Why a variable has no value: its look-up failed or was not made.
    failed: Vec<(String, String)>,
}

fn is_all(v: &Variable) -> bool {
    v.current.iter().any(|c| c == "$__all")
}

fn first_value(v: &Variable) -> Option<String> {
    v.current
        .first()
        .cloned()
        .or_else(|| v.options.first().cloned())
}

/// A custom variable's values as Grafana reads its query: items split at commas not escaped
/// as `\,`, each `text : value` or a value; else the options saved in the file.
fn custom_values(v: &Variable) -> Vec<String> {
    let query = v.query.as_deref().unwrap_or("");
    let mut items: Vec<String> = Vec::new();
    let mut item = String::new();
    let mut chars = query.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&',') => item.push(chars.next().unwrap_or(',')),
            ',' => items.push(std::mem::take(&mut item)),
            c => item.push(c),
        }
    }
    items.push(item);
    let values: Vec<String> = items
        .iter()
        .map(|i| match i.split_once(" : ") {
            Some((_, value)) => value.trim().to_string(),
            None => i.trim().to_string(),
        })
        .filter(|s| !s.is_empty())
        .collect();
    if !values.is_empty() {
        return values;
    }
    v.options
        .iter()
        .filter(|o| o.as_str() != "$__all")
        .cloned()
        .collect()
}

/// A variable's chosen values as a binding: a list for a multi-value or include-all variable
/// (regex-formatted in queries), else the one value.
fn bind_values(v: &Variable, mut values: Vec<String>) -> Binding {
    if v.multi || v.include_all {
        Binding::Many(values)
    } else {
        Binding::One(if values.is_empty() {
            String::new()
        } else {
            values.swap_remove(0)
        })
    }
}

/// The binding Grafana gives a variable whose values are `values` (`MultiValueVariable`'s
/// validation of its saved value against its options).
fn choose(v: &Variable, values: &[String], warnings: &mut Vec<Finding>) -> Binding {
    if values.is_empty() {
        return if v.include_all {
            Binding::All {
                values: Vec::new(),
                custom: v.all_value.clone(),
            }
        } else {
            bind_values(v, Vec::new())
        };
    }
    if is_all(v) {
        if !v.include_all {
            return bind_values(v, vec![values[0].clone()]);
        }
        if v.all_value.is_none() && values.len() > MAX_SPELT_VALUES {
            warnings.push(Finding::new(
                &v.path,
                format!(
                    "${} is \"All\" of {} values, too many to spell out as Grafana does; the \
                     queries use \".*\", which also matches series without the label",
                    v.name,
                    values.len()
                ),
            ));
            return Binding::All {
                values: Vec::new(),
                custom: Some(".*".into()),
            };
        }
        return Binding::All {
            values: values.to_vec(),
            custom: v.all_value.clone(),
        };
    }
    let saved: Vec<String> = v
        .current
        .iter()
        .filter(|c| values.contains(c))
        .cloned()
        .collect();
    if v.multi && !saved.is_empty() {
        return Binding::Many(saved);
    }
    if let Some(c) = saved.into_iter().next() {
        return bind_values(v, vec![c]);
    }
    let first = values[0].clone();
    let saved = v.current.first().filter(|c| !c.is_empty());
    if saved.is_some() || values.len() > 1 {
        let first_shown = crate::sanitize::sanitize(&first, false, 60);
        let message = match saved {
            Some(c) => format!(
                "${}: its saved value \"{}\" is not among the {} found; the panels use the \
                 first, \"{first_shown}\", as Grafana does: edit the queries to watch another",
                v.name,
                crate::sanitize::sanitize(c, false, 60),
                values.len()
            ),
            None => format!(
                "${} has no value saved; of the {} found the panels use the first, \
                 \"{first_shown}\", as Grafana does: edit the queries to watch another",
                v.name,
                values.len()
            ),
        };
        warnings.push(Finding::new(&v.path, message));
    }
    bind_values(v, vec![first])
}

/// Grafana's variable regex (`/pattern/flags`): keep matching values, the `value` group or
/// the first group when there is one, each once.
fn apply_regex(v: &Variable, values: Vec<String>, warnings: &mut Vec<Finding>) -> Vec<String> {
    let Some(raw) = v.regex.as_deref() else {
        return dedup(values);
    };
    let (pattern, flags) = match raw.strip_prefix('/').and_then(|r| r.rsplit_once('/')) {
        Some((p, f)) => (p, f),
        None => (raw, ""),
    };
    let pattern = if flags.contains('i') {
        format!("(?i){pattern}")
    } else {
        pattern.to_string()
    };
    let re = match regex::RegexBuilder::new(&pattern)
        .size_limit(1 << 20)
        .build()
    {
        Ok(re) => re,
        Err(_) => {
            warnings.push(Finding::new(
                &v.path,
                format!(
                    "the regex \"{}\" of ${} is not one warroom can read; its values were not \
                     filtered",
                    crate::sanitize::sanitize(raw, false, 80),
                    v.name
                ),
            ));
            return dedup(values);
        }
    };
    let kept = values.into_iter().filter_map(|value| {
        let caps = re.captures(&value)?;
        Some(
            caps.name("value")
                .or_else(|| caps.get(1))
                .map_or_else(|| value.clone(), |m| m.as_str().to_string()),
        )
    });
    dedup(kept.collect())
}

fn dedup(values: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(values.len());
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// The first value of an interval variable that is not `auto`, else `auto`'s.
fn interval_binding(v: &Variable) -> Binding {
    let current = v.current.first().map(|s| s.trim().to_string());
    match current {
        Some(c) if !c.is_empty() && c != "auto" && !c.starts_with("$__auto") => Binding::One(c),
        Some(_) => Binding::AutoInterval,
        None => v
            .query
            .as_deref()
            .and_then(|q| q.split(',').map(str::trim).find(|s| !s.is_empty()))
            .map(|s| Binding::One(s.to_string()))
            .unwrap_or(Binding::AutoInterval),
    }
}

pub(crate) fn builtins(opts: &Options) -> Builtins {
    Builtins {
        interval: opts.scrape_interval,
        rate_interval: opts.scrape_interval * 4,
        range: opts.range,
    }
}

/// What became of one look-up.
enum Looked {
    Values(Vec<String>),
    /// Not looked up or no answer: the warning's text after `$name (query) `.
    Failed(String),
}

impl Bindings {
    /// Bind everything that needs no look-up; collect the query variables.
    /// `constants` are bound first (an export's `${VAR_X}` inputs, with their default).
    pub fn offline(
        vars: &[Variable],
        constants: &[(String, String)],
        opts: &Options,
        warnings: &mut Vec<Finding>,
    ) -> Self {
        let mut b = Bindings::default();
        for (name, value) in constants {
            b.bind(name, Binding::One(value.clone()));
        }
        for (i, v) in vars.iter().enumerate() {
            if b.get(&v.name).is_some() || b.pending_index(vars, &v.name).is_some() {
                warnings.push(Finding::new(
                    &v.path,
                    format!("a second variable named ${}; the first one is used", v.name),
                ));
                continue;
            }
            b.offline_one(i, v, opts, warnings);
        }
        b
    }

    fn offline_one(&mut self, i: usize, v: &Variable, opts: &Options, warnings: &mut Vec<Finding>) {
        let kept = |what: String| {
            Finding::new(
                &v.path,
                format!("{what}; queries using ${} are not converted", v.name),
            )
        };
        match &v.kind {
            VarKind::Constant | VarKind::Textbox => {
                // A textbox shows what was typed (`current`), its query being the default.
                let (first, second) = match v.kind {
                    VarKind::Textbox => (v.current.first().cloned(), v.query.clone()),
                    _ => (v.query.clone(), v.current.first().cloned()),
                };
                let raw = first.or(second).unwrap_or_default();
                let value = self.text(&raw, opts, Mode::Text);
                self.bind(&v.name, Binding::One(value));
            }
            VarKind::Custom => {
                let values = custom_values(v);
                let binding = choose(v, &values, warnings);
                self.bind(&v.name, binding);
                self.offered.push((v.name.clone(), values));
            }
            VarKind::Interval => {
                self.bind(&v.name, interval_binding(v));
                let listed = v.query.as_deref().unwrap_or("").split(',');
                let values = listed.map(str::trim).filter(|s| !s.is_empty());
                (self.offered).push((v.name.clone(), values.map(String::from).collect()));
            }
            VarKind::Datasource => {
                let value = v
                    .query
                    .clone()
                    .or_else(|| first_value(v))
                    .unwrap_or_default();
                self.bind(&v.name, Binding::One(value));
            }
            VarKind::Switch => {
                self.bind(
                    &v.name,
                    Binding::One(first_value(v).unwrap_or("false".into())),
                );
            }
            VarKind::GroupBy => match v.current.is_empty() {
                false => self.bind(&v.name, Binding::One(v.current.join(","))),
                true => warnings.push(kept(format!(
                    "group-by variable ${} has no labels chosen",
                    v.name
                ))),
            },
            VarKind::Adhoc => {
                if v.filters > 0 {
                    warnings.push(Finding::new(
                        &v.path,
                        format!(
                            "ad hoc filter variable ${} has {} filter(s), which Grafana adds to \
                             every query and warroom does not; add them to the queries by hand",
                            v.name, v.filters
                        ),
                    ));
                }
            }
            VarKind::Other(kind) => warnings.push(kept(format!(
                "variable ${} is of kind \"{}\", which warroom does not know",
                v.name,
                crate::sanitize::sanitize(kind, false, 40)
            ))),
            VarKind::Query => {
                if v.include_all && is_all(v) && v.all_value.is_some() {
                    // The custom all value needs no values.
                    let custom = v.all_value.clone();
                    self.bind(
                        &v.name,
                        Binding::All {
                            values: Vec::new(),
                            custom,
                        },
                    );
                } else if v.query.is_some() {
                    self.pending.push(i);
                } else {
                    warnings.push(kept(format!("query variable ${} has no query", v.name)));
                }
            }
        }
    }

    fn bind(&mut self, name: &str, binding: Binding) {
        if self.get(name).is_none() {
            self.bound.push((name.to_string(), binding));
        }
    }

    fn pending_index(&self, vars: &[Variable], name: &str) -> Option<usize> {
        self.pending.iter().copied().find(|i| vars[*i].name == name)
    }

    /// What `name` stands for, if it is bound.
    pub fn get(&self, name: &str) -> Option<&Binding> {
        self.bound.iter().find(|(n, _)| n == name).map(|(_, b)| b)
    }

    /// The values `name` offered when it was resolved (a query or custom variable's).
    pub fn offered(&self, name: &str) -> Option<&[String]> {
        (self.offered.iter())
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }

    /// Why `name` has no value, when its look-up failed or was not made.
    pub fn why_unset(&self, name: &str) -> Option<&str> {
        (self.failed.iter())
            .find(|(n, _)| n == name)
            .map(|(_, w)| w.as_str())
    }

    /// Give up on the query variables still waiting for a look-up, saying `why`.
    pub fn leave_unresolved(&mut self, vars: &[Variable], why: &str) {
        for i in std::mem::take(&mut self.pending) {
            self.failed.push((vars[i].name.clone(), why.to_string()));
        }
    }

    /// Whether `name` is a query variable still waiting for its look-up.
    pub fn is_pending(&self, vars: &[Variable], name: &str) -> bool {
        self.pending_index(vars, name).is_some()
    }

    /// Every variable of `vars` resolved as Grafana would: those that need no look-up, then
    /// the query variables through `resolver`. The findings say what needs a look.
    pub async fn resolve_all(
        vars: &[Variable],
        opts: &Options,
        resolver: &dyn VariableResolver,
    ) -> (Bindings, Vec<Finding>) {
        let mut findings = Vec::new();
        let mut b = Bindings::offline(vars, &[], opts, &mut findings);
        b.resolve(vars, opts, resolver, &mut findings).await;
        (b, findings)
    }

    /// `query` with the variables' values, formatted as Grafana's Prometheus data source
    /// formats them; `Err` says why it cannot be sent (a variable without a value), so a
    /// query with a `$name` left in it never is.
    pub fn apply(&self, query: &str, opts: &Options) -> Result<String, String> {
        let lookup = |n: &str| self.get(n);
        let done = interpolate(query, &lookup, &builtins(opts), Mode::Query);
        match done.unresolved.first() {
            None => Ok(done.text),
            Some(n) => Err(format!(
                "variable ${n} has no value: {}",
                self.why_unset(n)
                    .unwrap_or("it is not among the [[variable]] entries resolved")
            )),
        }
    }

    /// `raw` with the variables bound so far filled in as in a query, and the names left.
    pub fn partial(&self, raw: &str, opts: &Options) -> (String, Vec<String>) {
        let lookup = |n: &str| self.get(n);
        let done = interpolate(raw, &lookup, &builtins(opts), Mode::Query);
        (done.text, done.unresolved)
    }

    /// Text with the bindings so far, formatted for where it goes (`Mode::Text` for a title
    /// or a constant that refers to an input, `Mode::Legend` for a legend); references
    /// without a value are kept as written.
    pub fn text(&self, raw: &str, opts: &Options, mode: Mode) -> String {
        let lookup = |n: &str| self.get(n);
        interpolate(raw, &lookup, &builtins(opts), mode).text
    }

    /// Look up the pending query variables, each once every variable its query uses is
    /// bound (Grafana's chained variables), in declaration order among those ready.
    pub async fn resolve(
        &mut self,
        vars: &[Variable],
        opts: &Options,
        resolver: &dyn VariableResolver,
        warnings: &mut Vec<Finding>,
    ) {
        let started = Instant::now();
        let mut sent = 0usize;
        loop {
            let names: Vec<&str> = self
                .pending
                .iter()
                .map(|i| vars[*i].name.as_str())
                .collect();
            let ready = self.pending.iter().position(|i| {
                let refs = super::references(vars[*i].query.as_deref().unwrap_or(""));
                !refs.iter().any(|r| names.contains(&r.as_str()))
            });
            let Some(at) = ready else { break };
            let v = &vars[self.pending.remove(at)];
            let shown = crate::sanitize::sanitize(v.query.as_deref().unwrap_or(""), false, 120)
                .into_owned();
            let looked = self.look_up(v, opts, resolver, started, &mut sent).await;
            match looked {
                Looked::Values(values) => {
                    let mut values = apply_regex(v, values, warnings);
                    var_query::sort_values(&mut values, v.sort);
                    let binding = choose(v, &values, warnings);
                    self.bind(&v.name, binding);
                    self.offered.push((v.name.clone(), values));
                }
                Looked::Failed(why) => {
                    warnings.push(Finding::new(
                        &v.path,
                        format!(
                            "${} ({shown}) {why}; queries using ${} are not converted",
                            v.name, v.name
                        ),
                    ));
                    self.failed
                        .push((v.name.clone(), format!("its query ({shown}) {why}")));
                }
            }
        }
        // What is left depends on itself through others.
        for i in std::mem::take(&mut self.pending) {
            let v = &vars[i];
            (self.failed).push((
                v.name.clone(),
                "it depends on itself through other variables".into(),
            ));
            warnings.push(Finding::new(
                &v.path,
                format!("${} depends on itself through other variables; queries using ${} are not converted", v.name, v.name),
            ));
        }
    }

    /// Run one variable's query through `resolver`, within the look-up count and budget.
    async fn look_up(
        &self,
        v: &Variable,
        opts: &Options,
        resolver: &dyn VariableResolver,
        started: Instant,
        sent: &mut usize,
    ) -> Looked {
        let lookup = |n: &str| self.get(n);
        let raw = v.query.as_deref().unwrap_or("");
        let done = interpolate(raw, &lookup, &builtins(opts), Mode::Query);
        if let Some(n) = done.unresolved.first() {
            return Looked::Failed(format!(
                "depends on ${n}, which has no value, so it was not looked up"
            ));
        }
        let Some(query) = var_query::parse(&done.text) else {
            return Looked::Failed("is not a query warroom can send to Prometheus".into());
        };
        if let Some(why) = unsendable(&query) {
            return Looked::Failed(why);
        }
        if *sent >= MAX_LOOKUPS {
            return Looked::Failed(format!(
                "was not looked up: at most {MAX_LOOKUPS} look-ups are made for one dashboard"
            ));
        }
        let left = opts.budget.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Looked::Failed(format!(
                "was not looked up: the {} for all look-ups ran out",
                fmt_secs(opts.budget)
            ));
        }
        *sent += 1;
        let asked = match &query {
            VarQuery::LabelValues { selector, label } => {
                resolver.label_values(label, selector.as_deref())
            }
            VarQuery::LabelNames(selector) => resolver.label_names(selector.as_deref()),
            VarQuery::Metrics(_) => resolver.label_values("__name__", None),
            VarQuery::QueryResult(expr) => resolver.query_result(expr),
        };
        let values = match tokio::time::timeout(left, asked).await {
            Ok(Ok(values)) => values,
            Ok(Err(e)) => {
                return Looked::Failed(format!(
                    "could not be looked up in {}: {e}",
                    crate::sanitize::sanitize(&resolver.describe(), false, 120)
                ));
            }
            Err(_) => {
                return Looked::Failed(format!(
                    "could not be looked up: no answer within {}",
                    fmt_secs(left)
                ));
            }
        };
        match &query {
            VarQuery::Metrics(pattern) => match regex::RegexBuilder::new(pattern)
                .size_limit(1 << 20)
                .build()
            {
                Ok(re) => Looked::Values(values.into_iter().filter(|m| re.is_match(m)).collect()),
                Err(_) => Looked::Failed("has a metrics() regex warroom cannot read".into()),
            },
            _ => Looked::Values(values),
        }
    }

    /// One warning for each query variable left unresolved for want of a resolver.
    pub fn warn_unresolved(&self, vars: &[Variable], warnings: &mut Vec<Finding>) {
        for i in &self.pending {
            let v = &vars[*i];
            warnings.push(Finding::new(
                &v.path,
                format!(
                    "${} ({}) needs a Prometheus to look up its values, and none was given \
                     (--prometheus URL); queries using ${} keep it, and the console and \
                     `warroom record` resolve it against their Prometheus when they start",
                    v.name,
                    crate::sanitize::sanitize(v.query.as_deref().unwrap_or(""), false, 120),
                    v.name
                ),
            ));
        }
    }
}

/// Why a variable query is not sent: a selector that is not one, or PromQL the parser refuses.
fn unsendable(q: &VarQuery) -> Option<String> {
    match q {
        VarQuery::LabelValues {
            selector: Some(s), ..
        }
        | VarQuery::LabelNames(Some(s)) => (!is_selector(s))
            .then(|| "does not give a series selector warroom can send to Prometheus".to_string()),
        VarQuery::QueryResult(e) => super::promql::parse_promql(e).err().map(|e| {
            format!(
                "does not give PromQL warroom can send: {}",
                crate::sanitize::sanitize(e.lines().next().unwrap_or(""), false, 120)
            )
        }),
        _ => None,
    }
}

fn fmt_secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

/// A bare series selector (`up`, `up{job="x"}`, `{__name__=~"a.*"}`), as `match[]` takes.
fn is_selector(s: &str) -> bool {
    if s.len() > super::promql::MAX_EXPR_BYTES {
        return false;
    }
    matches!(
        super::promql::parse_promql(s),
        Ok(promql_parser::parser::Expr::VectorSelector(_))
    )
}

/// The query variables a dashboard looks up, as `(name, query)`.
pub fn lookups(vars: &[Variable]) -> Vec<(String, String)> {
    vars.iter()
        .filter(|v| {
            v.kind == VarKind::Query && !(v.include_all && is_all(v) && v.all_value.is_some())
        })
        .filter_map(|v| Some((v.name.clone(), v.query.clone()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(multi: bool, all: bool, current: &[&str]) -> Variable {
        Variable {
            path: "templating.list[0]".into(),
            name: "pod".into(),
            kind: VarKind::Query,
            query: Some("label_values(pod)".into()),
            current: current
                .iter()
                .map(std::string::ToString::to_string)
                .collect(),
            options: Vec::new(),
            multi,
            include_all: all,
            all_value: None,
            regex: None,
            sort: 0,
            filters: 0,
        }
    }

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn choosing_values_as_grafana_does() {
        let values = strings(&["a", "b", "c"]);
        let mut w = Vec::new();
        let one = |s: &str| Binding::One(s.into());
        let many = |s: &[&str]| Binding::Many(strings(s));
        assert_eq!(
            choose(&var(false, false, &["b"]), &values, &mut w),
            one("b")
        );
        assert!(w.is_empty());
        // A saved value not offered: the first, with a word.
        assert_eq!(
            choose(&var(false, false, &["gone"]), &values, &mut w),
            one("a")
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(
            choose(&var(true, false, &["c", "gone"]), &values, &mut w),
            many(&["c"])
        );
        assert_eq!(
            choose(&var(true, true, &["gone"]), &values, &mut w),
            many(&["a"])
        );
        // Include-all but single: one value, regex-formatted.
        assert_eq!(
            choose(&var(false, true, &["b"]), &values, &mut w),
            many(&["b"])
        );
        let all = Binding::All {
            values: values.clone(),
            custom: None,
        };
        assert_eq!(choose(&var(true, true, &["$__all"]), &values, &mut w), all);
        let mut custom = var(false, true, &["$__all"]);
        custom.all_value = Some(".+".into());
        let all = Binding::All {
            values: values.clone(),
            custom: Some(".+".into()),
        };
        assert_eq!(choose(&custom, &values, &mut w), all);
        // "$__all" saved on a variable without All: the first value.
        assert_eq!(
            choose(&var(false, false, &["$__all"]), &values, &mut w),
            one("a")
        );
        // No values: the empty string, no value, or All of nothing.
        assert_eq!(choose(&var(false, false, &["x"]), &[], &mut w), one(""));
        assert_eq!(choose(&var(true, false, &["x"]), &[], &mut w), many(&[]));
        let none = Binding::All {
            values: Vec::new(),
            custom: None,
        };
        assert_eq!(choose(&var(true, true, &[]), &[], &mut w), none);
    }

    #[test]
    fn custom_values_as_grafana_splits_them() {
        let mut v = var(false, false, &[]);
        v.kind = VarKind::Custom;
        v.query = Some("a, b\\,c ,Prod : prod-1,".into());
        assert_eq!(custom_values(&v), strings(&["a", "b,c", "prod-1"]));
        v.query = None;
        v.options = strings(&["$__all", "x"]);
        assert_eq!(custom_values(&v), strings(&["x"]));
    }

    #[test]
    fn regexes_filter_and_capture() {
        let mut v = var(false, false, &[]);
        v.regex = Some("/api-(.*)/".into());
        let mut w = Vec::new();
        let out = apply_regex(&v, strings(&["api-1", "db-1", "api-2", "api-1"]), &mut w);
        assert_eq!(out, strings(&["1", "2"]));
        v.regex = Some("/(?P<text>x)(?P<value>y)/".into());
        assert_eq!(apply_regex(&v, strings(&["xy"]), &mut w), strings(&["y"]));
        v.regex = Some("/(unclosed/".into());
        assert_eq!(apply_regex(&v, strings(&["a"]), &mut w), strings(&["a"]));
        assert_eq!(w.len(), 1);
    }
}
