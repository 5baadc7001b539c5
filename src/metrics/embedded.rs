//! The embedded metrics source: an in-process time-series store fed by the simulator, and a
//! PromQL engine over it, behind the same [`Source`] interface as a real Prometheus. The
//! queries are parsed by `promql-parser` and evaluated here with the semantics of Prometheus
//! 2.55, the last 2.x (lookback, staleness, rate extrapolation, subqueries, `histogram_quantile`
//! interpolation, vector matching, compensated sums), so the dashboard, runbooks and a team's
//! own rehearsal queries read the same numbers from either source. What it leaves out (native
//! histograms, `info()`, delayed name removal) is refused with a message that says so.
//!
//! In detail: the 5-minute lookback, staleness markers (a series missing from a scrape is stale;
//! a gap in a series is not), closed ranges, `rate` extrapolation (2.51's rule;
//! `with_legacy_extrapolation` imitates 2.50 and older, which the differential tests use
//! against Debian's 2.42), subqueries aligned to their step (default step 1 minute), `@` and
//! `offset`, vector matching, compensated sums, and every 2.x function on float samples, with
//! the experimental `sort_by_label`, `limitk`, `limit_ratio` and `mad_over_time`. It passed 667
//! of the 674 float cases of Prometheus's v2.55.1 test files (measured once by hand; the files
//! are not in this repository), and a differential test compares 1,030 queries (130 written,
//! 900 generated from a grammar with a fixed seed) with a real Prometheus on every CI run. Not
//! supported: native histograms and their functions (the store holds float samples only);
//! `info()`, Prometheus 3's functions and duration expressions (outside 2.x); delayed name
//! removal (an off-by-default 2.55 flag). `limit_ratio` samples a different, equally stable,
//! subset than Prometheus, and aggregation parameters are evaluated at every step, as 2.42 does.
//! `tsink` was evaluated first and rejected: it brings a whole storage engine (WAL, mmap, zstd,
//! rayon, object storage) with no feature flags to trim it, and its windows follow Prometheus 3.

mod aggregate;
mod binary;
mod calendar;
pub mod eval;
mod functions;
mod histogram;
pub mod http;
mod kahan;
mod over_time;
mod relabel;
pub mod store;
#[cfg(test)]
mod tests;

use super::series::{Labels, Point, Series};
use super::source::{InstantQuery, QueryAnswer, RangeQuery, Source, SourceError};
use crate::sim::exposition::Sample;
use eval::{EvalError, ResultSeries};
use futures::future::BoxFuture;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use store::Store;

/// How long samples are kept by default: the dashboard's widest window with room to spare.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(3 * 3600);

/// The embedded source. Cloning gives another handle on the same store: the demo keeps one to
/// [`ingest`](EmbeddedSource::ingest) and hands another to the console as its [`Source`].
#[derive(Clone)]
pub struct EmbeddedSource {
    store: Arc<RwLock<Store>>,
    options: eval::Options,
}

impl Default for EmbeddedSource {
    fn default() -> Self {
        EmbeddedSource::new(DEFAULT_RETENTION)
    }
}

impl std::fmt::Debug for EmbeddedSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (series, points) = self.size();
        f.debug_struct("EmbeddedSource")
            .field("series", &series)
            .field("points", &points)
            .finish()
    }
}

/// Seconds (fractional) to whole milliseconds, as Prometheus stores timestamps.
fn to_ms(t: f64) -> i64 {
    (t * 1000.0).round() as i64
}

impl EmbeddedSource {
    /// An empty store keeping `retention` of samples behind the newest scrape.
    pub fn new(retention: Duration) -> Self {
        let ms = i64::try_from(retention.as_millis()).unwrap_or(i64::MAX / 2);
        EmbeddedSource {
            store: Arc::new(RwLock::new(Store::new(ms))),
            options: eval::Options::default(),
        }
    }

    /// This handle with the step of subqueries written without one (`x[10m:]`): Prometheus's
    /// global `evaluation_interval`, one minute unless configured.
    pub fn with_subquery_step(mut self, step: Duration) -> Self {
        let ms = i64::try_from(step.as_millis()).unwrap_or(i64::MAX);
        if ms > 0 {
            self.options.subquery_step_ms = ms;
        }
        self
    }

    /// This handle extrapolating `rate`, `increase` and `delta` as Prometheus 2.50 and older
    /// do (see [`eval::Options::legacy_extrapolation`]), to match such a Prometheus exactly.
    pub fn with_legacy_extrapolation(mut self) -> Self {
        self.options.legacy_extrapolation = true;
        self
    }

    /// Append samples `(labels with __name__, Unix seconds, value)` one by one, as a remote
    /// write or a TSDB import would: no series goes stale because another got a sample, so a
    /// series without samples for a while is a gap, answered from its last sample for up to
    /// five minutes. A value may be [`store::stale_marker`]. Samples at or before their series'
    /// newest are refused; the number accepted is returned.
    pub fn append(&self, samples: impl IntoIterator<Item = (Labels, f64, f64)>) -> usize {
        let mut store = self
            .store
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        samples
            .into_iter()
            .filter(|(labels, t, v)| t.is_finite() && store.append(labels, to_ms(*t), *v))
            .count()
    }

    /// End a series at `t_unix_secs` with a staleness marker, as a scrape does for a series
    /// that left it; `false` when the series already has a sample at or after that time.
    pub fn mark_stale(&self, labels: &Labels, t_unix_secs: f64) -> bool {
        if !t_unix_secs.is_finite() {
            return false;
        }
        let mut store = self
            .store
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        store.mark_stale(labels, to_ms(t_unix_secs))
    }

