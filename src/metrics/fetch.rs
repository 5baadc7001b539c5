//! The querying discipline of a panel (pure: no I/O, `now` passed in).
//!
//! - The step is a multiple of the panel's resolution, about 2 points per plot column at most,
//!   and never so small that a query would ask for more than [`MAX_POINTS`] points.
//! - Start and end are multiples of the step, so every fetch of a panel lands on one grid and a
//!   tail fetched later lines up with the points already held.
//! - After the first fetch only the new tail is fetched (with a little overlap, since the newest
//!   points may change as late samples arrive) and merged with [`merge_tail`].
//! - [`Flight`]: one query in flight per panel, the latest request wins, stale answers dropped.

use super::series::{Series, merge_tail};
use super::source::RangeQuery;
use std::time::Duration;

/// Prometheus refuses range queries of more than 11,000 points per series.
pub const MAX_POINTS: u64 = 11_000;

/// Points per plot column we ask for at most (a braille chart draws 2 per column).
pub const POINTS_PER_COLUMN: u64 = 2;

/// What a panel shows: its range, its plot width and the finest step worth asking for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    /// The time range shown (5 m to 24 h on the dashboard; any positive range works).
    pub range: Duration,
    /// Width of the plot in terminal columns.
    pub columns: u16,
    /// The finest step: the scrape interval or refresh interval, whichever the config says.
    /// Steps are whole multiples of it; below 1 s it is taken as 1 s.
    pub resolution: Duration,
}

/// The grid a panel's series currently cover (all in Unix seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Held {
    pub start: f64,
    pub end: f64,
    pub step: f64,
}

/// Whether a plan fetches everything or only the new tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extent {
    Full,
    Tail,
}

/// One fetch to make: the query, whether it is a tail, and the window after merging.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchPlan {
    pub query: RangeQuery,
    pub extent: Extent,
    /// The grid held once this plan's answer is merged.
    pub after: Held,
}

/// The step for a window, in whole seconds: a multiple of the resolution, at most about
/// [`POINTS_PER_COLUMN`] points per column, and never more than [`MAX_POINTS`] points.
pub fn step_for(w: &Window) -> u64 {
    let res = w.resolution.as_secs().max(1);
    let range = w.range.as_secs().max(1);
    let points = (u64::from(w.columns.max(1)) * POINTS_PER_COLUMN).min(MAX_POINTS - 1);
    // ceil(range / points), then up to a multiple of the resolution.
    let raw = range.div_ceil(points).max(1);
    raw.div_ceil(res) * res
}

/// The number of points a range query returns per series (both ends included).
pub fn points_in(q: &RangeQuery) -> u64 {
    if q.step <= 0.0 || q.end < q.start {
        return 0;
    }
    ((q.end - q.start) / q.step).floor() as u64 + 1
}

/// The fetch a panel needs at `now` (Unix seconds), given what it holds; `None` when it holds
/// the newest point already (or `now` is not finite). A held grid with another step, or one
/// that no longer overlaps the window, is refetched in full. A new query must start from
/// `held = None`.
pub fn plan(query: &str, w: &Window, held: Option<&Held>, now: f64) -> Option<FetchPlan> {
    if !now.is_finite() {
        return None;
    }
    let step = step_for(w);
    let stepf = step as f64;
    let end = (now / stepf).floor() * stepf;
    // The largest multiple of the step that fits in the range.
    let span = (w.range.as_secs().max(1) / step) * step;
    let start = end - span as f64;
    let after = Held {
        start,
        end,
        step: stepf,
    };
    let full = FetchPlan {
        query: RangeQuery {
            query: query.to_string(),
            start,
            end,
            step: stepf,
        },
        extent: Extent::Full,
        after,
    };
    let Some(h) = held else {
        return Some(full);
    };
    let same_grid = h.step == stepf && (h.start / stepf).fract() == 0.0;
    if !same_grid || h.end < start || h.end > end || h.start > start + stepf {
        return Some(full);
    }
    if h.end == end {
        return None;
    }
    // Refetch the last held point and one before it: they were computed when the newest
    // samples may not have been scraped yet.
    let overlap = stepf * 2.0;
    let tail_start = (h.end - overlap).max(start);
    Some(FetchPlan {
        query: RangeQuery {
            query: query.to_string(),
            start: tail_start,
            end,
            step: stepf,
        },
        extent: Extent::Tail,
        after,
    })
}

