//! Time as warroom sees it: the wall clock in a real incident, a simulated clock in rehearsals,
//! and a fixed clock in tests, behind one trait.

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use std::sync::Arc;
use std::time::Duration;

/// A source of "now", and a way to wait on it.
///
/// Every duration of a run (gate intervals, soaks, settles, deadlines, backoff waits, step
/// timeouts) is measured and waited on the run's clock: the wall clock in a real incident, the
/// simulator's in a rehearsal (where a `3m` timeout is three simulated minutes at any speed,
/// and nothing waits while the rehearsal is paused). Network timeouts and UI timeouts are not
/// durations of the run: they stay on the wall clock.
pub trait Clock: Send + Sync + std::fmt::Debug {
    fn now(&self) -> DateTime<Utc>;

    /// Resolves once this clock reads `at` or later (at once if it already does).
    fn sleep_until(&self, at: DateTime<Utc>) -> BoxFuture<'static, ()>;

    /// Resolves once `d` has passed on this clock.
    fn sleep(&self, d: Duration) -> BoxFuture<'static, ()> {
        self.sleep_until(after(self.now(), d))
    }

    /// How long this clock has moved since `start` (zero if it reads earlier).
    fn since(&self, start: DateTime<Utc>) -> Duration {
        (self.now() - start).to_std().unwrap_or_default()
    }
}

/// `t` plus `d`, saturating far in the future rather than overflowing.
pub fn after(t: DateTime<Utc>, d: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(d)
        .ok()
        .and_then(|d| t.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// `f`, or `None` once `d` has passed on `clock` first.
pub async fn timeout<F: std::future::Future>(
    clock: &dyn Clock,
    d: Duration,
    f: F,
) -> Option<F::Output> {
    let limit = clock.sleep(d);
    tokio::select! {
        out = f => Some(out),
        _ = limit => None,
    }
}

/// The machine's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct WallClock;

impl Clock for WallClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    fn sleep_until(&self, at: DateTime<Utc>) -> BoxFuture<'static, ()> {
        let d = (at - Utc::now()).to_std().unwrap_or_default();
        Box::pin(tokio::time::sleep(d))
    }

    fn sleep(&self, d: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(d))
    }
}

/// A clock that only moves when told to: tests and fixed stamps. Its sleepers wake when it is
/// moved past their deadline (never on their own).
#[derive(Debug, Clone)]
pub struct ManualClock {
    millis: Arc<tokio::sync::watch::Sender<i64>>,
}

impl ManualClock {
    pub fn new(at: DateTime<Utc>) -> Self {
        ManualClock {
            millis: Arc::new(tokio::sync::watch::Sender::new(at.timestamp_millis())),
        }
    }

    pub fn set(&self, at: DateTime<Utc>) {
        self.millis.send_replace(at.timestamp_millis());
    }

    pub fn advance(&self, by: std::time::Duration) {
        self.millis
            .send_modify(|m| *m = m.saturating_add(by.as_millis() as i64));
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(*self.millis.borrow()).unwrap_or_default()
    }

    fn sleep_until(&self, at: DateTime<Utc>) -> BoxFuture<'static, ()> {
        let mut rx = self.millis.subscribe();
        let at = at.timestamp_millis();
        Box::pin(async move {
            // An error means every handle of the clock is gone: nothing will move it again.
            let _ = rx.wait_for(|m| *m >= at).await;
        })
    }
}

/// A shared clock handle.
pub type SharedClock = Arc<dyn Clock>;

/// How fast a simulated or replayed clock may run against the wall clock, per use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpeedLimits {
    /// What the speed means, for the message ("simulated seconds per wall second").
    pub unit: &'static str,
    pub min: f64,
    /// Whether `min` itself is refused (a speed of 0 never moves).
    pub min_exclusive: bool,
    pub max: f64,
}

/// A rehearsal: `warroom demo` and `warroom gameday` (the console and the recording keep up to
/// this; beyond it scrapes are skipped).
pub const REHEARSAL_SPEED: SpeedLimits = SpeedLimits {
    unit: "simulated seconds per wall second",
    min: 0.0,
    min_exclusive: true,
    max: 1000.0,
};
/// `warroom sim serve`: the simulator alone, scraped by someone else.
pub const SIMULATOR_SPEED: SpeedLimits = SpeedLimits {
    unit: "simulated seconds per wall second",
    min: 0.0,
    min_exclusive: true,
    max: 10_000.0,
};
/// `warroom replay`: 60 plays a two-hour incident in two minutes.
pub const REPLAY_SPEED: SpeedLimits = SpeedLimits {
    unit: "replay seconds per wall second",
    min: 0.1,
    min_exclusive: false,
    max: 7200.0,
};

/// Why a `--speed` is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--speed \"{speed}\" is not a speed here: give {} {} {} and at most {} ({})",
    limits.unit, if limits.min_exclusive { "above" } else { "from" }, limits.min, limits.max,
    if limits.unit.starts_with("replay") { "60 plays a two-hour incident in two minutes" } else { "30 shows an hour in two minutes" })]
pub struct BadSpeed {
    pub speed: f64,
    pub limits: SpeedLimits,
}

/// The one check of a `--speed` given on the command line.
pub fn check_speed(speed: f64, limits: SpeedLimits) -> Result<f64, BadSpeed> {
    let above_min = if limits.min_exclusive {
        speed > limits.min
    } else {
        speed >= limits.min
    };
    if speed.is_finite() && above_min && speed <= limits.max {
        Ok(speed)
    } else {
        Err(BadSpeed { speed, limits })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_manual_clock_wakes_its_sleepers_only_when_moved_past_them() {
        let t0 = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let c = ManualClock::new(t0);
        let mut nap = c.sleep(Duration::from_secs(10));
        let waker = futures::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        assert!(nap.as_mut().poll(&mut cx).is_pending());
        c.advance(Duration::from_secs(9));
        assert!(nap.as_mut().poll(&mut cx).is_pending());
        c.advance(Duration::from_secs(1));
        tokio::time::timeout(Duration::from_secs(5), nap)
            .await
            .expect("woken at its deadline");
        assert_eq!(c.since(t0), Duration::from_secs(10));
        assert_eq!(
            timeout(&c, Duration::from_secs(1), std::future::ready(3)).await,
            Some(3)
        );
    }

    #[test]
    fn speeds_are_checked_against_their_own_limits_with_one_message() {
        assert_eq!(check_speed(30.0, REHEARSAL_SPEED), Ok(30.0));
        assert!(check_speed(0.0, REHEARSAL_SPEED).is_err());
        assert!(check_speed(f64::NAN, REHEARSAL_SPEED).is_err());
        assert!(check_speed(1001.0, REHEARSAL_SPEED).is_err());
        assert_eq!(check_speed(5000.0, SIMULATOR_SPEED), Ok(5000.0));
        assert_eq!(check_speed(0.1, REPLAY_SPEED), Ok(0.1));
        assert!(check_speed(0.05, REPLAY_SPEED).is_err());
        let e = check_speed(0.0, REPLAY_SPEED).unwrap_err().to_string();
        assert!(
            e.contains("--speed \"0\"") && e.contains("replay seconds"),
            "{e}"
        );
    }
}
