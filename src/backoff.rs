//! Capped exponential backoff with full jitter, and a retry budget.
//!
//! The house-format outages were made worse by retry storms; warroom must never be one. Every
//! retry anywhere in warroom goes through [`Backoff`] (delay for attempt `n` is uniform in
//! `[0, min(cap, base·2ⁿ)]`, the "full jitter" of the AWS backoff study) and, where several
//! actions share a dependency, a [`RetryBudget`] that allows retries only as a fraction of
//! first attempts (as gRPC's retry throttling does).

use rand::Rng;
use std::time::Duration;

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

    use super::*;
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
