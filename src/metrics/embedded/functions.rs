//! PromQL functions: counters (`rate`, `increase`, `irate`, `delta`…) with Prometheus's
//! extrapolation, `*_over_time`, `histogram_quantile`, `label_replace`, and the simple maps.

use super::aggregate::quantile;
use super::eval::{Elem, EvalError, Evaluator, RangeElem, Value};
use super::histogram::bucket_quantile;
use crate::metrics::Labels;
use promql_parser::label::MatchOp;
use promql_parser::parser::{Call, Expr};

/// A function of a window's points, its start and its end (milliseconds).
type WindowFn<'f> = &'f dyn Fn(&[(i64, f64)], i64, i64) -> Option<f64>;

pub fn call(ev: &Evaluator<'_>, c: &Call, t: i64) -> Result<Value, EvalError> {
    let name = c.func.name;
    let args = &c.args.args;
    let arg = |i: usize| -> Result<Value, EvalError> {
        match args.get(i) {
            Some(a) => ev.eval(a, t),
            None => Err(EvalError::Execution(format!(
                "{name}() is missing argument {}",
                i + 1
            ))),
        }
    };
    let vector = |i: usize| match arg(i)? {
        Value::Vector(v) => Ok(v),
        _ => Err(EvalError::Execution(format!(
            "{name}() needs an instant vector as argument {}",
            i + 1
        ))),
    };
    let scalar = |i: usize| match arg(i)? {
        Value::Scalar(v) => Ok(v),
        _ => Err(EvalError::Execution(format!(
            "{name}() needs a scalar as argument {}",
            i + 1
        ))),
    };
    let string = |i: usize| match arg(i)? {
        Value::Str(s) => Ok(s),
        _ => Err(EvalError::Execution(format!(
            "{name}() needs a string as argument {}",
            i + 1
        ))),
    };
    let matrix = |i: usize| match arg(i)? {
        Value::Matrix(m, from, to) => Ok((m, from, to)),
        _ => Err(EvalError::Execution(format!(
            "{name}() needs a range vector as argument {}",
            i + 1
        ))),
    };
    let range_fn = |f: WindowFn<'_>, keep_name: bool| {
        let (m, from, to) = matrix(0)?;
        Ok(Value::Vector(
            m.into_iter()
                .filter_map(|RangeElem { labels, points }| {
                    let v = f(&points, from, to)?;
                    let labels = if keep_name { labels } else { drop_name(labels) };
                    Some(Elem { labels, v })
                })
                .collect(),
        ))
    };
    let values = |p: &[(i64, f64)]| p.iter().map(|x| x.1).collect::<Vec<f64>>();
    match name {
        "rate" => range_fn(&|p, f, t| extrapolated(p, f, t, true, true), false),
        "increase" => range_fn(&|p, f, t| extrapolated(p, f, t, true, false), false),
        "delta" => range_fn(&|p, f, t| extrapolated(p, f, t, false, false), false),
        "irate" => range_fn(&|p, _, _| instant_delta(p, true), false),
        "idelta" => range_fn(&|p, _, _| instant_delta(p, false), false),
        "changes" | "resets" => range_fn(
            &|p, _, _| {
                let n = p.windows(2).filter(|w| {
                    let (a, b) = (w[0].1, w[1].1);
                    if name == "resets" {
                        b < a
                    } else {
                        !(a == b || a.is_nan() && b.is_nan())
                    }
                });
                Some(n.count() as f64)
            },
            false,
        ),
        "sum_over_time" => range_fn(&|p, _, _| Some(values(p).iter().sum()), false),
        "count_over_time" => range_fn(&|p, _, _| Some(p.len() as f64), false),
        "avg_over_time" => range_fn(&|p, _, _| Some(mean(&values(p))), false),
        "max_over_time" => range_fn(&|p, _, _| Some(extreme(&values(p), true)), false),
        "min_over_time" => range_fn(&|p, _, _| Some(extreme(&values(p), false)), false),
        "last_over_time" => range_fn(&|p, _, _| p.last().map(|x| x.1), true),
        "present_over_time" => range_fn(&|_, _, _| Some(1.0), false),
        "quantile_over_time" => {
            let q = scalar(0)?;
            let (m, ..) = match arg(1)? {
                Value::Matrix(m, f, t) => (m, f, t),
                _ => {
                    return Err(EvalError::Execution(format!(
                        "{name}() needs a range vector"
                    )));
                }
            };
            Ok(Value::Vector(
                m.into_iter()
                    .map(|r| Elem {
                        v: quantile(q, &mut values(&r.points)),
                        labels: drop_name(r.labels),
                    })
                    .collect(),
            ))
        }
        "histogram_quantile" => {
            let q = scalar(0)?;
            Ok(Value::Vector(histogram_quantile(q, vector(1)?)))
        }
        "label_replace" => {
            let (dst, repl, src, re) = (string(1)?, string(2)?, string(3)?, string(4)?);
            let re = regex::Regex::new(&format!("^(?:{re})$")).map_err(|e| {
                EvalError::Execution(format!("label_replace: invalid regex \"{re}\": {e}"))
            })?;
            let mut out = vector(0)?;
            for e in &mut out {
                let value = e.labels.get(&src).cloned().unwrap_or_default();
                if let Some(caps) = re.captures(&value) {
                    let mut res = String::new();
                    caps.expand(&repl, &mut res);
                    if res.is_empty() {
                        e.labels.remove(&dst);
                    } else {
                        e.labels.insert(dst.clone(), res);
                    }
                }
            }
            Ok(Value::Vector(out))
        }
        "vector" => Ok(Value::Vector(vec![Elem {
            labels: Labels::new(),
            v: scalar(0)?,
        }])),
        "scalar" => {
            let v = vector(0)?;
            Ok(Value::Scalar(if v.len() == 1 { v[0].v } else { f64::NAN }))
        }
        "time" => Ok(Value::Scalar(t as f64 / 1000.0)),
        "absent" => {
            if !vector(0)?.is_empty() {
                return Ok(Value::Vector(Vec::new()));
            }
            Ok(Value::Vector(vec![Elem {
                labels: absent_labels(&args[0]),
                v: 1.0,
            }]))
        }
        "sort" | "sort_desc" => Ok(Value::Vector(vector(0)?)),
        "clamp_min" | "clamp_max" => {
            let (els, bound) = (vector(0)?, scalar(1)?);
            let f = |v: f64| {
                if name == "clamp_min" {
                    v.max(bound)
                } else {
                    v.min(bound)
                }
            };
            Ok(map(els, |v| if v.is_nan() { v } else { f(v) }))
        }
        "clamp" => {
            let (els, lo, hi) = (vector(0)?, scalar(1)?, scalar(2)?);
            if lo > hi {
                return Ok(Value::Vector(Vec::new()));
            }
            Ok(map(els, |v| v.max(lo).min(hi)))
        }
        "round" => {
            let to = if args.len() > 1 { scalar(1)? } else { 1.0 };
            let inv = 1.0 / to;
            Ok(map(vector(0)?, |v| (v * inv + 0.5).floor() / inv))
        }
        _ => {
            let f: fn(f64) -> f64 = match name {
                "abs" => f64::abs,
                "ceil" => f64::ceil,
                "floor" => f64::floor,
                "exp" => f64::exp,
                "ln" => f64::ln,
                "log2" => f64::log2,
                "log10" => f64::log10,
                "sqrt" => f64::sqrt,
                "sgn" => |v: f64| {
                    if v == 0.0 || v.is_nan() {
                        v
                    } else {
                        v.signum()
                    }
                },
                other => {
                    return Err(EvalError::Unsupported(format!(
                        "the function \"{other}()\""
                    )));
                }
            };
            Ok(map(vector(0)?, f))
        }
    }
}

