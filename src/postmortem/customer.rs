//! Customer impact as customers felt it: user requests that failed out of all made in the
//! window (from the request counters, not from attempts, which count every retry), the worst
//! minute, duplicate submissions, the backlog's peak and how long it took to drain, the lowest
//! capacity, each with its time, and the headline the status page and the severity follow.
//! A signal that never moved gets no bullet.

use super::board::{Board, instant, secs};
use super::facts::{Moment, Signals};
use super::signals::{self, Role};
use super::words;
use crate::incident::snapshot::fact;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;

/// The window over which "the worst minute" is read.
const MINUTE: f64 = 60.0;

/// A figure with the moment it refers to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    pub value: f64,
    pub text: String,
    pub at: Option<Moment>,
}

/// The backlog: its peak and when it drained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Backlog {
    pub queue: Option<String>,
    pub peak: Figure,
    /// When it fell back below its warning threshold after the peak.
    pub drained: Option<Moment>,
    pub drain_time: Option<String>,
    /// How fast it drained: the fall per minute from when it began to fall (its last reading
    /// within 1 % of its peak) to when it drained.
    pub rate: Option<Figure>,
    /// What was left at the end of the snapshot when it had not drained.
    pub left: Option<Figure>,
}

/// How bad it was for customers, in the status page's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Headline {
    #[serde(rename = "Major Outage")]
    Major,
    #[serde(rename = "Partial Outage")]
    Partial,
    #[serde(rename = "Degraded Performance")]
    Degraded,
}

impl Headline {
    /// "Major Outage", as the status page heads it.
    pub fn as_str(self) -> &'static str {
        match self {
            Headline::Major => "Major Outage",
            Headline::Partial => "Partial Outage",
            Headline::Degraded => "Degraded Performance",
        }
    }

    /// The severity the house gives an impact like this.
    pub fn severity(self) -> crate::incident::event::Severity {
        use crate::incident::event::Severity;
        match self {
            Headline::Major => Severity::Sev1,
            Headline::Partial => Severity::Sev2,
            Headline::Degraded => Severity::Sev3,
        }
    }
}

/// The customer-impact figures.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Customer {
    /// User requests made in the impact window.
    pub requests: Option<Figure>,
    /// User requests that failed in it.
    pub failed: Option<Figure>,
    /// `failed / requests`.
    pub failed_share: Option<Figure>,
    /// The highest share of user requests failing over one minute, and when.
    pub worst_minute: Option<Figure>,
    pub duplicates: Option<Figure>,
    /// Requests that gave up waiting for a database connection.
    pub acquire_timeouts: Option<Figure>,
    pub backlog: Option<Backlog>,
    /// The lowest share of instances serving, when it fell below its warning threshold.
    pub lowest_capacity: Option<Figure>,
    /// The customer-impact list, as sentences.
    pub bullets: Vec<String>,
    pub headline: Option<Headline>,
}

fn figure(value: f64, text: String, at: Option<DateTime<Utc>>, tz: Tz) -> Figure {
    Figure {
        value,
        text,
        at: at.map(|t| Moment::new(t, tz)),
    }
}

/// User requests and failed ones over `[from, to]` from the counters: failed = made − served
/// (every user request served was answered exactly once with a 2xx; the rest failed).
pub(super) fn requests(board: &Board, from: f64, to: f64) -> Option<(f64, f64)> {
    let made = signals::increase(board.fact(fact::USER_REQUESTS)?, from, to)?;
    let served = signals::increase(board.fact(fact::SERVED)?, from, to).unwrap_or(0.0);
    Some((made, (made - served).clamp(0.0, made)))
}

/// The minute (ending at a snapshot instant inside the window) with the highest failed share.
fn worst_minute(board: &Board, from: f64, to: f64) -> Option<(f64, f64)> {
    let snap = board.fact(fact::USER_REQUESTS)?;
    let mut best: Option<(f64, f64)> = None;
    for t in signals::instants(snap, from + MINUTE, to) {
        let Some((made, failed)) = requests(board, t - MINUTE, t) else {
            continue;
        };
        if made <= 0.0 {
            continue;
        }
        let share = failed / made;
        if best.is_none_or(|b| share > b.0) {
            best = Some((share, t - MINUTE / 2.0));
        }
    }
    best
}

