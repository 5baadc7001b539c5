//! [`PrometheusClient`]: the [`Source`] for a real Prometheus (or a compatible server: Thanos,
//! Mimir, VictoriaMetrics) over its HTTP API.
//!
//! Every request has one deadline covering the wait for a slot, the connection, the answer and
//! the body. At most [`MAX_IN_FLIGHT`] requests per client are in flight. Nothing is retried
//! here: retrying is the caller's decision, through `metrics::health` and its backoff.

use super::body::{Body, Budget};
use super::errors::error_from_reply;
use super::labels::{LabelList, parse_label_list};
use super::parse::{self, Envelope, MAX_BODY, clean_message, malformed_2xx, parse_answer};
use crate::metrics::fetch::points_in;
use crate::metrics::source::{
    InstantQuery, QueryAnswer, RangeQuery, ResultType, Source, SourceError,
};
use crate::sanitize;
use futures::FutureExt;
use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use url::Url;

/// Requests one client keeps in flight at most; more wait for a slot (within their deadline).
pub const MAX_IN_FLIGHT: usize = 4;

use super::options::base_url;
pub use super::options::{Auth, ClientError, ClientOptions, DEFAULT_TIMEOUT};

/// What `/api/v1/status/buildinfo` says (sanitized).
#[derive(Debug, Clone, PartialEq, Default, serde::Deserialize)]
pub struct BuildInfo {
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub revision: String,
    #[serde(default)]
    pub branch: String,
}

/// A Prometheus HTTP API client. Cheap to clone (the clones share the slots and connections).
#[derive(Clone)]
pub struct PrometheusClient {
    inner: Arc<Inner>,
}

struct Inner {
    /// Made on the first request, not with the client: building it reads the TLS roots, and
    /// the console's first frame need not wait for that (issue 20).
    http: std::sync::OnceLock<Result<reqwest::Client, String>>,
    /// What the HTTP client is built from.
    headers: HeaderMap,
    base: Url,
    auth: Auth,
    header_names: Vec<String>,
    timeout: Duration,
    post: bool,
    slots: Semaphore,
    /// What the bodies being read hold together: at most [`MAX_BODY`].
    budget: Arc<Budget>,
}

impl fmt::Debug for PrometheusClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let auth = match &self.inner.auth {
            Auth::None => "none".to_string(),
            Auth::Basic { user, .. } => format!("basic user={user:?} password=***"),
            Auth::Bearer(_) => "bearer ***".to_string(),
        };
        f.debug_struct("PrometheusClient")
            .field("base_url", &self.inner.base.as_str())
            .field("auth", &auth)
            .field("headers", &self.inner.header_names)
            .field("timeout", &self.inner.timeout)
            .finish()
    }
}

/// One reply, before it is parsed.
struct Reply {
    status: u16,
    content_type: Option<String>,
    retry_after: Option<String>,
    /// Holds its share of the client's body budget until dropped (after parsing).
    body: Body,
}

impl Reply {
    /// The error a non-2xx reply means, with its `Retry-After` read against now.
    fn error(&self) -> SourceError {
        error_from_reply(
            self.status,
            self.content_type.as_deref(),
            (self.retry_after.as_deref())
                .and_then(|v| crate::backoff::retry_after(v, chrono::Utc::now())),
            self.body.as_slice(),
        )
    }
}

/// The HTTP client every request of a [`PrometheusClient`] goes through.
fn http_client(headers: &HeaderMap, timeout: Duration) -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .use_rustls_tls()
        .default_headers(headers.clone())
        .user_agent(concat!("warroom/", env!("CARGO_PKG_VERSION")))
        // Accept-Encoding: gzip; the body cap applies to the bytes decoded.
        .gzip(true)
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(5)))
        // A redirect is usually a login proxy; show it rather than follow it with our
        // credentials.
        .redirect(reqwest::redirect::Policy::none())
        .retry(reqwest::retry::never())
        .pool_max_idle_per_host(MAX_IN_FLIGHT)
        .build()
        .map_err(|e| e.to_string())
}

