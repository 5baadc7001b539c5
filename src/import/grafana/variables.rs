//! Template variables to values.
//!
//! Constant, custom, interval, textbox, switch and group-by variables take the value the file
//! gives (`current`, else the first option or the query). A `query` variable of the forms
//! `label_values(label)` and `label_values(selector, label)` is looked up through a
//! [`VariableResolver`]: a single-value variable takes its current value if Prometheus has it,
//! else the first value; a multi-value one its current selection, else all values (a regex
//! `(a|b)` in the query). "All" needs no look-up: it is the custom all value or `.*`, which also
//! matches series that appear after the import. What cannot be resolved stays `$name`, with a
//! warning.

use super::interpolate::{Binding, Builtins, Mode, interpolate};
use super::json::{Board, VarKind, Variable};
use super::{Finding, ImportOptions, MAX_LOOKUPS, VariableResolver};
use std::time::{Duration, Instant};

/// Most variables read from one dashboard.
pub(super) const MAX_VARIABLES: usize = 200;
/// Most values one multi-value variable is spelt out with; more become `.*`.
pub(super) const MAX_SPELT_VALUES: usize = 100;

/// What each variable stands for, and which still need a look-up.
#[derive(Debug, Clone, Default)]
pub(super) struct Bindings {
    bound: Vec<(String, Binding)>,
    /// Indices into `Board::variables` of `label_values` variables not yet looked up.
    pending: Vec<usize>,
}

