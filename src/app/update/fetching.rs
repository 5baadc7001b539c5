//! Fetching: which panel is queried when and how, and what its answers do. What a panel costs
//! follows how it is shown ([`crate::app::cost`]).

use super::{Effect, Model, Msg, crossings};
use crate::metrics::fetch::{POINTS_PER_COLUMN, Window};
use crate::metrics::group::{self, Member};
use crate::metrics::health::Pass;
use crate::metrics::{InstantQuery, SourceError};
use crate::ui::layout::Showing;
use chrono::{DateTime, Utc};

/// A panel's answers, a group's, and the view's report of what is shown.
pub(super) fn landed(model: &mut Model, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Answer {
            panel,
            ticket,
            pass,
            result,
            at,
            ..
        } => {
            report_health(model, pass, &result, at);
            if let Some(p) = model.panels.get_mut(panel)
                && p.land(ticket, result, at)
            {
                p.next_due = None;
            }
            after_answer(model, &[panel], at)
        }
        Msg::Latest {
            panel,
            pass,
            result,
            at,
        } => {
            report_health(model, pass, &result, at);
            if let Some(p) = model.panels.get_mut(panel) {
                // A one-row panel's query the server refused as reduced to its worst series
                // (a scalar, say) is asked whole from now on, at once.
                if result.as_ref().is_err_and(refused)
                    && model.cost.of(panel) == Showing::Row
                    && model.cost.solo.insert(p.config.query.clone())
                {
                    p.latest_in_flight = false;
                    p.next_due = None;
                } else {
                    p.land_latest(result, at);
                }
            }
            after_answer(model, &[panel], at)
        }
        Msg::Group {
            pass,
            panels,
            result,
            at,
        } => {
            report_health(model, pass, &result, at);
            group_landed(model, &panels, result, at);
            after_answer(model, &panels, at)
        }
        Msg::Showing(showing) => {
            for i in model.cost.report(showing) {
                if let Some(p) = model.panels.get_mut(i) {
                    p.next_due = None;
                }
            }
            schedule(model)
        }
        _ => Vec::new(),
    }
}

fn report_health<T>(
    model: &mut Model,
    pass: Pass,
    result: &Result<T, SourceError>,
    at: DateTime<Utc>,
) {
    let outcome = result.as_ref().map(|_| ());
    model
        .source
        .health
        .report(pass, outcome, at, &mut model.rng);
}

/// A group's answer, split per panel, goes to each of its panels. A group the server refused
/// (one of its queries is a scalar, say) is not asked again: its panels are read one by one,
/// at once.
fn group_landed(
    model: &mut Model,
    panels: &[usize],
    result: Result<Vec<(usize, crate::metrics::QueryAnswer)>, SourceError>,
    at: DateTime<Utc>,
) {
    model.cost.groups = model.cost.groups.saturating_sub(1);
    for i in panels {
        model.cost.grouped.remove(i);
    }
    match result {
        Ok(answers) => {
            for (i, a) in answers {
                if let Some(p) = model.panels.get_mut(i) {
                    p.land_latest(Ok(a), at);
                }
            }
        }
        Err(e) if refused(&e) => {
            for i in panels {
                if let Some(p) = model.panels.get_mut(*i) {
                    model.cost.solo.insert(p.config.query.clone());
                    p.next_due = None;
                }
            }
        }
        Err(e) => {
            for i in panels {
                if let Some(p) = model.panels.get_mut(*i) {
                    p.land_latest(Err(e.clone()), at);
                }
            }
        }
    }
}

/// Whether the server refused the query itself (not a failure of the moment).
fn refused(e: &SourceError) -> bool {
    matches!(e, SourceError::Api { error_type, .. }
        if matches!(error_type.as_str(), "bad_data" | "execution"))
}

/// After panels' answers: record any threshold crossing, then start what is due.
fn after_answer(model: &mut Model, panels: &[usize], at: DateTime<Utc>) -> Vec<Effect> {
    model.dirty = true;
    let mut effects = Vec::new();
    for i in panels {
        effects.extend(crossings(model, *i, at));
    }
    effects.extend(schedule(model));
    effects
}

