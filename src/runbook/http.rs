//! HTTP steps: one request to a control endpoint, sent as carefully as a client can be.
//!
//! - Every attempt has a timeout; all attempts and waits together stay within the action's
//!   deadline (no attempt starts that could not finish before it, no wait runs past it).
//! - At most `Backoff::max_attempts` attempts (4), full-jitter delays, and a [`RetryBudget`]
//!   shared by every action of the run, so a hard-down endpoint costs about one attempt per action.
//! - Only failures that are safe and useful to retry are: connection refused (the request never
//!   left), 429, 502, 503, 504, and a timeout only when an idempotency key makes a repeat
//!   harmless. `Retry-After` is obeyed, up to `backoff::MAX_RETRY_AFTER` (five minutes).
//!   400, 401, 403, 404, 409, 422 and the rest: never.
//! - The idempotency key comes from the caller, who made it durable before the first send; it is
//!   the same on every attempt.

use crate::backoff::{Backoff, RetryBudget};
use crate::clock::Clock;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Largest response body kept (the rest is dropped and the body marked truncated).
pub const MAX_BODY: usize = 64 * 1024;

/// A request exactly as it will be sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub method: super::model::Method,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<serde_json::Value>,
    pub timeout: Duration,
    pub deadline: Duration,
}

/// One attempt's result, for the journal.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub number: u32,
    pub status: Option<u16>,
    pub error: Option<String>,
}

/// The result of an action.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The last status received, if any.
    pub status: Option<u16>,
    /// Body (sanitized, at most [`MAX_BODY`] bytes).
    pub body: String,
    pub attempts: u32,
    /// `None` when the final status was 2xx; otherwise why the action failed.
    pub failure: Option<String>,
}

impl Response {
    pub fn succeeded(&self) -> bool {
        self.failure.is_none()
    }
}

/// The retry budget one run shares: retries earn 0.08 per first attempt plus a reserve of 10,
/// so 1,000 actions against a dead endpoint cost at most 1,090 attempts (under 1.1×).
pub fn run_retry_budget() -> RetryBudget {
    RetryBudget::new(0.08, 10.0)
}

/// Sends requests with timeouts, backoff and a shared retry budget.
#[derive(Debug, Clone)]
pub struct Sender {
    client: reqwest::Client,
    pub backoff: Backoff,
    budget: Arc<Mutex<RetryBudget>>,
}

/// Whether a failed attempt may be retried.
#[derive(Debug, PartialEq)]
enum Verdict {
    Done,
    Retry(Option<Duration>),
    Stop,
}

fn classify_status(status: u16, retry_after: Option<Duration>) -> Verdict {
    match status {
        200..=299 => Verdict::Done,
        429 | 502 | 503 | 504 => Verdict::Retry(retry_after),
        _ => Verdict::Stop,
    }
}