/// Put an answer to `plan` into `series`: a full answer replaces them, a tail is merged and
/// points older than the window dropped. Returns the grid now held.
pub fn apply(series: &mut Vec<Series>, plan: &FetchPlan, answer: Vec<Series>) -> Held {
    match plan.extent {
        Extent::Full => *series = answer,
        Extent::Tail => merge_tail(series, answer, plan.query.start, plan.after.start),
    }
    plan.after
}

/// A request ticket: the generation it was issued for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(pub u64);

/// One query in flight per panel; the latest request wins.
///
/// `request` when a refresh is due; `invalidate` when the query, range or width changed (what
/// is in flight is now stale); `finish` when an answer comes back: it says whether to use the
/// answer and whether a refresh waited meanwhile and should be planned now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Flight {
    generation: u64,
    in_flight: Option<u64>,
    waiting: bool,
}

/// What to do with an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Landing {
    /// The answer belongs to the current generation: use it.
    pub accept: bool,
    /// A request waited while this one was in flight: plan and send it now.
    pub send_next: bool,
}

impl Flight {
    /// A refresh is due. `Some(ticket)` to send now; `None` when one is in flight already (the
    /// refresh waits and is reported by [`Flight::finish`]).
    pub fn request(&mut self) -> Option<Ticket> {
        if self.in_flight.is_some() {
            self.waiting = true;
            return None;
        }
        self.in_flight = Some(self.generation);
        Some(Ticket(self.generation))
    }

    /// The panel's parameters changed: an answer to anything sent before is stale.
    pub fn invalidate(&mut self) {
        self.generation += 1;
        if self.in_flight.is_some() {
            self.waiting = true;
        }
    }

    /// An answer (or error) for `ticket` came back.
    pub fn finish(&mut self, ticket: Ticket) -> Landing {
        if self.in_flight != Some(ticket.0) {
            // Not the request we are waiting for (a duplicate or a very old one): ignore it,
            // and leave the one in flight alone.
            return Landing {
                accept: false,
                send_next: false,
            };
        }
        self.in_flight = None;
        let send_next = std::mem::take(&mut self.waiting);
        Landing {
            accept: ticket.0 == self.generation,
            send_next,
        }
    }

    /// Whether a query is in flight.
    pub fn busy(&self) -> bool {
        self.in_flight.is_some()
    }

    /// The current generation.
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

/// A panel's whole querying state: the grid it holds, the query in flight and the plan it was
/// sent for. The console keeps one per panel and its series beside it.
#[derive(Debug, Clone, Default)]
pub struct PanelFetch {
    flight: Flight,
    held: Option<Held>,
    sent: Option<(Ticket, FetchPlan)>,
}

impl PanelFetch {
    /// A refresh is due at `now`: the query to send and its ticket, or `None` when the panel
    /// holds the newest point already or a query is in flight (then [`PanelFetch::land`] says
    /// `send_next` when it returns).
    pub fn due(&mut self, query: &str, w: &Window, now: f64) -> Option<(Ticket, RangeQuery)> {
        if self.flight.busy() {
            self.flight.request();
            return None;
        }
        let plan = plan(query, w, self.held.as_ref(), now)?;
        let ticket = self.flight.request()?;
        let q = plan.query.clone();
        self.sent = Some((ticket, plan));
        Some((ticket, q))
    }

    /// The query, range or width changed: forget the grid (the next fetch is full) and make
    /// whatever is in flight stale.
    pub fn reset(&mut self) {
        self.flight.invalidate();
        self.held = None;
    }

    /// The answer for `ticket` came back (`None` for an error): a current answer is merged into
    /// `series`, a stale one dropped.
    pub fn land(
        &mut self,
        ticket: Ticket,
        answer: Option<Vec<Series>>,
        series: &mut Vec<Series>,
    ) -> Landing {
        let landing = self.flight.finish(ticket);
        if landing.accept
            && let Some(a) = answer
            && let Some((t, plan)) = self.sent.take()
            && t == ticket
        {
            self.held = Some(apply(series, &plan, a));
        }
        landing
    }

    /// Whether a query of this panel is in flight.
    pub fn busy(&self) -> bool {
        self.flight.busy()
    }

