//! What each mitigation did, from the panel snapshots: every signal read over a window on
//! each side of the step ([`super::window`]: medians over a minute or more, a backlog by its
//! rate of change, the customers' failures from user requests rather than attempts where the
//! counters were taken), a change within the signal's own variability before the step called
//! no visible effect, a step after which a customer signal got worse said to have made it
//! worse (and, on the simulator, the scenario's own record of a wrong move beside it), a step
//! that acted on nothing given no effect and the reason it stopped, the recovery credited to a
//! step only when it came inside that step's effect window, and what a step's own plan did to
//! the signals (a batch restart takes instances down), which is the step's, not the
//! incident's.
//!
//! Steps started within a minute of each other act together: their effect cannot be told
//! apart, so they are one response with one effect; each step and each runbook in it is still
//! named (never one unnamed step).

use super::board::{Board, instant, secs};
use super::facts::Moment;
use super::phrases;
use super::signals::{self, Role};
use super::steps::StepRun;
use super::timeline::{Crossing, Planned};
use super::window::{self, Read};
use super::words;
use crate::config::Unit;
use crate::incident::event::Event;
use crate::incident::record::Record;
use crate::incident::snapshot::fact;
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use serde::Serialize;

/// How long after a response its effect is read (or until the next response, if sooner).
pub const EFFECT_AFTER: Duration = Duration::minutes(2);
/// Steps started this close together are one response.
pub const TOGETHER: Duration = Duration::seconds(60);
/// A response followed this soon by the next has no effect of its own to read.
const TOO_SOON: Duration = Duration::seconds(30);
/// A signal that moved less than this share of its value did not move.
const STILL: f64 = 0.1;
/// How long after a batch ends its planned effects may still show (a restart's crossing is
/// known a minute after the reading).
const PLANNED_TAIL: Duration = Duration::seconds(90);
/// A recovery is the response's when it came within this long after the response ended (the
/// panels' rates look a minute back).
pub const CREDIT_AFTER: Duration = Duration::minutes(3);
/// How long after a step's end the simulator's record of what it did may reach the journal.
const WRONG_MOVE_LAG: Duration = Duration::seconds(60);
/// Traffic that fell by this share between a step and the recovery "fell".
const TRAFFIC_FELL: f64 = 0.1;
/// A share of requests failing moves visibly only by at least this much (a point), however
/// small it was.
const SHARE_FLOOR: f64 = 0.01;
/// The customers' failures, read from the user-request counters.
pub const USER_FAILURES: &str = fact::USER_REQUESTS;

/// A step taken, as the draft tells it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mitigation {
    pub title: String,
    pub runbook: String,
    /// The step's id in its runbook (for JSON and the full timeline; prose uses the title).
    pub step: String,
    pub kind: Option<String>,
    pub started: Moment,
    pub ended: Option<Moment>,
    /// "succeeded", "failed", "was stopped before it finished", …
    pub outcome: String,
    pub ok: bool,
    /// What a batch acted on ("after acting on 2 instances (api-0 to api-1)").
    pub progress: Option<String>,
    /// It acted on nothing (skipped, refused by its budget, aborted before a target).
    pub did_nothing: bool,
    /// Why it stopped short, as the journal says ("unavailability budget exhausted: …").
    pub stopped: Option<String>,
    /// A manual step, and whether its confirmation was automatic (no one checked).
    pub manual: bool,
    pub auto_confirmed: bool,
    /// What the step's own plan did to the signals.
    pub planned: Vec<String>,
    /// The response it belongs to (index into the facts' responses).
    pub response: Option<usize>,
    /// When it started (UTC, RFC 3339 in JSON).
    pub at: DateTime<Utc>,
}

/// A signal before and after a response.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Effect {
    pub panel: String,
    /// How the draft names it ("attempts per request").
    pub name: String,
    /// What `before` and `after` are: "median" (of the readings in each window), "rate per
    /// minute" (a backlog's change) or "share" (user requests failing over each window).
    pub measure: String,
    pub before: f64,
    pub after: f64,
    /// The signal's own variability before the step (interquartile range of its readings).
    pub noise: f64,
    /// The windows read, `[from, to]` (UTC, RFC 3339 in JSON).
    pub before_window: [DateTime<Utc>; 2],
    pub after_window: [DateTime<Utc>; 2],
    /// "2.6× → 1.1×".
    pub change: String,
    /// The share of the way back to normal it moved (negative: it got worse).
    pub improvement: f64,
    /// The change is beyond the noise floor and at least a tenth of the value.
    pub visible: bool,
}