impl Sender {
    pub fn new(backoff: Backoff, budget: RetryBudget) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Sender {
            client,
            backoff,
            budget: Arc::new(Mutex::new(budget)),
        })
    }

    /// Tokens left in the shared retry budget.
    pub fn budget_tokens(&self) -> f64 {
        self.budget.lock().map(|b| b.tokens()).unwrap_or(0.0)
    }

    fn take_retry(&self) -> bool {
        self.budget
            .lock()
            .map(|mut b| b.try_retry())
            .unwrap_or(false)
    }

    /// Send `req` with `key` as `Idempotency-Key` on every attempt; `on_attempt` sees each one.
    /// The deadline and the backoff waits are on the wall clock.
    pub async fn send(
        &self,
        req: &Request,
        key: Option<&str>,
        on_attempt: impl FnMut(&Attempt),
    ) -> Response {
        self.send_on(&crate::clock::WallClock, req, key, on_attempt)
            .await
    }

    /// [`Sender::send`] with the action's deadline and backoff waits on `clock` (a run's
    /// clock: simulated in a rehearsal). Each attempt's timeout bounds a network call, so it
    /// is wall time, cut short as well when the deadline passes on `clock`.
    pub async fn send_on(
        &self,
        clock: &dyn Clock,
        req: &Request,
        key: Option<&str>,
        mut on_attempt: impl FnMut(&Attempt),
    ) -> Response {
        let deadline = crate::clock::after(clock.now(), req.deadline);
        if let Ok(mut b) = self.budget.lock() {
            b.on_first_attempt();
        }
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let remaining = (deadline - clock.now()).to_std().unwrap_or_default();
            let timeout = req.timeout.min(remaining);
            let (status, body, error, verdict) = if timeout.is_zero() {
                (
                    None,
                    String::new(),
                    Some("deadline reached".to_string()),
                    Verdict::Stop,
                )
            } else {
                let past_deadline = clock.sleep_until(deadline);
                tokio::select! {
                    a = self.attempt(req, key, timeout) => a,
                    _ = past_deadline => (
                        None,
                        String::new(),
                        Some("deadline reached".to_string()),
                        Verdict::Stop,
                    ),
                }
            };
            on_attempt(&Attempt {
                number: attempt,
                status,
                error: error.clone(),
            });
            let failure = || {
                error.clone().unwrap_or_else(|| match status {
                    Some(s) => format!("HTTP {s}"),
                    None => "no response".into(),
                })
            };
            let stop = |why: String| Response {
                status,
                body: body.clone(),
                attempts: attempt,
                failure: Some(why),
            };
            match verdict {
                Verdict::Done => {
                    return Response {
                        status,
                        body,
                        attempts: attempt,
                        failure: None,
                    };
                }
                Verdict::Stop => return stop(failure()),
                Verdict::Retry(retry_after) => {
                    if !self.backoff.may_retry(attempt) {
                        return stop(format!("{} after {attempt} attempts", failure()));
                    }
                    let jitter = self.backoff.delay(attempt - 1, &mut rand::rng());
                    let wait = jitter.max(retry_after.unwrap_or(Duration::ZERO));
                    if crate::clock::after(clock.now(), wait) >= deadline {
                        return stop(format!(
                            "{}; no retry: waiting {} would pass the action's deadline",
                            failure(),
                            humantime::format_duration(Duration::from_millis(
                                wait.as_millis() as u64
                            ))
                        ));
                    }
                    if !self.take_retry() {
                        return stop(format!(
                            "{}; no retry: the retry budget is spent",
                            failure()
                        ));
                    }
                    clock.sleep(wait).await;
                }
            }
        }
    }

    async fn attempt(
        &self,
        req: &Request,
        key: Option<&str>,
        timeout: Duration,
    ) -> (Option<u16>, String, Option<String>, Verdict) {
        let method = match req.method {
            super::model::Method::Get => reqwest::Method::GET,
            super::model::Method::Post => reqwest::Method::POST,
            super::model::Method::Put => reqwest::Method::PUT,
            super::model::Method::Patch => reqwest::Method::PATCH,
            super::model::Method::Delete => reqwest::Method::DELETE,
        };
        let mut rb = self.client.request(method, &req.url).timeout(timeout);
        for (k, v) in &req.headers {
            rb = rb.header(k, v);
        }
        if let Some(k) = key {
            rb = rb.header("Idempotency-Key", k);
        }
        if let Some(b) = &req.body {
            rb = rb.json(b);
        }
        match rb.send().await {
            Ok(resp) => {
                let status = resp.status().as_u16();
                let retry_after = resp
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| crate::backoff::retry_after(v, chrono::Utc::now()));
                let body = read_bounded(resp).await;
                (
                    Some(status),
                    body,
                    None,
                    classify_status(status, retry_after),
                )
            }
            Err(e) => {
                let text = crate::sanitize::line(&error_chain(&e)).into_owned();
                let verdict = if e.is_connect() {
                    // The request never reached the server: always safe to try again.
                    Verdict::Retry(None)
                } else if e.is_timeout()
                    && (key.is_some() || req.method == super::model::Method::Get)
                {
                    // Ambiguous: it may have acted. Only a key makes a repeat harmless.
                    Verdict::Retry(None)
                } else {
                    Verdict::Stop
                };
                (None, String::new(), Some(text), verdict)
            }
        }
    }
}

