//! Capped exponential backoff with full jitter, and a retry budget.
//!
//! The house-format outages were made worse by retry storms; warroom must never be one. Every
//! retry anywhere in warroom goes through [`Backoff`] (delay for attempt `n` is uniform in
//! `[0, min(cap, base·2ⁿ)]`, the "full jitter" of the AWS backoff study) and, where several
//! actions share a dependency, a [`RetryBudget`] that allows retries only as a fraction of
//! first attempts (as gRPC's retry throttling does).

use chrono::{DateTime, NaiveDateTime, Utc};
use rand::Rng;
use std::time::Duration;

/// The longest wait a server's `Retry-After` buys: a larger one is cut to this, so one
/// `Retry-After: 999999` (from a proxy, a misconfigured server, an attacker) cannot stop the
/// recorder, the console's sources or a runbook's HTTP step for an hour during an incident.
/// Five minutes, as long as warroom ever waits for GitHub (`github::limits::LONGEST_WAIT`).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(5 * 60);

/// A `Retry-After` value (delay-seconds or an HTTP date, RFC 9110 §10.2.3) as a wait from
/// `now`, never negative and at most [`MAX_RETRY_AFTER`]. `None` when it cannot be read. The
/// one reader of the header in warroom: every client that retries takes its wait from here.
pub fn retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    retry_after_asked(value, now).map(|d| d.min(MAX_RETRY_AFTER))
}

/// What a `Retry-After` value asks for, uncut: for a caller that gives up rather than send
/// sooner than asked (GitHub's outbox), not for one that waits.
pub fn retry_after_asked(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let v = value.trim();
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        // All digits but too long for u64: as good as forever.
        return Some(Duration::from_secs(v.parse().unwrap_or(u64::MAX)));
    }
    let at = http_date(v)?;
    Some((at - now).to_std().unwrap_or(Duration::ZERO))
}

/// The three date forms HTTP allows (RFC 9110 §5.6.7).
fn http_date(v: &str) -> Option<DateTime<Utc>> {
    if let Ok(d) = DateTime::parse_from_rfc2822(v) {
        return Some(d.with_timezone(&Utc));
    }
    for fmt in ["%A, %d-%b-%y %H:%M:%S GMT", "%a %b %e %H:%M:%S %Y"] {
        if let Ok(d) = NaiveDateTime::parse_from_str(v, fmt) {
            return Some(d.and_utc());
        }
    }
    None
}

/// The seconds a countdown on screen shows until the next attempt (a source that is down,
/// discovery that failed): the wait rounded up to a step of five, so never sooner than the
/// attempt. A console that waits on one then changes once every five seconds, no more often
/// than an idle one draws for a 5 s refresh (issue 20); counting each second drew a frame a
/// second for most of a backoff, whose waits are mostly under 30 s.
pub fn shown_wait(secs: i64) -> i64 {
    (secs.max(0) + 4) / 5 * 5
}

/// Backoff policy: base delay, cap, and the most attempts in all (first try included).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    pub base: Duration,
    pub cap: Duration,
    pub max_attempts: u32,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            base: Duration::from_millis(500),
            cap: Duration::from_secs(30),
            max_attempts: 4,
        }
    }
}

impl Backoff {
    /// The ceiling of the delay before retry number `retry` (0 = the first retry).
    pub fn ceiling(&self, retry: u32) -> Duration {
        let factor = 2f64.powi(retry.min(62) as i32);
        let secs = (self.base.as_secs_f64() * factor).min(self.cap.as_secs_f64());
        Duration::from_secs_f64(secs.max(0.0))
    }

    /// A full-jitter delay before retry number `retry`.
    pub fn delay<R: Rng + ?Sized>(&self, retry: u32, rng: &mut R) -> Duration {
        let ceiling = self.ceiling(retry).as_secs_f64();
        if ceiling <= 0.0 {
            return Duration::ZERO;
        }
        Duration::from_secs_f64(rng.random_range(0.0..=ceiling))
    }

    /// Whether another attempt may follow `attempts_made` attempts.
    pub fn may_retry(&self, attempts_made: u32) -> bool {
        attempts_made < self.max_attempts
    }
}

/// A token bucket that lets retries be at most `ratio` of first attempts (plus a small
/// reserve), so a hard-down dependency costs about the same as no retries at all.
#[derive(Debug, Clone)]
pub struct RetryBudget {
    tokens: f64,
    max_tokens: f64,
    ratio: f64,
}

impl RetryBudget {
    /// `ratio`: retries earned per first attempt (0.1 = one retry per ten attempts);
    /// `reserve`: retries available before any attempt was made.
    pub fn new(ratio: f64, reserve: f64) -> Self {
        RetryBudget {
            tokens: reserve,
            max_tokens: reserve.max(1.0),
            ratio,
        }
    }

