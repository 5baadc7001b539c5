//! One dashboard panel: its configuration, the series it holds, its querying state
//! ([`PanelFetch`]: the grid held, the one query in flight) and the honest state it shows
//! (loading, fresh, stale, partial, failing).

use crate::config::{BadWhen, PanelConfig};
use crate::metrics::fetch::{PanelFetch, Ticket};
use crate::metrics::series::{
    KeepWorst, MAX_PANEL_POINTS, MAX_PANEL_SERIES, cap_points, keep_worst, top_n, worst_of,
};
use crate::metrics::{QueryAnswer, Series, SourceError};
use chrono::{DateTime, Utc};

/// What the panel shows about its data. Never a colour alone: the view adds a symbol and a word.
#[derive(Debug, Clone, PartialEq)]
pub enum PanelState {
    /// No answer yet.
    Loading,
    /// The last answer is recent and complete.
    Fresh,
    /// The last good answer is older than it should be (refresh paused, source slow).
    Stale { age_secs: i64 },
    /// The last answer came with warnings: it may be missing data.
    Partial { warning: String },
    /// The last query failed; older data may still be drawn.
    Failing { reason: String },
    /// The query uses a variable without a value: it is not sent (the reason says which).
    Unset { reason: String },
}

/// A panel and its data.
#[derive(Debug, Clone)]
pub struct Panel {
    pub config: PanelConfig,
    pub series: Vec<Series>,
    pub warnings: Vec<String>,
    pub fetch: PanelFetch,
    /// The value of each series now (from an instant query), newer than the step grid.
    pub latest: Vec<Series>,
    /// An instant query of this panel is in flight (it counts as the panel's one query).
    pub latest_in_flight: bool,
    pub last_ok: Option<DateTime<Utc>>,
    pub last_error: Option<(DateTime<Utc>, String)>,
    /// When the next refresh is due (`None`: now).
    pub next_due: Option<DateTime<Utc>>,
    /// Bytes received, for the fetch-size benchmark.
    pub bytes_received: u64,
    /// Series of the last answer not kept (the panel holds its worst [`MAX_PANEL_SERIES`]).
    pub omitted: usize,
    /// Points were dropped to stay within [`MAX_PANEL_POINTS`] (until the range changes).
    pub points_capped: bool,
    /// What an answer with no series means and what to do (`no series for X · warroom
    /// discover`): the metric the query needs. Read from the query when first asked for (an
    /// answer came back empty), not on the way to the first frame: parsing PromQL is not free.
    empty_hint: std::sync::OnceLock<Option<String>>,
    /// The panel as configured, when its query, title or legend uses `[[variable]]`s
    /// (`config` is then what is sent and shown: the template with their values).
    pub template: Option<PanelConfig>,
    /// Why the query is not sent: a variable it uses has no value (yet).
    pub unset: Option<String>,
}

impl Panel {
    pub fn new(config: PanelConfig) -> Self {
        Panel {
            empty_hint: std::sync::OnceLock::new(),
            config,
            series: Vec::new(),
            warnings: Vec::new(),
            fetch: PanelFetch::default(),
            latest: Vec::new(),
            latest_in_flight: false,
            last_ok: None,
            last_error: None,
            next_due: None,
            bytes_received: 0,
            omitted: 0,
            points_capped: false,
            template: None,
            unset: None,
        }
    }

    /// The panel, using variables: nothing is sent until they resolve.
    pub fn templated(config: PanelConfig) -> Self {
        let mut panel = Panel::new(config);
        panel.template = Some(panel.config.clone());
        panel.unset = Some("the variables are being resolved against the Prometheus".into());
        panel
    }

    /// Send and show the template with the variables' values (`Ok`), or send nothing (`Err`:
    /// why). A changed query starts afresh: its data are the old query's.
    pub fn set_filled(&mut self, filled: Result<PanelConfig, String>) {
        match filled {
            Ok(c) if self.unset.is_none() && c.query == self.config.query => self.config = c,
            Ok(c) => {
                self.config = c;
                self.unset = None;
                self.empty_hint = std::sync::OnceLock::new();
                self.reset();
            }
            Err(why) => {
                self.unset = Some(why);
                self.reset();
            }
        }
    }

    /// What an empty answer of this panel says ([`crate::metrics::discover::empty_hint`]).
    pub fn empty_hint(&self) -> Option<&str> {
        self.empty_hint
            .get_or_init(|| crate::metrics::discover::empty_hint_for_query(&self.config.query))
            .as_deref()
    }

    /// The panel, with its empty answer's hint known already (discovery knows what it needs).
    pub fn with_empty_hint(config: PanelConfig, hint: String) -> Self {
        let panel = Panel::new(config);
        let _ = panel.empty_hint.set(Some(hint));
        panel
    }

