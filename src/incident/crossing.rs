//! Threshold crossings: a panel's readings in, timeline events out (pure, no I/O, no clock).
//!
//! Each level (warn, crit) is tracked on its own. Going bad is recorded at once, on the first
//! reading past the threshold, so the timeline has the true time. Coming back needs the value
//! clearly back, past the threshold by the hysteresis, for the whole minimum duration; a reading
//! that is bad again, or only just back, restarts that wait. So a value that flaps around the
//! threshold every scrape yields one event when it first goes bad and one when it has settled:
//! never more than one pair per minimum duration.

use super::event::{Direction, Event, Level};
use chrono::{DateTime, Utc};
use std::time::Duration;

/// Which side of the thresholds is bad.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Worse {
    /// Higher is worse (latency, errors, pool use).
    Above,
    /// Lower is worse (success rate, instances up).
    Below,
}

/// A panel's thresholds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    pub warn: Option<f64>,
    pub crit: Option<f64>,
    pub worse: Worse,
    /// How far back past a threshold the value must come to count as back (panel units).
    /// `None`: 5 % of the threshold's magnitude.
    pub hysteresis: Option<f64>,
    /// How long the value must stay clearly back before the recovery is recorded.
    pub min_duration: Duration,
}

/// One crossing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Crossing {
    /// When it happened: the first bad reading, or the first clearly-back reading.
    pub at: DateTime<Utc>,
    /// When it was known (for a recovery, `min_duration` after `at`).
    pub detected: DateTime<Utc>,
    pub level: Level,
    pub direction: Direction,
    pub value: f64,
    pub threshold: f64,
}

impl Crossing {
    /// The timeline event for a crossing on `panel`.
    pub fn event(&self, panel: &str) -> Event {
        Event::ThresholdCrossed {
            panel: panel.to_string(),
            level: self.level,
            direction: self.direction,
            value: self.value,
            threshold: self.threshold,
            at: self.at,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Normal,
    Bad,
    /// Clearly back since `since` (with that reading's value), not yet for long enough.
    Settling {
        since: DateTime<Utc>,
        value: f64,
    },
}

/// Follows one panel's readings.
#[derive(Debug, Clone)]
pub struct Detector {
    rule: Rule,
    states: [State; 2],
    last: Option<DateTime<Utc>>,
}

impl Detector {
    pub fn new(rule: Rule) -> Detector {
        Detector {
            rule,
            states: [State::Normal; 2],
            last: None,
        }
    }

    /// Feeds one reading; returns the crossings it completes (warn before crit when going bad,
    /// crit before warn when coming back). Missing values (NaN) and readings older than the
    /// last one change nothing.
    pub fn feed(&mut self, at: DateTime<Utc>, value: f64) -> Vec<Crossing> {
        // ±Inf is a reading like any other (the panel shows it at its level); only NaN says
        // nothing, on the screen and here alike.
        if value.is_nan() || self.last.is_some_and(|last| at < last) {
            return Vec::new();
        }
        self.last = Some(at);
        let mut out = Vec::new();
        let levels = [(Level::Warn, self.rule.warn), (Level::Crit, self.rule.crit)];
        for (i, (level, threshold)) in levels.into_iter().enumerate() {
            let Some(threshold) = threshold.filter(|t| t.is_finite()) else {
                continue;
            };
            if let Some(c) = self.step(i, level, threshold, at, value) {
                out.push(c);
            }
        }
        if out.len() == 2 && out[0].direction == self.back() {
            out.swap(0, 1);
        }
        out
    }

    fn bad_way(&self) -> Direction {
        match self.rule.worse {
            Worse::Above => Direction::Up,
            Worse::Below => Direction::Down,
        }
    }

    fn back(&self) -> Direction {
        match self.rule.worse {
            Worse::Above => Direction::Down,
            Worse::Below => Direction::Up,
        }
    }

    fn step(
        &mut self,
        i: usize,
        level: Level,
        threshold: f64,
        at: DateTime<Utc>,
        value: f64,
    ) -> Option<Crossing> {
        let band = self.rule.hysteresis.unwrap_or(threshold.abs() * 0.05).abs();
        let (bad, clear) = match self.rule.worse {
            Worse::Above => (value >= threshold, value < threshold - band),
            Worse::Below => (value <= threshold, value > threshold + band),
        };
        let crossing = |at, direction, value| Crossing {
            at,
            detected: at,
            level,
            direction,
            value,
            threshold,
        };
        match self.states[i] {
            State::Normal if bad => {
                self.states[i] = State::Bad;
                Some(crossing(at, self.bad_way(), value))
            }
            State::Normal => None,
            State::Bad if clear => {
                self.states[i] = State::Settling { since: at, value };
                self.settled(i, at, crossing(at, self.back(), value))
            }
            State::Bad => None,
            State::Settling { since, value: v } if clear => {
                self.settled(i, at, crossing(since, self.back(), v))
            }
            State::Settling { .. } => {
                self.states[i] = State::Bad;
                None
            }
        }
    }

    /// Records the recovery once the value has been clearly back for `min_duration`.
    fn settled(&mut self, i: usize, now: DateTime<Utc>, mut c: Crossing) -> Option<Crossing> {
        let waited = (now - c.at).to_std().unwrap_or_default();
        if waited < self.rule.min_duration {
            return None;
        }
        self.states[i] = State::Normal;
        c.detected = now;
        Some(c)
    }
}

/// All crossings in a series of readings (time order), from a normal start.
pub fn detect(rule: Rule, readings: &[(DateTime<Utc>, f64)]) -> Vec<Crossing> {
    let mut d = Detector::new(rule);
    readings.iter().flat_map(|(t, v)| d.feed(*t, *v)).collect()
}
