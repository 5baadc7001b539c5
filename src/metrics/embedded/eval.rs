//! The PromQL evaluator over the [`Store`], with Prometheus 2.x semantics: a 5-minute lookback
//! for instant selectors, staleness markers ending a series, ranges closed at both ends, and
//! range queries evaluated independently at each step `start + k·step`.

use super::aggregate::aggregate;
use super::binary::binary;
use super::functions::call;
use super::store::{Store, is_stale};
use crate::metrics::Labels;
use promql_parser::label::Matchers;
use promql_parser::parser::{self, AtModifier, Expr, Offset, VectorSelector};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

/// How far back an instant selector looks for a sample (Prometheus's default).
pub const LOOKBACK_MS: i64 = 5 * 60 * 1000;

/// Why an expression could not be evaluated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    #[error("cannot parse the query: {0}")]
    Parse(String),
    #[error("the embedded engine does not support {0}: use a real Prometheus for this query")]
    Unsupported(String),
    #[error("{0}")]
    Execution(String),
}

/// One element of an instant vector.
#[derive(Debug, Clone, PartialEq)]
pub struct Elem {
    pub labels: Labels,
    pub v: f64,
}

/// One series of a range vector, with the window it was read over.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeElem {
    pub labels: Labels,
    pub points: Vec<(i64, f64)>,
}

/// A value of the PromQL type system.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Scalar(f64),
    Vector(Vec<Elem>),
    /// A range vector and its window `[from, to]` in milliseconds.
    Matrix(Vec<RangeElem>, i64, i64),
    Str(String),
}

/// Evaluation context: the store and the query's own start and end (for `@ start()`/`end()`).
pub struct Evaluator<'a> {
    pub store: &'a Store,
    pub start: i64,
    pub end: i64,
}

/// A series of a query result: labels and `(milliseconds, value)` points.
pub type ResultSeries = (Labels, Vec<(i64, f64)>);

/// Parse a query, with the parser's message on failure.
pub fn parse(query: &str) -> Result<Expr, EvalError> {
    parser::parse(query).map_err(EvalError::Parse)
}

/// A range query: the expression at every step from `start` to `end` inclusive.
pub fn range_query(
    store: &Store,
    expr: &Expr,
    start: i64,
    end: i64,
    step: i64,
) -> Result<Vec<ResultSeries>, EvalError> {
    if step <= 0 {
        return Err(EvalError::Execution(format!(
            "step \"{step}\" ms must be positive"
        )));
    }
    let ev = Evaluator { store, start, end };
    let mut out: BTreeMap<Labels, Vec<(i64, f64)>> = BTreeMap::new();
    let mut t = start;
    while t <= end {
        match ev.eval(expr, t)? {
            Value::Scalar(v) => out.entry(Labels::new()).or_default().push((t, v)),
            Value::Vector(els) => {
                check_unique(&els)?;
                for e in els {
                    out.entry(e.labels).or_default().push((t, e.v));
                }
            }
            Value::Matrix(..) | Value::Str(_) => {
                return Err(EvalError::Execution(
                    "a range query needs an instant vector or scalar expression, not a range vector or string".into(),
                ));
            }
        }
        t += step;
    }
    Ok(out.into_iter().collect())
}

/// An instant query at `t`: a scalar is one series without labels; a range vector keeps its
/// points.
pub fn instant_query(store: &Store, expr: &Expr, t: i64) -> Result<Vec<ResultSeries>, EvalError> {
    let ev = Evaluator {
        store,
        start: t,
        end: t,
    };
    match ev.eval(expr, t)? {
        Value::Scalar(v) => Ok(vec![(Labels::new(), vec![(t, v)])]),
        Value::Vector(els) => {
            check_unique(&els)?;
            Ok(els
                .into_iter()
                .map(|e| (e.labels, vec![(t, e.v)]))
                .collect())
        }
        Value::Matrix(m, ..) => Ok(m.into_iter().map(|r| (r.labels, r.points)).collect()),
        Value::Str(_) => Err(EvalError::Unsupported("string results".into())),
    }
}

fn check_unique(els: &[Elem]) -> Result<(), EvalError> {
    let mut seen = std::collections::HashSet::new();
    for e in els {
        if !seen.insert(&e.labels) {
            return Err(EvalError::Execution(
                "vector cannot contain metrics with the same labelset".into(),
            ));
        }
    }
    Ok(())
}

