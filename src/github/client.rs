//! The one way warroom talks to GitHub: `octocrab` underneath, and around every request the
//! rules of RELIABILITY.md ("GitHub").
//!
//! - One request in flight: the pacing state is held for the whole of a request, waits for rate
//!   limits included, so everything else queues behind it.
//! - At least [`WRITE_GAP`] between writes.
//! - A timeout on every call (the connection's and a deadline over the whole exchange).
//! - Rate limits obeyed ([`super::limits`]); a refused request is sent again at most
//!   [`limits::MAX_TRIES`] times in all, since GitHub did not act on it.
//! - No other retry of a write: octocrab's retry layer is not compiled in (its `retry` feature
//!   is off), and a write that failed ambiguously (a 5xx, a timeout, a broken connection) is
//!   returned as such; the caller searches for its marker before posting again. Reads are
//!   retried a few times with [`Backoff`].

use super::limits::{self, LimitHeaders};
use super::timer::{Timer, until};
use crate::backoff::Backoff;
use crate::config::{GithubConfig, SecretRef};
use crate::secret::{Secret, SecretError};
use chrono::{DateTime, Utc};
use octocrab::Octocrab;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// The least time between two writes.
pub const WRITE_GAP: Duration = Duration::from_secs(1);

/// An HTTP method warroom uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    Get,
    Post,
    Patch,
    Put,
}

impl Method {
    pub fn is_write(self) -> bool {
        self != Method::Get
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Patch => "PATCH",
            Method::Put => "PUT",
        }
    }
}

/// What GitHub answered (any status but a rate-limit refusal).
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
}

/// Why a GitHub call did not give an answer warroom can use. Messages name the request, never
/// the token.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GithubError {
    #[error("{what}: GitHub did not answer within {}s", .after.as_secs_f64())]
    TimedOut { what: String, after: Duration },
    #[error(
        "{what}: GitHub could not be reached ({reason}); check the network and [github] api_url"
    )]
    Unreachable { what: String, reason: String },
    #[error(
        "{what}: GitHub's rate limit holds until {} ({tries} refusal(s) so far); nothing was \
         sent early, try again after that",
        .until.format("%Y-%m-%d %H:%M:%S UTC")
    )]
    RateLimited {
        what: String,
        tries: u32,
        until: DateTime<Utc>,
    },
    #[error("{what}: GitHub answered {status}: \"{message}\"")]
    Status {
        what: String,
        status: u16,
        message: String,
    },
    #[error("{what}: the answer is not what GitHub sends: {reason}")]
    BadAnswer { what: String, reason: String },
    #[error("the GitHub token is not available: {0}")]
    Token(#[from] SecretError),
    #[error("cannot set up the GitHub client for \"{url}\": {reason}")]
    Setup { url: String, reason: String },
}

impl GithubError {
    /// True when a write may have taken effect although no good answer came back: the caller
    /// must look (search for the marker) before sending it again.
    pub fn is_ambiguous(&self) -> bool {
        match self {
            GithubError::TimedOut { .. } | GithubError::Unreachable { .. } => true,
            GithubError::Status { status, .. } => *status >= 500,
            _ => false,
        }
    }

    /// True when nothing can be done now but later may work (the work stays in the outbox).
    pub fn is_transient(&self) -> bool {
        self.is_ambiguous() || matches!(self, GithubError::RateLimited { .. })
    }
}

#[derive(Debug, Default)]
struct Pace {
    last_write: Option<DateTime<Utc>>,
    /// The primary limit was spent: nothing is sent before this.
    not_before: Option<DateTime<Utc>>,
}

/// A GitHub API client with warroom's rules. Cheap to share behind an `Arc`.
pub struct Github {
    octo: Octocrab,
    url: String,
    timer: Arc<dyn Timer>,
    timeout: Duration,
    pace: tokio::sync::Mutex<Pace>,
    read_backoff: Backoff,
}

