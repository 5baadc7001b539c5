//! PromQL function calls: dispatch to the range-vector functions ([`super::over_time`]), the
//! label functions ([`super::relabel`]), the date functions ([`super::calendar`]), and here the
//! functions of an instant vector or of nothing: math and trigonometry, `clamp*`, `round`,
//! `sort*`, `timestamp`, `absent`, `scalar`, `vector`, `time`, `pi`, `histogram_quantile`.

use super::calendar;
use super::eval::{Elem, EvalError, Evaluator, Value, drop_names};
use super::histogram::bucket_quantile;
use super::over_time::{self, unparen};
use super::relabel;
use crate::metrics::Labels;
use promql_parser::parser::{Call, Expr};

/// Functions of native histograms only: with classic histograms there is nothing to answer.
const NATIVE_HISTOGRAM_FUNCTIONS: &[&str] = &[
    "histogram_count",
    "histogram_sum",
    "histogram_avg",
    "histogram_fraction",
    "histogram_stddev",
    "histogram_stdvar",
];

pub fn call<'a>(ev: &Evaluator<'a>, c: &Call, t: i64) -> Result<Value<'a>, EvalError> {
    let name = c.func.name;
    if over_time::is_range_function(name) {
        return over_time::range_call(ev, c, t);
    }
    let args = &c.args.args;
    let arg = |i: usize| -> Result<Value<'a>, EvalError> {
        match args.get(i) {
            Some(a) => ev.eval(a, t),
            None => Err(EvalError::Execution(format!(
                "{name}() is missing argument {}",
                i + 1
            ))),
        }
    };
    let wrong = |i: usize, what: &str| {
        EvalError::Execution(format!("{name}() needs {what} as argument {}", i + 1))
    };
    let vector = |i: usize| match arg(i)? {
        Value::Vector(v) => Ok(v),
        _ => Err(wrong(i, "an instant vector")),
    };
    let scalar = |i: usize| match arg(i)? {
        Value::Scalar(v) => Ok(v),
        _ => Err(wrong(i, "a scalar")),
    };
    let string = |i: usize| match arg(i)? {
        Value::Str(s) => Ok(s),
        _ => Err(wrong(i, "a string")),
    };
    let strings_from = |i: usize| (i..args.len()).map(string).collect::<Result<Vec<_>, _>>();
    if calendar::NAMES.contains(&name) {
        if args.is_empty() {
            return Ok(Value::Vector(vec![Elem {
                labels: Labels::new(),
                v: calendar::date_part(name, (t / 1000) as f64),
            }]));
        }
        return map(vector(0)?, |v| calendar::date_part(name, v));
    }
    match name {
        "histogram_quantile" => {
            let q = scalar(0)?;
            drop_names(histogram_quantile(q, vector(1)?)).map(Value::Vector)
        }
        "label_replace" => {
            let (dst, repl, src, re) = (string(1)?, string(2)?, string(3)?, string(4)?);
            relabel::label_replace(vector(0)?, &dst, &repl, &src, &re).map(Value::Vector)
        }
        "label_join" => {
            let (dst, sep) = (string(1)?, string(2)?);
            let srcs = strings_from(3)?;
            relabel::label_join(vector(0)?, &dst, &sep, &srcs).map(Value::Vector)
        }
        "sort_by_label" | "sort_by_label_desc" => {
            let by = strings_from(1)?;
            let mut els = vector(0)?;
            relabel::sort_by_label(&mut els, &by, name == "sort_by_label_desc");
            Ok(Value::Vector(els))
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
        "pi" => Ok(Value::Scalar(std::f64::consts::PI)),
        "timestamp" => timestamp(ev, args.first().map(|a| &**a), t),
        "absent" => {
            if !vector(0)?.is_empty() {
                return Ok(Value::Vector(Vec::new()));
            }
            Ok(Value::Vector(vec![Elem {
                labels: relabel::absent_labels(&args[0]),
                v: 1.0,
            }]))
        }
        "sort" | "sort_desc" => {
            let mut els = vector(0)?;
            let desc = name == "sort_desc";
            // NaN sorts last either way.
            els.sort_by(|a, b| super::aggregate::by_value(a.v, b.v, desc));
            Ok(Value::Vector(els))
        }
        // Go's math.Max and math.Min answer NaN when either side is NaN.
        "clamp_min" => {
            let (els, lo) = (vector(0)?, scalar(1)?);
            map(els, |v| go_max(v, lo))
        }
        "clamp_max" => {
            let (els, hi) = (vector(0)?, scalar(1)?);
            map(els, |v| go_min(v, hi))
        }
        "clamp" => {
            let (els, lo, hi) = (vector(0)?, scalar(1)?, scalar(2)?);
            if hi < lo {
                return Ok(Value::Vector(Vec::new()));
            }
            map(els, |v| go_max(lo, go_min(hi, v)))
        }
        "round" => {
            let to = if args.len() > 1 { scalar(1)? } else { 1.0 };
            let inv = 1.0 / to;
            map(vector(0)?, |v| (v * inv + 0.5).floor() / inv)
        }
        _ if NATIVE_HISTOGRAM_FUNCTIONS.contains(&name) => Err(EvalError::Unsupported(format!(
            "the function \"{name}()\" (it reads native histograms, which the embedded store does not hold)"
        ))),
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
                "sin" => f64::sin,
                "cos" => f64::cos,
                "tan" => f64::tan,
                "asin" => f64::asin,
                "acos" => f64::acos,
                "atan" => f64::atan,
                "sinh" => f64::sinh,
                "cosh" => f64::cosh,
                "tanh" => f64::tanh,
                "asinh" => f64::asinh,
                "acosh" => f64::acosh,
                "atanh" => f64::atanh,
                "deg" => f64::to_degrees,
                "rad" => f64::to_radians,
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
            map(vector(0)?, f)
        }
    }
}