/// Steps started together and what they did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Response {
    pub at: Moment,
    /// When it started (UTC, RFC 3339 in JSON).
    pub start: DateTime<Utc>,
    /// Indexes into the facts' mitigations (`resolution`).
    pub steps: Vec<usize>,
    pub titles: Vec<String>,
    /// The runbooks its steps belong to, in order.
    pub runbooks: Vec<String>,
    /// When the effects' "after" window ended (none when nothing was read).
    pub after: Option<Moment>,
    /// Until when a recovery is this response's: its end and [`CREDIT_AFTER`].
    pub effect_end: DateTime<Utc>,
    pub effects: Vec<Effect>,
    /// "attempts per request 2.6× → 1.1× and error ratio 100% → 3.8% within 2 minutes".
    pub effect_text: Option<String>,
    /// Nothing it was meant to change moved: "no visible effect within 2 minutes: error ratio
    /// stayed at 100%".
    pub no_effect: Option<String>,
    /// The error ratio got better, by less than a tenth: "little effect on the error ratio
    /// within 2 minutes: it fell from 60% to 55%".
    pub little_effect: Option<String>,
    /// A customer signal got worse beyond its noise: "the share of user requests failing rose
    /// from 40% to 54%".
    pub worse: Option<String>,
    /// The scenario's own record that a step of it was a wrong move, and why.
    pub wrong_move: Option<String>,
    /// Every step of it acted on nothing: why they stopped; no effect is read.
    pub stopped: Option<String>,
    /// The recovery followed this response.
    pub credited: bool,
}

/// The planned effects of our own steps: each capacity or restarts panel whose first bad
/// crossing falls while a batch restart runs (or just after) is that batch's doing, and a
/// capacity dip just after a scale-out is its new instances starting.
pub fn planned(
    steps: &[StepRun],
    crossings: &[Crossing],
    board: &Board,
    last: DateTime<Utc>,
) -> Vec<Planned> {
    let mut out = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let restarts = s.batch() && !s.acted_on.is_empty();
        let scales = s.acting() && s.ok() && s.scales_out();
        if !restarts && !scales {
            continue;
        }
        let (from, to) = (s.started, s.until(last) + PLANNED_TAIL);
        let mut panels: Vec<&str> = Vec::new();
        for c in crossings {
            if !panels.contains(&c.panel.as_str()) {
                panels.push(&c.panel);
            }
        }
        for panel in panels {
            let role = board.role_of(panel);
            // A restart takes instances down and counts as a restart; new instances count as
            // not serving while they start.
            let planned_role = match role {
                Some(Role::Capacity) => true,
                Some(Role::Restarts) => restarts,
                _ => false,
            };
            if !planned_role {
                continue;
            }
            let Some(first) = crossings.iter().find(|c| c.panel == panel && c.bad) else {
                continue;
            };
            if first.at < from || first.at > to {
                continue;
            }
            // The worst the plan took it to, from the snapshot, else the crossing's reading.
            let worst = board
                .panel(panel)
                .and_then(|snap| signals::worst_between(snap, secs(from), secs(to)))
                .map_or(first.value, |w| w.0);
            let unit = board.unit(panel);
            let text = if role == Some(Role::Capacity) && !restarts {
                format!(
                    "{} fell to {} while the new instances started",
                    board.name(panel),
                    words::value(unit, worst)
                )
            } else if role == Some(Role::Capacity) {
                format!(
                    "{} fell to {}",
                    board.name(panel),
                    words::value(unit, worst)
                )
            } else {
                format!(
                    "{} reached {}",
                    board.name(panel),
                    words::value(unit, worst)
                )
            };
            out.push(Planned {
                step: i,
                panel: panel.to_string(),
                text,
            });
        }
    }
    out
}

/// The value the draft reads from a panel at `t`: the median (or, named so, the mean) for a
/// latency panel, else the worst series.
pub fn value_at(snap: &crate::incident::snapshot::PanelSnapshot, t: f64) -> Option<f64> {
    if signals::role(snap) == Some(Role::Latency)
        && let Some((m, _)) = signals::central_series(snap)
    {
        let i = m.points.partition_point(|p| p[0] <= t + 1e-6);
        return m.points.get(i.checked_sub(1)?).map(|p| p[1]);
    }
    signals::worst_at(snap, t)
}