/// Whether a panel moved past its warning threshold (or crit) in `[from, to]`.
fn moved(
    snap: &crate::incident::snapshot::PanelSnapshot,
    from: f64,
    to: f64,
) -> Option<(f64, f64)> {
    let worst = signals::worst_between(snap, from, to)?;
    let t = snap.warn.or(snap.crit)?;
    signals::is_bad(snap, worst.0, t).then_some(worst)
}

/// How fast a backlog drained, per minute: its fall from the moment it began to fall (the
/// last reading within [`PLATEAU`] of its peak, `peak` at `at`) to `drained`. Measured from the
/// peak itself, a backlog held near its peak for minutes before a drain began would read as
/// draining slower than it did, by an amount that depends on which reading of the plateau
/// happened to be the highest.
fn drain_rate(
    q: &crate::incident::snapshot::PanelSnapshot,
    peak: f64,
    at: f64,
    drained: f64,
) -> Option<f64> {
    let began = signals::instants(q, at, drained)
        .into_iter()
        .rfind(|t| signals::worst_at(q, *t).is_some_and(|v| v >= peak * (1.0 - PLATEAU)))
        .unwrap_or(at);
    let fell = signals::worst_at(q, began)? - signals::worst_at(q, drained)?;
    let minutes = (drained - began) / MINUTE;
    (minutes > 0.0).then(|| fell / minutes)
}

/// How close to its peak a backlog still counts as not yet draining: 1 %.
pub const PLATEAU: f64 = 0.01;

/// The customer impact over `[start, end]` (end: the last data when the impact has not ended).
/// `drained_record`: when the record saw the backlog back under its level (the crossing that
/// ended the impact), which wins over the snapshot's coarser readings so the two agree.
pub fn compute(
    board: &Board,
    peaks: &Signals,
    (start, end): (DateTime<Utc>, Option<DateTime<Utc>>),
    drained_record: Option<DateTime<Utc>>,
    planned_windows: &[(DateTime<Utc>, DateTime<Utc>)],
    notes: &[String],
    tz: Tz,
) -> Customer {
    let span = Span {
        board,
        from: secs(start),
        to: end.map(secs).unwrap_or(f64::MAX),
        tz,
    };
    let mut c = Customer::default();
    // Each part adds its figures and its bullet, in the order the list reads.
    span.failed_requests(&mut c);
    span.worst_failures(&mut c, peaks);
    span.amplification(&mut c, peaks);
    span.duplicates(&mut c);
    span.acquire_timeouts(&mut c);
    span.backlog(&mut c, drained_record);
    span.capacity(&mut c, planned_windows);
    span.pool_saturation(&mut c, peaks);
    if let Some(l) = &peaks.latency {
        c.bullets.extend(super::phrases::latency_rose(l));
    }
    // The notes are sentences already (facts::seeded_notes).
    c.bullets.extend(notes.iter().cloned());
    c.headline = headline(c.worst_minute.as_ref(), peaks);
    c
}

/// The impact window as the snapshots read it (Unix seconds, `to` unbounded while the impact
/// lasts), with the board and the timezone every figure is read and written with.
struct Span<'a> {
    board: &'a Board<'a>,
    from: f64,
    to: f64,
    tz: Tz,
}

