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