fn go_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

fn go_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

fn map<'a>(els: Vec<Elem>, f: impl Fn(f64) -> f64) -> Result<Value<'a>, EvalError> {
    let mut els = drop_names(els)?;
    for e in &mut els {
        e.v = f(e.v);
    }
    Ok(Value::Vector(els))
}

/// `timestamp(v)`: of a selector, each sample's own time (offset and `@` included); of any
/// other expression, the evaluation time.
fn timestamp<'a>(ev: &Evaluator<'a>, arg: Option<&Expr>, t: i64) -> Result<Value<'a>, EvalError> {
    let Some(arg) = arg else {
        return Err(EvalError::Execution(
            "timestamp() is missing its argument".into(),
        ));
    };
    let els: Vec<Elem> = match unparen(arg) {
        Expr::VectorSelector(vs) => ev
            .select_instant(vs, t)
            .map(|(s, pt, _)| Elem {
                labels: s.labels.clone(),
                v: pt as f64 / 1000.0,
            })
            .collect(),
        other => match ev.eval(other, t)? {
            Value::Vector(els) => els
                .into_iter()
                .map(|e| Elem {
                    labels: e.labels,
                    v: t as f64 / 1000.0,
                })
                .collect(),
            _ => {
                return Err(EvalError::Execution(
                    "timestamp() needs an instant vector".into(),
                ));
            }
        },
    };
    drop_names(els).map(Value::Vector)
}

/// `histogram_quantile` over classic `le` buckets: grouped by every label but `le` (the metric
/// name included, as Prometheus does), the name dropped from the result by the caller.
fn histogram_quantile(q: f64, els: Vec<Elem>) -> Vec<Elem> {
    let mut index: std::collections::HashMap<Labels, usize> = Default::default();
    let mut groups: Vec<(Labels, Vec<(f64, f64)>)> = Vec::new();
    for mut e in els {
        let Some(le) = e.labels.remove("le") else {
            continue;
        };
        let Some(upper) = parse_le(&le) else {
            continue;
        };
        match index.get(&e.labels) {
            Some(&i) => groups[i].1.push((upper, e.v)),
            None => {
                index.insert(e.labels.clone(), groups.len());
                groups.push((e.labels, vec![(upper, e.v)]));
            }
        }
    }
    groups
        .into_iter()
        .map(|(labels, mut buckets)| Elem {
            v: bucket_quantile(q, &mut buckets),
            labels,
        })
        .collect()
}

/// Go's `strconv.ParseFloat` accepts `+Inf`, `Inf`, `-inf`… as well as numbers.
fn parse_le(s: &str) -> Option<f64> {
    match s.to_ascii_lowercase().trim_start_matches('+') {
        "inf" | "infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        _ => s.parse().ok(),
    }
}