impl Span<'_> {
    /// "07:18": how a bullet dates snapshot instant `t`.
    fn clock(&self, t: f64) -> String {
        words::clock(instant(t), self.tz)
    }

    /// User requests made and failed in the window, and the share that failed: the list's
    /// first bullet, from the counters rather than attempts.
    fn failed_requests(&self, c: &mut Customer) {
        let tz = self.tz;
        let Some((made, failed)) = requests(self.board, self.from, self.to.min(f64::MAX)) else {
            return;
        };
        c.requests = Some(figure(made, words::number(made, 0), None, tz));
        c.failed = Some(figure(failed, words::number(failed, 0), None, tz));
        if made > 0.0 {
            let share = failed / made;
            c.failed_share = Some(figure(share, words::percent(share), None, tz));
            c.bullets.push(format!(
                "{} of {} user requests failed ({}).",
                words::number(failed, 0),
                words::number(made, 0),
                words::percent(share)
            ));
        }
    }

    /// The worst minute's share of user requests failing; without the counters, the share of
    /// attempts failing at the peak, said to count retries.
    fn worst_failures(&self, c: &mut Customer, peaks: &Signals) {
        if let Some((share, t)) = worst_minute(self.board, self.from, self.to) {
            c.worst_minute = Some(figure(
                share,
                words::percent(share),
                Some(instant(t)),
                self.tz,
            ));
            if share > 0.0 {
                c.bullets.push(format!(
                    "In the worst minute ({}), {} of user requests failed.",
                    self.clock(t),
                    words::percent(share)
                ));
            }
        } else if let Some(e) = &peaks.error_ratio
            && e.value > 0.0
        {
            c.bullets.push(format!(
                "At the peak, approximately {} of attempts failed, retries included ({}).",
                e.text, e.at.clock
            ));
        }
    }

    /// How many attempts each request made at the peak, when retry amplification moved past
    /// its level.
    fn amplification(&self, c: &mut Customer, peaks: &Signals) {
        if let Some(a) = &peaks.retry_amplification
            && self
                .board
                .role(Role::RetryAmplification)
                .is_some_and(|s| moved(s, self.from, self.to).is_some())
        {
            c.bullets.push(super::phrases::amplification(a));
        }
    }

    /// How many times fact `name` counted up in the window, when at least once.
    fn counted(&self, name: &str) -> Option<f64> {
        let series = self.board.fact(name)?;
        signals::increase(series, self.from, self.to).filter(|n| *n >= 1.0)
    }

    /// Duplicate submissions written in the window, when there was at least one.
    fn duplicates(&self, c: &mut Customer) {
        if let Some(d) = self.counted(fact::DUPLICATES) {
            c.duplicates = Some(figure(d, words::number(d, 0), None, self.tz));
            c.bullets.push(format!(
                "{} duplicate {} written.",
                words::number(d, 0),
                if d.round() == 1.0 {
                    "submission was"
                } else {
                    "submissions were"
                }
            ));
        }
    }

    /// Requests that gave up waiting for a database connection, when at least one did (a
    /// figure for the other sections; no bullet of its own).
    fn acquire_timeouts(&self, c: &mut Customer) {
        if let Some(n) = self.counted(fact::ACQUIRE_TIMEOUTS) {
            c.acquire_timeouts = Some(figure(n, words::number(n, 0), None, self.tz));
        }
    }

    /// The backlog, when the queue-depth panel moved past its level from the impact's start
    /// on: its peak, when it drained (the record's moment `drained_record` winning over the
    /// snapshot's readings) and how fast, or what was still waiting at the end.
    fn backlog(&self, c: &mut Customer, drained_record: Option<DateTime<Utc>>) {
        let tz = self.tz;
        let Some(q) = self.board.role(Role::QueueDepth) else {
            return;
        };
        let Some((peak, at)) = moved(q, self.from, f64::MAX) else {
            return;
        };
        let warn = q.warn.or(q.crit).unwrap_or(0.0);
        let after: Vec<f64> = signals::instants(q, at, f64::MAX);
        let drained = drained_record.map(secs).filter(|t| *t > at).or_else(|| {
            after
                .into_iter()
                .find(|t| signals::worst_at(q, *t).is_some_and(|v| v < warn))
        });
        let queue = match q.series.as_slice() {
            [one] => one.labels.get("queue").cloned(),
            _ => None,
        };
        let last = signals::instants(q, at, f64::MAX).last().copied();
        let rate = drained.and_then(|t| drain_rate(q, peak, at, t));
        let b = Backlog {
            queue,
            peak: figure(peak, words::number(peak, 0), Some(instant(at)), tz),
            drained: drained.map(|t| Moment::new(instant(t), tz)),
            drain_time: drained.map(|t| words::between_minutes(instant(at), instant(t))),
            rate: rate.map(|r| figure(r, words::number(r, 0), None, tz)),
            left: match (drained, last) {
                (None, Some(l)) => signals::worst_at(q, l)
                    .map(|v| figure(v, words::number(v, 0), Some(instant(l)), tz)),
                _ => None,
            },
        };
        c.bullets.push(self.backlog_bullet(&b, warn, at));
        c.backlog = Some(b);
    }

    /// The backlog's bullet: its peak at `at`, then how it drained below `warn` or that it
    /// had not.
    fn backlog_bullet(&self, b: &Backlog, warn: f64, at: f64) -> String {
        let name = match &b.queue {
            Some(q) => format!("The {q} backlog"),
            None => "The backlog".into(),
        };
        let tail = match (&b.drained, &b.drain_time, &b.left) {
            (Some(d), Some(dt), _) => format!(
                "and drained below {} by {}, {dt} after its peak{}",
                words::number(warn, 0),
                d.clock,
                b.rate
                    .as_ref()
                    .map(|r| format!(", at about {} a minute", r.text))
                    .unwrap_or_default()
            ),
            (_, _, Some(l)) => format!(
                "and had not drained by {} ({} waiting)",
                l.at.as_ref()
                    .map_or("the end of the record", |m| m.clock.as_str()),
                l.text
            ),
            _ => "and had not drained by the end of the record".into(),
        };
        format!(
            "{name} peaked at {} waiting ({}) {tail}.",
            b.peak.text,
            self.clock(at)
        )
    }

    /// The lowest share of instances serving, when capacity fell past its level, said to be
    /// the plan's when it fell during one of our batch restarts (`planned_windows`).
    fn capacity(&self, c: &mut Customer, planned_windows: &[(DateTime<Utc>, DateTime<Utc>)]) {
        let Some(cap) = self.board.role(Role::Capacity) else {
            return;
        };
        let Some((low, at)) = moved(cap, self.from, self.to) else {
            return;
        };
        c.lowest_capacity = Some(figure(low, words::percent(low), Some(instant(at)), self.tz));
        let during = planned_windows
            .iter()
            .any(|(a, b)| instant(at) >= *a && instant(at) <= *b);
        c.bullets.push(format!(
            "Capacity fell to {} of instances serving ({}){}.",
            words::percent(low),
            self.clock(at),
            if during {
                ", during the planned batch restart"
            } else {
                ""
            }
        ));
    }

    /// The connection pool's peak saturation, when it moved past its level.
    fn pool_saturation(&self, c: &mut Customer, peaks: &Signals) {
        if let Some(p) = &peaks.pool_saturation
            && self
                .board
                .role(Role::PoolSaturation)
                .is_some_and(|s| moved(s, self.from, self.to).is_some())
        {
            c.bullets.push(super::phrases::peak(
                "Database connection-pool saturation",
                p,
            ));
        }
    }
}