/// A short account of a transport error: what failed and its innermost cause.
/// An answer's body as a person reads it beside its status: a JSON object's top-level values
/// as `key=value` (nested ones as `…`), anything else its first non-empty line; one line of
/// at most [`EXCERPT_MAX`] characters, control characters removed.
pub fn excerpt(body: &str) -> String {
    use serde_json::Value;
    let text = match serde_json::from_str::<Value>(body) {
        Ok(Value::Object(fields)) => fields
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                Value::Array(_) | Value::Object(_) => format!("{k}=…"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        _ => body
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or_default()
            .to_string(),
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    let one = crate::sanitize::line(&words.join(" ")).into_owned();
    if one.chars().count() <= EXCERPT_MAX {
        return one;
    }
    let cut: String = one.chars().take(EXCERPT_MAX - 1).collect();
    format!("{}…", cut.trim_end())
}

/// The longest body excerpt a step's result shows.
pub const EXCERPT_MAX: usize = 80;

/// `HTTP 200 OK: applied=3, ok=true`: a status with its reason and the body's excerpt.
pub fn answer_text(status: u16, body: &str) -> String {
    let reason = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|c| c.canonical_reason())
        .map(|r| format!(" {r}"))
        .unwrap_or_default();
    match excerpt(body) {
        e if e.is_empty() => format!("HTTP {status}{reason}"),
        e => format!("HTTP {status}{reason}: {e}"),
    }
}

fn error_chain(e: &reqwest::Error) -> String {
    let what = if e.is_connect() {
        "cannot connect"
    } else if e.is_timeout() {
        "timed out"
    } else {
        "request failed"
    };
    let mut inner: &dyn std::error::Error = e;
    while let Some(c) = inner.source() {
        inner = c;
    }
    format!("{what}: {}", crate::diagnostic::error_chain(inner))
}

async fn read_bounded(mut resp: reqwest::Response) -> String {
    let mut buf = Vec::new();
    let mut truncated = false;
    while let Ok(Some(chunk)) = resp.chunk().await {
        let room = MAX_BODY.saturating_sub(buf.len());
        if chunk.len() > room {
            buf.extend_from_slice(&chunk[..room]);
            truncated = true;
            break;
        }
        buf.extend_from_slice(&chunk);
    }
    let mut s = crate::sanitize::bytes(&buf);
    if truncated {
        s.push_str("… (truncated)");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 33, point 3: a body is summarised, never pasted: a JSON object reads as its
    /// values, anything long is cut with an ellipsis, control characters never reach a screen.
    #[test]
    fn an_answer_reads_as_its_status_and_an_excerpt() {
        assert_eq!(
            answer_text(200, r#"{"applied":3,"ok":true,"detail":{"x":1}}"#),
            "HTTP 200 OK: applied=3, detail=…, ok=true"
        );
        assert_eq!(answer_text(204, ""), "HTTP 204 No Content");
        let hostile = answer_text(503, "\n  upstream\tdown \u{1b}[31m\nsecond line");
        assert!(
            hostile.starts_with("HTTP 503 Service Unavailable: upstream down ")
                && !hostile.contains('\u{1b}')
                && !hostile.contains("second"),
            "{hostile}"
        );
        let long = answer_text(200, &"x".repeat(500));
        assert_eq!(long.chars().count(), "HTTP 200 OK: ".len() + EXCERPT_MAX);
        assert!(long.ends_with('…'), "{long}");
        assert_eq!(answer_text(799, "[1,2]"), "HTTP 799: [1,2]");
    }

    #[test]
    fn only_the_retryable_statuses_are_retried() {
        for s in [400, 401, 403, 404, 409, 422, 500, 501] {
            assert_eq!(classify_status(s, None), Verdict::Stop, "{s}");
        }
        for s in [429, 502, 503, 504] {
            assert!(matches!(classify_status(s, None), Verdict::Retry(_)), "{s}");
        }
    }
}