impl std::fmt::Debug for Github {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Github")
            .field("url", &self.url)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Reads the token the config names (never the config text itself).
pub fn load_token(source: &SecretRef) -> Result<Secret, SecretError> {
    match source {
        SecretRef::Env(var) => Secret::from_env(var),
        SecretRef::File(path) => Secret::from_file(path),
    }
}

impl Github {
    /// A client for `api_url` (a path prefix, as GitHub Enterprise has, is kept). Without a
    /// token only public data can be read.
    pub fn new(
        api_url: &str,
        token: Option<&Secret>,
        timeout: Duration,
        timer: Arc<dyn Timer>,
    ) -> Result<Github, GithubError> {
        let setup = |reason: String| GithubError::Setup {
            url: api_url.to_string(),
            reason,
        };
        let mut builder = Octocrab::builder()
            .base_uri(api_url)
            .map_err(|_| setup("not a valid URL".into()))?
            .set_connect_timeout(Some(timeout))
            .set_read_timeout(Some(timeout))
            .set_write_timeout(Some(timeout));
        if let Some(t) = token {
            builder = builder.personal_token(t.expose().to_string());
        }
        let octo = builder.build().map_err(|e| setup(describe(&e)))?;
        Ok(Github {
            octo,
            url: api_url.to_string(),
            timer,
            timeout,
            pace: tokio::sync::Mutex::new(Pace::default()),
            read_backoff: Backoff {
                base: Duration::from_secs(1),
                cap: Duration::from_secs(8),
                max_attempts: 3,
            },
        })
    }

    /// A client as `[github]` says, with its token.
    pub fn from_config(cfg: &GithubConfig, timer: Arc<dyn Timer>) -> Result<Github, GithubError> {
        let token = load_token(&cfg.token)?;
        Github::new(&cfg.api_url, Some(&token), cfg.timeout, timer)
    }

    pub fn timer(&self) -> &Arc<dyn Timer> {
        &self.timer
    }

    /// Sends one request and returns whatever GitHub answered, except that rate-limit refusals
    /// are waited out and sent again (at most [`limits::MAX_TRIES`] in all). Only failures to
    /// get an answer at all are errors here.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Answer, GithubError> {
        let what = format!("{} {}", method.as_str(), path_only(path));
        let mut pace = self.pace.lock().await;
        let mut refusals = 0u32;
        loop {
            let now = self.timer.now();
            let mut ready_at = pace.not_before.filter(|t| *t > now);
            if method.is_write()
                && let Some(last) = pace.last_write
            {
                let gap = chrono::Duration::from_std(WRITE_GAP).unwrap_or_default();
                ready_at = ready_at.max(Some(last + gap));
            }
            if let Some(at) = ready_at {
                let wait = until(now, at);
                if wait > limits::LONGEST_WAIT {
                    // Sending early is never an option; waiting this long blocks everything.
                    return Err(GithubError::RateLimited {
                        what,
                        tries: refusals,
                        until: at,
                    });
                }
                if !wait.is_zero() {
                    self.timer.sleep(wait).await;
                }
            }
            let exchanged = self.exchange(method, path, body, &what).await;
            if method.is_write() {
                // Counted from the answer, not the send: GitHub then sees at least the gap
                // between two writes, whatever the latency.
                pace.last_write = Some(self.timer.now());
            }
            let (status, headers, text) = exchanged?;
            pace.not_before = headers.spent_until();
            let parsed: Value = if text.trim().is_empty() {
                Value::Null
            } else {
                serde_json::from_str(&text).unwrap_or(Value::String(text))
            };
            let message = message_of(&parsed);
            let Some(limit) = limits::classify(status, &headers, &message, self.timer.now()) else {
                return Ok(Answer {
                    status,
                    body: parsed,
                });
            };
            let wait = limits::wait_for(limit, refusals, self.timer.now());
            refusals += 1;
            let free_at = self.timer.now() + chrono::Duration::from_std(wait).unwrap_or_default();
            tracing::warn!(request = %what, status, wait_s = wait.as_secs(), "GitHub rate limit");
            pace.not_before = Some(free_at);
            if refusals >= limits::MAX_TRIES || wait > limits::LONGEST_WAIT {
                return Err(GithubError::RateLimited {
                    what,
                    tries: refusals,
                    until: free_at,
                });
            }
        }
    }