    /// Which series this panel keeps of an answer: its worst, as it reads bad.
    pub fn keep(&self) -> KeepWorst {
        KeepWorst {
            higher_is_worse: self.config.bad_when == BadWhen::Above,
            cap: MAX_PANEL_SERIES,
        }
    }

    /// How many series the panel's query matched, when that is more than it keeps.
    pub fn matched(&self) -> Option<usize> {
        (self.omitted > 0).then(|| self.shown().len() + self.omitted)
    }

    /// The state to show at `now`, given the refresh interval.
    pub fn state(&self, now: DateTime<Utc>, refresh_secs: i64) -> PanelState {
        if let Some(reason) = &self.unset {
            return PanelState::Unset {
                reason: reason.clone(),
            };
        }
        if let Some((at, reason)) = &self.last_error
            && self.last_ok.is_none_or(|ok| *at >= ok)
        {
            return PanelState::Failing {
                reason: reason.clone(),
            };
        }
        if self.last_ok.is_none() {
            return PanelState::Loading;
        }
        if let Some(age_secs) = self.value_age(now, refresh_secs) {
            return PanelState::Stale { age_secs };
        }
        match self.warnings.first() {
            Some(w) => PanelState::Partial { warning: w.clone() },
            None => PanelState::Fresh,
        }
    }

    /// How old the last good answer is at `now`, when it is older than two refreshes (what
    /// makes a panel stale): a value that old is shown with its age, never as "ok", whatever
    /// the panel's state (a failing source keeps the last values on screen).
    pub fn value_age(&self, now: DateTime<Utc>, refresh_secs: i64) -> Option<i64> {
        let age = (now - self.last_ok?).num_seconds();
        (age > 2 * refresh_secs.max(1) + 1).then_some(age)
    }

    /// Take the answer for `ticket`. Returns whether another refresh waited meanwhile and
    /// should go now. Stale answers (an older range or width) are dropped.
    pub fn land(
        &mut self,
        ticket: Ticket,
        result: Result<QueryAnswer, SourceError>,
        at: DateTime<Utc>,
    ) -> bool {
        let (series, outcome) = match result {
            Ok(a) => {
                self.bytes_received += a.bytes as u64;
                (Some(a.series), Ok((a.warnings, a.omitted)))
            }
            Err(e) => (None, Err(e)),
        };
        let landing = self.fetch.land(ticket, series, &mut self.series);
        if landing.accept {
            // The worst of one refresh need not be the worst of the next: what is held stays
            // within the cap too.
            let keep = self.keep();
            let held_over = keep_worst(&mut self.series, keep);
            self.points_capped |=
                cap_points(&mut self.series, MAX_PANEL_POINTS, keep.higher_is_worse);
            match outcome {
                Ok((warnings, omitted)) => {
                    self.warnings = warnings;
                    self.omitted = omitted.max(held_over);
                    self.last_ok = Some(at);
                    self.last_error = None;
                }
                Err(e) => self.last_error = Some((at, e.to_string())),
            }
        }
        landing.send_next
    }

    /// Whether the panel has a query in flight (range or instant).
    pub fn busy(&self) -> bool {
        self.fetch.busy() || self.latest_in_flight
    }

    /// Take the answer of an instant query.
    pub fn land_latest(&mut self, result: Result<QueryAnswer, SourceError>, at: DateTime<Utc>) {
        self.latest_in_flight = false;
        match result {
            Ok(a) => {
                self.bytes_received += a.bytes as u64;
                self.latest = a.series;
                self.omitted = a.omitted;
                self.warnings = a.warnings;
                self.last_ok = Some(at);
                self.last_error = None;
            }
            Err(e) => self.last_error = Some((at, e.to_string())),
        }
    }

    /// Each series' newest point: the instant value when it is newer than the grid's last.
    pub fn newest(&self, s: &Series) -> Option<crate::metrics::Point> {
        let grid = s.last();
        let now = self
            .latest
            .iter()
            .find(|l| l.labels == s.labels)
            .and_then(Series::last);
        match (grid, now) {
            (Some(g), Some(n)) if n.t > g.t => Some(n),
            (g, None) => g,
            (None, n) => n,
            (g, _) => g,
        }
    }

    /// The series to draw: those on the step grid, then any known only from the instant query.
    pub fn shown(&self) -> Vec<&Series> {
        let mut out: Vec<&Series> = self.series.iter().collect();
        out.extend(
            self.latest
                .iter()
                .filter(|l| !self.series.iter().any(|s| s.labels == l.labels)),
        );
        out
    }

    /// Forget held data so the next fetch takes the whole range (the range changed).
    pub fn reset(&mut self) {
        self.fetch.reset();
        self.series.clear();
        self.latest.clear();
        self.warnings.clear();
        self.last_ok = None;
        self.last_error = None;
        self.next_due = None;
        self.points_capped = false;
    }

    /// The newest value of the worst series (highest, or lowest when low is bad).
    pub fn current(&self) -> Option<f64> {
        self.worst_now().map(|(_, v)| v)
    }