enum Params {
    None,
    List(Vec<(&'static str, String)>),
}

impl PrometheusClient {
    /// Build a client; checks the URL and headers (nothing is sent yet).
    pub fn new(opts: ClientOptions) -> Result<Self, ClientError> {
        let base = base_url(&opts.base_url)?;
        if opts.timeout.is_zero() {
            return Err(ClientError::ZeroTimeout);
        }
        let mut headers = HeaderMap::new();
        let mut header_names = Vec::new();
        for (name, value) in &opts.headers {
            let bad = |reason: String| ClientError::BadHeader {
                name: sanitize::line(name).into_owned(),
                reason,
            };
            let n =
                HeaderName::from_bytes(name.trim().as_bytes()).map_err(|e| bad(e.to_string()))?;
            let mut v = HeaderValue::from_str(value.trim()).map_err(|e| bad(e.to_string()))?;
            // Extra headers may carry API keys; keep them out of any Debug output.
            v.set_sensitive(true);
            header_names.push(n.as_str().to_string());
            headers.append(n, v);
        }
        Ok(PrometheusClient {
            inner: Arc::new(Inner {
                http: std::sync::OnceLock::new(),
                headers,
                base,
                auth: opts.auth,
                header_names,
                timeout: opts.timeout,
                post: opts.post,
                slots: Semaphore::new(MAX_IN_FLIGHT),
                budget: Budget::new(MAX_BODY),
            }),
        })
    }

    /// The base URL requests go to (with its path prefix, ending in `/`).
    pub fn base_url(&self) -> &str {
        self.inner.base.as_str()
    }

    /// `/api/v1/status/buildinfo`: the server's version.
    pub fn buildinfo(&self) -> BoxFuture<'static, Result<BuildInfo, SourceError>> {
        let inner = self.inner.clone();
        async move {
            let r = inner
                .send(
                    "api/v1/status/buildinfo",
                    reqwest::Method::GET,
                    Params::None,
                )
                .await?;
            parse_buildinfo(&r)
        }
        .boxed()
    }

    /// `GET /api/v1/rules?type=alert`: the alerting rules, as the answer's body
    /// (`{"data":{"groups":[…]}}`; read by the postmortem, which names the signals no rule
    /// watches). At most 4 MiB.
    pub fn alerting_rules(&self) -> BoxFuture<'static, Result<serde_json::Value, SourceError>> {
        let inner = self.inner.clone();
        async move {
            let params = vec![("type", "alert".to_string())];
            let r = inner
                .send_capped(
                    "api/v1/rules",
                    reqwest::Method::GET,
                    Params::List(params),
                    4 << 20,
                )
                .await?;
            if !(200..300).contains(&r.status) {
                return Err(r.error());
            }
            let env: Envelope<serde_json::Value> = serde_json::from_slice(r.body.as_slice())
                .map_err(|e| malformed_2xx(r.content_type.as_deref(), r.body.as_slice(), &e))?;
            if env.status.as_deref() != Some("success") {
                return Err(parse::api_error(env.error_type, env.error, env.status));
            }
            Ok(serde_json::json!({ "data": env.data.unwrap_or_default() }))
        }
        .boxed()
    }

