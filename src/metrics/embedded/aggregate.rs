//! Aggregation operators (`sum by (pod) (…)` and friends), computed as Prometheus 2.55
//! computes them: compensated sums and means, Welford variances, NaN-aware min and max, `by`
//! keeping only the listed labels and `without` dropping the listed ones and the metric name.
//! Groups come out in the order their first element arrives, as in Prometheus.

use super::eval::{Elem, EvalError, Evaluator, Value};
use super::kahan::{KahanSum, Mean};
use crate::metrics::Labels;
use promql_parser::parser::{AggregateExpr, LabelModifier};
use std::collections::HashMap;

/// The labels an element is grouped under.
pub fn group_labels(labels: &Labels, modifier: Option<&LabelModifier>) -> Labels {
    group_key(labels, modifier)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The grouping key of an element, borrowed from its labels (no allocation per element).
fn group_key<'l>(labels: &'l Labels, modifier: Option<&LabelModifier>) -> Vec<(&'l str, &'l str)> {
    match modifier {
        None => Vec::new(),
        Some(LabelModifier::Include(keep)) => labels
            .iter()
            .filter(|(k, v)| !v.is_empty() && keep.labels.iter().any(|l| l == *k))
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect(),
        Some(LabelModifier::Exclude(drop)) => labels
            .iter()
            .filter(|(k, v)| {
                !v.is_empty() && k.as_str() != "__name__" && !drop.labels.iter().any(|l| l == *k)
            })
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect(),
    }
}

/// Elements split into groups, in the order each group's first element arrives.
fn split<'e>(els: &'e [Elem], modifier: Option<&LabelModifier>) -> Vec<(Labels, Vec<&'e Elem>)> {
    let mut index: HashMap<Vec<(&str, &str)>, usize> = HashMap::new();
    let mut groups: Vec<(Labels, Vec<&Elem>)> = Vec::new();
    for e in els {
        let key = group_key(&e.labels, modifier);
        match index.get(&key) {
            Some(&i) => groups[i].1.push(e),
            None => {
                index.insert(key, groups.len());
                groups.push((group_labels(&e.labels, modifier), vec![e]));
            }
        }
    }
    groups
}

pub fn aggregate<'a>(
    ev: &Evaluator<'a>,
    a: &AggregateExpr,
    t: i64,
) -> Result<Value<'a>, EvalError> {
    let op = a.op.to_string().to_lowercase();
    let param = match &a.param {
        Some(p) => Some(ev.eval(p, t)?),
        None => None,
    };
    let els = match ev.eval(&a.expr, t)? {
        Value::Vector(els) => els,
        _ => {
            return Err(EvalError::Execution(format!(
                "{op} needs an instant vector"
            )));
        }
    };
    let scalar_param = || match &param {
        Some(Value::Scalar(v)) => Ok(*v),
        _ => Err(EvalError::Execution(format!(
            "{op} needs a scalar parameter"
        ))),
    };
    let modifier = a.modifier.as_ref();
    match op.as_str() {
        "topk" | "bottomk" | "limitk" => {
            let k = scalar_param()?;
            // Prometheus converts k to an int64 and refuses what does not fit (NaN included).
            if !(k >= i64::MIN as f64 && k <= i64::MAX as f64) {
                return Err(EvalError::Execution(format!(
                    "Scalar value {} overflows int64",
                    go_float(k)
                )));
            }
            let k = k as i64;
            if k < 1 {
                return Ok(Value::Vector(Vec::new()));
            }
            let k = usize::try_from(k).unwrap_or(usize::MAX);
            let mut out = Vec::new();
            for (_, mut members) in split(&els, modifier) {
                match op.as_str() {
                    "topk" => members.sort_by(|x, y| by_value(x.v, y.v, true)),
                    "bottomk" => members.sort_by(|x, y| by_value(x.v, y.v, false)),
                    _ => {}
                }
                out.extend(members.into_iter().take(k).cloned());
            }
            Ok(Value::Vector(out))
        }
        "limit_ratio" => {
            let r = scalar_param()?;
            if r.is_nan() {
                return Err(EvalError::Execution(format!("Ratio value {r} is NaN")));
            }
            let r = r.clamp(-1.0, 1.0);
            if r == 0.0 {
                return Ok(Value::Vector(Vec::new()));
            }
            Ok(Value::Vector(
                els.into_iter()
                    .filter(|e| {
                        let offset = ratio_offset(&e.labels);
                        (r >= 0.0 && offset < r) || (r < 0.0 && offset >= 1.0 + r)
                    })
                    .collect(),
            ))
        }
        "count_values" => {
            let label = match &param {
                Some(Value::Str(s)) => s.clone(),
                _ => {
                    return Err(EvalError::Execution(
                        "count_values needs a string parameter".into(),
                    ));
                }
            };
            if !super::relabel::valid_label_name(&label) {
                return Err(EvalError::Execution(format!(
                    "invalid label name \"{label}\""
                )));
            }
            // The value becomes a label first, then the elements are grouped (the value label
            // is one of the grouping labels with `by`, and kept with `without`).
            let mut with_value: Vec<Elem> = els
                .into_iter()
                .map(|mut e| {
                    e.labels.insert(label.clone(), go_float(e.v));
                    e
                })
                .collect();
            let by_modifier = match modifier {
                Some(LabelModifier::Include(keep)) => {
                    let mut keep = keep.clone();
                    keep.labels.push(label.clone());
                    Some(LabelModifier::Include(keep))
                }
                Some(without) => Some(without.clone()),
                None => Some(LabelModifier::Include(promql_parser::label::Labels {
                    labels: vec![label.clone()],
                })),
            };
            for e in &mut with_value {
                e.v = 1.0;
            }
            Ok(Value::Vector(
                split(&with_value, by_modifier.as_ref())
                    .into_iter()
                    .map(|(labels, members)| Elem {
                        labels,
                        v: members.len() as f64,
                    })
                    .collect(),
            ))
        }
        _ => {
            let q = if op == "quantile" {
                scalar_param()?
            } else {
                0.0
            };
            let mut out = Vec::new();
            for (labels, members) in split(&els, modifier) {
                let values = members.iter().map(|e| e.v);
                let v = match op.as_str() {
                    "sum" => {
                        let mut k = KahanSum::default();
                        values.for_each(|v| k.add(v));
                        if k.raw().is_infinite() {
                            k.raw()
                        } else {
                            k.value()
                        }
                    }
                    "avg" => {
                        let mut m = Mean::default();
                        values.for_each(|v| m.add(v));
                        m.value()
                    }
                    "count" => members.len() as f64,
                    "group" => 1.0,
                    "max" => extreme(values, true),
                    "min" => extreme(values, false),
                    "stddev" => variance(values).sqrt(),
                    "stdvar" => variance(values),
                    "quantile" => quantile(q, &mut values.collect::<Vec<_>>()),
                    other => {
                        return Err(EvalError::Unsupported(format!(
                            "the aggregation \"{other}\""
                        )));
                    }
                };
                out.push(Elem { labels, v });
            }
            Ok(Value::Vector(out))
        }
    }
}