fn was_bad(snap: &crate::incident::snapshot::PanelSnapshot, v: f64) -> bool {
    match snap.warn.or(snap.crit) {
        Some(t) => signals::is_bad(snap, v, t),
        None => false,
    }
}

/// When the impact signal had fallen for good: its last move from bad to good within the
/// impact (from the snapshot, so no detector delay), else `end`.
pub fn fallen_at(
    board: &Board,
    impact_panel: Option<&str>,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> DateTime<Utc> {
    let Some(snap) = impact_panel.and_then(|p| board.panel(p)) else {
        return end;
    };
    let Some(crit) = snap.crit.or(snap.warn) else {
        return end;
    };
    let times = signals::instants(snap, secs(start), secs(end) + 60.0);
    let mut last_good_after_bad = None;
    let mut was = false;
    for t in times {
        let Some(v) = signals::worst_at(snap, t) else {
            continue;
        };
        let bad = signals::is_bad(snap, v, crit);
        if was && !bad {
            last_good_after_bad = Some(t);
        }
        was = bad;
    }
    last_good_after_bad.map_or(end, instant)
}

/// The impact window (start, end when known) and the panel whose crossing defined it.
pub type ImpactSpan<'a> = (DateTime<Utc>, Option<DateTime<Utc>>, Option<&'a str>);

/// What the responses are read from.
pub struct Input<'a> {
    pub steps: &'a [StepRun],
    /// The steps the draft tells (indexes into `steps`).
    pub chosen: &'a [usize],
    pub planned: &'a [Planned],
    pub board: &'a Board<'a>,
    /// The impact window and its defining panel, for the recovery's credit.
    pub impact: Option<ImpactSpan<'a>>,
    /// The journal's events (the simulator's record of wrong moves).
    pub events: &'a [(&'a Record, &'a Event)],
    pub last: DateTime<Utc>,
    pub tz: Tz,
}

/// The steps in groups of those started together; a step that acted on nothing is a group of
/// its own (it shares no effect).
fn groups(i: &Input) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for &m in i.chosen {
        let s = &i.steps[m];
        if s.manual() || s.skipped || s.declined {
            continue;
        }
        match groups.last_mut() {
            Some(g)
                if !s.did_nothing()
                    && !i.steps[g[0]].did_nothing()
                    && s.started - i.steps[g[0]].started <= TOGETHER =>
            {
                g.push(m);
            }
            _ => groups.push(vec![m]),
        }
    }
    groups
}

/// Every signal a response may have moved, read over its windows: the customers' failures
/// (user requests where counted, else the error ratio's panel), then each panel that was bad
/// when it started (a backlog by its rate), leaving out the step's own planned effects and
/// restart counts.
fn read_effects(
    board: &Board,
    own_planned: &[&str],
    t0: DateTime<Utc>,
    after: DateTime<Utc>,
    limit: DateTime<Utc>,
) -> Vec<Effect> {
    let (t, a, l) = (secs(t0), secs(after), secs(limit));
    let error = board.role(Role::ErrorRatio);
    let users = window::user_failures(board, t, a, l);
    let mut out = Vec::new();
    if let Some(r) = users {
        out.push(effect(
            USER_FAILURES,
            "share of user requests failing",
            "share",
            Unit::Percent,
            false,
            r,
        ));
    }
    for snap in board.panels() {
        let role = signals::role(snap);
        if own_planned.contains(&snap.title.as_str()) || role == Some(Role::Restarts) {
            continue;
        }
        let is_error = error.is_some_and(|e| e.title == snap.title);
        // Attempts count every retry: where user requests were counted, they speak for the
        // customers instead.
        if is_error && users.is_some() {
            continue;
        }
        let Some(now) = value_at(snap, t) else {
            continue;
        };
        if !is_error && !was_bad(snap, now) {
            continue;
        }
        let name = board.value_name(&snap.title);
        let below = snap.bad_below();
        if role == Some(Role::QueueDepth) {
            if let Some(r) = window::rate(snap, t, a, l) {
                out.push(effect(
                    &snap.title,
                    &name,
                    "rate per minute",
                    snap.unit(),
                    false,
                    r,
                ));
            }
        } else if let Some(r) = window::level(snap, t, a, l) {
            out.push(effect(&snap.title, &name, "median", snap.unit(), below, r));
        }
    }
    out
}