    /// `GET /api/v1/label/<label>/values`: the values of one label on the series matching any
    /// of `matchers` (all series when empty) between `start` and `end` (Unix seconds). `limit`
    /// is sent for servers that honour it (Prometheus ≥ 2.51, VictoriaMetrics); the body is
    /// refused beyond `max_bytes` whatever the server does. Label values have no POST form.
    pub fn label_values(
        &self,
        label: &str,
        matchers: &[String],
        range: Option<(f64, f64)>,
        limit: Option<usize>,
        max_bytes: usize,
    ) -> BoxFuture<'static, Result<LabelList, SourceError>> {
        // A name that is not a label never leaves: it would only be a wasted round trip (or,
        // with `/` or `..`, another endpoint).
        let valid = !label.is_empty()
            && !label.starts_with(|c: char| c.is_ascii_digit())
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            let shown = sanitize::sanitize(label, false, 80).into_owned();
            return async move {
                Err(SourceError::Api {
                    error_type: "bad_data".into(),
                    message: format!("\"{shown}\" is not a label name"),
                })
            }
            .boxed();
        }
        let endpoint = format!("api/v1/label/{}/values", url_path_segment(label));
        self.list(endpoint, matchers, range, limit, max_bytes)
    }

    /// `GET /api/v1/labels`: the label names on the series matching any of `matchers`, with
    /// the same range, limit and byte bound as [`Self::label_values`].
    pub fn label_names(
        &self,
        matchers: &[String],
        range: Option<(f64, f64)>,
        limit: Option<usize>,
        max_bytes: usize,
    ) -> BoxFuture<'static, Result<LabelList, SourceError>> {
        self.list("api/v1/labels".into(), matchers, range, limit, max_bytes)
    }

    fn list(
        &self,
        endpoint: String,
        matchers: &[String],
        range: Option<(f64, f64)>,
        limit: Option<usize>,
        max_bytes: usize,
    ) -> BoxFuture<'static, Result<LabelList, SourceError>> {
        let mut params: Vec<(&'static str, String)> =
            matchers.iter().map(|m| ("match[]", m.clone())).collect();
        if let Some((start, end)) = range {
            params.push(("start", fmt_time(start)));
            params.push(("end", fmt_time(end)));
        }
        if let Some(l) = limit {
            params.push(("limit", l.to_string()));
        }
        let inner = self.inner.clone();
        let max_bytes = max_bytes.min(MAX_BODY);
        async move {
            let r = inner
                .send_capped(
                    &endpoint,
                    reqwest::Method::GET,
                    Params::List(params),
                    max_bytes,
                )
                .await?;
            off_the_loop(r, |r| {
                parse_label_list(
                    r.status,
                    r.content_type.as_deref(),
                    r.retry_after
                        .as_deref()
                        .and_then(|v| crate::backoff::retry_after(v, chrono::Utc::now())),
                    r.body.as_slice(),
                )
            })
            .await
        }
        .boxed()
    }

    /// Send a query to `path` and parse whatever comes back into an answer or an error.
    /// `encoding`: how the answer is asked (see [`Encoding`]).
    fn ask(
        &self,
        path: &'static str,
        params: Vec<(&'static str, String)>,
        encoding: Encoding,
    ) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        let (inner, method) = (self.inner.clone(), self.query_method());
        async move {
            let r = (inner.send_encoded(path, method, Params::List(params), MAX_BODY, encoding))
                .await?;
            off_the_loop(r, |r| {
                parse_answer(
                    r.status,
                    r.content_type.as_deref(),
                    r.retry_after.as_deref(),
                    r.body.as_slice(),
                )
            })
            .await
        }
        .boxed()
    }

    /// The `timeout` parameter sent to the server: a little under our own deadline, so the
    /// server gives up first and says so (`errorType: timeout`) instead of us guessing.
    fn server_timeout(&self) -> String {
        let t = self.inner.timeout;
        let margin = (t / 10).min(Duration::from_secs(1));
        format!("{}ms", (t - margin).as_millis().max(1))
    }

    fn query_method(&self) -> reqwest::Method {
        if self.inner.post {
            reqwest::Method::POST
        } else {
            reqwest::Method::GET
        }
    }
}

/// Most label values a caller that shows or substitutes them should ask for (`limit`).
pub const MAX_LABEL_VALUES: usize = 10_000;

fn parse_buildinfo(r: &Reply) -> Result<BuildInfo, SourceError> {
    if !(200..300).contains(&r.status) {
        return Err(r.error());
    }
    let env: Envelope<BuildInfo> = serde_json::from_slice(r.body.as_slice())
        .map_err(|e| malformed_2xx(r.content_type.as_deref(), r.body.as_slice(), &e))?;
    if env.status.as_deref() != Some("success") {
        return Err(parse::api_error(env.error_type, env.error, env.status));
    }
    let b = env.data.unwrap_or_default();
    Ok(BuildInfo {
        version: clean_message(&b.version),
        revision: clean_message(&b.revision),
        branch: clean_message(&b.branch),
    })
}

impl Inner {
    /// Send one request and read its body, all within the deadline and a slot.
    async fn send(
        &self,
        endpoint: &str,
        method: reqwest::Method,
        params: Params,
    ) -> Result<Reply, SourceError> {
        self.send_capped(endpoint, method, params, MAX_BODY).await
    }

    /// [`Self::send`], refusing a body larger than `max_bytes`.
    async fn send_capped(
        &self,
        endpoint: &str,
        method: reqwest::Method,
        params: Params,
        max_bytes: usize,
    ) -> Result<Reply, SourceError> {
        (self.send_encoded(endpoint, method, params, max_bytes, Encoding::Gzip)).await
    }

    /// [`Self::send_capped`], asking the answer in `encoding`.
    async fn send_encoded(
        &self,
        endpoint: &str,
        method: reqwest::Method,
        params: Params,
        max_bytes: usize,
        encoding: Encoding,
    ) -> Result<Reply, SourceError> {
        let url = self
            .base
            .join(endpoint)
            .map_err(|e| SourceError::Unreachable(format!("bad endpoint URL: {e}")))?;
        let deadline = self.timeout;
        let send = self.send_within(url, method, params, max_bytes, encoding);
        match tokio::time::timeout(deadline, send).await {
            Ok(r) => r,
            Err(_) => Err(SourceError::Timeout(deadline)),
        }
    }

