//! Binary operators: arithmetic and comparisons between scalars and vectors, vector matching
//! (`on`, `ignoring`, `group_left`, `group_right`) and the set operators `and`, `or`, `unless`,
//! with Prometheus's rules for which labels survive.

use super::eval::{Elem, EvalError, Evaluator, Value, drop_names};
use crate::metrics::Labels;
use promql_parser::parser::{BinModifier, BinaryExpr, LabelModifier, VectorMatchCardinality};
use std::collections::{HashMap, HashSet};

pub fn binary<'a>(ev: &Evaluator<'a>, b: &BinaryExpr, t: i64) -> Result<Value<'a>, EvalError> {
    let op = b.op.to_string();
    let lhs = ev.eval(&b.lhs, t)?;
    let rhs = ev.eval(&b.rhs, t)?;
    let modifier = b.modifier.as_ref();
    let return_bool = modifier.is_some_and(|m| m.return_bool);
    match (lhs, rhs) {
        (Value::Scalar(l), Value::Scalar(r)) => {
            let (v, keep) = apply(&op, l, r)?;
            if is_comparison(&op) && !return_bool {
                return Err(EvalError::Execution(
                    "comparisons between scalars must use the bool modifier".into(),
                ));
            }
            Ok(Value::Scalar(if return_bool {
                bool_value(keep)
            } else {
                v
            }))
        }
        (Value::Vector(l), Value::Scalar(r)) => vector_scalar(&op, l, r, false, return_bool),
        (Value::Scalar(l), Value::Vector(r)) => vector_scalar(&op, r, l, true, return_bool),
        (Value::Vector(l), Value::Vector(r)) => match op.as_str() {
            "and" | "or" | "unless" => Ok(Value::Vector(set_op(&op, l, r, modifier))),
            _ => vector_vector(&op, l, r, modifier, return_bool).map(Value::Vector),
        },
        _ => Err(EvalError::Execution(format!(
            "the operator \"{op}\" needs scalars or instant vectors on both sides"
        ))),
    }
}

fn is_comparison(op: &str) -> bool {
    matches!(op, "==" | "!=" | ">" | "<" | ">=" | "<=")
}

fn bool_value(keep: bool) -> f64 {
    if keep { 1.0 } else { 0.0 }
}

/// `(value, keep)`: comparisons keep the left value when true; arithmetic always keeps.
fn apply(op: &str, l: f64, r: f64) -> Result<(f64, bool), EvalError> {
    Ok(match op {
        "+" => (l + r, true),
        "-" => (l - r, true),
        "*" => (l * r, true),
        "/" => (l / r, true),
        "%" => (l % r, true),
        "^" => (l.powf(r), true),
        "atan2" => (l.atan2(r), true),
        "==" => (l, l == r),
        "!=" => (l, l != r),
        ">" => (l, l > r),
        "<" => (l, l < r),
        ">=" => (l, l >= r),
        "<=" => (l, l <= r),
        other => return Err(EvalError::Unsupported(format!("the operator \"{other}\""))),
    })
}

fn drop_name(mut labels: Labels) -> Labels {
    labels.remove("__name__");
    labels
}

fn vector_scalar(
    op: &str,
    els: Vec<Elem>,
    s: f64,
    scalar_on_left: bool,
    return_bool: bool,
) -> Result<Value<'static>, EvalError> {
    let mut out = Vec::with_capacity(els.len());
    for e in els {
        let (l, r) = if scalar_on_left { (s, e.v) } else { (e.v, s) };
        let (mut v, keep) = apply(op, l, r)?;
        // A comparison filters the vector and keeps the vector's own value.
        if is_comparison(op) && scalar_on_left {
            v = e.v;
        }
        if return_bool {
            v = bool_value(keep);
        } else if !keep {
            continue;
        }
        out.push(Elem {
            labels: e.labels,
            v,
        });
    }
    if !is_comparison(op) || return_bool {
        out = drop_names(out)?;
    }
    Ok(Value::Vector(out))
}