/// The wave a refresh goes out as: which due times count as due now.
struct Due {
    now: DateTime<Utc>,
    early: chrono::Duration,
    join: chrono::Duration,
    wave: bool,
}

impl Due {
    /// A refresh goes out as one wave: once one panel is due (or a refresh is in flight), those
    /// due within a quarter of the refresh go with it. Panels whose answers came back a few
    /// milliseconds apart (the second half of a wave waits for a free slot) would otherwise
    /// drift a tick apart for good, and every refresh would draw two frames (issue 20).
    /// The tick that schedules reads the clock a little after its instant, and the next one is
    /// a quarter of a second away: a panel due within half a tick goes on this one. Without it
    /// a refresh due a few microseconds after the tick's reading waited for the next tick, 5 s
    /// became 5.25 s every other time, and the minute clock's held change drew alone (issue 20).
    fn of(model: &Model, refresh: chrono::Duration) -> Due {
        let now = model.now;
        let early = chrono::Duration::from_std(crate::app::runtime::TICK / 2).unwrap_or_default();
        let wave = model.in_flight() > 0
            || (model.panels.iter().enumerate())
                .filter(|(i, _)| !model.folded(*i))
                .any(|(_, p)| !p.busy() && p.next_due.is_none_or(|d| now + early >= d));
        Due {
            now,
            early,
            join: refresh / 4,
            wave,
        }
    }

    fn now(&self, due: Option<DateTime<Utc>>) -> bool {
        due.is_none_or(|due| {
            self.now + self.early >= due || (self.wave && due - self.now <= self.join)
        })
    }
}

/// Start the fetches that are due, within the in-flight limit and the source's backoff (while
/// the source is down, `Health` admits one probe at a time after a jittered delay). Charts get
/// range queries; one-row panels a coarse range for the sparkline, else an instant query;
/// hidden panels are read in groups at a slower cadence (see [`crate::app::cost`]).
pub(crate) fn schedule(model: &mut Model) -> Vec<Effect> {
    let mut effects = Vec::new();
    if model.paused || model.quit.is_some() {
        return effects;
    }
    let refresh = chrono::Duration::from_std(model.refresh).unwrap_or(chrono::Duration::seconds(5));
    let (mut shown, mut off) = (0, 0);
    for i in (0..model.panels.len()).filter(|i| !model.folded(*i)) {
        match model.cost.of(i) {
            Showing::Hidden => off += 1,
            _ => shown += 1,
        }
    }
    model.cost.hidden_every = crate::app::cost::hidden_every(model.refresh, off, shown);
    let hidden_every = chrono::Duration::from_std(model.cost.hidden_every).unwrap_or(refresh);
    let due = Due::of(model, refresh);
    let mut in_flight = model.in_flight();
    let n = model.panels.len();
    let mut hidden = Vec::new();
    // The selected panel first: it is the one being looked at.
    for k in 0..n {
        if in_flight >= crate::app::model::MAX_IN_FLIGHT {
            break;
        }
        let i = (model.selected + k) % n;
        let showing = model.cost.of(i);
        let p = &model.panels[i];
        // A query with a variable without a value is never sent, nor one in a collapsed row.
        if p.busy()
            || p.unset.is_some()
            || model.folded(i)
            || model.cost.grouped.contains(&i)
            || !due.now(p.next_due)
        {
            continue;
        }
        if showing == Showing::Hidden && !model.cost.solo.contains(&p.config.query) {
            hidden.push(i);
            continue;
        }
        let Some(pass) = model.source.health.admit(due.now) else {
            return effects;
        };
        let every = every(
            p,
            if showing == Showing::Hidden {
                hidden_every
            } else {
                refresh
            },
        );
        model.panels[i].next_due = Some(due.now + every);
        in_flight += 1;
        effects.push(fetch_one(model, i, showing, pass));
    }
    // The longest waiting first, as many as the round's even spread allows now.
    hidden.sort_by_key(|&i| model.panels[i].next_due);
    let every = model.cost.hidden_every;
    hidden.truncate(model.cost.spread.take(hidden.len(), off, every, model.now));
    effects.extend(fetch_groups(model, hidden, in_flight, hidden_every));
    effects
}

