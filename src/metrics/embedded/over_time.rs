//! Functions of a range vector: the counter functions (`rate`, `increase`, `delta`, `irate`,
//! `idelta`, `resets`, `changes`) with Prometheus 2.55's extrapolation, the `*_over_time`
//! family, `deriv`, `predict_linear` and `holt_winters`. Each works on one series' window at a
//! time; the window comes from a range selector or a subquery alike.

use super::aggregate::quantile;
use super::eval::{Elem, EvalError, Evaluator, RangeElem, Value, drop_names};
use super::kahan::{self, KahanSum};
use super::relabel::absent_labels;
use promql_parser::parser::{Call, Expr};

/// A function of one series' window of points.
type WindowFn = dyn Fn(&[(i64, f64)]) -> Option<f64>;

/// The range-vector functions this module answers.
pub const NAMES: &[&str] = &[
    "rate",
    "increase",
    "delta",
    "irate",
    "idelta",
    "changes",
    "resets",
    "sum_over_time",
    "count_over_time",
    "avg_over_time",
    "max_over_time",
    "min_over_time",
    "last_over_time",
    "present_over_time",
    "absent_over_time",
    "quantile_over_time",
    "stddev_over_time",
    "stdvar_over_time",
    "mad_over_time",
    "deriv",
    "predict_linear",
    "holt_winters",
    "double_exponential_smoothing",
];

/// Evaluate the range-vector function `c` (one of [`NAMES`]) at `t`.
pub fn range_call<'a>(ev: &Evaluator<'a>, c: &Call, t: i64) -> Result<Value<'a>, EvalError> {
    let name = c.func.name;
    let args = &c.args.args;
    let matrix_at = usize::from(name == "quantile_over_time");
    let scalar = |i: usize| -> Result<f64, EvalError> {
        match args.get(i).map(|a| ev.eval(a, t)).transpose()? {
            Some(Value::Scalar(v)) => Ok(v),
            _ => Err(EvalError::Execution(format!(
                "{name}() needs a scalar as argument {}",
                i + 1
            ))),
        }
    };
    let arg = args.get(matrix_at).ok_or_else(|| {
        EvalError::Execution(format!("{name}() is missing its range vector argument"))
    })?;
    let (m, from, to) = match ev.eval(arg, t)? {
        Value::Matrix(m, from, to) => (m, from, to),
        _ => {
            return Err(EvalError::Execution(format!(
                "{name}() needs a range vector as argument {}",
                matrix_at + 1
            )));
        }
    };
    if name == "absent_over_time" {
        return Ok(Value::Vector(if m.is_empty() {
            vec![Elem {
                labels: absent_labels(arg),
                v: 1.0,
            }]
        } else {
            Vec::new()
        }));
    }
    let legacy = ev.options.legacy_extrapolation;
    let f: Box<WindowFn> = match name {
        "rate" => Box::new(move |p| extrapolated(p, from, to, true, true, legacy)),
        "increase" => Box::new(move |p| extrapolated(p, from, to, true, false, legacy)),
        "delta" => Box::new(move |p| extrapolated(p, from, to, false, false, legacy)),
        "irate" => Box::new(|p| instant_delta(p, true)),
        "idelta" => Box::new(|p| instant_delta(p, false)),
        "resets" => Box::new(|p| Some(p.windows(2).filter(|w| w[1].1 < w[0].1).count() as f64)),
        "changes" => Box::new(|p| {
            Some(
                p.windows(2)
                    .filter(|w| !(w[0].1 == w[1].1 || w[0].1.is_nan() && w[1].1.is_nan()))
                    .count() as f64,
            )
        }),
        "sum_over_time" => Box::new(|p| Some(kahan::sum(p.iter().map(|x| x.1)))),
        "count_over_time" => Box::new(|p| Some(p.len() as f64)),
        "avg_over_time" => Box::new(|p| Some(kahan::mean(p.iter().map(|x| x.1)))),
        "max_over_time" => Box::new(|p| Some(extreme(p, true))),
        "min_over_time" => Box::new(|p| Some(extreme(p, false))),
        "last_over_time" => Box::new(|p| p.last().map(|x| x.1)),
        "present_over_time" => Box::new(|_| Some(1.0)),
        "quantile_over_time" => {
            let q = scalar(0)?;
            Box::new(move |p| Some(quantile(q, &mut p.iter().map(|x| x.1).collect::<Vec<_>>())))
        }
        "stddev_over_time" => Box::new(|p| Some(variance(p).sqrt())),
        "stdvar_over_time" => Box::new(|p| Some(variance(p))),
        "mad_over_time" => Box::new(|p| {
            let mut vs: Vec<f64> = p.iter().map(|x| x.1).collect();
            let median = quantile(0.5, &mut vs);
            let mut dev: Vec<f64> = vs.iter().map(|v| (v - median).abs()).collect();
            Some(quantile(0.5, &mut dev))
        }),
        "deriv" => Box::new(|p| (p.len() >= 2).then(|| linear_regression(p, p[0].0).0)),
        "predict_linear" => {
            let duration = scalar(1)?;
            Box::new(move |p| {
                (p.len() >= 2).then(|| {
                    let (slope, intercept) = linear_regression(p, t);
                    slope * duration + intercept
                })
            })
        }
        "holt_winters" | "double_exponential_smoothing" => {
            let (sf, tf) = (scalar(1)?, scalar(2)?);
            if sf <= 0.0 || sf >= 1.0 {
                return Err(EvalError::Execution(format!(
                    "invalid smoothing factor. Expected: 0 < sf < 1, got: {sf:.6}"
                )));
            }
            if tf <= 0.0 || tf >= 1.0 {
                return Err(EvalError::Execution(format!(
                    "invalid trend factor. Expected: 0 < tf < 1, got: {tf:.6}"
                )));
            }
            Box::new(move |p| holt_winters(p, sf, tf))
        }
        other => {
            return Err(EvalError::Unsupported(format!(
                "the function \"{other}()\""
            )));
        }
    };
    let keep_name = name == "last_over_time";
    let out: Vec<Elem> = m
        .into_iter()
        .filter_map(|RangeElem { labels, points }| {
            let v = f(&points)?;
            Some(Elem {
                labels: labels.into_owned(),
                v,
            })
        })
        .collect();
    if keep_name {
        Ok(Value::Vector(out))
    } else {
        drop_names(out).map(Value::Vector)
    }
}

