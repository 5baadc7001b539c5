//! The queries of Grafana's Prometheus query variables, and the order their values are sorted
//! in.
//!
//! Grafana's Prometheus data source reads a variable's query (after interpolating the
//! variables it uses) as one of `label_names()`, `label_names(selector)`,
//! `label_values(label)`, `label_values(selector, label)`, `metrics(regex)` and
//! `query_result(expr)`; anything else is run as `query_result` of the whole text. The values
//! are then filtered by the variable's regex and sorted by its `sort` (`VariableSort`).

use std::cmp::Ordering;

/// A variable's query, its variables already interpolated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VarQuery {
    /// `label_names()` / `label_names(selector)`: `/api/v1/labels`.
    LabelNames(Option<String>),
    /// `label_values(label)` / `label_values(selector, label)`: `/api/v1/label/…/values`.
    LabelValues {
        selector: Option<String>,
        label: String,
    },
    /// `metrics(regex)`: the metric names matching the regex.
    Metrics(String),
    /// `query_result(expr)`: the instant vector, each series as its text.
    QueryResult(String),
}

/// The argument of `name( … )` when `q` is that call and nothing else.
fn call<'a>(q: &'a str, name: &str) -> Option<&'a str> {
    let inner = q.strip_prefix(name)?.trim_start();
    inner.strip_prefix('(')?.strip_suffix(')').map(str::trim)
}

fn is_label_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The byte offset of the last comma outside brackets and quotes.
fn last_top_level_comma(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut split = None;
    for (i, c) in s.char_indices() {
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
    split
}

/// `label_values(label)` or `label_values(selector, label)`: `(selector, label)`.
pub fn parse_label_values(q: &str) -> Option<(Option<String>, String)> {
    let inner = call(q.trim(), "label_values")?;
    let (selector, label) = match last_top_level_comma(inner) {
        Some(i) => (Some(inner[..i].trim().to_string()), inner[i + 1..].trim()),
        None => (None, inner),
    };
    is_label_name(label).then(|| (selector.filter(|s| !s.is_empty()), label.to_string()))
}

/// Read a variable's query as Grafana's Prometheus data source does; `None` for an empty one.
pub fn parse(q: &str) -> Option<VarQuery> {
    let q = q.trim();
    if q.is_empty() {
        return None;
    }
    if let Some(inner) = call(q, "label_names") {
        return Some(VarQuery::LabelNames(
            Some(inner.to_string()).filter(|s| !s.is_empty()),
        ));
    }
    if q.starts_with("label_values") {
        // A label_values(…) that is not well formed is not sent as PromQL either.
        return parse_label_values(q)
            .map(|(selector, label)| VarQuery::LabelValues { selector, label });
    }
    if let Some(inner) = call(q, "metrics").filter(|i| !i.is_empty()) {
        return Some(VarQuery::Metrics(inner.to_string()));
    }
    if let Some(inner) = call(q, "query_result").filter(|i| !i.is_empty()) {
        return Some(VarQuery::QueryResult(inner.to_string()));
    }
    Some(VarQuery::QueryResult(q.to_string()))
}

/// The first run of digits in `s`, as Grafana's numerical sort reads it (-1 for none).
fn first_number(s: &str) -> f64 {
    let digits: String = s
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap_or(-1.0)
}

/// Natural order: runs of digits compare as numbers, the rest case-insensitively.
fn natural(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.chars().peekable(), b.chars().peekable());
    loop {
        match (x.peek().copied(), y.peek().copied()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let run = |it: &mut std::iter::Peekable<std::str::Chars<'_>>| {
                    let mut n = String::new();
                    while let Some(c) = it.next_if(char::is_ascii_digit) {
                        n.push(c);
                    }
                    n.trim_start_matches('0').to_string()
                };
                let (m, n) = (run(&mut x), run(&mut y));
                let o = m.len().cmp(&n.len()).then_with(|| m.cmp(&n));
                if o != Ordering::Equal {
                    return o;
                }
            }
            (Some(c), Some(d)) => {
                let o = c.to_lowercase().cmp(d.to_lowercase());
                if o != Ordering::Equal {
                    return o;
                }
                x.next();
                y.next();
            }
        }
    }
}

/// Sort values by Grafana's `VariableSort` (`sort` 0 to 8): odd ascending, even descending, in
/// alphabetical, numerical, case-insensitive and natural pairs. The sort is stable, as
/// lodash's `sortBy` is.
pub fn sort_values(values: &mut [String], sort: u8) {
    if sort == 0 {
        return;
    }
    match sort.div_ceil(2) {
        1 => values.sort(),
        2 => values.sort_by(|a, b| first_number(a).total_cmp(&first_number(b))),
        3 => values.sort_by_key(|v| v.to_lowercase()),
        4 => values.sort_by(|a, b| natural(a, b)),
        _ => return,
    }
    if sort.is_multiple_of(2) {
        values.reverse();
    }
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

    #[test]
    fn every_query_form() {
        assert_eq!(parse("label_names()"), Some(VarQuery::LabelNames(None)));
        assert_eq!(
            parse("label_names(up{job=\"x\"})"),
            Some(VarQuery::LabelNames(Some("up{job=\"x\"}".into())))
        );
        assert_eq!(
            parse("metrics(node_.*)"),
            Some(VarQuery::Metrics("node_.*".into()))
        );
        assert_eq!(
            parse("query_result(topk(3, up))"),
            Some(VarQuery::QueryResult("topk(3, up)".into()))
        );
        // Grafana runs any other text as a query.
        assert_eq!(
            parse("up{job=\"x\"}"),
            Some(VarQuery::QueryResult("up{job=\"x\"}".into()))
        );
        assert_eq!(parse("label_values(up, 1x)"), None);
        assert_eq!(parse("  "), None);
    }

    #[test]
    fn sorts_as_grafana_does() {
        let v = |s: &[&str]| s.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
        let mut a = v(&["b10", "B2", "a1", "b2"]);
        sort_values(&mut a, 0);
        assert_eq!(a, v(&["b10", "B2", "a1", "b2"]));
        sort_values(&mut a, 1);
        assert_eq!(a, v(&["B2", "a1", "b10", "b2"]));
        sort_values(&mut a, 2);
        assert_eq!(a, v(&["b2", "b10", "a1", "B2"]));
        sort_values(&mut a, 3);
        assert_eq!(a, v(&["a1", "b2", "B2", "b10"]));
        sort_values(&mut a, 4);
        assert_eq!(a, v(&["b10", "B2", "b2", "a1"]));
        sort_values(&mut a, 5);
        assert_eq!(a, v(&["a1", "b10", "B2", "b2"]));
        sort_values(&mut a, 7);
        assert_eq!(a, v(&["a1", "B2", "b2", "b10"]));
        sort_values(&mut a, 8);
        assert_eq!(a, v(&["b10", "b2", "B2", "a1"]));
    }
}
