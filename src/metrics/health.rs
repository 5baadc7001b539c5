//! The health of a metrics source, and when it may be asked again (pure; `now` passed in).
//!
//! A failing Prometheus must not be hammered: the house-format outages were made worse by
//! retry storms. While a source is up every request is admitted. After a failure the source is
//! down: nothing is sent until a full-jitter backoff delay ([`Backoff`], honouring `Retry-After`)
//! has passed, then exactly one request goes as a probe; its failure backs off further (capped),
//! its success (or any success) brings the source back up and resets the count.
//!
//! Errors that are the query's fault (`bad_data`, `execution`, a 4xx error type) prove the
//! server is answering: they do not count against it.
//!
//! Per panel refresh: `health.admit(now)` (none: wait, the source is backing off), then
//! `PanelFetch::due` (none: `health.unused(pass)`), send, and when the answer lands
//! `health.report(pass, outcome, now, rng)`.

use super::source::SourceError;
use crate::backoff::Backoff;
use crate::backoff::MAX_RETRY_AFTER;
use chrono::{DateTime, Utc};
use rand::Rng;
use std::time::Duration;

/// The backoff for polling a source: first retry within 1 s, then doubling up to 30 s.
pub const SOURCE_BACKOFF: Backoff = Backoff {
    base: Duration::from_secs(1),
    cap: Duration::from_secs(30),
    max_attempts: u32::MAX,
};

/// A probe not reported within this long is taken as lost, and another may go.
pub const PROBE_EXPIRY: Duration = Duration::from_secs(60);

/// Permission to send one request; hand it back with the outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    probe: bool,
}

/// What the status bar shows.
#[derive(Debug, Clone, PartialEq)]
pub enum HealthState {
    /// Nothing has answered yet.
    Unknown,
    Up {
        since: DateTime<Utc>,
    },
    Down {
        /// Consecutive failed attempts (a wave of panels failing together counts once).
        failures: u32,
        since: DateTime<Utc>,
        reason: SourceError,
        /// No request before this time.
        retry_at: DateTime<Utc>,
    },
}

/// Health of one source.
#[derive(Debug, Clone)]
pub struct Health {
    policy: Backoff,
    state: HealthState,
    probe_sent: Option<DateTime<Utc>>,
}

impl Default for Health {
    fn default() -> Self {
        Health::new(SOURCE_BACKOFF)
    }
}

impl Health {
    pub fn new(policy: Backoff) -> Self {
        Health {
            policy,
            state: HealthState::Unknown,
            probe_sent: None,
        }
    }

    /// The current state.
    pub fn state(&self) -> &HealthState {
        &self.state
    }

    /// Whether a request may be sent at `now`; `Some(pass)` means send it and report the
    /// outcome with that pass. While down, at most one probe is out at a time.
    pub fn admit(&mut self, now: DateTime<Utc>) -> Option<Pass> {
        match &self.state {
            HealthState::Unknown | HealthState::Up { .. } => Some(Pass { probe: false }),
            HealthState::Down { retry_at, .. } => {
                if now < *retry_at {
                    return None;
                }
                if let Some(sent) = self.probe_sent
                    && now < sent + PROBE_EXPIRY
                {
                    return None;
                }
                self.probe_sent = Some(now);
                Some(Pass { probe: true })
            }
        }
    }

    /// Hand back a pass that was not used (the panel had nothing to fetch), so a probe slot is
    /// not held until [`PROBE_EXPIRY`].
    pub fn unused(&mut self, pass: Pass) {
        if pass.probe {
            self.probe_sent = None;
        }
    }

    /// When the next request may go, if it must wait.
    pub fn retry_at(&self) -> Option<DateTime<Utc>> {
        match &self.state {
            HealthState::Down { retry_at, .. } => Some(*retry_at),
            _ => None,
        }
    }

    /// Report how a request sent with `pass` ended.
    pub fn report<R: Rng + ?Sized>(
        &mut self,
        pass: Pass,
        outcome: Result<(), &SourceError>,
        now: DateTime<Utc>,
        rng: &mut R,
    ) {
        match outcome {
            Err(e) if counts_against_source(e) => self.on_failure(pass, e, now, rng),
            _ => self.on_success(pass, now),
        }
    }

    fn on_success(&mut self, pass: Pass, now: DateTime<Utc>) {
        if pass.probe {
            self.probe_sent = None;
        }
        if !matches!(self.state, HealthState::Up { .. }) {
            self.state = HealthState::Up { since: now };
            self.probe_sent = None;
        }
    }

