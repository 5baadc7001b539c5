//! A signal read over a window on each side of a step, never from one sample: the median of
//! its readings over at least a minute before and after (three minutes for a signal that
//! swings, such as a crash loop's instances going from none to all serving every minute), the
//! signal's own variability before the step (the noise floor a change must clear to count),
//! and for a backlog its rate of change, which is how a drain is judged.

use super::board::{Board, secs};
use super::effects::value_at;
use crate::incident::snapshot::{PanelSnapshot, fact};
use chrono::{DateTime, Utc};

/// Each side of a step is read over at least this long.
pub const WINDOW: f64 = 60.0;
/// Each side of a signal that swings is read over this long.
pub const SWINGING_WINDOW: f64 = 180.0;
/// How far before a step the signal's own variability is read.
const BASELINE: f64 = 180.0;
/// A signal swings when it crosses the middle of its range this often in the baseline, by a
/// range of at least this share of its size.
const SWINGS: usize = 4;
const SWING_RANGE: f64 = 0.3;

/// A signal on each side of an instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Read {
    pub before: f64,
    pub after: f64,
    /// The signal's own variability before the instant: the spread (interquartile range) of
    /// its readings; a change within it is no change.
    pub noise: f64,
    /// Seconds read on each side.
    pub window: f64,
    /// The windows read: `[from, to]` before and after.
    pub before_span: (f64, f64),
    pub after_span: (f64, f64),
}

impl Read {
    /// True when the change between the windows is larger than the signal's own variability.
    pub fn beyond_noise(&self) -> bool {
        (self.after - self.before).abs() > self.noise
    }
}

/// The median of `v` (the mean of the two middle values for an even count).
pub fn median(v: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The interquartile range of `v` (0 for fewer than two values).
pub fn spread(v: &[f64]) -> f64 {
    let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < 2 {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let x = p * (v.len() - 1) as f64;
        let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (x - lo as f64)
    };
    q(0.75) - q(0.25)
}

/// True when `v` swings: it crosses the middle of its range at least [`SWINGS`] times, and the
/// range is a real share of its size.
pub fn swings(v: &[f64]) -> bool {
    let (lo, hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
            (l.min(*x), h.max(*x))
        });
    if hi.is_nan() || lo.is_nan() || hi <= lo || hi - lo < SWING_RANGE * hi.abs().max(lo.abs()) {
        return false;
    }
    let mid = (hi + lo) / 2.0;
    let sides: Vec<bool> = v.iter().filter(|x| **x != mid).map(|x| *x > mid).collect();
    sides.windows(2).filter(|w| w[0] != w[1]).count() >= SWINGS
}

/// The least-squares slope of `(t, v)` points, per minute (`None` under two instants).
pub fn slope(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let (mt, mv) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), (t, v)| (a + t / n, b + v / n));
    let (num, den) = points.iter().fold((0.0, 0.0), |(a, b), (t, v)| {
        (a + (t - mt) * (v - mv), b + (t - mt) * (t - mt))
    });
    (den > 0.0).then(|| num / den * 60.0)
}

/// The readings of a panel (as the draft reads it: the median series of a latency panel,
/// else the worst) at each of its instants in `[from, to]`.
pub fn readings(snap: &PanelSnapshot, from: f64, to: f64) -> Vec<(f64, f64)> {
    super::signals::instants(snap, from, to)
        .into_iter()
        .filter_map(|t| value_at(snap, t).map(|v| (t, v)))
        .collect()
}

/// A span `[from, to]` in seconds.
type Span = (f64, f64);

/// The windows a step is read over, from the signal's readings before it (`base`): a minute,
/// three for a signal that swings, before `t0`, and as long up to `after` (moved on to a full
/// window, never past `limit`, from `t0` at the earliest).
fn spans(base: &[f64], t0: f64, after: f64, limit: f64) -> (f64, Span, Span) {
    let w = if swings(base) {
        SWINGING_WINDOW
    } else {
        WINDOW
    };
    let after = after.max(t0 + w).min(limit.max(t0));
    (w, (t0 - w, t0), ((after - w).max(t0), after))
}

/// A panel's level on each side of `t0`: medians over the windows, `after` moved on to a full
/// window when the signal swings (never past `limit`).
pub fn level(snap: &PanelSnapshot, t0: f64, after: f64, limit: f64) -> Option<Read> {
    let values = |r: Vec<(f64, f64)>| r.into_iter().map(|p| p.1).collect::<Vec<f64>>();
    let base = values(readings(snap, t0 - BASELINE, t0));
    let (window, b, a) = spans(&base, t0, after, limit);
    let before_v = values(readings(snap, b.0, b.1));
    Some(Read {
        before: median(&before_v)?,
        after: median(&values(readings(snap, a.0, a.1)))?,
        noise: spread(&before_v),
        window,
        before_span: b,
        after_span: a,
    })
}