/// The headline: from the users' failures when the counters tell them (`worst_minute`), else
/// the attempts.
fn headline(worst_minute: Option<&Figure>, peaks: &Signals) -> Option<Headline> {
    let share = worst_minute
        .map(|f| f.value)
        .or(peaks.error_ratio.as_ref().map(|e| e.value));
    share.map(|s| {
        if s >= 0.5 {
            Headline::Major
        } else if s >= 0.05 {
            Headline::Partial
        } else {
            Headline::Degraded
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::postmortem::signals::tests::snap;

    /// A backlog held near its peak for five minutes before it fell by 100 a minute: the rate
    /// is the fall's, whichever reading of the plateau was the highest.
    #[test]
    fn a_drain_is_timed_from_when_the_backlog_began_to_fall() {
        let minute = |m: f64| m * MINUTE;
        let mut points: Vec<[f64; 2]> = (0..=5)
            .map(|m| [minute(m as f64), if m == 1 { 10_000.0 } else { 9_950.0 }])
            .collect();
        points.extend((1..=90).map(|m| [minute(5.0 + m as f64), 9_950.0 - 100.0 * m as f64]));
        let q = snap("Queue depth", "count", vec![points]);
        let drained = minute(95.0);
        let rate = drain_rate(&q, 10_000.0, minute(1.0), drained).unwrap();
        assert!((rate - 100.0).abs() < 1e-9, "{rate}");
        // Timed from the peak, it would have read 9,000 over 94 minutes: 95.7 a minute.
        let from_peak = (10_000.0 - 1_000.0) / 94.0;
        assert!((rate - from_peak).abs() > 4.0);
    }
}