    /// Record a first attempt; it earns `ratio` tokens.
    pub fn on_first_attempt(&mut self) {
        self.tokens = (self.tokens + self.ratio).min(self.max_tokens);
    }

    /// Take a token for a retry; false when the budget is spent and the retry must not happen.
    pub fn try_retry(&mut self) -> bool {
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    pub fn tokens(&self) -> f64 {
        self.tokens
    }
}

impl Default for RetryBudget {
    fn default() -> Self {
        RetryBudget::new(0.1, 10.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn a_countdown_shows_the_wait_in_fives_rounded_up() {
        let shown: Vec<i64> = (0..=30).rev().map(super::shown_wait).collect();
        // 30 s of backoff show 7 different figures, not 31: the screen changes every 5 s.
        let mut distinct = shown.clone();
        distinct.dedup();
        assert_eq!(distinct, vec![30, 25, 20, 15, 10, 5, 0]);
        assert!((0..=30).all(|s| super::shown_wait(s) >= s), "never sooner");
        assert_eq!(super::shown_wait(1), 5);
        assert_eq!(super::shown_wait(-3), 0);
    }

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 29, 12, 0, 0).unwrap()
    }

    #[test]
    fn retry_after_in_seconds_and_dates() {
        assert_eq!(retry_after("7", now()), Some(Duration::from_secs(7)));
        assert_eq!(retry_after(" 0 ", now()), Some(Duration::ZERO));
        assert_eq!(
            retry_after("99999999999999999999999", now()),
            Some(MAX_RETRY_AFTER)
        );
        for date in [
            "Sun, 29 Nov 2026 12:00:30 GMT",
            "Sunday, 29-Nov-26 12:00:30 GMT",
            "Sun Nov 29 12:00:30 2026",
        ] {
            assert_eq!(
                retry_after(date, now()),
                Some(Duration::from_secs(30)),
                "{date}"
            );
        }
        assert_eq!(
            retry_after("Sun, 29 Nov 2026 11:00:00 GMT", now()),
            Some(Duration::ZERO)
        );
        for bad in ["", "-5", "1.5", "soon", "\u{1b}[2J"] {
            assert_eq!(retry_after(bad, now()), None, "{bad:?}");
        }
    }

    #[test]
    fn a_huge_retry_after_is_cut_but_its_ask_is_kept() {
        for huge in [
            "999999",
            "99999999999999999999999",
            "Fri, 01 Jan 2100 00:00:00 GMT",
        ] {
            assert_eq!(retry_after(huge, now()), Some(MAX_RETRY_AFTER), "{huge}");
            assert!(retry_after_asked(huge, now()).unwrap() > Duration::from_secs(900_000));
        }
    }

    use rand::SeedableRng;
    use rand::rngs::StdRng;

    #[test]
    fn delays_lie_under_the_ceiling_and_average_half_of_it() {
        let b = Backoff::default();
        let mut rng = StdRng::seed_from_u64(7);
        for retry in 0..8 {
            let ceiling = b.ceiling(retry).as_secs_f64();
            let n = 10_000;
            let mut sum = 0.0;
            for _ in 0..n {
                let d = b.delay(retry, &mut rng).as_secs_f64();
                assert!(
                    (0.0..=ceiling).contains(&d),
                    "retry {retry}: {d} > {ceiling}"
                );
                sum += d;
            }
            let mean = sum / n as f64;
            let rel = (mean - ceiling / 2.0).abs() / (ceiling / 2.0);
            assert!(
                rel < 0.03,
                "retry {retry}: mean {mean} vs {}",
                ceiling / 2.0
            );
        }
    }

    #[test]
    fn ceiling_is_capped() {
        let b = Backoff::default();
        assert_eq!(b.ceiling(0), Duration::from_millis(500));
        assert_eq!(b.ceiling(3), Duration::from_secs(4));
        assert_eq!(b.ceiling(40), Duration::from_secs(30));
    }

    #[test]
    fn budget_limits_retries_against_a_dead_dependency() {
        let mut budget = RetryBudget::new(0.1, 10.0);
        let (mut attempts, actions) = (0u32, 1000u32);
        for _ in 0..actions {
            budget.on_first_attempt();
            attempts += 1;
            let mut tries = 1;
            while tries < 4 && budget.try_retry() {
                attempts += 1;
                tries += 1;
            }
        }
        assert!(
            f64::from(attempts) <= 1.1 * f64::from(actions) + 10.0,
            "{attempts}"
        );
    }
}
