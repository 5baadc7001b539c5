//! GitHub's rate limits, read from an answer (pure; no I/O).
//!
//! GitHub says a request was refused for rate in three ways (RELIABILITY.md, "GitHub"):
//! `retry-after: N` (wait N seconds), `x-ratelimit-remaining: 0` with `x-ratelimit-reset: T`
//! (wait until the epoch second T), or a 403/429 with neither: a secondary limit, after which
//! one waits at least 60 s, then longer each time. A refused request was not acted on, so it may
//! be sent again, a create included; after [`MAX_TRIES`] refusals the caller gives up with a
//! clear error and the work stays in the outbox.

use chrono::{DateTime, Utc};
use std::time::Duration;

/// Tries of one request against rate limits, the first included.
pub const MAX_TRIES: u32 = 3;
/// The least wait after a secondary rate limit without headers.
pub const SECONDARY_MIN: Duration = Duration::from_secs(60);
/// The longest warroom waits for a limit; a longer one (a reset an hour away) is given up at
/// once, nothing sent before the allowed time, and the work stays in the outbox.
pub const LONGEST_WAIT: Duration = Duration::from_secs(5 * 60);

/// The rate-limit headers of one answer, as text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LimitHeaders {
    pub retry_after: Option<String>,
    pub remaining: Option<String>,
    pub reset: Option<String>,
}

/// Why a request was refused for rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// `retry-after` seconds.
    RetryAfter(Duration),
    /// The primary limit is spent until this time.
    Reset(DateTime<Utc>),
    /// A secondary limit without either header.
    Secondary,
}

impl LimitHeaders {
    fn reset_time(&self) -> Option<DateTime<Utc>> {
        let secs = self.reset.as_deref()?.trim().parse::<i64>().ok()?;
        DateTime::from_timestamp(secs, 0)
    }

    fn spent(&self) -> bool {
        self.remaining.as_deref().map(str::trim) == Some("0")
    }

    /// When the primary limit frees up again, if this answer says it is spent (an answer that
    /// succeeded can say so too: the next request must then wait).
    pub fn spent_until(&self) -> Option<DateTime<Utc>> {
        if self.spent() {
            self.reset_time()
        } else {
            None
        }
    }
}

/// Reads a refusal for rate from an answer; `None` when the answer is not one. A 403 without
/// headers is a rate limit only when its message says so (otherwise it is a permission error).
/// `retry-after` is read as everywhere in warroom (`backoff::retry_after_asked`: seconds or an
/// HTTP date from `now`), uncut: a wait past [`LONGEST_WAIT`] is given up, never shortened.
pub fn classify(
    status: u16,
    headers: &LimitHeaders,
    message: &str,
    now: DateTime<Utc>,
) -> Option<Limit> {
    if status != 403 && status != 429 {
        return None;
    }
    if let Some(wait) =
        (headers.retry_after.as_deref()).and_then(|s| crate::backoff::retry_after_asked(s, now))
    {
        return Some(Limit::RetryAfter(wait));
    }
    if let Some(reset) = headers.spent_until() {
        return Some(Limit::Reset(reset));
    }
    if status == 429 || message.to_ascii_lowercase().contains("rate limit") {
        return Some(Limit::Secondary);
    }
    None
}

/// How long to wait after refusal number `refusal` (0 = the first) at `now`. A reset is waited
/// for one second past it, since GitHub's reset second is rounded down. Never shortened: the
/// caller gives up rather than send early when this exceeds [`LONGEST_WAIT`].
pub fn wait_for(limit: Limit, refusal: u32, now: DateTime<Utc>) -> Duration {
    match limit {
        Limit::RetryAfter(d) => d,
        Limit::Reset(at) => super::timer::until(now, at) + Duration::from_secs(1),
        Limit::Secondary => SECONDARY_MIN * 2u32.saturating_pow(refusal.min(8)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `classify` at a fixed now.
    fn c(status: u16, headers: &LimitHeaders, message: &str) -> Option<Limit> {
        classify(
            status,
            headers,
            message,
            DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
        )
    }

    fn h(retry: Option<&str>, remaining: Option<&str>, reset: Option<&str>) -> LimitHeaders {
        LimitHeaders {
            retry_after: retry.map(String::from),
            remaining: remaining.map(String::from),
            reset: reset.map(String::from),
        }
    }

    #[test]
    fn each_kind_of_refusal_is_read() {
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        for status in [403, 429] {
            let l = c(status, &h(Some("7"), None, None), "").unwrap();
            assert_eq!(wait_for(l, 0, now), Duration::from_secs(7));
            let l = c(status, &h(None, Some("0"), Some("1800000030")), "").unwrap();
            assert_eq!(wait_for(l, 0, now), Duration::from_secs(31));
        }
        let l = c(
            403,
            &h(None, None, None),
            "You have exceeded a secondary rate limit",
        )
        .unwrap();
        let waits: Vec<_> = (0..3).map(|n| wait_for(l, n, now).as_secs()).collect();
        assert_eq!(waits, [60, 120, 240]);
        assert_eq!(
            c(429, &h(None, Some("5"), Some("1")), ""),
            Some(Limit::Secondary)
        );
        // An HTTP date is read as the other clients read it (30 s after the fixed now).
        let l = c(
            429,
            &h(Some("Fri, 15 Jan 2027 08:00:30 GMT"), None, None),
            "",
        )
        .unwrap();
        assert_eq!(l, Limit::RetryAfter(Duration::from_secs(30)));
    }

    #[test]
    fn other_answers_are_not_limits() {
        assert_eq!(
            c(403, &h(None, None, None), "Resource not accessible"),
            None
        );
        assert_eq!(c(502, &h(Some("1"), None, None), "rate limit"), None);
        assert_eq!(c(200, &h(None, Some("0"), Some("1")), ""), None);
        assert_eq!(c(403, &h(Some("soon"), Some("3"), None), "forbidden"), None);
    }

    #[test]
    fn waits_are_never_shortened() {
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let far = DateTime::from_timestamp(1_800_000_000 + 86_400, 0).unwrap();
        assert_eq!(
            wait_for(Limit::Reset(far), 0, now),
            Duration::from_secs(86_401)
        );
        assert!(wait_for(Limit::Secondary, 40, now) > LONGEST_WAIT);
        let past = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        assert_eq!(wait_for(Limit::Reset(past), 0, now), Duration::from_secs(1));
    }
}
