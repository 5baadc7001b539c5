//! The PromQL evaluator over the [`Store`], with Prometheus 2.x semantics (2.55, the last 2.x):
//! a 5-minute lookback for instant selectors, staleness markers ending a series, ranges closed
//! at both ends, range queries evaluated independently at each step `start + k·step`, and
//! subqueries evaluated at the absolute multiples of their step inside their window.
//!
//! One [`Evaluator`] serves one query: it resolves each selector's series once (sorted by labels,
//! the order Prometheus reads them in) and keeps the inner steps of each subquery that the
//! next outer step will read again, so a range query does not repeat that work at every step.

use super::aggregate::aggregate;
use super::binary::binary;
use super::functions::call;
use super::store::{Store, StoredSeries, is_stale};
use crate::metrics::Labels;
use promql_parser::label::Matchers;
use promql_parser::parser::{self, AtModifier, Expr, Offset, SubqueryExpr, VectorSelector};
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::time::{Duration, SystemTime};

/// How far back an instant selector looks for a sample (Prometheus's default).
pub const LOOKBACK_MS: i64 = 5 * 60 * 1000;

/// The step of a subquery written without one (`x[10m:]`): Prometheus uses its global
/// `evaluation_interval`, whose default is one minute.
pub const DEFAULT_SUBQUERY_STEP_MS: i64 = 60 * 1000;

/// The most inner steps one subquery window may hold, so a typo like `x[1w:1ms]` is refused
/// instead of evaluated for minutes.
const MAX_SUBQUERY_STEPS: i64 = 100_000;

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

/// How the engine is tuned, as a Prometheus server is by its flags and configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// `--query.lookback-delta`.
    pub lookback_ms: i64,
    /// The global `evaluation_interval`: the step of a subquery written without one.
    pub subquery_step_ms: i64,
    /// Extrapolate `rate`, `increase` and `delta` as Prometheus did before 2.51 (which fixed
    /// "limiting of extrapolation to negative values"), to answer as an older Prometheus does.
    pub legacy_extrapolation: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            lookback_ms: LOOKBACK_MS,
            subquery_step_ms: DEFAULT_SUBQUERY_STEP_MS,
            legacy_extrapolation: false,
        }
    }
}

/// One element of an instant vector.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Elem {
    pub labels: Labels,
    pub v: f64,
}

/// One series of a range vector: a stored series' window is lent, a subquery's is owned.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeElem<'a> {
    pub labels: Cow<'a, Labels>,
    pub points: Cow<'a, [(i64, f64)]>,
}

/// A value of the PromQL type system.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Scalar(f64),
    Vector(Vec<Elem>),
    /// A range vector and its window `[from, to]` in milliseconds.
    Matrix(Vec<RangeElem<'a>>, i64, i64),
    Str(String),
}

/// A series of a query result: labels and `(milliseconds, value)` points.
pub type ResultSeries = (Labels, Vec<(i64, f64)>);

/// A subquery's inner results by inner step (milliseconds).
type InnerSteps = BTreeMap<i64, Rc<Vec<Elem>>>;

/// Evaluation context of one query: the store, the query's own start and end (for `@ start()`
/// and `@ end()`), the options, and what the query has already worked out.
pub struct Evaluator<'a> {
    pub store: &'a Store,
    pub start: i64,
    pub end: i64,
    pub options: Options,
    /// Series of each selector node (keyed by its address in the query's tree).
    selections: RefCell<HashMap<usize, Rc<[&'a StoredSeries]>>>,
    /// Inner results of each subquery node by inner step.
    subqueries: RefCell<HashMap<usize, InnerSteps>>,
}

/// Parse a query, with the parser's message on failure. `holt_winters` (the 2.x name of
/// `double_exponential_smoothing`) is known to the parser from the first call on.
pub fn parse(query: &str) -> Result<Expr, EvalError> {
    static REGISTER: std::sync::Once = std::sync::Once::new();
    REGISTER.call_once(|| {
        use promql_parser::parser::value::ValueType;
        let _ = parser::register_extra_functions(vec![parser::Function::new(
            "holt_winters",
            vec![ValueType::Matrix, ValueType::Scalar, ValueType::Scalar],
            0,
            ValueType::Vector,
            false,
        )]);
    });
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
    range_query_with(store, expr, start, end, step, Options::default())
}