    /// Record one scrape of the simulator at `t_unix_secs` (the simulated clock mapped to Unix
    /// time): every sample gets that timestamp, series missing since the previous scrape end
    /// (a staleness marker, as Prometheus writes), points beyond the retention are dropped.
    /// A scrape at or before the newest one is ignored.
    pub fn ingest(&self, t_unix_secs: f64, samples: &[Sample]) {
        self.ingest_series(
            t_unix_secs,
            samples.iter().map(|s| {
                let mut labels: Labels = s.labels.iter().cloned().collect();
                labels.insert("__name__".into(), s.name.clone());
                (labels, s.value)
            }),
        );
    }

    /// Record one scrape given as label sets that carry their metric name in `__name__`: every
    /// series of the previous scrape missing from this one gets a staleness marker.
    pub fn ingest_series(
        &self,
        t_unix_secs: f64,
        samples: impl IntoIterator<Item = (Labels, f64)>,
    ) {
        if !t_unix_secs.is_finite() {
            return;
        }
        // A poisoned lock means a query panicked mid-read; the data is still whole.
        let mut store = self
            .store
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        store.ingest_scrape(to_ms(t_unix_secs), samples);
    }

    /// Series and points held, for the memory bound.
    pub fn size(&self) -> (usize, usize) {
        self.store
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .size()
    }

    /// The newest scrape's time (Unix seconds), the embedded "now".
    pub fn newest(&self) -> Option<f64> {
        let store = self
            .store
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        store.newest.map(|t| t as f64 / 1000.0)
    }

    /// A range query evaluated on the calling thread (for tests and benches).
    pub fn range_now(&self, q: &RangeQuery) -> Result<QueryAnswer, SourceError> {
        let expr = eval::parse(&q.query).map_err(to_source_error)?;
        if !(q.step > 0.0 && q.start.is_finite() && q.end.is_finite()) {
            return Err(bad_data(format!(
                "range \"{}\"..\"{}\" step \"{}\": start and end must be finite and step positive",
                q.start, q.end, q.step
            )));
        }
        // Guard against a range that would evaluate without end, as Prometheus does.
        if (q.end - q.start) / q.step > 11_000.0 {
            return Err(bad_data(
                "exceeded maximum resolution of 11,000 points per timeseries: try a larger step"
                    .into(),
            ));
        }
        let store = self
            .store
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let out = eval::range_query_with(
            &store,
            &expr,
            to_ms(q.start),
            to_ms(q.end),
            to_ms(q.step).max(1),
            self.options,
        )
        .map_err(to_source_error)?;
        Ok(answer(out))
    }

    /// An instant query evaluated on the calling thread; `time: None` is the newest scrape.
    pub fn instant_now(&self, q: &InstantQuery) -> Result<QueryAnswer, SourceError> {
        let expr = eval::parse(&q.query).map_err(to_source_error)?;
        let store = self
            .store
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let t = match q.time {
            Some(t) if t.is_finite() => to_ms(t),
            Some(t) => return Err(bad_data(format!("time \"{t}\" is not a finite number"))),
            None => store.newest.unwrap_or(0),
        };
        let out =
            eval::instant_query_with(&store, &expr, t, self.options).map_err(to_source_error)?;
        Ok(answer(out))
    }
}

fn bad_data(message: String) -> SourceError {
    SourceError::Api {
        error_type: "bad_data".into(),
        message,
    }
}

fn to_source_error(e: EvalError) -> SourceError {
    let error_type = match e {
        EvalError::Parse(_) | EvalError::Unsupported(_) => "bad_data",
        EvalError::Execution(_) => "execution",
    };
    SourceError::Api {
        error_type: error_type.into(),
        message: e.to_string(),
    }
}

fn answer(out: Vec<ResultSeries>) -> QueryAnswer {
    QueryAnswer {
        series: out
            .into_iter()
            .map(|(labels, points)| Series {
                labels,
                points: points
                    .into_iter()
                    .map(|(t, v)| Point {
                        t: t as f64 / 1000.0,
                        v,
                    })
                    .collect(),
            })
            .collect(),
        // No response body: nothing crossed a wire.
        bytes: 0,
        ..QueryAnswer::default()
    }
}

/// Evaluation is CPU work under a read lock: keep it off the async threads.
fn blocking<F>(f: F) -> BoxFuture<'static, Result<QueryAnswer, SourceError>>
where
    F: FnOnce() -> Result<QueryAnswer, SourceError> + Send + 'static,
{
    Box::pin(async move {
        tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
            Err(SourceError::Api {
                error_type: "internal".into(),
                message: format!("the embedded query stopped: {e}"),
            })
        })
    })
}

impl Source for EmbeddedSource {
    fn describe(&self) -> String {
        "embedded".into()
    }

    fn query_range(&self, q: RangeQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        let me = self.clone();
        blocking(move || me.range_now(&q))
    }

    fn query(&self, q: InstantQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        let me = self.clone();
        blocking(move || me.instant_now(&q))
    }

    fn ready(&self) -> BoxFuture<'static, Result<(), SourceError>> {
        let has_data = self.newest().is_some();
        Box::pin(async move {
            if has_data {
                Ok(())
            } else {
                Err(SourceError::Unreachable(
                    "the embedded store has no samples yet: the simulator has not been scraped"
                        .into(),
                ))
            }
        })
    }
}
