//! What the console's queries cost follows what is on screen (issue 34). The view reports how
//! each panel is shown (`Msg::Showing`); `update` fetches by it:
//!
//! - a chart gets range queries at its plot's resolution, as always;
//! - a one-row panel (the compact form) a coarse range for its sparkline, and otherwise one
//!   instant query per refresh for its value;
//! - a panel not on screen no range query at all: its latest value is read at
//!   [`hidden_every`], in instant queries that read up to [`crate::metrics::group::MAX_PANELS`]
//!   panels each (each panel's worst series only), so its threshold crossings are still
//!   recorded.
//!
//! Hidden panels' reads are spread evenly over their round ([`Spread`]): a dashboard of a
//! thousand panels sends one group every few seconds, never all its groups at once.
//!
//! A panel that comes into view is due at once. Until the view has reported anything (the
//! first frame), every panel counts as a chart.

use crate::metrics::group::MAX_PANELS;
use crate::ui::layout::Showing;
use chrono::{DateTime, Utc};
use std::collections::BTreeSet;
use std::time::Duration;

/// Hidden panels' values are read no more often than this (nor more often than the refresh).
pub const HIDDEN_MIN: Duration = Duration::from_secs(30);
/// Nor less often than this: a hidden panel's crossing is recorded within it.
pub const HIDDEN_MAX: Duration = Duration::from_secs(300);

/// How often a hidden panel's latest value is read, with `hidden` panels off screen and
/// `shown` on it: hidden panels together are read at most half as often as the panels on
/// screen are (each once every `hidden / (shown / 2)` refreshes), so what a big dashboard
/// costs Prometheus follows the screen, not the dashboard; never more often than
/// [`HIDDEN_MIN`], never less often than [`HIDDEN_MAX`].
pub fn hidden_every(refresh: Duration, hidden: usize, shown: usize) -> Duration {
    let per_refresh = (shown.max(1) as f64 / 2.0).max(1.0);
    let every = refresh.mul_f64((hidden as f64 / per_refresh).max(1.0));
    every.clamp(refresh.max(HIDDEN_MIN), HIDDEN_MAX.max(refresh))
}

/// The fetching side of what is on screen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cost {
    /// How each panel is shown, as the view last reported (`None`: not reported yet).
    pub showing: Option<Vec<Showing>>,
    /// Queries that cannot be read in a group (the server refused the group's query: a scalar
    /// query, say): their panels are read one by one when hidden.
    pub solo: BTreeSet<String>,
    /// Panels whose values a group in flight reads.
    pub grouped: BTreeSet<usize>,
    /// Group queries in flight.
    pub groups: usize,
    /// Requests sent by kind since start (counted by tests and the scale benchmark).
    pub sent: Sent,
    /// How often hidden panels are read now ([`hidden_every`]; zero until the first schedule).
    pub hidden_every: Duration,
    /// How many hidden panels may be read now.
    pub spread: Spread,
}

/// A budget of hidden panels' reads, filled at the rate that reads each hidden panel once per
/// [`hidden_every`] and spent in whole groups: the reads of a round go out one group at a time,
/// evenly, instead of all at once when the round comes due (a thousand-panel dashboard sent
/// 39 groups in one burst every 253 s, and Prometheus's CPU spiked with it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spread {
    /// Reads in hand (fractions accrue between schedules).
    tokens: f64,
    /// When it was last filled (`None`: never; the first schedule gets one group at once).
    filled: Option<DateTime<Utc>>,
}

impl Spread {
    /// How many of the `due` hidden panels (of `hidden` off screen, each read once per `every`)
    /// to read at `now`: a whole group's worth or more, or every one due when fewer are; none
    /// until the budget holds that many. The budget holds at most a quarter of a round's
    /// reads (one group at least), so a console paused for a while does not burst.
    pub fn take(
        &mut self,
        due: usize,
        hidden: usize,
        every: Duration,
        now: DateTime<Utc>,
    ) -> usize {
        let group = MAX_PANELS as f64;
        let cap = group.max(hidden as f64 / 4.0);
        let rate = hidden as f64 / every.as_secs_f64().max(1.0);
        self.tokens = match self.filled {
            None => group,
            Some(at) => {
                let secs = (now - at).num_milliseconds().max(0) as f64 / 1000.0;
                (self.tokens + secs * rate).min(cap)
            }
        };
        self.filled = Some(now);
        let least = (due as f64).min(group);
        if due == 0 || self.tokens < least {
            return 0;
        }
        let whole = (self.tokens / group).floor() * group;
        (whole.max(least) as usize).min(due)
    }