    /// The series whose newest value is the worst, and that value: what sets the panel's level,
    /// whether or not its chart draws it. Series known only from the instant query count too
    /// (a new pod, or no grid point yet).
    pub fn worst_now(&self) -> Option<(&Series, f64)> {
        let higher = self.config.bad_when == BadWhen::Above;
        let mut out: Option<(&Series, f64)> = None;
        for s in self.shown() {
            let Some(v) = self.newest(s).map(|p| p.v).filter(|v| !v.is_nan()) else {
                continue;
            };
            if out.is_none_or(|(_, w)| if higher { v > w } else { v < w }) {
                out = Some((s, v));
            }
        }
        out
    }

    /// The series a chart of room for `n` draws: the `n` whose worst point in what is held
    /// (their newest value included) is worst, in their order.
    pub fn drawn(&self, n: usize) -> Vec<&Series> {
        let shown = self.shown();
        let higher = self.config.bad_when == BadWhen::Above;
        let keys: Vec<Option<f64>> = shown
            .iter()
            .map(|s| {
                let newest = self.newest(s).map(|p| p.v);
                worst_of(s.points.iter().map(|p| p.v).chain(newest), higher)
            })
            .collect();
        top_n(&keys, n, higher)
            .into_iter()
            .map(|i| shown[i])
            .collect()
    }

    /// How many series the query matched in all: those held and those left out.
    pub fn series_count(&self) -> usize {
        self.shown().len() + self.omitted
    }

    /// The threshold level a value reaches.
    pub fn level(&self, v: f64) -> Level {
        let past = |t: Option<f64>| {
            t.is_some_and(|t| match self.config.bad_when {
                BadWhen::Above => v >= t,
                BadWhen::Below => v <= t,
            })
        };
        if past(self.config.crit) {
            Level::Crit
        } else if past(self.config.warn) {
            Level::Warn
        } else {
            Level::Ok
        }
    }
}

/// How bad a value is against the panel's thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Ok,
    Warn,
    Crit,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Point;
    use crate::metrics::fetch::Window;
    use std::time::Duration;

    fn answer(points: &[(f64, f64)]) -> QueryAnswer {
        QueryAnswer {
            series: vec![Series {
                labels: Default::default(),
                points: points.iter().map(|&(t, v)| Point { t, v }).collect(),
            }],
            ..Default::default()
        }
    }

    fn panel() -> Panel {
        Panel::new(crate::metrics::presets::sim_panels().remove(0))
    }

    fn window() -> Window {
        Window {
            range: Duration::from_secs(300),
            columns: 50,
            resolution: Duration::from_secs(5),
        }
    }

    #[test]
    fn stale_answers_are_dropped_after_a_reset() {
        let mut p = panel();
        let (ticket, _) = p.fetch.due("up", &window(), 10_000.0).unwrap();
        p.reset();
        let send_next = p.land(ticket, Ok(answer(&[(1.0, 1.0)])), Utc::now());
        assert!(send_next, "the refresh that waited goes now");
        assert!(p.series.is_empty());
        assert!(!p.fetch.busy());
    }

    #[test]
    fn states_are_honest() {
        let mut p = panel();
        let t0 = Utc::now();
        assert_eq!(p.state(t0, 5), PanelState::Loading);
        let (ticket, _) = p.fetch.due("up", &window(), 10_000.0).unwrap();
        p.land(ticket, Ok(answer(&[(9_990.0, 1.0)])), t0);
        assert_eq!(p.state(t0, 5), PanelState::Fresh);
        assert_eq!(
            p.state(t0 + chrono::Duration::seconds(60), 5),
            PanelState::Stale { age_secs: 60 }
        );
        let (ticket, _) = p.fetch.due("up", &window(), 10_100.0).unwrap();
        let mut partial = answer(&[(9_990.0, 1.0)]);
        partial.warnings.push("some shards down".into());
        p.land(ticket, Ok(partial), t0);
        assert!(matches!(p.state(t0, 5), PanelState::Partial { .. }));
        let (ticket, _) = p.fetch.due("up", &window(), 10_200.0).unwrap();
        p.land(ticket, Err(SourceError::Unreachable("refused".into())), t0);
        assert!(matches!(p.state(t0, 5), PanelState::Failing { .. }));
        // Old data stays to be drawn while failing.
        assert_eq!(p.series.len(), 1);
    }

    #[test]
    fn levels_follow_the_bad_side() {
        let mut p = panel();
        assert_eq!(p.level(0.5), Level::Ok);
        assert_eq!(p.level(0.85), Level::Warn);
        assert_eq!(p.level(0.99), Level::Crit);
        p.config.bad_when = BadWhen::Below;
        p.config.warn = Some(0.9);
        p.config.crit = Some(0.7);
        assert_eq!(p.level(0.5), Level::Crit);
        assert_eq!(p.level(1.0), Level::Ok);
    }
}
