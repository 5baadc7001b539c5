//! What a PromQL query must give over fixture expositions, computed from the fixtures' own
//! numbers with the few operations the presets use (sum/max/min by, rate, increase, changes,
//! histogram_quantile, division guarded by `> 0`, topk/bottomk). Instant vectors are maps from
//! label sets (only the labels with a value, as Prometheus prints them) to values.

#![allow(dead_code)]

use super::expositions::{Exposition, Labels, Val};
use std::collections::BTreeMap;

pub type Vector = BTreeMap<Labels, f64>;

/// A label matcher.
pub enum M<'a> {
    Eq(&'a str, &'a str),
    Re(&'a str, &'a str),
}

/// All fixtures as one Prometheus sees them: each sample with `job` and `instance` added.
pub struct Fx {
    pub samples: Vec<(String, Labels, Val)>,
    /// The fixture clock at the evaluation time.
    pub end: f64,
}

impl Fx {
    pub fn new(exps: &[(Exposition, String)], job: &str, end: f64) -> Fx {
        let mut samples = Vec::new();
        for (e, instance) in exps {
            for s in e.samples() {
                let mut l = s.labels.clone();
                l.insert("job".into(), job.into());
                l.insert("instance".into(), instance.clone());
                samples.push((s.name.clone(), l, s.val));
            }
        }
        Fx { samples, end }
    }

    fn select(&self, name: &str, ms: &[M]) -> Vec<&(String, Labels, Val)> {
        self.samples
            .iter()
            .filter(|(n, l, _)| {
                n == name
                    && ms.iter().all(|m| match m {
                        M::Eq(k, v) => l.get(*k).map(String::as_str).unwrap_or("") == *v,
                        M::Re(k, re) => regex::Regex::new(&format!("^(?:{re})$"))
                            .expect("regex")
                            .is_match(l.get(*k).map(String::as_str).unwrap_or("")),
                    })
            })
            .collect()
    }

    /// Gauges at the end.
    pub fn gauge(&self, name: &str, ms: &[M]) -> Vec<(Labels, f64)> {
        self.select(name, ms)
            .into_iter()
            .map(|(_, l, v)| (l.clone(), v.at(self.end)))
            .collect()
    }

    /// `rate(x[w])` for a window fully inside the history: the counter's slope.
    pub fn rate(&self, name: &str, ms: &[M]) -> Vec<(Labels, f64)> {
        self.select(name, ms)
            .into_iter()
            .map(|(_, l, v)| {
                let r = match v {
                    Val::Rate(r) | Val::Restart { r, .. } => *r,
                    _ => 0.0,
                };
                (l.clone(), r)
            })
            .collect()
    }

    /// `increase(x[window])`.
    pub fn increase(&self, name: &str, ms: &[M], window: f64) -> Vec<(Labels, f64)> {
        self.rate(name, ms)
            .into_iter()
            .map(|(l, r)| (l, r * window))
            .collect()
    }

    /// `changes(x[window])`: steps inside the window that the scraped history covers.
    pub fn changes(&self, name: &str, ms: &[M], window: f64) -> Vec<(Labels, f64)> {
        self.select(name, ms)
            .into_iter()
            .map(|(_, l, v)| {
                let n = match v {
                    Val::Step { at, a, b }
                        if a != b && *at > self.end - window && *at > 0.0 && *at <= self.end =>
                    {
                        1.0
                    }
                    _ => 0.0,
                };
                (l.clone(), n)
            })
            .collect()
    }
}

fn key(l: &Labels, by: &[&str]) -> Labels {
    by.iter()
        .filter_map(|k| {
            l.get(*k)
                .filter(|v| !v.is_empty())
                .map(|v| (k.to_string(), v.clone()))
        })
        .collect()
}

fn fold(v: Vec<(Labels, f64)>, by: &[&str], f: fn(f64, f64) -> f64) -> Vector {
    let mut out = Vector::new();
    for (l, x) in v {
        let k = key(&l, by);
        let e = out.entry(k).or_insert(f64::NAN);
        *e = if e.is_nan() { x } else { f(*e, x) };
    }
    out
}

pub fn sum(v: Vec<(Labels, f64)>, by: &[&str]) -> Vector {
    fold(v, by, |a, b| a + b)
}

pub fn max(v: Vec<(Labels, f64)>, by: &[&str]) -> Vector {
    fold(v, by, f64::max)
}