fn drop_name(mut labels: Labels) -> Labels {
    labels.remove("__name__");
    labels
}

fn map(els: Vec<Elem>, f: impl Fn(f64) -> f64) -> Value {
    Value::Vector(
        els.into_iter()
            .map(|e| Elem {
                v: f(e.v),
                labels: drop_name(e.labels),
            })
            .collect(),
    )
}

fn mean(vs: &[f64]) -> f64 {
    let mut m = 0.0;
    for (i, v) in vs.iter().enumerate() {
        let n = (i + 1) as f64;
        if i == 0 {
            m = *v;
        } else if m.is_infinite() || v.is_infinite() {
            m = if m.is_infinite() && v.is_infinite() && m.signum() != v.signum() {
                f64::NAN
            } else if m.is_infinite() {
                m
            } else {
                *v
            };
        } else {
            m += v / n - m / n;
        }
    }
    m
}

/// Max or min where a NaN only wins when every value is NaN.
fn extreme(vs: &[f64], max: bool) -> f64 {
    let mut out = vs[0];
    for &v in &vs[1..] {
        if (max && v > out) || (!max && v < out) || out.is_nan() {
            out = v;
        }
    }
    out
}

/// Prometheus's `extrapolatedRate`: the change over the samples in the window, extrapolated
/// toward the window's edges (no further than half a sample interval beyond the samples,
/// and for counters not below zero), divided by the window for a rate.
pub fn extrapolated(
    p: &[(i64, f64)],
    from: i64,
    to: i64,
    is_counter: bool,
    is_rate: bool,
) -> Option<f64> {
    if p.len() < 2 {
        return None;
    }
    let (first, last) = (p[0], p[p.len() - 1]);
    let mut result = last.1 - first.1;
    if is_counter {
        let mut prev = first.1;
        for &(_, v) in p {
            if v < prev {
                result += prev;
            }
            prev = v;
        }
    }
    let mut to_start = (first.0 - from) as f64 / 1000.0;
    let to_end = (to - last.0) as f64 / 1000.0;
    let sampled = (last.0 - first.0) as f64 / 1000.0;
    let average = sampled / (p.len() - 1) as f64;
    if is_counter && result > 0.0 && first.1 >= 0.0 {
        let to_zero = sampled * (first.1 / result);
        if to_zero < to_start {
            to_start = to_zero;
        }
    }
    let threshold = average * 1.1;
    let mut interval = sampled;
    interval += if to_start < threshold {
        to_start
    } else {
        average / 2.0
    };
    interval += if to_end < threshold {
        to_end
    } else {
        average / 2.0
    };
    result *= interval / sampled;
    if is_rate {
        result /= (to - from) as f64 / 1000.0;
    }
    Some(result)
}