/// [`range_query`] with explicit [`Options`].
pub fn range_query_with(
    store: &Store,
    expr: &Expr,
    start: i64,
    end: i64,
    step: i64,
    options: Options,
) -> Result<Vec<ResultSeries>, EvalError> {
    if step <= 0 {
        return Err(EvalError::Execution(format!(
            "step \"{step}\" ms must be positive"
        )));
    }
    let ev = Evaluator::new(store, start, end, options);
    let mut out: BTreeMap<Labels, Vec<(i64, f64)>> = BTreeMap::new();
    let mut t = start;
    while t <= end {
        match ev.eval(expr, t)? {
            Value::Scalar(v) => out.entry(Labels::new()).or_default().push((t, v)),
            Value::Vector(els) => {
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

/// The typed value of an instant query at `t` (a scalar stays a scalar).
pub fn instant_value<'s>(
    store: &'s Store,
    expr: &Expr,
    t: i64,
    options: Options,
) -> Result<Value<'s>, EvalError> {
    Evaluator::new(store, t, t, options).eval(expr, t)
}

/// An instant query at `t`: a scalar is one series without labels; a range vector keeps its
/// points.
pub fn instant_query(store: &Store, expr: &Expr, t: i64) -> Result<Vec<ResultSeries>, EvalError> {
    instant_query_with(store, expr, t, Options::default())
}

/// [`instant_query`] with explicit [`Options`].
pub fn instant_query_with(
    store: &Store,
    expr: &Expr,
    t: i64,
    options: Options,
) -> Result<Vec<ResultSeries>, EvalError> {
    match instant_value(store, expr, t, options)? {
        Value::Scalar(v) => Ok(vec![(Labels::new(), vec![(t, v)])]),
        Value::Vector(els) => Ok(els
            .into_iter()
            .map(|e| (e.labels, vec![(t, e.v)]))
            .collect()),
        Value::Matrix(m, ..) => Ok(m
            .into_iter()
            .map(|r| (r.labels.into_owned(), r.points.into_owned()))
            .collect()),
        Value::Str(_) => Err(EvalError::Unsupported("string results".into())),
    }
}

/// Prometheus refuses a vector holding one label set twice ("vector cannot contain metrics with
/// the same labelset"), e.g. once the names of `{__name__=~"a|b"}` are dropped.
pub fn ensure_unique(els: &[Elem]) -> Result<(), EvalError> {
    if els.len() < 2 {
        return Ok(());
    }
    let mut seen = std::collections::HashSet::with_capacity(els.len());
    for e in els {
        if !seen.insert(&e.labels) {
            return Err(EvalError::Execution(
                "vector cannot contain metrics with the same labelset".into(),
            ));
        }
    }
    Ok(())
}

/// Drop the metric name of every element, refusing the duplicates that can arise only when the
/// elements had different names.
pub fn drop_names(mut els: Vec<Elem>) -> Result<Vec<Elem>, EvalError> {
    let first = els.first().and_then(|e| e.labels.get("__name__").cloned());
    let mut mixed = false;
    for e in &mut els {
        let name = e.labels.remove("__name__");
        mixed |= name != first;
    }
    if mixed {
        ensure_unique(&els)?;
    }
    Ok(els)
}

pub fn millis(d: &Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn offset_ms(offset: &Option<Offset>) -> i64 {
    match offset {
        None => 0,
        Some(Offset::Pos(d)) => millis(d),
        Some(Offset::Neg(d)) => -millis(d),
    }
}

/// The first multiple of `step` at or after `t` (for negative times as well).
fn align_up(t: i64, step: i64) -> i64 {
    t.div_euclid(step) * step + if t.rem_euclid(step) == 0 { 0 } else { step }
}

impl<'a> Evaluator<'a> {
    /// A fresh context for one query over `[start, end]`.
    pub fn new(store: &'a Store, start: i64, end: i64, options: Options) -> Self {
        Evaluator {
            store,
            start,
            end,
            options,
            selections: RefCell::default(),
            subqueries: RefCell::default(),
        }
    }

    /// Evaluate `expr` at `t` (milliseconds).
    pub fn eval(&self, expr: &Expr, t: i64) -> Result<Value<'a>, EvalError> {
        match expr {
            Expr::NumberLiteral(n) => Ok(Value::Scalar(n.val)),
            Expr::StringLiteral(s) => Ok(Value::Str(s.val.clone())),
            Expr::Paren(p) => self.eval(&p.expr, t),
            Expr::Unary(u) => match self.eval(&u.expr, t)? {
                Value::Scalar(v) => Ok(Value::Scalar(-v)),
                Value::Vector(els) => {
                    let mut els = drop_names(els)?;
                    for e in &mut els {
                        e.v = -e.v;
                    }
                    Ok(Value::Vector(els))
                }
                _ => Err(EvalError::Execution(
                    "unary minus needs a scalar or instant vector".into(),
                )),
            },
            Expr::VectorSelector(vs) => Ok(Value::Vector(
                self.select_instant(vs, t)
                    .map(|(s, _, v)| Elem {
                        labels: s.labels.clone(),
                        v,
                    })
                    .collect(),
            )),
            Expr::MatrixSelector(ms) => {
                let at = self.selector_time(&ms.vs.at, &ms.vs.offset, t);
                let from = at - millis(&ms.range);
                Ok(Value::Matrix(self.select_range(&ms.vs, from, at), from, at))
            }
            Expr::Aggregate(a) => aggregate(self, a, t),
            Expr::Binary(b) => binary(self, b, t),
            Expr::Call(c) => call(self, c, t),
            Expr::Subquery(sq) => self.subquery(sq, t),
            Expr::Extension(_) => Err(EvalError::Unsupported("extension expressions".into())),
        }
    }

    /// The time a selector or subquery reads at: `@` pins it, `offset` moves it back.
    pub fn selector_time(&self, at: &Option<AtModifier>, offset: &Option<Offset>, t: i64) -> i64 {
        let base = match at {
            None => t,
            Some(AtModifier::Start) => self.start,
            Some(AtModifier::End) => self.end,
            Some(AtModifier::At(when)) => match when.duration_since(SystemTime::UNIX_EPOCH) {
                Ok(d) => millis(&d),
                Err(e) => -millis(&e.duration()),
            },
        };
        base - offset_ms(offset)
    }

    /// The series a selector matches, resolved once per query, in label order.
    fn matching(&self, vs: &VectorSelector) -> Rc<[&'a StoredSeries]> {
        let key = vs as *const VectorSelector as usize;
        if let Some(found) = self.selections.borrow().get(&key) {
            return found.clone();
        }
        let name = vs.name.as_deref().or_else(|| name_matcher(&vs.matchers));
        let mut found: Vec<&'a StoredSeries> = self
            .store
            .series_named(name)
            .filter(|s| matches(&vs.matchers, &s.labels))
            .collect();
        found.sort_by(|a, b| a.labels.cmp(&b.labels));
        let found: Rc<[&'a StoredSeries]> = found.into();
        self.selections.borrow_mut().insert(key, found.clone());
        found
    }

    /// The newest sample of each matching series within the lookback, unless it is a
    /// staleness marker: `(series, sample time, value)`.
    pub fn select_instant(
        &self,
        vs: &VectorSelector,
        t: i64,
    ) -> impl Iterator<Item = (&'a StoredSeries, i64, f64)> + use<'a> {
        let at = self.selector_time(&vs.at, &vs.offset, t);
        let lookback = self.options.lookback_ms;
        let found = self.matching(vs);
        (0..found.len()).filter_map(move |i| {
            let s = found[i];
            let (pt, v) = s.at_or_before(at)?;
            (pt >= at - lookback && !is_stale(v)).then_some((s, pt, v))
        })
    }

    /// Every sample of each matching series in `[from, to]`, staleness markers left out.
    fn select_range(&self, vs: &VectorSelector, from: i64, to: i64) -> Vec<RangeElem<'a>> {
        self.matching(vs)
            .iter()
            .filter_map(|s| {
                let window = s.window(from, to);
                let points: Cow<'a, [(i64, f64)]> = if s.has_stale {
                    Cow::Owned(window.iter().copied().filter(|p| !is_stale(p.1)).collect())
                } else {
                    Cow::Borrowed(window)
                };
                (!points.is_empty()).then_some(RangeElem {
                    labels: Cow::Borrowed(&s.labels),
                    points,
                })
            })
            .collect()
    }

    /// A subquery at `t`: its expression at every multiple of its step in
    /// `[t - offset - range, t - offset]` (or around its `@` time), as a range vector.
    fn subquery(&self, sq: &SubqueryExpr, t: i64) -> Result<Value<'a>, EvalError> {
        let to = self.selector_time(&sq.at, &sq.offset, t);
        let from = to - millis(&sq.range);
        let step = sq
            .step
            .as_ref()
            .map(millis)
            .filter(|s| *s > 0)
            .unwrap_or(self.options.subquery_step_ms);
        if (to - from) / step > MAX_SUBQUERY_STEPS {
            return Err(EvalError::Execution(format!(
                "the subquery {sq} would evaluate more than {MAX_SUBQUERY_STEPS} steps: use a larger step"
            )));
        }
        let key = sq as *const SubqueryExpr as usize;
        let first = align_up(from, step);
        let mut series: BTreeMap<Labels, Vec<(i64, f64)>> = BTreeMap::new();
        let mut ti = first;
        while ti <= to {
            let cached = self
                .subqueries
                .borrow()
                .get(&key)
                .and_then(|m| m.get(&ti).cloned());
            let inner = match cached {
                Some(v) => v,
                None => {
                    let v = match self.eval(&sq.expr, ti)? {
                        Value::Vector(v) => Rc::new(v),
                        _ => {
                            return Err(EvalError::Execution(format!(
                                "the subquery {sq} needs an instant vector expression"
                            )));
                        }
                    };
                    self.subqueries
                        .borrow_mut()
                        .entry(key)
                        .or_default()
                        .insert(ti, v.clone());
                    v
                }
            };
            for e in inner.iter() {
                match series.get_mut(&e.labels) {
                    Some(points) => points.push((ti, e.v)),
                    None => {
                        series.insert(e.labels.clone(), vec![(ti, e.v)]);
                    }
                }
            }
            ti += step;
        }
        // Steps before this window are not read again by later (increasing) outer steps.
        if let Some(m) = self.subqueries.borrow_mut().get_mut(&key) {
            *m = m.split_off(&first);
        }
        Ok(Value::Matrix(
            series
                .into_iter()
                .map(|(labels, points)| RangeElem {
                    labels: Cow::Owned(labels),
                    points: Cow::Owned(points),
                })
                .collect(),
            from,
            to,
        ))
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
