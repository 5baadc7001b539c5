//! One dashboard panel: its configuration, the series it holds, what is in flight, and the
//! honest state it shows (loading, fresh, stale, partial, failing).

use crate::config::{BadWhen, PanelConfig};
use crate::metrics::{QueryAnswer, RangeQuery, Series, SourceError, series::merge_tail};
use chrono::{DateTime, Utc};

/// Prometheus refuses range queries of more than 11,000 points per series.
pub const MAX_POINTS: f64 = 11_000.0;

/// Steps a range query may use, in seconds; the smallest that keeps ≤ 2 points per column wins.
const NICE_STEPS: [f64; 16] = [
    1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0,
    21600.0, 86400.0,
];

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
}

/// The time window the panel's series cover.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub start: f64,
    pub end: f64,
    pub step: f64,
}

/// A panel and its data.
#[derive(Debug, Clone)]
pub struct Panel {
    pub config: PanelConfig,
    pub series: Vec<Series>,
    pub warnings: Vec<String>,
    pub held: Option<Window>,
    pub last_ok: Option<DateTime<Utc>>,
    pub last_error: Option<(DateTime<Utc>, String)>,
    /// Generation of the data the panel wants; answers of other generations are dropped.
    pub generation: u64,
    /// Generation of the request in flight, if any (never more than one).
    pub in_flight: Option<u64>,
    /// When the next refresh is due.
    pub next_due: Option<DateTime<Utc>>,
    /// Bytes received, for the fetch-size benchmark.
    pub bytes_received: u64,
}

impl Panel {
    pub fn new(config: PanelConfig) -> Self {
        Panel {
            config,
            series: Vec::new(),
            warnings: Vec::new(),
            held: None,
            last_ok: None,
            last_error: None,
            generation: 0,
            in_flight: None,
            next_due: None,
            bytes_received: 0,
        }
    }

    /// The state to show at `now`, given the refresh interval.
    pub fn state(&self, now: DateTime<Utc>, refresh_secs: i64) -> PanelState {
        if let Some((at, reason)) = &self.last_error
            && self.last_ok.is_none_or(|ok| *at >= ok)
        {
            let _ = at;
            return PanelState::Failing {
                reason: reason.clone(),
            };
        }
        let Some(ok) = self.last_ok else {
            return PanelState::Loading;
        };
        let age = (now - ok).num_seconds();
        if age > 2 * refresh_secs.max(1) + 1 {
            return PanelState::Stale { age_secs: age };
        }
        match self.warnings.first() {
            Some(w) => PanelState::Partial { warning: w.clone() },
            None => PanelState::Fresh,
        }
    }

    /// The query to send now: the new tail when the held data lines up, else the whole range.
    /// `cols` is the plot's width in terminal columns (at most about 2 points a column).
    pub fn plan(&self, now: f64, range: f64, cols: u16, min_step: f64) -> RangeQuery {
        let step = choose_step(range, cols, min_step);
        let end = (now / step).floor() * step;
        let start = end - range;
        let from = match self.held {
            // Refetch the last held point too: it may have been incomplete.
            Some(h) if h.step == step && h.end >= start && h.end <= end => h.end - step,
            _ => start,
        };
        RangeQuery {
            query: self.config.query.clone(),
            start: from.max(start),
            end,
            step,
        }
    }

    /// Take an answer for `query`. Returns false when it was stale and dropped.
    pub fn accept(
        &mut self,
        generation: u64,
        query: &RangeQuery,
        result: Result<QueryAnswer, SourceError>,
        at: DateTime<Utc>,
        range: f64,
    ) -> bool {
        if self.in_flight == Some(generation) {
            self.in_flight = None;
        }
        if generation != self.generation {
            return false;
        }
        match result {
            Ok(answer) => {
                self.bytes_received += answer.bytes as u64;
                let keep_from = query.end - range;
                let is_tail = self
                    .held
                    .is_some_and(|h| h.step == query.step && query.start > h.start);
                if is_tail {
                    merge_tail(&mut self.series, answer.series, query.start, keep_from);
                } else {
                    self.series = answer.series;
                }
                self.held = Some(Window {
                    start: keep_from,
                    end: query.end,
                    step: query.step,
                });
                self.warnings = answer.warnings;
                self.last_ok = Some(at);
                self.last_error = None;
            }
            Err(e) => {
                self.last_error = Some((at, e.to_string()));
            }
        }
        true
    }