fn effect(panel: &str, name: &str, measure: &str, unit: Unit, below: bool, r: Read) -> Effect {
    let rate = measure == "rate per minute";
    let scale = r.before.abs().max(r.after.abs()).max(1e-9);
    let improvement = if below {
        (r.after - r.before) / scale
    } else {
        (r.before - r.after) / scale
    };
    Effect {
        panel: panel.to_string(),
        name: name.to_string(),
        measure: measure.to_string(),
        before: r.before,
        after: r.after,
        noise: r.noise,
        before_window: [instant(r.before_span.0), instant(r.before_span.1)],
        after_window: [instant(r.after_span.0), instant(r.after_span.1)],
        change: if rate {
            phrases::rate_change(unit, r.before, r.after)
        } else {
            phrases::change(unit, r.before, r.after)
        },
        improvement,
        visible: r.beyond_noise()
            && improvement.abs() >= STILL
            && (unit != Unit::Percent || (r.after - r.before).abs() >= SHARE_FLOOR),
    }
}

/// The customer signals: user requests failing (else the error ratio) and latency.
fn is_customer(board: &Board, e: &Effect) -> bool {
    e.panel == USER_FAILURES
        || matches!(
            board.role_of(&e.panel),
            Some(Role::ErrorRatio | Role::Latency)
        )
}

/// The effect the customers' failures are told by.
fn is_failures(board: &Board, e: &Effect) -> bool {
    e.panel == USER_FAILURES || board.role_of(&e.panel) == Some(Role::ErrorRatio)
}

/// How one effect is worded: its change when it moved, else how it moved ("stayed at").
fn worded(board: &Board, e: &Effect) -> String {
    if e.visible || e.measure == "rate per minute" {
        format!("{} {}", e.name, e.change)
    } else {
        let unit = if e.panel == USER_FAILURES {
            Unit::Percent
        } else {
            board.unit(&e.panel)
        };
        format!("{} {}", e.name, phrases::moved(unit, e.before, e.after))
    }
}

/// The scenario's wrong moves recorded from the group's start until the next group's (at most
/// [`WRONG_MOVE_LAG`] after its steps ended: the simulator's record reaches the journal when
/// warroom next asks for it).
fn wrong_moves(i: &Input, g: &[usize], next: Option<DateTime<Utc>>) -> Option<String> {
    let started = i.steps[g[0]].started;
    let until = g
        .iter()
        .map(|m| i.steps[*m].until(i.last))
        .max()
        .unwrap_or(started);
    // The simulator stamps an action with its own clock, which may read a moment before the
    // step's start record.
    let from = started - Duration::seconds(5);
    let to = (until + WRONG_MOVE_LAG).min(next.unwrap_or(DateTime::<Utc>::MAX_UTC));
    let mut why: Vec<String> = Vec::new();
    let mut actions = 0;
    for (r, e) in i.events {
        let Event::SimAction { wrong: Some(w), .. } = e else {
            continue;
        };
        if r.time >= from && r.time < to {
            actions += 1;
            if !why.contains(w) {
                why.push(w.clone());
            }
        }
    }
    (!why.is_empty()).then(|| {
        let times = if actions == 1 {
            "a wrong move".to_string()
        } else {
            format!("{actions} wrong moves")
        };
        format!("the scenario records {times}: {}", why.join("; "))
    })
}

/// What the texts say about a group's effects.
struct Told {
    effect_text: Option<String>,
    no_effect: Option<String>,
    little_effect: Option<String>,
    worse: Option<String>,
}