/// Descending or ascending order that puts NaN last either way (topk and bottomk never
/// prefer a NaN).
pub fn by_value(x: f64, y: f64, descending: bool) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    match (x.is_nan(), y.is_nan()) {
        (true, true) => Equal,
        (true, false) => Greater,
        (false, true) => Less,
        _ => {
            let o = x.partial_cmp(&y).unwrap_or(Equal);
            if descending { o.reverse() } else { o }
        }
    }
}

/// Max or min where a NaN only wins when every value is NaN.
fn extreme(values: impl Iterator<Item = f64>, max: bool) -> f64 {
    let mut out: Option<f64> = None;
    for v in values {
        out = Some(match out {
            None => v,
            Some(o) if o.is_nan() || (max && v > o) || (!max && v < o) => v,
            Some(o) => o,
        });
    }
    out.unwrap_or(f64::NAN)
}

/// Population variance by Welford's method, as Prometheus 2.x aggregates it: the first value
/// seeds the mean (so a single NaN or Inf gives 0, a NaN or Inf among others gives NaN).
fn variance(values: impl Iterator<Item = f64>) -> f64 {
    let (mut n, mut mean, mut m2) = (0.0, 0.0, 0.0);
    for v in values {
        n += 1.0;
        if n == 1.0 {
            mean = v;
            continue;
        }
        let delta = v - mean;
        mean += delta / n;
        m2 += delta * (v - mean);
    }
    m2 / n
}

/// Prometheus's `quantile`: linear interpolation between the closest ranks, NaN sorting first.
pub fn quantile(q: f64, values: &mut [f64]) -> f64 {
    if values.is_empty() || q.is_nan() {
        return f64::NAN;
    }
    if q < 0.0 {
        return f64::NEG_INFINITY;
    }
    if q > 1.0 {
        return f64::INFINITY;
    }
    values.sort_by(|a, b| match (a.is_nan(), b.is_nan()) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Less,
        (false, true) => std::cmp::Ordering::Greater,
        _ => a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal),
    });
    let n = values.len() as f64;
    let rank = q * (n - 1.0);
    let lower = rank.floor().max(0.0);
    let upper = (lower + 1.0).min(n - 1.0);
    let weight = rank - rank.floor();
    values[lower as usize] * (1.0 - weight) + values[upper as usize] * weight
}

/// Where a label set falls in [0, 1) for `limit_ratio`: a hash of the labels in Prometheus's
/// byte layout (name, 0xff, value, 0xff…). Prometheus hashes with xxHash, we with FNV-1a, so
/// the sampled subset differs from Prometheus's, but it is as stable and as evenly spread, and
/// `limit_ratio(r, x)` and `limit_ratio(r - 1, x)` are still exact complements.
fn ratio_offset(labels: &Labels) -> f64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for (k, v) in labels {
        eat(k.as_bytes());
        eat(&[0xff]);
        eat(v.as_bytes());
        eat(&[0xff]);
    }
    h as f64 / u64::MAX as f64
}

/// A float as Go's `strconv.FormatFloat(v, 'f', -1, 64)` writes it (count_values labels,
/// error messages): the shortest digits that read back the same, never an exponent.
pub fn go_float(v: f64) -> String {
    if let Some(word) = crate::strings::non_finite(v) {
        return word.into();
    }
    // Rust's Display is already the shortest round-trip form without an exponent.
    let s = format!("{v}");
    if s == "-0" { "-0".into() } else { s }
}
