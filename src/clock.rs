//! Time as warroom sees it: the wall clock in a real incident, a simulated clock in rehearsals,
//! and a fixed clock in tests, behind one trait.

use chrono::{DateTime, Utc};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// A source of "now".
pub trait Clock: Send + Sync + std::fmt::Debug {
    fn now(&self) -> DateTime<Utc>;
}

/// The machine's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct WallClock;

impl Clock for WallClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to: tests and the simulator's time.
#[derive(Debug, Clone)]
pub struct ManualClock {
    millis: Arc<AtomicI64>,
}

impl ManualClock {
    pub fn new(at: DateTime<Utc>) -> Self {
        ManualClock {
            millis: Arc::new(AtomicI64::new(at.timestamp_millis())),
        }
    }

    pub fn set(&self, at: DateTime<Utc>) {
        self.millis.store(at.timestamp_millis(), Ordering::SeqCst);
    }

    pub fn advance(&self, by: std::time::Duration) {
        self.millis
            .fetch_add(by.as_millis() as i64, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(self.millis.load(Ordering::SeqCst)).unwrap_or_default()
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