/// `irate`/`idelta`: the last two samples only; a drop counts as a counter reset for `irate`.
fn instant_delta(p: &[(i64, f64)], is_rate: bool) -> Option<f64> {
    if p.len() < 2 {
        return None;
    }
    let (prev, last) = (p[p.len() - 2], p[p.len() - 1]);
    let mut result = if is_rate && last.1 < prev.1 {
        last.1
    } else {
        last.1 - prev.1
    };
    let dt = last.0 - prev.0;
    if dt == 0 {
        return None;
    }
    if is_rate {
        result /= dt as f64 / 1000.0;
    }
    Some(result)
}

/// `histogram_quantile` over classic `le` buckets: grouped by every label but `le` (the metric
/// name included, as Prometheus does), the name dropped from the result.
fn histogram_quantile(q: f64, els: Vec<Elem>) -> Vec<Elem> {
    let mut groups: std::collections::BTreeMap<Labels, Vec<(f64, f64)>> = Default::default();
    for mut e in els {
        let Some(le) = e.labels.remove("le") else {
            continue;
        };
        let Some(upper) = parse_le(&le) else {
            continue;
        };
        groups.entry(e.labels).or_default().push((upper, e.v));
    }
    let mut out: Vec<Elem> = Vec::with_capacity(groups.len());
    for (labels, mut buckets) in groups {
        out.push(Elem {
            v: bucket_quantile(q, &mut buckets),
            labels: drop_name(labels),
        });
    }
    out
}

/// Go's `strconv.ParseFloat` accepts `+Inf`, `Inf`, `-inf`… as well as numbers.
fn parse_le(s: &str) -> Option<f64> {
    match s.to_ascii_lowercase().trim_start_matches('+') {
        "inf" | "infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        _ => s.parse().ok(),
    }
}

/// `absent(x{a="b"})` answers with the equality matchers' labels.
fn absent_labels(e: &Expr) -> Labels {
    let vs = match e {
        Expr::VectorSelector(vs) => vs,
        Expr::MatrixSelector(ms) => &ms.vs,
        _ => return Labels::new(),
    };
    let mut out = Labels::new();
    for m in &vs.matchers.matchers {
        if matches!(m.op, MatchOp::Equal) && m.name != "__name__" {
            out.insert(m.name.clone(), m.value.clone());
        }
    }
    out
}
