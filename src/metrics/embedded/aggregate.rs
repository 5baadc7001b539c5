//! Aggregation operators (`sum by (pod) (…)` and friends), computed as Prometheus 2.x computes
//! them: incremental means and variances, NaN-aware min and max, `by` keeping only the listed
//! labels and `without` dropping the listed ones and the metric name.

use super::eval::{Elem, EvalError, Evaluator, Value};
use crate::metrics::Labels;
use promql_parser::parser::{AggregateExpr, LabelModifier};
use std::collections::BTreeMap;

/// The labels an element is grouped under.
pub fn group_labels(labels: &Labels, modifier: Option<&LabelModifier>) -> Labels {
    match modifier {
        None => Labels::new(),
        Some(LabelModifier::Include(keep)) => labels
            .iter()
            .filter(|(k, _)| keep.labels.iter().any(|l| l == *k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        Some(LabelModifier::Exclude(drop)) => labels
            .iter()
            .filter(|(k, _)| k.as_str() != "__name__" && !drop.labels.iter().any(|l| l == *k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    }
}

#[derive(Default)]
struct Group {
    count: f64,
    value: f64,
    mean: f64,
    values: Vec<f64>,
    members: Vec<Elem>,
}

pub fn aggregate(ev: &Evaluator<'_>, a: &AggregateExpr, t: i64) -> Result<Value, EvalError> {
    let op = a.op.to_string();
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
    let scalar_param = || match param {
        Some(Value::Scalar(v)) => Ok(v),
        _ => Err(EvalError::Execution(format!(
            "{op} needs a scalar parameter"
        ))),
    };
    let mut groups: BTreeMap<Labels, Group> = BTreeMap::new();
    for e in els {
        let key = group_labels(&e.labels, a.modifier.as_ref());
        let g = groups.entry(key).or_default();
        let v = e.v;
        let first = g.count == 0.0;
        g.count += 1.0;
        match op.as_str() {
            "sum" => g.value = if first { v } else { g.value + v },
            "max" => {
                if first || g.value < v || g.value.is_nan() {
                    g.value = v;
                }
            }
            "min" => {
                if first || g.value > v || g.value.is_nan() {
                    g.value = v;
                }
            }
            "avg" => {
                if first {
                    g.mean = v;
                } else if g.mean.is_infinite() {
                    if v.is_infinite() && v.signum() != g.mean.signum() {
                        g.mean = f64::NAN;
                    }
                } else if v.is_infinite() {
                    g.mean = v;
                } else {
                    g.mean += v / g.count - g.mean / g.count;
                }
            }
            "stddev" | "stdvar" => {
                if first {
                    g.mean = v;
                    g.value = 0.0;
                } else {
                    let delta = v - g.mean;
                    g.mean += delta / g.count;
                    g.value += delta * (v - g.mean);
                }
            }
            "quantile" => g.values.push(v),
            "topk" | "bottomk" => g.members.push(e),
            "count" | "group" => {}
            other => {
                return Err(EvalError::Unsupported(format!(
                    "the aggregation \"{other}\""
                )));
            }
        }
    }
    let mut out = Vec::new();
    for (labels, mut g) in groups {
        let v = match op.as_str() {
            "sum" | "max" | "min" => g.value,
            "avg" => g.mean,
            "count" => g.count,
            "group" => 1.0,
            "stdvar" => g.value / g.count,
            "stddev" => (g.value / g.count).sqrt(),
            "quantile" => quantile(scalar_param()?, &mut g.values),
            _ => {
                let k = scalar_param()?;
                let top = op == "topk";
                // NaN sorts last either way, as in Prometheus.
                g.members.sort_by(|x, y| {
                    let o = match (x.v.is_nan(), y.v.is_nan()) {
                        (true, true) => std::cmp::Ordering::Equal,
                        (true, false) => return std::cmp::Ordering::Greater,
                        (false, true) => return std::cmp::Ordering::Less,
                        _ => x.v.total_cmp(&y.v),
                    };
                    if top { o.reverse() } else { o }
                });
                let k = if k.is_nan() || k < 1.0 { 0 } else { k as usize };
                out.extend(g.members.into_iter().take(k));
                continue;
            }
        };
        out.push(Elem { labels, v });
    }
    Ok(Value::Vector(out))
}

/// Prometheus's `quantile`: linear interpolation between the closest ranks.
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
    values.sort_by(|a, b| a.total_cmp(b));
    let n = values.len() as f64;
    let rank = q * (n - 1.0);
    let lower = rank.floor().max(0.0);
    let upper = (lower + 1.0).min(n - 1.0);
    let weight = rank - rank.floor();
    values[lower as usize] * (1.0 - weight) + values[upper as usize] * weight
}