/// `label_values(label)` or `label_values(selector, label)`: `(selector, label)`.
pub(super) fn parse_label_values(q: &str) -> Option<(Option<String>, String)> {
    let inner = q.trim().strip_prefix("label_values")?.trim_start();
    let inner = inner.strip_prefix('(')?.strip_suffix(')')?;
    // The label follows the last comma outside braces and quotes.
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut split = None;
    for (i, c) in inner.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' | '`' => quote = Some(c),
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => split = Some(i),
            _ => {}
        }
    }
    let (selector, label) = match split {
        Some(i) => (Some(inner[..i].trim().to_string()), inner[i + 1..].trim()),
        None => (None, inner.trim()),
    };
    let valid = !label.is_empty()
        && !label.starts_with(|c: char| c.is_ascii_digit())
        && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then(|| (selector.filter(|s| !s.is_empty()), label.to_string()))
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

/// A custom variable's values: its options, else its query `a,b,c` (or `text : value` pairs).
fn custom_values(v: &Variable) -> Vec<String> {
    let options: Vec<String> = v
        .options
        .iter()
        .filter(|o| o.as_str() != "$__all")
        .cloned()
        .collect();
    if !options.is_empty() {
        return options;
    }
    v.query
        .as_deref()
        .unwrap_or("")
        .split(',')
        .map(|item| match item.split_once(" : ") {
            Some((_, value)) => value.trim().to_string(),
            None => item.trim().to_string(),
        })
        .filter(|s| !s.is_empty())
        .collect()
}

/// The binding of a list variable given its known values.
fn choose(v: &Variable, values: &[String], warnings: &mut Vec<Finding>) -> Option<Binding> {
    if v.include_all && is_all(v) {
        return Some(Binding::All(v.all_value.clone()));
    }
    if v.multi || v.include_all {
        let selected: Vec<String> = v
            .current
            .iter()
            .filter(|c| values.is_empty() || values.contains(c))
            .cloned()
            .collect();
        if !selected.is_empty() {
            return Some(Binding::Many(selected));
        }
        if values.is_empty() {
            return None;
        }
        if values.len() > MAX_SPELT_VALUES {
            warnings.push(Finding::new(
                &v.path,
                format!(
                    "${} has {} values, too many to spell out; the queries use \"{}\" (all)",
                    v.name,
                    values.len(),
                    v.all_value.as_deref().unwrap_or(".*")
                ),
            ));
            return Some(Binding::All(v.all_value.clone()));
        }
        return Some(Binding::Many(values.to_vec()));
    }
    match v.current.first() {
        Some(c) if values.is_empty() || values.contains(c) => Some(Binding::One(c.clone())),
        _ => {
            let first = values.first()?.clone();
            let saved = v.current.first().is_some_and(|c| !c.is_empty());
            if saved || values.len() > 1 {
                let first_shown = crate::sanitize::sanitize(&first, false, 60);
                let message = match v.current.first() {
                    Some(c) if saved => format!(
                        "${} takes one value, and its saved value \"{}\" is not among the {} \
                         found; the panels use \"{first_shown}\": edit the queries to watch \
                         another",
                        v.name,
                        crate::sanitize::sanitize(c, false, 60),
                        values.len()
                    ),
                    _ => format!(
                        "${} takes one value and has none saved; of the {} found the panels use \
                         \"{first_shown}\": edit the queries to watch another",
                        v.name,
                        values.len()
                    ),
                };
                warnings.push(Finding::new(&v.path, message));
            }
            Some(Binding::One(first))
        }
    }
}

/// Grafana's variable regex (`/pattern/flags`): keep matching values, the `value` group or
/// the first group when there is one.
fn apply_regex(v: &Variable, values: Vec<String>, warnings: &mut Vec<Finding>) -> Vec<String> {
    let Some(raw) = v.regex.as_deref() else {
        return values;
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
            return values;
        }
    };
    let mut out: Vec<String> = Vec::new();
    for value in values {
        let Some(caps) = re.captures(&value) else {
            continue;
        };
        let kept = caps
            .name("value")
            .or_else(|| caps.get(1))
            .map(|m| m.as_str().to_string())
            .unwrap_or(value);
        if !out.contains(&kept) {
            out.push(kept);
        }
    }
    out
}

impl Bindings {
    /// Bind everything that needs no look-up; collect the `label_values` variables.
    pub fn offline(board: &Board, opts: &ImportOptions, warnings: &mut Vec<Finding>) -> Self {
        let mut b = Bindings::default();
        // `${VAR_X}` constants an export asks for at import time, with their default.
        for input in &board.inputs {
            if input.kind == "constant"
                && let Some(v) = &input.value
            {
                b.bind(&input.name, Binding::One(v.clone()));
            }
        }
        for (i, v) in board.variables.iter().enumerate() {
            if b.get(&v.name).is_some() || b.pending_index(&board.variables, &v.name).is_some() {
                warnings.push(Finding::new(
                    &v.path,
                    format!("a second variable named ${}; the first one is used", v.name),
                ));
                continue;
            }
            match &v.kind {
                VarKind::Constant | VarKind::Textbox => {
                    let raw = v
                        .query
                        .clone()
                        .or_else(|| v.current.first().cloned())
                        .unwrap_or_default();
                    let value = b.text(&raw, opts);
                    b.bind(&v.name, Binding::One(value));
                }
                VarKind::Custom => {
                    let values = custom_values(v);
                    match choose(v, &values, warnings) {
                        Some(binding) => b.bind(&v.name, binding),
                        None => warnings.push(Finding::new(
                            &v.path,
                            format!(
                                "custom variable ${} has no values; kept as ${}",
                                v.name, v.name
                            ),
                        )),
                    }
                }
                VarKind::Interval => {
                    let current = v.current.first().map(|s| s.trim().to_string());
                    let binding = match current {
                        Some(c) if !c.is_empty() && c != "auto" && !c.starts_with("$__auto") => {
                            Binding::One(c)
                        }
                        Some(_) => Binding::AutoInterval,
                        None => v
                            .query
                            .as_deref()
                            .and_then(|q| q.split(',').map(str::trim).find(|s| !s.is_empty()))
                            .map(|s| Binding::One(s.to_string()))
                            .unwrap_or(Binding::AutoInterval),
                    };
                    b.bind(&v.name, binding);
                }
                VarKind::Datasource => {
                    let value = v
                        .query
                        .clone()
                        .or_else(|| first_value(v))
                        .unwrap_or_default();
                    b.bind(&v.name, Binding::One(value));
                }
                VarKind::Switch => {
                    b.bind(
                        &v.name,
                        Binding::One(first_value(v).unwrap_or("false".into())),
                    );
                }
                VarKind::GroupBy => match v.current.is_empty() {
                    false => b.bind(&v.name, Binding::One(v.current.join(","))),
                    true => warnings.push(Finding::new(
                        &v.path,
                        format!(
                            "group-by variable ${} has no labels chosen; kept as ${}",
                            v.name, v.name
                        ),
                    )),
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
                VarKind::Other(kind) => warnings.push(Finding::new(
                    &v.path,
                    format!(
                        "variable ${} is of kind \"{}\", which warroom does not know; kept as ${}",
                        v.name,
                        crate::sanitize::sanitize(kind, false, 40),
                        v.name
                    ),
                )),
                VarKind::Query => {
                    if v.include_all && is_all(v) {
                        b.bind(&v.name, Binding::All(v.all_value.clone()));
                        continue;
                    }
                    match v.query.as_deref().map(parse_label_values) {
                        Some(Some(_)) => b.pending.push(i),
                        Some(None) => warnings.push(Finding::new(
                            &v.path,
                            format!(
                                "query variable ${} uses \"{}\"; only label_values(…) is looked up, \
                                 so it is kept as ${}",
                                v.name,
                                crate::sanitize::sanitize(v.query.as_deref().unwrap_or(""), false, 120),
                                v.name
                            ),
                        )),
                        None => warnings.push(Finding::new(
                            &v.path,
                            format!("query variable ${} has no query; kept as ${}", v.name, v.name),
                        )),
                    }
                }
            }
        }
        b
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

    /// Text with the bindings so far (for a constant that refers to an input).
    fn text(&self, raw: &str, opts: &ImportOptions) -> String {
        let lookup = |n: &str| self.get(n);
        let builtins = Builtins {
            interval: opts.scrape_interval,
            rate_interval: opts.scrape_interval * 4,
            range: opts.range,
        };
        interpolate(raw, &lookup, &builtins, Mode::Text).text
    }

    /// Look up the pending `label_values` variables in declaration order.
    pub async fn resolve(
        &mut self,
        board: &Board,
        opts: &ImportOptions,
        resolver: &dyn VariableResolver,
        warnings: &mut Vec<Finding>,
    ) {
        let started = Instant::now();
        let pending = std::mem::take(&mut self.pending);
        let mut sent = 0usize;
        for i in pending {
            let v = &board.variables[i];
            let Some((selector, label)) = v.query.as_deref().and_then(parse_label_values) else {
                continue;
            };
            let shown = crate::sanitize::sanitize(v.query.as_deref().unwrap_or(""), false, 120)
                .into_owned();
            let kept = |why: String| {
                Finding::new(
                    &v.path,
                    format!("${} ({shown}) {why}; kept as ${}", v.name, v.name),
                )
            };
            let selector = match selector {
                None => None,
                Some(s) => {
                    let lookup = |n: &str| self.get(n);
                    let builtins = Builtins {
                        interval: opts.scrape_interval,
                        rate_interval: opts.scrape_interval * 4,
                        range: opts.range,
                    };
                    let out = interpolate(&s, &lookup, &builtins, Mode::Query);
                    if let Some(n) = out.unresolved.first() {
                        warnings.push(kept(format!(
                            "depends on ${n}, which has no value, so it was not looked up"
                        )));
                        continue;
                    }
                    if !is_selector(&out.text) {
                        warnings.push(kept(
                            "does not give a series selector warroom can send to Prometheus"
                                .to_string(),
                        ));
                        continue;
                    }
                    Some(out.text)
                }
            };
            if sent >= MAX_LOOKUPS {
                warnings.push(kept(format!(
                    "was not looked up: at most {MAX_LOOKUPS} look-ups are made for one dashboard"
                )));
                continue;
            }
            let left = opts.resolve_budget.saturating_sub(started.elapsed());
            if left.is_zero() {
                warnings.push(kept(format!(
                    "was not looked up: the {} for all look-ups ran out",
                    fmt_secs(opts.resolve_budget)
                )));
                continue;
            }
            sent += 1;
            let asked = resolver.label_values(&label, selector.as_deref());
            let values = match tokio::time::timeout(left, asked).await {
                Ok(Ok(values)) => values,
                Ok(Err(e)) => {
                    warnings.push(kept(format!(
                        "could not be looked up in {}: {e}",
                        crate::sanitize::sanitize(&resolver.describe(), false, 120)
                    )));
                    continue;
                }
                Err(_) => {
                    warnings.push(kept(format!(
                        "could not be looked up: no answer within {}",
                        fmt_secs(left)
                    )));
                    continue;
                }
            };
            let values = apply_regex(v, values, warnings);
            if values.is_empty() {
                warnings.push(kept(format!(
                    "has no values in {}",
                    crate::sanitize::sanitize(&resolver.describe(), false, 120)
                )));
                continue;
            }
            if let Some(binding) = choose(v, &values, warnings) {
                self.bind(&v.name, binding);
            }
        }
    }

    /// One warning for each `label_values` variable left unresolved for want of a resolver.
    pub fn warn_unresolved(&self, board: &Board, warnings: &mut Vec<Finding>) {
        for i in &self.pending {
            let v = &board.variables[*i];
            warnings.push(Finding::new(
                &v.path,
                format!(
                    "${} ({}) needs a Prometheus to look up its values, and none was given; kept \
                     as ${}",
                    v.name,
                    crate::sanitize::sanitize(v.query.as_deref().unwrap_or(""), false, 120),
                    v.name
                ),
            ));
        }
    }

    /// Whether `name` is a variable of the dashboard (bound or not), or a constant the export
    /// asks for. A data source input (`${DS_…}`) is not: it has no place in a query.
    pub fn declared(board: &Board, name: &str) -> bool {
        board.variables.iter().any(|v| v.name == name)
            || board
                .inputs
                .iter()
                .any(|i| i.name == name && i.kind == "constant")
    }
}

fn fmt_secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

/// A bare series selector (`up`, `up{job="x"}`, `{__name__=~"a.*"}`), as `match[]` takes.
fn is_selector(s: &str) -> bool {
    if s.len() > super::MAX_EXPR_BYTES {
        return false;
    }
    matches!(
        super::convert::parse_promql(s),
        Ok(promql_parser::parser::Expr::VectorSelector(_))
    )
}

/// The `label_values` look-ups a dashboard needs, as `(name, query)`.
pub(super) fn lookups(board: &Board) -> Vec<(String, String)> {
    board
        .variables
        .iter()
        .filter(|v| v.kind == VarKind::Query && !(v.include_all && is_all(v)))
        .filter_map(|v| {
            let q = v.query.as_deref()?;
            parse_label_values(q)?;
            Some((v.name.clone(), q.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_forms() {
        assert_eq!(
            parse_label_values("label_values(pod)"),
            Some((None, "pod".into()))
        );
        assert_eq!(
            parse_label_values(" label_values(up{job=\"a,b\", x=~\"$y\"}, instance) "),
            Some((Some("up{job=\"a,b\", x=~\"$y\"}".into()), "instance".into()))
        );
        assert_eq!(parse_label_values("label_values(up, 1x)"), None);
        assert_eq!(parse_label_values("query_result(up)"), None);
        assert_eq!(parse_label_values("label_values(up,"), None);
        assert_eq!(parse_label_values("label_values()"), None);
    }

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
            filters: 0,
        }
    }

    #[test]
    fn choosing_values() {
        let values: Vec<String> = vec!["a".into(), "b".into(), "c".into()];
        let mut w = Vec::new();
        assert_eq!(
            choose(&var(false, false, &["b"]), &values, &mut w),
            Some(Binding::One("b".into()))
        );
        assert!(w.is_empty());
        assert_eq!(
            choose(&var(false, false, &["gone"]), &values, &mut w),
            Some(Binding::One("a".into()))
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(
            choose(&var(true, false, &["c", "gone"]), &values, &mut w),
            Some(Binding::Many(vec!["c".into()]))
        );
        assert_eq!(
            choose(&var(true, true, &["gone"]), &values, &mut w),
            Some(Binding::Many(values.clone()))
        );
        assert_eq!(
            choose(&var(true, true, &["$__all"]), &values, &mut w),
            Some(Binding::All(None))
        );
        assert_eq!(choose(&var(false, false, &[]), &[], &mut w), None);
    }

    #[test]
    fn regexes_filter_and_capture() {
        let mut v = var(false, false, &[]);
        v.regex = Some("/api-(.*)/".into());
        let mut w = Vec::new();
        let out = apply_regex(
            &v,
            vec!["api-1".into(), "db-1".into(), "api-2".into()],
            &mut w,
        );
        assert_eq!(out, vec!["1".to_string(), "2".to_string()]);
        v.regex = Some("/(?P<text>x)(?P<value>y)/".into());
        assert_eq!(
            apply_regex(&v, vec!["xy".into()], &mut w),
            vec!["y".to_string()]
        );
        v.regex = Some("/(unclosed/".into());
        assert_eq!(
            apply_regex(&v, vec!["a".into()], &mut w),
            vec!["a".to_string()]
        );
        assert_eq!(w.len(), 1);
    }
}