/// Whether `e` (parentheses aside) is a call of a range-vector function.
pub fn is_range_function(name: &str) -> bool {
    NAMES.contains(&name)
}

/// Max or min where a NaN only wins when every value is NaN.
fn extreme(p: &[(i64, f64)], max: bool) -> f64 {
    let mut out = p[0].1;
    for &(_, v) in &p[1..] {
        if (max && v > out) || (!max && v < out) || out.is_nan() {
            out = v;
        }
    }
    out
}

/// Population variance with compensated sums, as `stddev_over_time` computes it.
fn variance(p: &[(i64, f64)]) -> f64 {
    let (mut n, mut mean, mut aux) = (0.0, KahanSum::default(), KahanSum::default());
    for &(_, v) in p {
        n += 1.0;
        let delta = v - mean.value();
        mean.add(delta / n);
        aux.add(delta * (v - mean.value()));
    }
    aux.value() / n
}

/// Least-squares slope and intercept (at `intercept_time`) of the points, with compensated
/// sums; a constant series has slope 0 (NaN when the constant is infinite).
fn linear_regression(p: &[(i64, f64)], intercept_time: i64) -> (f64, f64) {
    let first = p[0].1;
    if p.iter().all(|x| x.1 == first) {
        return if first.is_infinite() {
            (f64::NAN, f64::NAN)
        } else {
            (0.0, first)
        };
    }
    let n = p.len() as f64;
    let (mut sx, mut sy, mut sxy, mut sx2) = (
        KahanSum::default(),
        KahanSum::default(),
        KahanSum::default(),
        KahanSum::default(),
    );
    for &(t, v) in p {
        let x = (t - intercept_time) as f64 / 1000.0;
        sx.add(x);
        sy.add(v);
        sxy.add(x * v);
        sx2.add(x * x);
    }
    let (sx, sy, sxy, sx2) = (sx.value(), sy.value(), sxy.value(), sx2.value());
    let cov = sxy - sx * sy / n;
    let var = sx2 - sx * sx / n;
    let slope = cov / var;
    (slope, sy / n - slope * sx / n)
}

/// Double exponential smoothing (Prometheus 2.x's `holt_winters`).
fn holt_winters(p: &[(i64, f64)], sf: f64, tf: f64) -> Option<f64> {
    if p.len() < 2 {
        return None;
    }
    let (mut s0, mut s1) = (0.0, p[0].1);
    let mut b = p[1].1 - p[0].1;
    for (i, &(_, v)) in p.iter().enumerate().skip(1) {
        let x = sf * v;
        if i > 1 {
            b = tf * (s1 - s0) + (1.0 - tf) * b;
        }
        let y = (1.0 - sf) * (s1 + b);
        (s0, s1) = (s1, x + y);
    }
    Some(s1)
}

/// Prometheus 2.55's `extrapolatedRate`: the change over the samples in the window (counter
/// resets added back), extrapolated toward the window's edges by at most half an average sample
/// interval where the series does not reach an edge, and for counters never to before the
/// counter's zero point; divided by the window for a rate. With `legacy`, as before 2.51: the
/// zero point is applied first, so a series starting inside the window with a first value
/// about one interval's increase is extrapolated to its zero point instead of half an interval.
pub fn extrapolated(
    p: &[(i64, f64)],
    from: i64,
    to: i64,
    is_counter: bool,
    is_rate: bool,
    legacy: bool,
) -> Option<f64> {
    if p.len() < 2 {
        return None;
    }
    let (first, last) = (p[0], p[p.len() - 1]);
    let mut result = last.1 - first.1;
    if is_counter {
        let mut prev = first.1;
        for &(_, v) in &p[1..] {
            if v < prev {
                result += prev;
            }
            prev = v;
        }
    }
    let mut to_start = (first.0 - from) as f64 / 1000.0;
    let mut to_end = (to - last.0) as f64 / 1000.0;
    let sampled = (last.0 - first.0) as f64 / 1000.0;
    let average = sampled / (p.len() - 1) as f64;
    let threshold = average * 1.1;
    if !legacy && to_start >= threshold {
        to_start = average / 2.0;
    }
    if is_counter && result > 0.0 && first.1 >= 0.0 {
        let to_zero = sampled * (first.1 / result);
        if to_zero < to_start {
            to_start = to_zero;
        }
    }
    if legacy && to_start >= threshold {
        to_start = average / 2.0;
    }
    if to_end >= threshold {
        to_end = average / 2.0;
    }
    result *= (sampled + to_start + to_end) / sampled;
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

/// The argument expression with its parentheses removed.
pub fn unparen(mut e: &Expr) -> &Expr {
    while let Expr::Paren(p) = e {
        e = &p.expr;
    }
    e
}