/// A backlog's rate of change on each side of `t0`, per minute (negative: it drains). The
/// noise floor is the spread of the rate over the baseline's minutes.
pub fn rate(snap: &PanelSnapshot, t0: f64, after: f64, limit: f64) -> Option<Read> {
    // A slope wants two minutes of readings on each side.
    let window = 2.0 * WINDOW;
    let after = after.max(t0 + window).min(limit.max(t0));
    let (b, a) = ((t0 - window, t0), ((after - window).max(t0), after));
    let before = slope(&readings(snap, b.0, b.1))?;
    let after_rate = slope(&readings(snap, a.0, a.1))?;
    let minutes: Vec<f64> = (1..=3)
        .filter_map(|k| {
            let end = t0 - 60.0 * (k - 1) as f64;
            slope(&readings(snap, end - 60.0, end))
        })
        .collect();
    Some(Read {
        before,
        after: after_rate,
        noise: spread(&minutes),
        window,
        before_span: b,
        after_span: a,
    })
}

/// The share of user requests that failed over `[from, to]`, from the request counters.
pub fn failed_share(board: &Board, from: f64, to: f64) -> Option<f64> {
    let (made, failed) = super::customer::requests(board, from, to)?;
    (made > 0.0).then(|| failed / made)
}

/// The share of user requests failing on each side of `t0`, when the counters were taken: the
/// windows as for a panel, the noise the spread of the minutes' shares in the baseline.
pub fn user_failures(board: &Board, t0: f64, after: f64, limit: f64) -> Option<Read> {
    let snap = board.fact(fact::USER_REQUESTS)?;
    let minutes: Vec<f64> = super::signals::instants(snap, t0 - BASELINE + WINDOW, t0)
        .into_iter()
        .filter_map(|t| failed_share(board, t - WINDOW, t))
        .collect();
    let (window, b, a) = spans(&minutes, t0, after, limit);
    // The counters are read between their own readings: the spans say which. The window
    // before starts at the last reading at or before its start, so it covers its minute
    // whatever the snapshot's step (a long record's step is coarser); the window after never
    // reaches back before the step.
    let read = |(from, to): Span| {
        let at = super::signals::instants(snap, from, to);
        Some((*at.first()?, *at.last()?))
    };
    let earlier = super::signals::instants(snap, f64::MIN, b.0)
        .last()
        .copied();
    let (b, a) = (read(b)?, read(a)?);
    let b = (earlier.unwrap_or(b.0).min(b.0), b.1);
    Some(Read {
        before: failed_share(board, b.0, b.1)?,
        after: failed_share(board, a.0, a.1)?,
        noise: spread(&minutes),
        window,
        before_span: b,
        after_span: a,
    })
}

/// User requests per second over the two minutes before `t`, from the counters (over the
/// span between the first and last readings inside, so a window's edges do not count short).
pub fn traffic(board: &Board, t: DateTime<Utc>) -> Option<f64> {
    let t = secs(t);
    let snap = board.fact(fact::USER_REQUESTS)?;
    let at = super::signals::instants(snap, t - 2.0 * WINDOW, t);
    let (first, last) = (*at.first()?, *at.last()?);
    let made = super::signals::increase(snap, first, last)?;
    (last > first).then(|| made / (last - first))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_spreads_and_swings() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert!((spread(&[1.0, 2.0, 3.0, 4.0, 5.0]) - 2.0).abs() < 1e-9);
        // A crash loop's instances: none, a third, all, most serving, every minute.
        let crash = [
            1.0, 1.0, 0.0, 0.33, 1.0, 0.83, 0.83, 0.0, 0.17, 0.83, 1.0, 1.0, 0.0,
        ];
        assert!(swings(&crash));
        assert!(spread(&crash) > 0.5);
        // A steady error ratio with a little noise does not swing.
        assert!(!swings(&[0.58, 0.57, 0.59, 0.58, 0.56, 0.58, 0.57, 0.59]));
        // A falling one neither.
        assert!(!swings(&[0.8, 0.7, 0.6, 0.5, 0.4, 0.3]));
    }

    #[test]
    fn a_slope_is_per_minute() {
        let drain: Vec<(f64, f64)> = (0..13)
            .map(|i| (i as f64 * 5.0, 1000.0 - i as f64 * 25.0))
            .collect();
        assert!((slope(&drain).unwrap() + 300.0).abs() < 1e-6);
        assert_eq!(slope(&[(0.0, 1.0)]), None);
    }
}
