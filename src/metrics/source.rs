//! The interface between panels, gates and recorders and wherever metrics come from.

use super::series::Series;
use futures::future::BoxFuture;
use std::time::Duration;

/// A range query: `start` and `end` in Unix seconds, `step` in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeQuery {
    pub query: String,
    pub start: f64,
    pub end: f64,
    pub step: f64,
}

/// An instant query at `time` (Unix seconds), or "now" on the server when `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct InstantQuery {
    pub query: String,
    pub time: Option<f64>,
}

/// A successful answer. Instant vectors and scalars come back as one point per series.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueryAnswer {
    pub series: Vec<Series>,
    /// Warnings from the server (sanitized): the answer may be partial.
    pub warnings: Vec<String>,
    /// Informational notes from the server (sanitized), e.g. PromQL hints; not partial data.
    pub infos: Vec<String>,
    /// Bytes of the response body, for the fetch-size benchmark.
    pub bytes: usize,
    /// The result type the server said it sent, when it says (a Prometheus does).
    pub result_type: Option<ResultType>,
    /// Series of the answer left out of `series` (a console panel keeps only its worst ones,
    /// see [`crate::metrics::series::keep_worst`]).
    pub omitted: usize,
}

/// The `resultType` of a Prometheus answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultType {
    Matrix,
    Vector,
    Scalar,
    String,
}

impl ResultType {
    pub fn name(self) -> &'static str {
        match self {
            ResultType::Matrix => "matrix",
            ResultType::Vector => "vector",
            ResultType::Scalar => "scalar",
            ResultType::String => "string",
        }
    }
}

/// Why a query did not give an answer. Every variant maps to an honest panel state.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SourceError {
    /// Our own deadline expired, or the server never answered.
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    /// Connection refused, DNS failure, TLS failure...
    #[error("unreachable: {0}")]
    Unreachable(String),
    /// 429 (or 503 with Retry-After): come back no sooner than this.
    #[error("rate limited{}", .retry_after.map(|d| format!(", retry after {}s", d.as_secs())).unwrap_or_default())]
    RateLimited { retry_after: Option<Duration> },
    /// The API's JSON error envelope: `errorType` (bad_data, execution, timeout, canceled,
    /// internal, unavailable, or non-standard ones like "422") and `error`.
    #[error("{error_type}: {message}")]
    Api { error_type: String, message: String },
    /// A non-JSON error: text/plain 401/404/503, HTML from a proxy...
    #[error("HTTP {status}: {summary}")]
    Http { status: u16, summary: String },
    /// A 2xx body that is not what the API promises (truncated, wrong shape, not JSON).
    #[error("malformed response: {0}")]
    Malformed(String),
    /// The body was larger than we accept.
    #[error("response larger than {0} bytes")]
    TooLarge(usize),
}

impl SourceError {
    /// Whether trying again later may help (drives backoff, never an immediate retry).
    pub fn is_transient(&self) -> bool {
        match self {
            SourceError::Timeout(_)
            | SourceError::Unreachable(_)
            | SourceError::RateLimited { .. } => true,
            SourceError::Api { error_type, .. } => {
                matches!(
                    error_type.as_str(),
                    "timeout" | "canceled" | "internal" | "unavailable"
                )
            }
            SourceError::Http { status, .. } => *status >= 500 || *status == 429,
            SourceError::Malformed(_) | SourceError::TooLarge(_) => false,
        }
    }

    /// The server's requested wait, if it gave one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            SourceError::RateLimited { retry_after } => *retry_after,
            _ => None,
        }
    }
}

/// Where metrics come from. Implementations apply their own timeouts; callers (the runtime)
/// limit concurrency. Futures are `'static` so they can be spawned.
pub trait Source: Send + Sync {
    /// A short name for the status bar (`prometheus http://…`, `embedded`).
    fn describe(&self) -> String;
    fn query_range(&self, q: RangeQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>>;
    fn query(&self, q: InstantQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>>;
    /// Readiness: Ok when the source can answer queries.
    fn ready(&self) -> BoxFuture<'static, Result<(), SourceError>>;
}