    /// Forget held data so the next fetch takes the whole range (range changed).
    pub fn invalidate(&mut self) {
        self.generation += 1;
        self.held = None;
        self.series.clear();
        self.warnings.clear();
        self.last_ok = None;
        self.last_error = None;
    }

    /// The newest value of the worst series (highest, or lowest when low is bad).
    pub fn current(&self) -> Option<f64> {
        let values = self
            .series
            .iter()
            .filter_map(|s| s.last().map(|p| p.v))
            .filter(|v| !v.is_nan());
        match self.config.bad_when {
            BadWhen::Above => {
                values.fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
            }
            BadWhen::Below => {
                values.fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))))
            }
        }
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

/// The smallest nice step that keeps at most ~2 points per column and under Prometheus's limit.
pub fn choose_step(range: f64, cols: u16, min_step: f64) -> f64 {
    let points = (f64::from(cols.max(1)) * 2.0).min(MAX_POINTS - 1.0);
    let want = (range / points).max(min_step).max(1.0);
    NICE_STEPS
        .iter()
        .copied()
        .find(|s| *s >= want)
        .unwrap_or_else(|| (want / 86400.0).ceil() * 86400.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Point;

    fn answer(points: &[(f64, f64)]) -> QueryAnswer {
        QueryAnswer {
            series: vec![Series {
                labels: Default::default(),
                points: points.iter().map(|&(t, v)| Point { t, v }).collect(),
            }],
            warnings: vec![],
            bytes: 10,
        }
    }

    fn panel() -> Panel {
        Panel::new(crate::config::default_panels().remove(0))
    }

    #[test]
    fn steps_keep_two_points_a_column_and_the_point_limit() {
        for range in [300.0, 900.0, 3600.0, 86400.0] {
            for cols in [1u16, 10, 38, 80, 200, 400, u16::MAX] {
                let step = choose_step(range, cols, 1.0);
                let points = range / step + 1.0;
                assert!(points <= MAX_POINTS, "{range} {cols}: {points}");
                assert!(
                    points <= f64::from(cols) * 2.0 + 2.0,
                    "{range} {cols}: {points}"
                );
            }
        }
    }

    #[test]
    fn after_the_first_fetch_only_the_tail_is_asked() {
        let mut p = panel();
        let now = Utc::now();
        let q = p.plan(10_000.0, 3600.0, 100, 1.0);
        assert_eq!(q.end - q.start, 3600.0);
        p.in_flight = Some(0);
        assert!(p.accept(
            0,
            &q,
            Ok(answer(&[(q.end - 60.0, 1.0), (q.end, 2.0)])),
            now,
            3600.0
        ));
        let tail = p.plan(10_000.0 + 120.0, 3600.0, 100, 1.0);
        assert_eq!(tail.start, q.end - q.step);
        assert!(tail.end > q.end);
    }

    #[test]
    fn stale_generations_are_dropped_but_free_the_slot() {
        let mut p = panel();
        let q = p.plan(10_000.0, 300.0, 50, 1.0);
        p.in_flight = Some(0);
        p.invalidate();
        assert!(!p.accept(0, &q, Ok(answer(&[(1.0, 1.0)])), Utc::now(), 300.0));
        assert_eq!(p.in_flight, None);
        assert!(p.series.is_empty());
    }

    #[test]
    fn states_are_honest() {
        let mut p = panel();
        let t0 = Utc::now();
        assert_eq!(p.state(t0, 5), PanelState::Loading);
        let q = p.plan(10_000.0, 300.0, 50, 1.0);
        p.accept(0, &q, Ok(answer(&[(1.0, 1.0)])), t0, 300.0);
        assert_eq!(p.state(t0, 5), PanelState::Fresh);
        assert_eq!(
            p.state(t0 + chrono::Duration::seconds(60), 5),
            PanelState::Stale { age_secs: 60 }
        );
        let mut partial = answer(&[(1.0, 1.0)]);
        partial.warnings.push("some shards down".into());
        p.accept(0, &q, Ok(partial), t0, 300.0);
        assert!(matches!(p.state(t0, 5), PanelState::Partial { .. }));
        p.accept(
            0,
            &q,
            Err(SourceError::Unreachable("refused".into())),
            t0,
            300.0,
        );
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