    /// One exchange under the call's deadline: status, rate-limit headers, body text.
    async fn exchange(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        what: &str,
    ) -> Result<(u16, LimitHeaders, String), GithubError> {
        let unreachable = |e: octocrab::Error| GithubError::Unreachable {
            what: what.to_string(),
            reason: describe(&e),
        };
        let call = async {
            let resp = match method {
                Method::Get => self.octo._get(path).await,
                Method::Post => self.octo._post(path, body).await,
                Method::Patch => self.octo._patch(path, body).await,
                Method::Put => self.octo._put(path, body).await,
            }
            .map_err(unreachable)?;
            let status = resp.status().as_u16();
            let header = |name: &str| {
                resp.headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(String::from)
            };
            let headers = LimitHeaders {
                retry_after: header("retry-after"),
                remaining: header("x-ratelimit-remaining"),
                reset: header("x-ratelimit-reset"),
            };
            let text = self.octo.body_to_string(resp).await.map_err(unreachable)?;
            Ok((status, headers, text))
        };
        match tokio::time::timeout(self.timeout, call).await {
            Ok(r) => r,
            Err(_) => Err(GithubError::TimedOut {
                what: what.to_string(),
                after: self.timeout,
            }),
        }
    }

    /// A write that must succeed with a 2xx: its JSON answer, or an error (see
    /// [`GithubError::is_ambiguous`] for whether it may have taken effect).
    pub async fn write(
        &self,
        method: Method,
        path: &str,
        body: &Value,
    ) -> Result<Value, GithubError> {
        let answer = self.request(method, path, Some(body)).await?;
        ok_json(method, path, answer)
    }

    /// A read that must succeed with a 2xx; `Ok(None)` for a 404. Failures without an answer and
    /// 5xx answers are tried again a few times with backoff.
    pub async fn get(&self, path: &str) -> Result<Option<Value>, GithubError> {
        let mut attempts = 0;
        loop {
            attempts += 1;
            let result = match self.request(Method::Get, path, None).await {
                Ok(a) if a.status == 404 => return Ok(None),
                Ok(a) => ok_json(Method::Get, path, a).map(Some),
                Err(e) => Err(e),
            };
            match result {
                Err(e) if e.is_ambiguous() && self.read_backoff.may_retry(attempts) => {
                    // A hung server is not asked again: one timeout already cost a whole call.
                    if matches!(e, GithubError::TimedOut { .. }) {
                        return Err(e);
                    }
                    let delay = self.read_backoff.delay(attempts - 1, &mut rand::rng());
                    self.timer.sleep(delay).await;
                }
                other => return other,
            }
        }
    }
}

/// A 2xx answer's body, or the error it is.
pub fn ok_json(method: Method, path: &str, answer: Answer) -> Result<Value, GithubError> {
    if (200..300).contains(&answer.status) {
        return Ok(answer.body);
    }
    Err(GithubError::Status {
        what: format!("{} {}", method.as_str(), path_only(path)),
        status: answer.status,
        message: message_of(&answer.body),
    })
}

/// The error a non-2xx answer is (an answer that was a success is reported as unexpected).
pub fn refused(method: Method, path: &str, answer: Answer) -> GithubError {
    match ok_json(method, path, answer) {
        Err(e) => e,
        Ok(_) => GithubError::BadAnswer {
            what: format!("{} {}", method.as_str(), path_only(path)),
            reason: "a success where a refusal was expected".into(),
        },
    }
}

/// GitHub's `message` field (or the text), sanitized and cut short, for error messages.
fn message_of(body: &Value) -> String {
    let raw = match body {
        Value::Object(o) => o.get("message").and_then(Value::as_str).unwrap_or(""),
        Value::String(s) => s.as_str(),
        _ => "",
    };
    crate::sanitize::sanitize(raw, false, 300).into_owned()
}

/// The path without its query, for messages.
fn path_only(path: &str) -> &str {
    path.split('?').next().unwrap_or(path)
}

/// An octocrab error in one line: its message (without the backtrace octocrab appends) and
/// its causes.
fn describe(e: &octocrab::Error) -> String {
    let mut head = e.to_string();
    if let Some(i) = head.find("\n\nFound at") {
        head.truncate(i);
    }
    let head = crate::secret::mask_patterns(&crate::sanitize::line(&head));
    match std::error::Error::source(e).map(crate::diagnostic::error_chain) {
        Some(causes) if !head.contains(&causes) => format!("{head}: {causes}"),
        _ => head,
    }
}