/// How often `p` is asked at the cadence `base`: an imported panel keeps its dashboard's
/// refresh when that is slower.
fn every(p: &crate::app::Panel, base: chrono::Duration) -> chrono::Duration {
    (p.config.shape.every)
        .and_then(|d| chrono::Duration::from_std(d).ok())
        .map_or(base, |own| own.max(base))
}

/// What panel `i` is asked now: a range query when its grid has a new point (a chart's grid,
/// or a row's coarse one), else its latest value; a hidden panel only its latest value.
fn fetch_one(model: &mut Model, i: usize, showing: Showing, pass: Pass) -> Effect {
    let now_s = model.now.timestamp_millis() as f64 / 1000.0;
    let window = match showing {
        Showing::Chart => model.window(),
        _ => Window {
            columns: crate::ui::layout::SPARKLINE_CELLS / POINTS_PER_COLUMN as u16,
            ..model.window()
        },
    };
    // No more points than the panel's own most (Grafana's maxDataPoints).
    let window = match model.panels[i].config.shape.max_points {
        Some(most) => Window {
            columns: (window.columns).min(
                u16::try_from(most / POINTS_PER_COLUMN as u32)
                    .unwrap_or(u16::MAX)
                    .max(1),
            ),
            ..window
        },
        None => window,
    };
    model.source.requests_sent += 1;
    let p = &mut model.panels[i];
    let keep = p.keep();
    let range = match showing {
        Showing::Hidden => None,
        _ => p.fetch.due(&p.config.query, &window, now_s),
    };
    if let Some((ticket, query)) = range {
        model.cost.sent.range += 1;
        return Effect::Fetch {
            panel: i,
            ticket,
            pass,
            query,
            keep,
        };
    }
    // The newest grid point is held (or no range is wanted): ask for the value now instead;
    // a one-row panel shows only the worst value, so only the worst series is read.
    p.latest_in_flight = true;
    model.cost.sent.instant += 1;
    let query = match showing {
        Showing::Row if !model.cost.solo.contains(&p.config.query) => {
            group::worst(&p.config.query, keep)
        }
        _ => p.config.query.clone(),
    };
    Effect::FetchLatest {
        panel: i,
        pass,
        keep,
        query: InstantQuery {
            query,
            time: Some(now_s),
        },
    }
}

/// The hidden panels `due`, read in as few instant queries as the groups' bounds allow.
fn fetch_groups(
    model: &mut Model,
    due: Vec<usize>,
    mut in_flight: usize,
    hidden_every: chrono::Duration,
) -> Vec<Effect> {
    let now_s = model.now.timestamp_millis() as f64 / 1000.0;
    let members = (due.iter())
        .map(|&panel| {
            let p = &model.panels[panel];
            Member {
                panel,
                query: p.config.query.clone(),
                keep: p.keep(),
            }
        })
        .collect();
    let mut effects = Vec::new();
    for members in group::chunk(members) {
        if in_flight >= crate::app::model::MAX_IN_FLIGHT {
            break;
        }
        let Some(pass) = model.source.health.admit(model.now) else {
            break;
        };
        in_flight += 1;
        model.source.requests_sent += 1;
        model.cost.sent.group += 1;
        model.cost.groups += 1;
        model.cost.spread.spend(members.len());
        for m in &members {
            model.cost.grouped.insert(m.panel);
            let p = &mut model.panels[m.panel];
            p.next_due = Some(model.now + every(p, hidden_every));
        }
        effects.push(Effect::FetchGroup {
            pass,
            query: group::query(&members, Some(now_s)),
            members,
        });
    }
    effects
}
