//! A rehearsal's clocks: simulated second 0 is the scenario's start time today in the
//! configured timezone. The stage publishes the simulated time as it advances the simulator
//! ([`SimTime`]); [`SimClock`] reads it and sleeps on it (a sleeper wakes when the simulation
//! reaches its deadline, and never while the rehearsal is paused); [`LastScrape`] reads the
//! time of the latest scrape, so a reading taken at it falls exactly on the store's samples.

use super::stage::Scrape;
use crate::clock::Clock;
use chrono::{DateTime, NaiveTime, TimeZone, Utc};
use futures::future::BoxFuture;
use std::collections::BinaryHeap;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// The simulated time of a stage, in simulated seconds, as its pacer advances it; and the
/// deadlines sleepers wait for, so the pacer stops at each one instead of stepping past it.
#[derive(Debug)]
pub struct SimTime {
    now: watch::Sender<f64>,
    /// Deadlines asked for, earliest first (as negated milliseconds in a max-heap).
    deadlines: Mutex<BinaryHeap<i64>>,
}

impl SimTime {
    pub fn new(at: f64) -> Arc<SimTime> {
        Arc::new(SimTime {
            now: watch::Sender::new(at),
            deadlines: Mutex::new(BinaryHeap::new()),
        })
    }

    /// The simulated second now.
    pub fn now(&self) -> f64 {
        *self.now.borrow()
    }

    /// Publish that the simulation reached `t`: sleepers whose deadline passed wake.
    pub fn publish(&self, t: f64) {
        self.now.send_if_modified(|now| {
            let moved = t > *now;
            if moved {
                *now = t;
            }
            moved
        });
        if let Ok(mut d) = self.deadlines.lock() {
            let ms = (t * 1000.0).floor() as i64;
            while d.peek().is_some_and(|&neg| -neg <= ms) {
                d.pop();
            }
        }
    }

    /// The earliest deadline a sleeper waits for, in simulated seconds.
    pub fn next_deadline(&self) -> Option<f64> {
        let d = self.deadlines.lock().ok()?;
        d.peek().map(|&neg| -neg as f64 / 1000.0)
    }

    /// Resolves once the simulation reaches second `t`.
    pub fn sleep_until(&self, t: f64) -> BoxFuture<'static, ()> {
        let mut rx = self.now.subscribe();
        if *rx.borrow() < t
            && let Ok(mut d) = self.deadlines.lock()
        {
            d.push(-((t * 1000.0).ceil() as i64));
        }
        Box::pin(async move {
            // An error means the stage is gone: nothing will move the time again.
            let _ = rx.wait_for(|now| *now >= t).await;
        })
    }

    /// A receiver that sees every move of the time.
    pub fn watch(&self) -> watch::Receiver<f64> {
        self.now.subscribe()
    }
}

/// The simulator's time as a clock (the console's, the journal's, the runbooks'): simulated
/// second 0 is the scenario's start time today in the configured timezone.
#[derive(Debug, Clone)]
pub struct SimClock {
    time: Arc<SimTime>,
    epoch: DateTime<Utc>,
}

impl SimClock {
    pub fn new(time: Arc<SimTime>, epoch: DateTime<Utc>) -> SimClock {
        SimClock { time, epoch }
    }
}

impl Clock for SimClock {
    fn now(&self) -> DateTime<Utc> {
        at(self.epoch, self.time.now())
    }

    fn sleep_until(&self, t: DateTime<Utc>) -> BoxFuture<'static, ()> {
        self.time.sleep_until(seconds(self.epoch, t))
    }
}

/// The simulated second of wall time `t`.
pub fn seconds(epoch: DateTime<Utc>, t: DateTime<Utc>) -> f64 {
    (t - epoch).num_milliseconds() as f64 / 1000.0
}

/// The wall time of simulated second `t`.
pub fn at(epoch: DateTime<Utc>, t: f64) -> DateTime<Utc> {
    epoch + chrono::Duration::milliseconds((t * 1000.0) as i64)
}

/// Simulated second 0 as a date: today, at the scenario's "HH:MM" in `tz`.
pub fn epoch(start_clock: &str, tz: chrono_tz::Tz, today: DateTime<Utc>) -> DateTime<Utc> {
    let time = NaiveTime::parse_from_str(start_clock, "%H:%M").unwrap_or(NaiveTime::MIN);
    let day = today.with_timezone(&tz).date_naive();
    tz.from_local_datetime(&day.and_time(time))
        .earliest()
        .map_or(today, |d| d.with_timezone(&Utc))
}

/// A clock that reads the time of the stage's latest scrape (see [`super::stage::Stage::scrape_clock`]).
#[derive(Debug)]
pub struct LastScrape {
    scrapes: Arc<std::sync::Mutex<Vec<Scrape>>>,
    time: Arc<SimTime>,
    epoch: DateTime<Utc>,
    start_at: f64,
}

impl LastScrape {
    pub fn new(
        scrapes: Arc<std::sync::Mutex<Vec<Scrape>>>,
        time: Arc<SimTime>,
        epoch: DateTime<Utc>,
        start_at: f64,
    ) -> Self {
        LastScrape {
            scrapes,
            time,
            epoch,
            start_at,
        }
    }
}

impl crate::clock::Clock for LastScrape {
    fn now(&self) -> DateTime<Utc> {
        let t = self
            .scrapes
            .lock()
            .ok()
            .and_then(|s| s.last().map(|s| s.t))
            .unwrap_or(self.start_at);
        at(self.epoch, t)
    }

    fn sleep_until(&self, t: DateTime<Utc>) -> BoxFuture<'static, ()> {
        // Scrapes follow the simulated time: waking on it wakes on the scrape at or before.
        self.time.sleep_until(seconds(self.epoch, t))
    }
}

/// The Unix time, in seconds, of simulated second `t`.
pub(super) fn unix(epoch: DateTime<Utc>, t: f64) -> f64 {
    epoch.timestamp_millis() as f64 / 1000.0 + t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulated_second_zero_is_the_scenario_start_today() {
        let today = DateTime::parse_from_rfc3339("2026-07-17T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let e = epoch("06:40", chrono_tz::Europe::London, today);
        assert_eq!(e.to_rfc3339(), "2026-07-17T05:40:00+00:00");
        assert_eq!(at(e, 1200.0).to_rfc3339(), "2026-07-17T06:00:00+00:00");
        assert_eq!(seconds(e, at(e, 1200.5)), 1200.5);
    }

    #[tokio::test]
    async fn sleepers_wake_when_the_simulation_reaches_their_deadline_and_not_before() {
        let time = SimTime::new(100.0);
        let epoch = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let clock = SimClock::new(time.clone(), epoch);
        let mut nap = clock.sleep(std::time::Duration::from_secs(30));
        assert_eq!(
            time.next_deadline(),
            Some(130.0),
            "the pacer is told where to stop"
        );
        let waker = futures::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        time.publish(129.5);
        assert!(nap.as_mut().poll(&mut cx).is_pending());
        time.publish(130.0);
        assert_eq!(time.next_deadline(), None);
        tokio::time::timeout(std::time::Duration::from_secs(5), nap)
            .await
            .expect("woken at simulated second 130");
        assert_eq!(clock.now(), at(epoch, 130.0));
        // Time never runs backwards.
        time.publish(120.0);
        assert_eq!(time.now(), 130.0);
    }
}