fn tell(board: &Board, effects: &[Effect], within: &str) -> Told {
    let moved = effects.iter().any(|e| e.visible);
    let failures = effects.iter().find(|e| is_failures(board, e));
    // The failures were bad and did not move beyond their noise: whatever else moved,
    // customers saw nothing.
    let failures_unmoved = failures.filter(|e| !e.visible && e.before >= 0.05);
    let little = failures_unmoved.filter(|e| e.improvement > 0.0 && e.after != e.before);
    let name_of = |e: &Effect| {
        if e.panel == USER_FAILURES {
            "the share of user requests failing".to_string()
        } else {
            format!("the {}", e.name)
        }
    };
    let unit_of = |e: &Effect| {
        if e.panel == USER_FAILURES {
            Unit::Percent
        } else {
            board.unit(&e.panel)
        }
    };
    let no_effect = if !effects.is_empty() && !moved {
        let stayed: Vec<String> = effects.iter().map(|e| worded(board, e)).collect();
        Some(format!(
            "no visible effect within {within}: {}",
            words::and_list(&stayed)
        ))
    } else {
        failures_unmoved.filter(|_| little.is_none()).map(|e| {
            format!(
                "no visible effect on {} within {within}: it {}",
                name_of(e),
                phrases::moved(unit_of(e), e.before, e.after)
            )
        })
    };
    let little_effect = little.filter(|_| no_effect.is_none()).map(|e| {
        format!(
            "little effect on {} within {within}: it {}",
            name_of(e),
            phrases::moved(unit_of(e), e.before, e.after)
        )
    });
    let worse: Vec<String> = effects
        .iter()
        .filter(|e| is_customer(board, e) && e.visible && e.improvement < 0.0)
        .map(|e| {
            format!(
                "{} {}",
                name_of(e),
                phrases::moved(unit_of(e), e.before, e.after)
            )
        })
        .collect();
    let effect_text = moved.then(|| {
        let parts: Vec<String> = effects
            .iter()
            .filter(|e| e.visible)
            .map(|e| worded(board, e))
            .collect();
        format!("{} within {within}", words::and_list(&parts))
    });
    Told {
        effect_text,
        no_effect,
        little_effect,
        worse: (!worse.is_empty()).then(|| format!("{} within {within}", words::and_list(&worse))),
    }
}

/// One group's response.
fn response(i: &Input, g: &[usize], next: Option<DateTime<Utc>>) -> Response {
    let (steps, board) = (i.steps, i.board);
    let t0 = steps[g[0]].started;
    let until = g
        .iter()
        .map(|m| steps[*m].until(i.last))
        .max()
        .unwrap_or(t0);
    let limit = next.unwrap_or(i.last).min(i.last).max(t0);
    let after = (t0 + EFFECT_AFTER).max(until).min(limit);
    let own_planned: Vec<&str> = i
        .planned
        .iter()
        .filter(|p| g.contains(&p.step))
        .map(|p| p.panel.as_str())
        .collect();
    let did_nothing = g.iter().all(|m| steps[*m].did_nothing());
    let mut effects = if did_nothing || limit - t0 < TOO_SOON {
        Vec::new()
    } else {
        read_effects(board, &own_planned, t0, after, limit)
    };
    // The customers' failures last; of the others, the three that moved most.
    let (mut errs, mut rest): (Vec<Effect>, Vec<Effect>) =
        effects.drain(..).partition(|e| is_failures(board, e));
    rest.sort_by(|a, b| b.improvement.abs().total_cmp(&a.improvement.abs()));
    rest.truncate(3);
    rest.append(&mut errs);
    // Nothing was wrong when it started: there is no effect to tell.
    let any_bad = rest.iter().any(|e| {
        e.panel == USER_FAILURES && e.before >= 0.01
            || board.panel(&e.panel).is_some_and(|p| was_bad(p, e.before))
    });
    if !any_bad {
        rest.clear();
    }
    let read_until = rest.iter().map(|e| e.after_window[1]).max();
    let within = words::delay(read_until.map_or(0, |a| (a - t0).num_seconds()));
    let told = tell(board, &rest, &within);
    let stopped = did_nothing.then(|| {
        let why: Vec<String> = g
            .iter()
            .map(|m| format!("{} {}", steps[*m].title, steps[*m].ended()))
            .collect();
        why.join("; ")
    });
    Response {
        at: Moment::new(t0, i.tz),
        start: t0,
        steps: g
            .iter()
            .filter_map(|m| i.chosen.iter().position(|c| c == m))
            .collect(),
        titles: {
            let mut t: Vec<String> = Vec::new();
            for m in g {
                if !t.contains(&steps[*m].title) {
                    t.push(steps[*m].title.clone());
                }
            }
            t
        },
        runbooks: {
            let mut r: Vec<String> = Vec::new();
            for m in g {
                if !r.contains(&steps[*m].runbook) {
                    r.push(steps[*m].runbook.clone());
                }
            }
            r
        },
        after: read_until.map(|a| Moment::new(a, i.tz)),
        effect_end: until.max(t0 + EFFECT_AFTER) + CREDIT_AFTER,
        effects: rest,
        effect_text: told.effect_text,
        no_effect: told.no_effect,
        little_effect: told.little_effect,
        worse: told.worse,
        wrong_move: wrong_moves(i, g, next),
        stopped,
        credited: false,
    }
}