    fn on_failure<R: Rng + ?Sized>(
        &mut self,
        pass: Pass,
        e: &SourceError,
        now: DateTime<Utc>,
        rng: &mut R,
    ) {
        let (failures, since) = match &self.state {
            HealthState::Down {
                failures,
                since,
                retry_at,
                ..
            } => {
                if !pass.probe {
                    // A request sent before the source went down: same wave, no new count.
                    // Only a longer Retry-After moves the next attempt.
                    let later = self.wait(*failures, e, now, rng, true);
                    if later > *retry_at {
                        self.set_retry_at(later);
                    }
                    return;
                }
                (failures.saturating_add(1), *since)
            }
            _ => (1, now),
        };
        if pass.probe {
            self.probe_sent = None;
        }
        let retry_at = self.wait(failures, e, now, rng, false);
        self.state = HealthState::Down {
            failures,
            since,
            reason: e.clone(),
            retry_at,
        };
    }

    /// Now plus a full-jitter delay for `failures`, never sooner than the server asked.
    fn wait<R: Rng + ?Sized>(
        &self,
        failures: u32,
        e: &SourceError,
        now: DateTime<Utc>,
        rng: &mut R,
        retry_after_only: bool,
    ) -> DateTime<Utc> {
        let jitter = if retry_after_only {
            Duration::ZERO
        } else {
            self.policy.delay(failures.saturating_sub(1), rng)
        };
        // A Retry-After is honoured up to MAX_RETRY_AFTER (whoever built the error).
        let asked = e
            .retry_after()
            .unwrap_or(Duration::ZERO)
            .min(MAX_RETRY_AFTER);
        let delay = chrono::Duration::from_std(jitter.max(asked)).unwrap_or(chrono::Duration::MAX);
        now.checked_add_signed(delay).unwrap_or(now)
    }

    fn set_retry_at(&mut self, at: DateTime<Utc>) {
        if let HealthState::Down { retry_at, .. } = &mut self.state {
            *retry_at = at;
        }
    }
}

/// Whether an error says the source is in trouble (true) or only that the query was wrong.
pub fn counts_against_source(e: &SourceError) -> bool {
    match e {
        SourceError::Api { error_type, .. } => {
            let query_fault = matches!(error_type.as_str(), "bad_data" | "execution")
                || error_type
                    .parse::<u16>()
                    .is_ok_and(|code| (400..500).contains(&code) && code != 429);
            !query_fault
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 29, 12, 0, 0).unwrap()
    }

    fn down() -> SourceError {
        SourceError::Unreachable("connection refused".into())
    }

    #[test]
    fn a_failure_backs_off_and_one_probe_goes() {
        let mut rng = StdRng::seed_from_u64(1);
        let mut h = Health::default();
        let pass = h.admit(t0()).unwrap();
        let other = h.admit(t0()).unwrap();
        h.report(pass, Err(&down()), t0(), &mut rng);
        // A straggler of the same wave does not count again.
        h.report(other, Err(&down()), t0(), &mut rng);
        let HealthState::Down {
            failures, retry_at, ..
        } = h.state().clone()
        else {
            panic!("{:?}", h.state())
        };
        assert_eq!(failures, 1);
        assert!(retry_at <= t0() + chrono::Duration::seconds(1));
        assert!(
            h.admit(retry_at - chrono::Duration::milliseconds(1))
                .is_none()
        );
        let unused = h.admit(retry_at).unwrap();
        h.unused(unused);
        let probe = h.admit(retry_at).unwrap();
        assert!(h.admit(retry_at).is_none(), "only one probe at a time");
        h.report(probe, Ok(()), retry_at, &mut rng);
        assert_eq!(h.state(), &HealthState::Up { since: retry_at });
        assert!(h.admit(retry_at).is_some());
    }

    #[test]
    fn retry_after_is_honoured() {
        let mut rng = StdRng::seed_from_u64(2);
        let mut h = Health::default();
        let pass = h.admit(t0()).unwrap();
        let e = SourceError::RateLimited {
            retry_after: Some(Duration::from_secs(120)),
        };
        h.report(pass, Err(&e), t0(), &mut rng);
        assert_eq!(h.retry_at(), Some(t0() + chrono::Duration::seconds(120)));
        // An absurd wait from elsewhere is cut to MAX_RETRY_AFTER, without overflow.
        let probe = h.admit(t0() + chrono::Duration::seconds(120)).unwrap();
        let e = SourceError::RateLimited {
            retry_after: Some(Duration::MAX),
        };
        h.report(probe, Err(&e), t0(), &mut rng);
        assert_eq!(
            h.retry_at(),
            Some(t0() + chrono::Duration::from_std(MAX_RETRY_AFTER).unwrap())
        );
    }

    #[test]
    fn query_errors_do_not_count_against_the_source() {
        for (t, counts) in [
            ("bad_data", false),
            ("execution", false),
            ("422", false),
            ("timeout", true),
            ("unavailable", true),
            ("503", true),
        ] {
            let e = SourceError::Api {
                error_type: t.into(),
                message: String::new(),
            };
            assert_eq!(counts_against_source(&e), counts, "{t}");
        }
    }
}
