//! The replay cursor: a simulated "now" between the incident's first record and its end,
//! moved by wall time while playing, and by seeks. Pure: the wall time comes in as an argument.

use chrono::{DateTime, Utc};
use std::time::Duration;

/// The speeds `+` and `-` step through, in replay seconds per wall second.
pub const SPEEDS: [f64; 12] = [
    1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0,
];
/// The default speed: a two-hour incident plays in two minutes.
pub const DEFAULT_SPEED: f64 = 60.0;
/// The slowest and fastest speed `--speed` accepts.
pub const MIN_SPEED: f64 = crate::clock::REPLAY_SPEED.min;
pub const MAX_SPEED: f64 = crate::clock::REPLAY_SPEED.max;

/// Checks a speed given on the command line.
pub fn check_speed(speed: f64) -> Result<f64, crate::clock::BadSpeed> {
    crate::clock::check_speed(speed, crate::clock::REPLAY_SPEED)
}

/// Where the replay is, how fast it moves, and whether it moves.
#[derive(Debug, Clone, PartialEq)]
pub struct Cursor {
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    at: DateTime<Utc>,
    speed: f64,
    playing: bool,
}

impl Cursor {
    /// A cursor at `start`, playing at `speed` (an incident of one instant starts paused).
    pub fn new(start: DateTime<Utc>, end: DateTime<Utc>, speed: f64) -> Cursor {
        let end = end.max(start);
        Cursor {
            start,
            end,
            at: start,
            speed: speed.clamp(MIN_SPEED, MAX_SPEED),
            playing: start < end,
        }
    }

    pub fn at(&self) -> DateTime<Utc> {
        self.at
    }

    pub fn start(&self) -> DateTime<Utc> {
        self.start
    }

    pub fn end(&self) -> DateTime<Utc> {
        self.end
    }

    pub fn speed(&self) -> f64 {
        self.speed
    }

    pub fn playing(&self) -> bool {
        self.playing
    }

    /// Moves the cursor by `wall` times the speed while playing; stops at the end. Returns
    /// whether it moved.
    pub fn advance(&mut self, wall: Duration) -> bool {
        if !self.playing {
            return false;
        }
        let micros = (wall.as_secs_f64() * self.speed * 1e6).min(1e15) as i64;
        let before = self.at;
        self.at = self.clamp(self.at + chrono::Duration::microseconds(micros));
        if self.at >= self.end {
            self.playing = false;
        }
        self.at != before
    }

    /// Play, or pause. Playing at the end starts again from the beginning.
    pub fn toggle(&mut self) {
        if self.playing {
            self.playing = false;
        } else if self.start < self.end {
            if self.at >= self.end {
                self.at = self.start;
            }
            self.playing = true;
        }
    }

    /// Moves by `by` (negative: back), within the incident. Seeking keeps playing or paused.
    pub fn seek(&mut self, by: chrono::Duration) {
        self.at = self.clamp(self.at + by);
        if self.at >= self.end {
            self.playing = false;
        }
    }

    /// To the incident's first record.
    pub fn home(&mut self) {
        self.at = self.start;
    }

    /// To the incident's end; playing stops there.
    pub fn to_end(&mut self) {
        self.at = self.end;
        self.playing = false;
    }

    /// The next speed up the ladder.
    pub fn faster(&mut self) {
        if let Some(s) = SPEEDS.iter().find(|s| **s > self.speed * 1.0001) {
            self.speed = *s;
        }
    }

    /// The next speed down the ladder.
    pub fn slower(&mut self) {
        if let Some(s) = SPEEDS.iter().rev().find(|s| **s < self.speed * 0.9999) {
            self.speed = *s;
        }
    }

    fn clamp(&self, t: DateTime<Utc>) -> DateTime<Utc> {
        t.clamp(self.start, self.end)
    }
}

/// A speed as the status bar shows it: `60×`, `0.5×`.
pub fn speed_text(speed: f64) -> String {
    if speed.fract() == 0.0 {
        format!("{speed:.0}×")
    } else {
        format!("{speed:.1}×")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn two_hours() -> Cursor {
        Cursor::new(t("2026-11-29T14:00:00Z"), t("2026-11-29T16:00:00Z"), 60.0)
    }

    #[test]
    fn playing_moves_by_wall_time_times_speed_and_stops_at_the_end() {
        let mut c = two_hours();
        assert!(c.playing());
        assert!(c.advance(Duration::from_millis(500)));
        assert_eq!(c.at(), t("2026-11-29T14:00:30Z"));
        // Two minutes of wall time play the whole two hours, and no further.
        for _ in 0..1000 {
            c.advance(Duration::from_millis(250));
        }
        assert_eq!(c.at(), c.end());
        assert!(!c.playing(), "it stops at the end");
        assert!(!c.advance(Duration::from_secs(1)));
    }

    #[test]
    fn paused_does_not_move_and_play_at_the_end_starts_over() {
        let mut c = two_hours();
        c.toggle();
        assert!(!c.playing());
        assert!(!c.advance(Duration::from_secs(10)));
        assert_eq!(c.at(), c.start());
        c.to_end();
        c.toggle();
        assert!(c.playing());
        assert_eq!(c.at(), c.start(), "play at the end starts again");
    }

    #[test]
    fn seeks_are_clamped_to_the_incident() {
        let mut c = two_hours();
        c.toggle();
        c.seek(chrono::Duration::minutes(-1));
        assert_eq!(c.at(), c.start());
        c.seek(chrono::Duration::minutes(10));
        assert_eq!(c.at(), t("2026-11-29T14:10:00Z"));
        assert!(!c.playing(), "seeking keeps paused");
        c.seek(chrono::Duration::hours(5));
        assert_eq!(c.at(), c.end());
        c.seek(chrono::Duration::minutes(-1));
        assert_eq!(c.at(), t("2026-11-29T15:59:00Z"));
        c.home();
        assert_eq!(c.at(), c.start());
    }

    #[test]
    fn speed_steps_along_the_ladder_and_stays_in_bounds() {
        let mut c = two_hours();
        c.faster();
        assert_eq!(c.speed(), 120.0);
        c.slower();
        c.slower();
        assert_eq!(c.speed(), 30.0);
        for _ in 0..50 {
            c.slower();
        }
        assert_eq!(c.speed(), SPEEDS[0]);
        for _ in 0..50 {
            c.faster();
        }
        assert_eq!(c.speed(), *SPEEDS.last().unwrap());
        // A speed off the ladder steps to its neighbours.
        let mut c = Cursor::new(c.start(), c.end(), 45.0);
        c.faster();
        assert_eq!(c.speed(), 60.0);
        let mut c = Cursor::new(c.start(), c.end(), 45.0);
        c.slower();
        assert_eq!(c.speed(), 30.0);
    }

    #[test]
    fn speeds_from_the_command_line_are_checked() {
        assert_eq!(check_speed(60.0), Ok(60.0));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e9] {
            let err = check_speed(bad).unwrap_err().to_string();
            assert!(err.contains("--speed"), "{err}");
        }
    }

    #[test]
    fn an_incident_of_one_instant_starts_paused() {
        let at = t("2026-11-29T14:00:00Z");
        let mut c = Cursor::new(at, at, 60.0);
        assert!(!c.playing());
        c.toggle();
        assert!(!c.playing());
        assert_eq!(speed_text(60.0), "60×");
        assert_eq!(speed_text(0.5), "0.5×");
    }
}