/// The responses: steps (acting, not skipped or declined) grouped by start, each with its
/// effect, and the recovery credited to the last one whose effect window it fell in.
pub fn responses(i: &Input) -> Vec<Response> {
    let groups = groups(i);
    let starts: Vec<DateTime<Utc>> = groups.iter().map(|g| i.steps[g[0]].started).collect();
    let mut out: Vec<Response> = groups
        .iter()
        .enumerate()
        .map(|(n, g)| {
            let next = starts[n + 1..].iter().copied().find(|s| *s > starts[n]);
            response(i, g, next)
        })
        .collect();
    if let Some(fallen) = recovered_at(i)
        && let Some(r) = out.iter_mut().rev().find(|r| {
            r.start < fallen
                && fallen <= r.effect_end
                && r.stopped.is_none()
                && r.no_effect.is_none()
        })
    {
        r.credited = true;
    }
    out
}

/// When the customers' signal had fallen for good, when the impact ended.
pub fn recovered_at(i: &Input) -> Option<DateTime<Utc>> {
    let (start, end, panel) = i.impact?;
    Some(fallen_at(i.board, panel, start, end?))
}

/// The recovery's words when no response is credited with it: "52 minutes after Disable
/// retries, as traffic fell" (after the last response that started before it), or `None`.
pub fn uncredited(responses: &[Response], board: &Board, fallen: DateTime<Utc>) -> Option<String> {
    if responses.iter().any(|r| r.credited) {
        return None;
    }
    let r = responses.iter().rev().find(|r| r.start < fallen)?;
    let fell = match (
        window::traffic(board, r.start),
        window::traffic(board, fallen),
    ) {
        (Some(a), Some(b)) if a > 0.0 && b < a * (1.0 - TRAFFIC_FELL) => ", as traffic fell",
        _ => "",
    };
    Some(format!(
        "{} after {}{fell}; no step is credited with it",
        words::delay((fallen - r.start).num_seconds()),
        words::and_list(&r.titles)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::postmortem::signals::tests::snap;

    fn effect(panel: &str, before: f64, after: f64, noise: f64) -> Effect {
        let at = |s: i64| DateTime::from_timestamp(s, 0).unwrap();
        let visible = (after - before).abs() > noise && (after - before).abs() >= 0.1 * before;
        Effect {
            panel: panel.into(),
            name: panel.to_lowercase(),
            measure: "share".into(),
            before,
            after,
            noise,
            before_window: [at(0), at(60)],
            after_window: [at(60), at(120)],
            change: String::new(),
            // Bad above: the way back to normal is down.
            improvement: (before - after) / before,
            visible,
        }
    }

    /// A customer signal that got worse beyond its noise is said to have been made worse, one
    /// that got better never is, and a rise inside the noise is no visible effect, not "worse".
    #[test]
    fn a_customer_signal_worse_beyond_its_noise_is_said_to_be_made_worse() {
        let panels = [snap("Queue depth", "count", vec![])];
        let board = Board::new(&panels, &[]);
        let worse = tell(
            &board,
            &[effect(USER_FAILURES, 0.30, 0.52, 0.05)],
            "2 minutes",
        );
        let said = worse.worse.expect("said to be worse");
        assert!(
            said.starts_with("the share of user requests failing")
                && said.contains("30%")
                && said.contains("52%")
                && said.ends_with("within 2 minutes"),
            "{said}"
        );
        let better = tell(
            &board,
            &[effect(USER_FAILURES, 0.52, 0.30, 0.05)],
            "2 minutes",
        );
        assert_eq!(better.worse, None);
        assert!(better.effect_text.is_some());
        let inside = tell(
            &board,
            &[effect(USER_FAILURES, 0.30, 0.33, 0.05)],
            "2 minutes",
        );
        assert_eq!(inside.worse, None);
        assert!(
            inside
                .no_effect
                .is_some_and(|t| t.starts_with("no visible effect"))
        );
        // Not a customer signal: a backlog that grew is no customer made worse here.
        let queue = tell(
            &board,
            &[effect("Queue depth", 100.0, 500.0, 5.0)],
            "2 minutes",
        );
        assert_eq!(queue.worse, None);
    }
}