    async fn send_within(
        &self,
        url: Url,
        method: reqwest::Method,
        params: Params,
        max_bytes: usize,
        encoding: Encoding,
    ) -> Result<Reply, SourceError> {
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|_| SourceError::Unreachable("the client is shutting down".into()))?;
        let is_get = method == reqwest::Method::GET;
        let http = self
            .http
            .get_or_init(|| http_client(&self.headers, self.timeout))
            .as_ref()
            .map_err(|e| SourceError::Unreachable(format!("cannot make an HTTP client: {e}")))?;
        let mut req = http.request(method, url);
        if let Params::List(params) = &params {
            req = if is_get {
                req.query(params)
            } else {
                req.form(params)
            };
        }
        if encoding == Encoding::Identity {
            // Set here, reqwest adds no `gzip` of its own.
            req = req.header(reqwest::header::ACCEPT_ENCODING, "identity");
        }
        req = self.auth.apply(req);
        let mut resp = req.send().await.map_err(|e| self.transport_error(e))?;
        let status = resp.status().as_u16();
        let header = |name: reqwest::header::HeaderName| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let content_type = header(reqwest::header::CONTENT_TYPE);
        let retry_after = header(reqwest::header::RETRY_AFTER);
        if (300..400).contains(&status) {
            let to = header(reqwest::header::LOCATION)
                .map(|l| format!("redirected to \"{}\"", clean_message(&l)))
                .unwrap_or_else(|| "redirected".into());
            return Err(SourceError::Http {
                status,
                summary: format!("{to} (a login proxy? point warroom at the API itself)"),
            });
        }
        let body = super::body::read(&mut resp, self.budget.clone(), max_bytes, |e| {
            self.transport_error(e)
        })
        .await?;
        Ok(Reply {
            status,
            content_type,
            retry_after,
            body,
        })
    }

    fn transport_error(&self, e: reqwest::Error) -> SourceError {
        if e.is_timeout() {
            return SourceError::Timeout(self.timeout);
        }
        // The URL is ours and already shown elsewhere; keep the message to the cause.
        let e = e.without_url();
        let msg = clean_message(&crate::diagnostic::error_chain(&e));
        if e.is_body() || e.is_decode() {
            SourceError::Unreachable(format!("connection lost while reading the answer: {msg}"))
        } else {
            SourceError::Unreachable(msg)
        }
    }
}

/// How an answer is asked. Prometheus compresses whatever is asked compressed, and a gzip
/// writer costs it about half again a small query's own work (measured on Prometheus 2.42: a
/// 4-point tail of the sim dashboard's queries took 0.9 ms of its CPU uncompressed, 1.4 ms
/// compressed) to save a few dozen bytes of a 300-byte answer. So the answers that can be large
/// (a full range, labels, rules, alerts) are asked compressed and the small ones (an instant
/// value, a refresh's tail) are not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Gzip,
    Identity,
}

/// Points per series up to which a range answer is small (a refresh's tail is 2 to 4).
const SMALL_POINTS: u64 = 64;

/// Bodies up to this size are decoded where they land; larger ones in the blocking pool, so
/// decoding a large answer (up to [`MAX_BODY`]) never holds up the console's worker.
const DECODE_INLINE: usize = 256 * 1024;

/// Decode `r` with `f`, in the blocking pool when it is large.
async fn off_the_loop<T: Send + 'static>(
    r: Reply,
    f: impl FnOnce(&Reply) -> Result<T, SourceError> + Send + 'static,
) -> Result<T, SourceError> {
    if r.body.as_slice().len() <= DECODE_INLINE {
        return f(&r);
    }
    tokio::task::spawn_blocking(move || f(&r))
        .await
        .unwrap_or_else(|e| {
            Err(SourceError::Malformed(format!(
                "decoding the answer failed: {e}"
            )))
        })
}

/// A label name as one URL path segment (label names are `[a-zA-Z_][a-zA-Z0-9_]*`; anything
/// else is percent-encoded rather than allowed to change the path).
fn url_path_segment(label: &str) -> String {
    url::form_urlencoded::byte_serialize(label.as_bytes()).collect()
}

fn fmt_time(t: f64) -> String {
    format!("{t:.3}")
}