    /// The grid held, if any.
    pub fn held(&self) -> Option<&Held> {
        self.held.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(range_s: u64, columns: u16, res_s: u64) -> Window {
        Window {
            range: Duration::from_secs(range_s),
            columns,
            resolution: Duration::from_secs(res_s),
        }
    }

    #[test]
    fn steps_follow_resolution_columns_and_the_point_limit() {
        // 1 h over 60 columns: 120 points, 30 s.
        assert_eq!(step_for(&w(3600, 60, 15)), 30);
        // 5 m over 200 columns would be 0.75 s; the resolution wins.
        assert_eq!(step_for(&w(300, 200, 15)), 15);
        // Rounded up to a multiple of the resolution: 3600/100 = 36 -> 45.
        assert_eq!(step_for(&w(3600, 50, 15)), 45);
        // A huge width is still capped by the point limit.
        let s = step_for(&w(86_400 * 30, u16::MAX, 1));
        assert!(86_400 * 30 / s < MAX_POINTS, "{s}");
        assert_eq!(step_for(&w(0, 0, 0)), 1);
    }

    #[test]
    fn first_plan_is_full_and_aligned() {
        let p = plan("up", &w(3600, 60, 15), None, 1_000_017.4).unwrap();
        assert_eq!(p.extent, Extent::Full);
        assert_eq!(p.query.step, 30.0);
        assert_eq!(p.query.end, 1_000_020.0 - 30.0);
        assert_eq!(p.query.end - p.query.start, 3600.0);
        assert_eq!(p.query.start % 30.0, 0.0);
        assert_eq!(points_in(&p.query), 121);
    }

    #[test]
    fn later_plans_fetch_only_the_tail_or_nothing() {
        let win = w(3600, 60, 15);
        let first = plan("up", &win, None, 1_000_000.0).unwrap();
        assert!(plan("up", &win, Some(&first.after), 1_000_010.0).is_none());
        let next = plan("up", &win, Some(&first.after), 1_000_065.0).unwrap();
        assert_eq!(next.extent, Extent::Tail);
        assert_eq!(next.query.start, first.after.end - 60.0);
        assert_eq!(next.query.start % 30.0, 0.0);
        assert_eq!(points_in(&next.query), 5);
        // A gap longer than the range, a clock going back, or a new step: full again.
        for (held, now) in [
            (first.after, 1_000_000.0 + 7200.0),
            (first.after, 999_000.0),
            (
                Held {
                    step: 15.0,
                    ..first.after
                },
                1_000_065.0,
            ),
        ] {
            let p = plan("up", &win, Some(&held), now).unwrap();
            assert_eq!(p.extent, Extent::Full, "{held:?} {now}");
        }
    }

    #[test]
    fn a_panel_drops_stale_answers_and_then_fetches_tails() {
        let win = w(3600, 60, 15);
        let mut p = PanelFetch::default();
        let mut series = Vec::new();
        let (t0, q0) = p.due("up", &win, 1_000_000.0).unwrap();
        assert!(p.due("up", &win, 1_000_005.0).is_none(), "one in flight");
        p.reset();
        let pts = |q: &RangeQuery| {
            let mut s = Series::default();
            let mut t = q.start;
            while t <= q.end {
                s.points.push(crate::metrics::Point { t, v: 1.0 });
                t += q.step;
            }
            vec![s]
        };
        let l = p.land(t0, Some(pts(&q0)), &mut series);
        assert!(!l.accept && l.send_next);
        assert!(series.is_empty() && p.held().is_none());
        let (t1, q1) = p.due("up", &win, 1_000_000.0).unwrap();
        assert_eq!(q1.end - q1.start, 3600.0);
        assert!(p.land(t1, Some(pts(&q1)), &mut series).accept);
        assert_eq!(series[0].points.len(), 121);
        let (t2, q2) = p.due("up", &win, 1_000_065.0).unwrap();
        assert_eq!(points_in(&q2), 5);
        p.land(t2, Some(pts(&q2)), &mut series);
        assert_eq!(series[0].points.len(), 121);
        assert_eq!(series[0].points.last().unwrap().t, q2.end);
    }

    #[test]
    fn the_latest_request_wins_and_one_flies_at_a_time() {
        let mut f = Flight::default();
        let t0 = f.request().unwrap();
        assert_eq!(f.request(), None);
        f.invalidate();
        let l = f.finish(t0);
        assert_eq!(
            l,
            Landing {
                accept: false,
                send_next: true
            }
        );
        let t1 = f.request().unwrap();
        assert_ne!(t0, t1);
        assert_eq!(
            f.finish(t0),
            Landing {
                accept: false,
                send_next: false
            }
        );
        assert!(f.busy());
        assert_eq!(
            f.finish(t1),
            Landing {
                accept: true,
                send_next: false
            }
        );
        assert!(!f.busy());
    }
}
