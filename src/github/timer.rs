//! Time for the GitHub client: what time it is and how to wait.
//!
//! A secondary rate limit means waiting at least 60 s; tests must prove that without waiting
//! that long. The client only ever waits through a [`Timer`]: the [`WallTimer`] in real use, a
//! [`VirtualTimer`] in tests and dry runs, whose sleeps move a [`ManualClock`] at once. Timeouts
//! of calls are real time on purpose: they bound how long a real socket may hang.

use crate::clock::{Clock, ManualClock};
use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Now, and a way to wait.
pub trait Timer: Send + Sync + std::fmt::Debug {
    fn now(&self) -> DateTime<Utc>;
    fn sleep(&self, d: Duration) -> BoxFuture<'static, ()>;
}

/// The machine's clock and tokio's sleep.
#[derive(Debug, Default, Clone, Copy)]
pub struct WallTimer;

impl Timer for WallTimer {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
    fn sleep(&self, d: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(d))
    }
}

/// A timer whose sleeps advance its clock instantly and are remembered.
#[derive(Debug, Clone)]
pub struct VirtualTimer {
    clock: ManualClock,
    slept: Arc<Mutex<Vec<Duration>>>,
}

impl VirtualTimer {
    pub fn new(clock: ManualClock) -> Self {
        VirtualTimer {
            clock,
            slept: Arc::default(),
        }
    }

    /// The clock it moves (share it with a mock server to stamp requests in virtual time).
    pub fn clock(&self) -> &ManualClock {
        &self.clock
    }

    /// Every sleep so far, in order.
    pub fn slept(&self) -> Vec<Duration> {
        self.slept.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Timer for VirtualTimer {
    fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }
    fn sleep(&self, d: Duration) -> BoxFuture<'static, ()> {
        self.clock.advance(d);
        if let Ok(mut s) = self.slept.lock() {
            s.push(d);
        }
        Box::pin(tokio::task::yield_now())
    }
}

/// How long from `now` until `then` (zero when it has passed).
pub fn until(now: DateTime<Utc>, then: DateTime<Utc>) -> Duration {
    (then - now).to_std().unwrap_or(Duration::ZERO)
}