impl Source for PrometheusClient {
    fn describe(&self) -> String {
        format!("prometheus {}", sanitize::line(self.inner.base.as_str()))
    }

    fn query_range(&self, q: RangeQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        let encoding = if points_in(&q) > SMALL_POINTS {
            Encoding::Gzip
        } else {
            Encoding::Identity
        };
        let params = vec![
            ("query", q.query),
            ("start", fmt_time(q.start)),
            ("end", fmt_time(q.end)),
            ("step", fmt_time(q.step)),
            ("timeout", self.server_timeout()),
        ];
        // A range query answered with anything but a matrix is not data to draw: a proxy or an
        // engine that ignored the range. It is an error state, never "live".
        self.ask("api/v1/query_range", params, encoding)
            .map(|r| match r {
                Ok(a) if a.result_type.is_some_and(|t| t != ResultType::Matrix) => {
                    Err(SourceError::Malformed(format!(
                        "a range query was answered with a {}, not a matrix; is this a Prometheus query API?",
                        a.result_type.map_or("?", ResultType::name)
                    )))
                }
                other => other,
            })
            .boxed()
    }

    fn query(&self, q: InstantQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        let mut params = vec![("query", q.query), ("timeout", self.server_timeout())];
        if let Some(t) = q.time {
            params.push(("time", fmt_time(t)));
        }
        // One value per series: compressing it costs the server more than it saves.
        self.ask("api/v1/query", params, Encoding::Identity)
    }

    fn ready(&self) -> BoxFuture<'static, Result<(), SourceError>> {
        let inner = self.inner.clone();
        async move {
            let r = inner
                .send("-/ready", reqwest::Method::GET, Params::None)
                .await?;
            if (200..300).contains(&r.status) {
                Ok(())
            } else {
                Err(r.error())
            }
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secret::Secret;

    #[test]
    fn debug_never_shows_secrets() {
        let mut o = ClientOptions::new("http://127.0.0.1:9");
        o.auth = Auth::Basic {
            user: "ops".into(),
            password: Secret::new("pw-canary-1"),
        };
        o.headers = vec![("X-Api-Key".into(), "key-canary-2".into())];
        let c = PrometheusClient::new(o.clone()).unwrap();
        for text in [format!("{c:?}"), format!("{o:?}"), format!("{:#?}", o.auth)] {
            assert!(!text.contains("canary-1"), "{text}");
            assert!(!text.contains("pw-canary"), "{text}");
        }
        assert!(!format!("{c:?}").contains("key-canary-2"));
        assert!(!format!("{o:?}").contains("key-canary-2"));
        assert!(format!("{o:?}").contains("X-Api-Key"));
        let b = PrometheusClient::new(ClientOptions {
            auth: Auth::Bearer(Secret::new("tok-canary-3")),
            ..ClientOptions::new("http://127.0.0.1:9")
        })
        .unwrap();
        assert!(!format!("{b:?}").contains("tok-canary-3"));
    }

    #[test]
    fn label_values_refuse_a_name_that_is_not_a_label_before_sending() {
        // Port 9 (discard) has nothing listening here: a request would come back unreachable.
        let c = PrometheusClient::new(ClientOptions::new("http://127.0.0.1:9")).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        for bad in ["", "9lives", "a/../b", "pod name", "\u{1b}[2J"] {
            match rt.block_on(c.label_values(bad, &[], None, None, 1 << 20)) {
                Err(SourceError::Api {
                    error_type,
                    message,
                }) => {
                    assert_eq!(error_type, "bad_data");
                    assert!(message.contains("is not a label name"), "{message}");
                    assert!(sanitize::is_clean(&message, false), "{message}");
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        assert!(matches!(
            rt.block_on(c.label_values("pod", &["up".into()], None, None, 1 << 20)),
            Err(SourceError::Unreachable(_))
        ));
    }

    #[test]
    fn bad_headers_and_zero_timeouts_are_refused() {
        let mut o = ClientOptions::new("http://127.0.0.1:9");
        o.headers = vec![("Bad Name".into(), "v".into())];
        assert!(matches!(
            PrometheusClient::new(o),
            Err(ClientError::BadHeader { .. })
        ));
        let mut o = ClientOptions::new("http://127.0.0.1:9");
        o.timeout = Duration::ZERO;
        assert!(matches!(
            PrometheusClient::new(o),
            Err(ClientError::ZeroTimeout)
        ));
    }
}
