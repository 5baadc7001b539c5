//! One alert API to poll: its URL, auth and deadline. A request is one GET with one deadline
//! covering connection, answer and body; nothing is retried here (the intake backs off).

use super::{Alert, parse};
use crate::backoff::retry_after as retry_after_at;
use crate::incident::event::AlertSource;
use crate::metrics::SourceError;
use crate::metrics::prometheus::errors::error_from_reply;
use crate::metrics::prometheus::{Auth, MAX_BODY};
use crate::sanitize;
use chrono::{DateTime, Utc};
use std::fmt;
use std::time::Duration;
use url::Url;

/// Where one source's alerts are, and how to ask.
#[derive(Clone)]
pub struct AlertEndpoint {
    pub source: AlertSource,
    url: Url,
    http: reqwest::Client,
    auth: Auth,
    timeout: Duration,
    /// What its answers being read hold: at most [`MAX_BODY`] (the metrics client's reader).
    budget: std::sync::Arc<crate::metrics::prometheus::Budget>,
}

impl fmt::Debug for AlertEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Auth holds secrets; say only which kind.
        let auth = match &self.auth {
            Auth::None => "none",
            Auth::Basic { .. } => "basic ***",
            Auth::Bearer(_) => "bearer ***",
        };
        f.debug_struct("AlertEndpoint")
            .field("source", &self.source)
            .field("url", &self.url.as_str())
            .field("auth", &auth)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Why an endpoint could not be set up (a configuration mistake).
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    #[error(
        "{what} URL \"{url}\" is not usable: {reason}; expected something like \
         \"http://127.0.0.1:9093\""
    )]
    BadUrl {
        what: &'static str,
        url: String,
        reason: String,
    },
    #[error("cannot set up the HTTP client for {what}: {reason}")]
    Client { what: &'static str, reason: String },
}

impl AlertEndpoint {
    /// The endpoint of `source` under `base` (a path prefix is kept): `api/v1/alerts` for
    /// Prometheus, `api/v2/alerts` for Alertmanager. `headers` go with every request.
    pub fn new(
        source: AlertSource,
        base: &str,
        auth: Auth,
        headers: &[(String, String)],
        timeout: Duration,
    ) -> Result<AlertEndpoint, EndpointError> {
        let what = super::source_name(source);
        let path = match source {
            AlertSource::Prometheus => "api/v1/alerts",
            AlertSource::Alertmanager => "api/v2/alerts",
        };
        Ok(AlertEndpoint {
            source,
            url: api_url(what, base, path)?,
            http: http_client(what, headers, timeout)?,
            auth,
            timeout,
            budget: crate::metrics::prometheus::Budget::new(MAX_BODY),
        })
    }

    /// The full URL polled (no credentials are ever in it).
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// One poll: the alerts the source reports now, or why it could not say.
    pub async fn poll(&self, now: DateTime<Utc>) -> Result<Vec<Alert>, SourceError> {
        let body = match tokio::time::timeout(self.timeout, self.get()).await {
            Ok(r) => r?,
            Err(_) => return Err(SourceError::Timeout(self.timeout)),
        };
        match self.source {
            AlertSource::Prometheus => parse::prometheus(&body),
            AlertSource::Alertmanager => parse::alertmanager(&body, now),
        }
    }

    async fn get(&self) -> Result<Vec<u8>, SourceError> {
        self.call(self.http.get(self.url.clone())).await
    }

    /// The client requests to this source's API are built on (its headers and deadline).
    pub(super) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Sends `req` with this source's auth and reads the answer within the body bound: the
    /// body of a 2xx, or the error the answer says.
    pub(super) async fn call(&self, req: reqwest::RequestBuilder) -> Result<Vec<u8>, SourceError> {
        let mut req = req.header(reqwest::header::ACCEPT, "application/json");
        req = self.auth.apply(req);
        let mut resp = req.send().await.map_err(|e| self.transport(e))?;
        let status = resp.status().as_u16();
        let header = |name| {
            resp.headers()
                .get(name)
                .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
                .map(str::to_string)
        };
        let content_type = header(reqwest::header::CONTENT_TYPE);
        let retry_after = header(reqwest::header::RETRY_AFTER);
        let body =
            crate::metrics::prometheus::read_body(&mut resp, self.budget.clone(), MAX_BODY, |e| {
                self.transport(e)
            })
            .await?;
        if (200..300).contains(&status) {
            return Ok(body.as_slice().to_vec());
        }
        if (300..400).contains(&status) {
            return Err(SourceError::Http {
                status,
                summary: "redirected (a login proxy? point warroom at the API itself)".into(),
            });
        }
        let retry_after = retry_after
            .as_deref()
            .and_then(|v| retry_after_at(v, Utc::now()));
        Err(error_from_reply(
            status,
            content_type.as_deref(),
            retry_after,
            body.as_slice(),
        ))
    }

    fn transport(&self, e: reqwest::Error) -> SourceError {
        if e.is_timeout() {
            return SourceError::Timeout(self.timeout);
        }
        let e = e.without_url();
        SourceError::Unreachable(crate::diagnostic::error_chain(&e))
    }
}

/// `path` under the API's base URL `base` (a path prefix is kept), refused with a message that
/// never echoes a password written into the URL.
pub(super) fn api_url(what: &'static str, base: &str, path: &str) -> Result<Url, EndpointError> {
    let parsed = Url::parse(base.trim());
    let shown = match &parsed {
        Ok(u) if u.password().is_some() => {
            let mut u = u.clone();
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        Ok(_) => base.to_string(),
        Err(_) if base.contains('@') => "(not shown: it may hold a password)".to_string(),
        Err(_) => base.to_string(),
    };
    let bad = |reason: String| EndpointError::BadUrl {
        what,
        url: sanitize::line(&shown).into_owned(),
        reason,
    };
    let mut url = parsed.map_err(|e| bad(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("the scheme must be http or https".into()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad(
            "it contains a user name or password; put credentials in the auth settings".into(),
        ));
    }
    url.set_query(None);
    url.set_fragment(None);
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    url.join(path).map_err(|e| bad(e.to_string()))
}

/// The HTTP client of one API: `headers` (sensitive) with every request, one deadline for the
/// whole request, no redirect followed and nothing retried (callers decide).
pub(super) fn http_client(
    what: &'static str,
    headers: &[(String, String)],
    timeout: Duration,
) -> Result<reqwest::Client, EndpointError> {
    let client = |reason: String| EndpointError::Client { what, reason };
    let mut map = reqwest::header::HeaderMap::new();
    for (name, value) in headers {
        let n = reqwest::header::HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|e| client(e.to_string()))?;
        let mut v = reqwest::header::HeaderValue::from_str(value.trim())
            .map_err(|e| client(e.to_string()))?;
        v.set_sensitive(true);
        map.append(n, v);
    }
    reqwest::Client::builder()
        .use_rustls_tls()
        .default_headers(map)
        .user_agent(concat!("warroom/", env!("CARGO_PKG_VERSION")))
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(5)))
        .redirect(reqwest::redirect::Policy::none())
        .retry(reqwest::retry::never())
        .pool_max_idle_per_host(1)
        .build()
        .map_err(|e| client(e.to_string()))
}