    /// `n` hidden panels were read.
    pub fn spend(&mut self, n: usize) {
        self.tokens = (self.tokens - n as f64).max(0.0);
    }
}

/// Requests sent, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sent {
    pub range: u64,
    pub instant: u64,
    pub group: u64,
}

impl Cost {
    /// How panel `i` is shown (a chart until the view says otherwise).
    pub fn of(&self, i: usize) -> Showing {
        (self.showing.as_ref())
            .and_then(|s| s.get(i).copied())
            .unwrap_or(Showing::Chart)
    }

    /// Take the view's report; the panels that came into view (or went from a row to a chart),
    /// which are due at once (none on the first report: nothing was shown before it).
    pub fn report(&mut self, showing: Vec<Showing>) -> Vec<usize> {
        let rank = |s: Showing| match s {
            Showing::Hidden => 0,
            Showing::Row => 1,
            Showing::Chart => 2,
        };
        let before: Vec<Showing> = (0..showing.len()).map(|i| self.of(i)).collect();
        let known = self.showing.is_some();
        let raised = (showing.iter().zip(&before).enumerate())
            .filter(|(_, (now, was))| known && rank(**now) > rank(**was))
            .map(|(i, _)| i)
            .collect();
        self.showing = Some(showing);
        raised
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panels_coming_into_view_are_reported() {
        let mut c = Cost::default();
        assert_eq!(c.of(3), Showing::Chart);
        let first = c.report(vec![Showing::Chart, Showing::Row, Showing::Hidden]);
        assert!(first.is_empty(), "{first:?}");
        let next = c.report(vec![Showing::Row, Showing::Chart, Showing::Row]);
        assert_eq!(next, [1, 2]);
        assert_eq!(c.of(0), Showing::Row);
        let five = Duration::from_secs(5);
        assert_eq!(hidden_every(five, 12, 38), HIDDEN_MIN);
        assert_eq!(
            hidden_every(Duration::from_secs(60), 12, 38),
            Duration::from_secs(60)
        );
        // 962 hidden beside 38 shown: 19 hidden reads a refresh, each panel every 253 s.
        assert_eq!(hidden_every(five, 962, 38).as_secs(), 253);
        assert_eq!(hidden_every(five, 5_000, 38), HIDDEN_MAX);
    }

    /// 962 hidden panels read every 253 s, scheduled every 250 ms over three rounds: each
    /// panel's worth of reads goes out (the rate holds), one group at a time (never a burst),
    /// and the groups are spaced evenly.
    #[test]
    fn a_rounds_reads_are_spread_one_group_at_a_time() {
        let (hidden, every) = (962, Duration::from_secs(253));
        let mut spread = Spread::default();
        let t0 = chrono::Utc::now();
        let mut sent: Vec<(f64, usize)> = Vec::new();
        for tick in 0..(3 * 253 * 4) {
            let now = t0 + chrono::Duration::milliseconds(tick * 250);
            // Every panel is due (a round's worth and more waiting): the budget decides.
            let n = spread.take(hidden, hidden, every, now);
            if n > 0 {
                spread.spend(n);
                sent.push((tick as f64 / 4.0, n));
            }
        }
        let total: usize = sent.iter().map(|s| s.1).sum();
        let want = 3 * hidden;
        assert!(
            total.abs_diff(want) <= MAX_PANELS,
            "{total} reads in three rounds, not {want}"
        );
        assert!(sent.iter().all(|s| s.1 == MAX_PANELS), "{sent:?}");
        let gaps: Vec<f64> = sent.windows(2).map(|w| w[1].0 - w[0].0).collect();
        let (lo, hi) = gaps
            .iter()
            .fold((f64::MAX, 0.0_f64), |(l, h), g| (l.min(*g), h.max(*g)));
        assert!(
            hi - lo <= 0.5,
            "groups not evenly spaced: {lo} s to {hi} s apart"
        );
        // Fewer due than a group: all of them, once the budget holds as many.
        let mut few = Spread::default();
        assert_eq!(few.take(7, 962, every, t0), 7);
    }
}
