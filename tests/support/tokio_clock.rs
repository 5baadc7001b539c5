//! A model clock that follows tokio's: on a runtime whose time is paused
//! (`#[tokio::test(start_paused = true)]`) the console's clock moves with the loop's tick and
//! timers, and minutes of a console pass in no wall time, the same every run.

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use warroom::clock::Clock;

#[derive(Debug)]
pub struct TokioClock {
    base: DateTime<Utc>,
    start: tokio::time::Instant,
}

impl TokioClock {
    /// Reads `base` now, and moves as tokio's time does.
    pub fn starting_at(base: DateTime<Utc>) -> Self {
        TokioClock {
            base,
            start: tokio::time::Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    fn now(&self) -> DateTime<Utc> {
        warroom::clock::after(self.base, self.start.elapsed())
    }

    fn sleep_until(&self, at: DateTime<Utc>) -> BoxFuture<'static, ()> {
        let d = (at - self.now()).to_std().unwrap_or_default();
        Box::pin(tokio::time::sleep(d))
    }
}
