//! A rehearsal's clocks: simulated second 0 is the scenario's start time today in the
//! configured timezone; [`SimClock`] reads the simulator's "now"; [`LastScrape`] reads the time
//! of the latest scrape, so a reading taken at it falls exactly on the store's samples.

use super::stage::Scrape;
use crate::clock::Clock;
use crate::sim::{Sim, SimService};
use chrono::{DateTime, NaiveTime, TimeZone, Utc};
use std::sync::Arc;

/// The simulator's time as the console's clock: simulated second 0 is the scenario's start
/// time today in the configured timezone.
#[derive(Debug)]
pub struct SimClock {
    service: Arc<SimService>,
    epoch: DateTime<Utc>,
}

impl SimClock {
    pub fn new(service: Arc<SimService>, epoch: DateTime<Utc>) -> SimClock {
        SimClock { service, epoch }
    }
}

impl Clock for SimClock {
    fn now(&self) -> DateTime<Utc> {
        at(self.epoch, self.service.with_sim(Sim::now))
    }
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
    epoch: DateTime<Utc>,
    start_at: f64,
}

impl LastScrape {
    pub fn new(
        scrapes: Arc<std::sync::Mutex<Vec<Scrape>>>,
        epoch: DateTime<Utc>,
        start_at: f64,
    ) -> Self {
        LastScrape {
            scrapes,
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
    }
}