pub fn count(v: Vec<(Labels, f64)>, by: &[&str]) -> Vector {
    let ones = v.into_iter().map(|(l, _)| (l, 1.0)).collect();
    sum(ones, by)
}

pub fn avg(v: Vec<(Labels, f64)>, by: &[&str]) -> Vector {
    let s = sum(v.clone(), by);
    let c = count(v, by);
    s.into_iter().map(|(k, x)| (k.clone(), x / c[&k])).collect()
}

/// `a / (b > 0)` on identical label sets.
pub fn div(a: &Vector, b: &Vector) -> Vector {
    a.iter()
        .filter_map(|(k, x)| b.get(k).filter(|y| **y > 0.0).map(|y| (k.clone(), x / y)))
        .collect()
}

pub fn add(a: &Vector, b: &Vector) -> Vector {
    a.iter()
        .filter_map(|(k, x)| b.get(k).map(|y| (k.clone(), x + y)))
        .collect()
}

pub fn sub(a: &Vector, b: &Vector) -> Vector {
    a.iter()
        .filter_map(|(k, x)| b.get(k).map(|y| (k.clone(), x - y)))
        .collect()
}

pub fn map(a: &Vector, f: impl Fn(f64) -> f64) -> Vector {
    a.iter().map(|(k, x)| (k.clone(), f(*x))).collect()
}

/// `x > 0` as a filter.
pub fn positive(a: &Vector) -> Vector {
    a.iter()
        .filter(|(_, x)| **x > 0.0)
        .map(|(k, x)| (k.clone(), *x))
        .collect()
}

/// `label_replace(v, dst, "$1", src, "(.+)")`.
pub fn relabel(v: Vec<(Labels, f64)>, dst: &str, src: &str) -> Vec<(Labels, f64)> {
    v.into_iter()
        .map(|(mut l, x)| {
            if let Some(s) = l.get(src).filter(|s| !s.is_empty()).cloned() {
                l.insert(dst.to_string(), s);
            }
            (l, x)
        })
        .collect()
}

/// `histogram_quantile(q, sum by (le, by...) (rate(buckets)))`, Prometheus's interpolation.
pub fn quantile(q: f64, buckets: Vec<(Labels, f64)>, by: &[&str]) -> Vector {
    let mut groups: BTreeMap<Labels, Vec<(f64, f64)>> = BTreeMap::new();
    for (l, x) in buckets {
        let le: f64 = match l.get("le").map(String::as_str) {
            Some("+Inf") => f64::INFINITY,
            Some(s) => s.parse().expect("le"),
            None => continue,
        };
        let g = groups.entry(key(&l, by)).or_default();
        match g.iter_mut().find(|(b, _)| *b == le) {
            Some(e) => e.1 += x,
            None => g.push((le, x)),
        }
    }
    groups
        .into_iter()
        .map(|(k, mut b)| {
            b.sort_by(|x, y| x.0.total_cmp(&y.0));
            (k, bucket_quantile(q, &b))
        })
        .collect()
}

fn bucket_quantile(q: f64, b: &[(f64, f64)]) -> f64 {
    let total = b.last().map(|x| x.1).unwrap_or(0.0);
    if b.len() < 2 || total == 0.0 {
        return f64::NAN;
    }
    let rank = q * total;
    let i = b.iter().position(|x| x.1 >= rank).unwrap_or(b.len() - 1);
    if i == b.len() - 1 {
        return b[b.len() - 2].0;
    }
    if i == 0 && b[0].0 <= 0.0 {
        return b[0].0;
    }
    let (start, below) = if i == 0 {
        (0.0, 0.0)
    } else {
        (b[i - 1].0, b[i - 1].1)
    };
    let (end, count) = (b[i].0, b[i].1 - below);
    start + (end - start) * ((rank - below) / count)
}

/// `topk(k, v)` / `bottomk(k, v)` (ties do not occur in the fixtures).
pub fn topk(k: usize, v: &Vector, bottom: bool) -> Vector {
    let mut items: Vec<(&Labels, &f64)> = v.iter().collect();
    items.sort_by(|a, b| {
        if bottom {
            a.1.total_cmp(b.1)
        } else {
            b.1.total_cmp(a.1)
        }
    });
    items
        .into_iter()
        .take(k)
        .map(|(l, x)| (l.clone(), *x))
        .collect()
}

/// A vector with one label-less element.
pub fn scalar(x: f64) -> Vector {
    [(Labels::new(), x)].into()
}