/// The labels two elements are matched on.
fn signature(labels: &Labels, matching: Option<&LabelModifier>) -> Labels {
    match matching {
        Some(LabelModifier::Include(on)) => labels
            .iter()
            .filter(|(k, _)| on.labels.iter().any(|l| l == *k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        Some(LabelModifier::Exclude(ign)) => labels
            .iter()
            .filter(|(k, _)| k.as_str() != "__name__" && !ign.labels.iter().any(|l| l == *k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        None => drop_name(labels.clone()),
    }
}

fn set_op(op: &str, l: Vec<Elem>, r: Vec<Elem>, m: Option<&BinModifier>) -> Vec<Elem> {
    let matching = m.and_then(|m| m.matching.as_ref());
    match op {
        "and" => {
            let right: HashSet<Labels> = r.iter().map(|e| signature(&e.labels, matching)).collect();
            l.into_iter()
                .filter(|e| right.contains(&signature(&e.labels, matching)))
                .collect()
        }
        "unless" => {
            let right: HashSet<Labels> = r.iter().map(|e| signature(&e.labels, matching)).collect();
            l.into_iter()
                .filter(|e| !right.contains(&signature(&e.labels, matching)))
                .collect()
        }
        _ => {
            let left: HashSet<Labels> = l.iter().map(|e| signature(&e.labels, matching)).collect();
            let mut out = l;
            out.extend(
                r.into_iter()
                    .filter(|e| !left.contains(&signature(&e.labels, matching))),
            );
            out
        }
    }
}

fn vector_vector(
    op: &str,
    l: Vec<Elem>,
    r: Vec<Elem>,
    m: Option<&BinModifier>,
    return_bool: bool,
) -> Result<Vec<Elem>, EvalError> {
    let matching = m.and_then(|m| m.matching.as_ref());
    let card = m.map(|m| &m.card);
    let (include, one_to_many) = match card {
        Some(VectorMatchCardinality::ManyToOne(ls)) => (ls.labels.clone(), false),
        Some(VectorMatchCardinality::OneToMany(ls)) => (ls.labels.clone(), true),
        _ => (Vec::new(), false),
    };
    let one_to_one = !matches!(
        card,
        Some(VectorMatchCardinality::ManyToOne(_) | VectorMatchCardinality::OneToMany(_))
    );
    // Nothing can match: Prometheus answers before it looks for duplicates.
    if l.is_empty() || r.is_empty() {
        return Ok(Vec::new());
    }
    // The "one" side is indexed; with group_right it is the left.
    let (many, one) = if one_to_many { (r, l) } else { (l, r) };
    let mut index: HashMap<Labels, Elem> = HashMap::new();
    for e in one {
        let sig = signature(&e.labels, matching);
        if index.insert(sig, e).is_some() {
            return Err(EvalError::Execution(format!(
                "found duplicate series for the match group on the {} side of \"{op}\": many-to-many matching not allowed",
                if one_to_many { "left" } else { "right" }
            )));
        }
    }
    let mut out = Vec::new();
    let mut inserted: HashSet<Labels> = HashSet::new();
    for e in many {
        let sig = signature(&e.labels, matching);
        let Some(other) = index.get(&sig) else {
            continue;
        };
        let (lv, rv) = if one_to_many {
            (other.v, e.v)
        } else {
            (e.v, other.v)
        };
        let (mut v, keep) = apply(op, lv, rv)?;
        if return_bool {
            v = bool_value(keep);
        } else if !keep {
            continue;
        }
        let mut labels = e.labels.clone();
        if !is_comparison(op) || return_bool {
            labels.remove("__name__");
        }
        if one_to_one {
            labels = match matching {
                Some(LabelModifier::Include(on)) => labels
                    .into_iter()
                    .filter(|(k, _)| on.labels.iter().any(|l| l == k))
                    .collect(),
                Some(LabelModifier::Exclude(ign)) => labels
                    .into_iter()
                    .filter(|(k, _)| !ign.labels.iter().any(|l| l == k))
                    .collect(),
                None => labels,
            };
            if !inserted.insert(sig) {
                return Err(EvalError::Execution(format!(
                    "multiple matches for labels in \"{op}\": many-to-one matching must be explicit (group_left/group_right)"
                )));
            }
        }
        for name in &include {
            match other.labels.get(name) {
                Some(v) if !v.is_empty() => {
                    labels.insert(name.clone(), v.clone());
                }
                _ => {
                    labels.remove(name);
                }
            }
        }
        if !one_to_one && !inserted.insert(labels.clone()) {
            return Err(EvalError::Execution(format!(
                "multiple matches for labels in \"{op}\": grouping labels must ensure unique matches"
            )));
        }
        out.push(Elem { labels, v });
    }
    Ok(out)
}
