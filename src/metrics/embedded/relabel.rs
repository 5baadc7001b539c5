//! Functions that change or order by labels: `label_replace`, `label_join`, `sort_by_label`
//! and `sort_by_label_desc`, and the labels `absent` answers with.
//!
//! `sort_by_label` is Prometheus's experimental function (2.49 on, behind
//! `--enable-feature=promql-experimental-functions`): label values compared in natural order
//! (runs of digits as numbers), ties broken by the whole label set.

use super::eval::{Elem, EvalError, ensure_unique};
use crate::metrics::Labels;
use promql_parser::label::MatchOp;
use promql_parser::parser::Expr;
use std::cmp::Ordering;

/// Whether `name` is a valid Prometheus label name (`[a-zA-Z_][a-zA-Z0-9_]*`).
pub fn valid_label_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Set `name` to `value`, an empty value removing the label (as Prometheus's builder does).
fn set(labels: &mut Labels, name: &str, value: String) {
    if value.is_empty() {
        labels.remove(name);
    } else {
        labels.insert(name.to_string(), value);
    }
}

/// `label_replace(v, dst, replacement, src, regex)`.
pub fn label_replace(
    mut els: Vec<Elem>,
    dst: &str,
    replacement: &str,
    src: &str,
    regex: &str,
) -> Result<Vec<Elem>, EvalError> {
    let re = regex::Regex::new(&format!("^(?:{regex})$")).map_err(|_| {
        EvalError::Execution(format!(
            "invalid regular expression in label_replace(): {regex}"
        ))
    })?;
    if !valid_label_name(dst) {
        return Err(EvalError::Execution(format!(
            "invalid destination label name in label_replace(): {dst}"
        )));
    }
    for e in &mut els {
        let value = e.labels.get(src).cloned().unwrap_or_default();
        if let Some(caps) = re.captures(&value) {
            let mut res = String::new();
            caps.expand(replacement, &mut res);
            set(&mut e.labels, dst, res);
        }
    }
    ensure_unique(&els)?;
    Ok(els)
}

/// `label_join(v, dst, separator, src...)`.
pub fn label_join(
    mut els: Vec<Elem>,
    dst: &str,
    sep: &str,
    srcs: &[String],
) -> Result<Vec<Elem>, EvalError> {
    if let Some(bad) = srcs.iter().find(|s| !valid_label_name(s)) {
        return Err(EvalError::Execution(format!(
            "invalid source label name in label_join(): {bad}"
        )));
    }
    if !valid_label_name(dst) {
        return Err(EvalError::Execution(format!(
            "invalid destination label name in label_join(): {dst}"
        )));
    }
    for e in &mut els {
        let joined = srcs
            .iter()
            .map(|s| e.labels.get(s).map(String::as_str).unwrap_or(""))
            .collect::<Vec<_>>()
            .join(sep);
        set(&mut e.labels, dst, joined);
    }
    ensure_unique(&els)?;
    Ok(els)
}

/// `sort_by_label(v, label...)` (or `_desc`): natural order of the listed labels' values, then
/// the whole label set.
pub fn sort_by_label(els: &mut [Elem], by: &[String], descending: bool) {
    els.sort_by(|a, b| {
        let mut o = Ordering::Equal;
        for l in by {
            let (x, y) = (
                a.labels.get(l).map(String::as_str).unwrap_or(""),
                b.labels.get(l).map(String::as_str).unwrap_or(""),
            );
            if x != y {
                o = natural_cmp(x, y);
                break;
            }
        }
        if o == Ordering::Equal {
            o = a.labels.cmp(&b.labels);
        }
        if descending { o.reverse() } else { o }
    });
}

/// Natural order: runs of digits compare as numbers, other runs as text.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (chunks(a), chunks(b));
    loop {
        match (x.next(), y.next()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) => {
                let o = match (p.parse::<u128>(), q.parse::<u128>()) {
                    (Ok(m), Ok(n)) => m.cmp(&n),
                    _ => p.cmp(q),
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
        }
    }
}

/// `s` split into runs of digits and runs of anything else.
fn chunks(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let digit = first.is_ascii_digit();
        let end = rest
            .find(|c: char| c.is_ascii_digit() != digit)
            .unwrap_or(rest.len());
        let (chunk, tail) = rest.split_at(end);
        rest = tail;
        Some(chunk)
    })
}

/// The labels `absent(x{a="b"})` and `absent_over_time(x{a="b"}[5m])` answer with: the
/// equality matchers' labels, except the name and any label matched more than once (which
/// value would it be?).
pub fn absent_labels(e: &Expr) -> Labels {
    let vs = match super::over_time::unparen(e) {
        Expr::VectorSelector(vs) => vs,
        Expr::MatrixSelector(ms) => &ms.vs,
        _ => return Labels::new(),
    };
    let mut out = Labels::new();
    let mut seen = std::collections::HashSet::new();
    for m in &vs.matchers.matchers {
        if m.name == "__name__" {
            continue;
        }
        if matches!(m.op, MatchOp::Equal) && !seen.contains(&m.name) {
            seen.insert(m.name.clone());
            out.insert(m.name.clone(), m.value.clone());
        } else {
            out.remove(&m.name);
        }
    }
    out.retain(|_, v| !v.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_reads_numbers_as_numbers() {
        assert_eq!(natural_cmp("a2", "a10"), Ordering::Less);
        assert_eq!(natural_cmp("10", "9"), Ordering::Greater);
        assert_eq!(natural_cmp("abc", "abd"), Ordering::Less);
        assert_eq!(natural_cmp("a", "a1"), Ordering::Less);
        assert!(valid_label_name("_a1") && !valid_label_name("invalid-name"));
        assert!(!valid_label_name("1a") && !valid_label_name(""));
    }
}