fn millis(d: &Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl Evaluator<'_> {
    /// Evaluate `expr` at `t` (milliseconds).
    pub fn eval(&self, expr: &Expr, t: i64) -> Result<Value, EvalError> {
        match expr {
            Expr::NumberLiteral(n) => Ok(Value::Scalar(n.val)),
            Expr::StringLiteral(s) => Ok(Value::Str(s.val.clone())),
            Expr::Paren(p) => self.eval(&p.expr, t),
            Expr::Unary(u) => match self.eval(&u.expr, t)? {
                Value::Scalar(v) => Ok(Value::Scalar(-v)),
                Value::Vector(els) => Ok(Value::Vector(
                    els.into_iter()
                        .map(|mut e| {
                            e.labels.remove("__name__");
                            e.v = -e.v;
                            e
                        })
                        .collect(),
                )),
                _ => Err(EvalError::Execution(
                    "unary minus needs a scalar or instant vector".into(),
                )),
            },
            Expr::VectorSelector(vs) => Ok(Value::Vector(self.select_instant(vs, t)?)),
            Expr::MatrixSelector(ms) => {
                let at = self.selector_time(&ms.vs, t)?;
                let from = at - millis(&ms.range);
                Ok(Value::Matrix(self.select_range(&ms.vs, from, at), from, at))
            }
            Expr::Aggregate(a) => aggregate(self, a, t),
            Expr::Binary(b) => binary(self, b, t),
            Expr::Call(c) => call(self, c, t),
            Expr::Subquery(_) => Err(EvalError::Unsupported("subqueries".into())),
            Expr::Extension(_) => Err(EvalError::Unsupported("extension expressions".into())),
        }
    }

    /// The time a selector reads at: `@` pins it, `offset` moves it back.
    fn selector_time(&self, vs: &VectorSelector, t: i64) -> Result<i64, EvalError> {
        let base = match &vs.at {
            None => t,
            Some(AtModifier::Start) => self.start,
            Some(AtModifier::End) => self.end,
            Some(AtModifier::At(when)) => match when.duration_since(SystemTime::UNIX_EPOCH) {
                Ok(d) => millis(&d),
                Err(e) => -millis(&e.duration()),
            },
        };
        Ok(match &vs.offset {
            None => base,
            Some(Offset::Pos(d)) => base - millis(d),
            Some(Offset::Neg(d)) => base + millis(d),
        })
    }

    fn matching<'s>(
        &'s self,
        vs: &'s VectorSelector,
    ) -> impl Iterator<Item = &'s super::store::StoredSeries> + 's {
        let name = vs.name.as_deref().or_else(|| name_matcher(&vs.matchers));
        self.store
            .series_named(name)
            .filter(move |s| matches(&vs.matchers, &s.labels))
    }

    /// The newest sample of each matching series within the lookback, unless it is a
    /// staleness marker.
    fn select_instant(&self, vs: &VectorSelector, t: i64) -> Result<Vec<Elem>, EvalError> {
        let at = self.selector_time(vs, t)?;
        Ok(self
            .matching(vs)
            .filter_map(|s| {
                let (pt, v) = s.at_or_before(at)?;
                (pt >= at - LOOKBACK_MS && !is_stale(v)).then(|| Elem {
                    labels: s.labels.clone(),
                    v,
                })
            })
            .collect())
    }

    /// Every sample of each matching series in `[from, to]`, staleness markers left out.
    fn select_range(&self, vs: &VectorSelector, from: i64, to: i64) -> Vec<RangeElem> {
        self.matching(vs)
            .filter_map(|s| {
                let points: Vec<(i64, f64)> = s
                    .window(from, to)
                    .iter()
                    .copied()
                    .filter(|p| !is_stale(p.1))
                    .collect();
                (!points.is_empty()).then(|| RangeElem {
                    labels: s.labels.clone(),
                    points,
                })
            })
            .collect()
    }
}

/// A `{__name__="x"}` matcher names the metric as well as `x{}` does.
fn name_matcher(m: &Matchers) -> Option<&str> {
    m.matchers
        .iter()
        .find(|m| m.name == "__name__" && matches!(m.op, promql_parser::label::MatchOp::Equal))
        .map(|m| m.value.as_str())
}

/// Whether a label set satisfies the matchers; a missing label reads as the empty string.
/// `or_matchers` (`{a="1" or b="2"}`) match when any one group matches.
fn matches(m: &Matchers, labels: &Labels) -> bool {
    let group = |ms: &[promql_parser::label::Matcher]| {
        ms.iter().all(|m| {
            let v = labels.get(&m.name).map(String::as_str).unwrap_or("");
            m.is_match(v)
        })
    };
    if m.or_matchers.is_empty() {
        group(&m.matchers)
    } else {
        m.or_matchers.iter().any(|g| group(g))
    }
}
