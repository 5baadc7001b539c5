//! What each mitigation did, from the panel snapshots: the signals just before it and a few
//! minutes after ("attempts per request 2.6× → 1.1× and error ratio 100% → 3.8% within 2
//! minutes"), the recovery credited to the step it followed, a step that changed nothing said
//! so, and what a step's own plan did to the signals (a batch restart takes instances down),
//! which is the step's, not the incident's.
//!
//! Steps started within a minute of each other act together: their effect cannot be told
//! apart, so they are one response with one effect.

use super::board::{Board, instant, secs};
use super::facts::Moment;
use super::phrases;
use super::signals::{self, Role};
use super::steps::StepRun;
use super::timeline::{Crossing, Planned};
use super::words;
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
    pub before: f64,
    pub after: f64,
    /// "2.6× → 1.1×".
    pub change: String,
    /// The share of the way back to normal it moved (negative: it got worse).
    pub improvement: f64,
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
    /// When the effects' "after" values were read (none when the next step came too soon).
    pub after: Option<Moment>,
    pub effects: Vec<Effect>,
    /// "attempts per request 2.6× → 1.1× and error ratio 100% → 3.8% within 2 minutes".
    pub effect_text: Option<String>,
    /// Nothing it was meant to change moved: "no visible effect within 2 minutes: error ratio
    /// stayed at 100%".
    pub no_effect: Option<String>,
    /// The error ratio got better, by less than a tenth: "little effect on the error ratio
    /// within 2 minutes: it fell from 60% to 55%".
    pub little_effect: Option<String>,
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

/// The value the draft reads from a panel at `t`: the median for a latency panel, else the
/// worst series.
pub fn value_at(snap: &crate::incident::snapshot::PanelSnapshot, t: f64) -> Option<f64> {
    if signals::role(snap) == Some(Role::Latency)
        && let Some(m) = signals::median_series(snap)
    {
        let i = m.points.partition_point(|p| p[0] <= t + 1e-6);
        return m.points.get(i.checked_sub(1)?).map(|p| p[1]);
    }
    signals::worst_at(snap, t)
}

/// The share of the way back to normal a value moved from `before` to `after` (normal is the
/// other side of the panel's warning threshold, or zero).
fn improvement(snap: &crate::incident::snapshot::PanelSnapshot, before: f64, after: f64) -> f64 {
    let scale = before.abs().max(after.abs()).max(1e-9);
    if snap.bad_below() {
        (after - before) / scale
    } else {
        (before - after) / scale
    }
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

/// The responses: steps (acting, not skipped or declined) grouped by start, each with its
/// effect; `impact` is the impact window and its defining panel, for the recovery's credit.
pub fn responses(
    steps: &[StepRun],
    chosen: &[usize],
    planned: &[Planned],
    board: &Board,
    impact: Option<ImpactSpan>,
    last: DateTime<Utc>,
    tz: Tz,
) -> Vec<Response> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for &m in chosen {
        let s = &steps[m];
        if s.manual() || s.skipped || s.declined {
            continue;
        }
        match groups.last_mut() {
            Some(g) if s.started - steps[g[0]].started <= TOGETHER => g.push(m),
            _ => groups.push(vec![m]),
        }
    }
    let error = board.role(Role::ErrorRatio);
    let mut out = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        let t0 = steps[g[0]].started;
        let until = g.iter().map(|m| steps[*m].until(last)).max().unwrap_or(t0);
        let next = groups.get(gi + 1).map(|n| steps[n[0]].started);
        let mut after = (t0 + EFFECT_AFTER).max(until);
        if let Some(n) = next {
            after = after.min(n);
        }
        after = after.min(last.max(t0));
        let own_planned: Vec<&str> = planned
            .iter()
            .filter(|p| g.contains(&p.step))
            .map(|p| p.panel.as_str())
            .collect();
        let mut effects = Vec::new();
        if after - t0 >= TOO_SOON {
            for snap in board.panels() {
                if own_planned.contains(&snap.title.as_str())
                    || signals::role(snap) == Some(Role::Restarts)
                {
                    continue;
                }
                let (Some(b), Some(a)) = (value_at(snap, secs(t0)), value_at(snap, secs(after)))
                else {
                    continue;
                };
                let is_error = error.is_some_and(|e| e.title == snap.title);
                if !is_error && !was_bad(snap, b) {
                    continue;
                }
                effects.push(Effect {
                    panel: snap.title.clone(),
                    name: board.value_name(&snap.title),
                    before: b,
                    after: a,
                    change: phrases::change(snap.unit(), b, a),
                    improvement: improvement(snap, b, a),
                });
            }
        }
        // The error ratio last; of the others, the three that moved most.
        let (mut errs, mut rest): (Vec<Effect>, Vec<Effect>) = effects
            .into_iter()
            .partition(|e| error.is_some_and(|s| s.title == e.panel));
        rest.sort_by(|a, b| b.improvement.abs().total_cmp(&a.improvement.abs()));
        rest.truncate(3);
        rest.append(&mut errs);
        let within = words::delay((after - t0).num_seconds());
        let moved = rest.iter().any(|e| e.improvement.abs() >= STILL);
        // Nothing was wrong when it started: there is no effect to tell.
        let any_bad = rest
            .iter()
            .any(|e| board.panel(&e.panel).is_some_and(|p| was_bad(p, e.before)));
        if !any_bad {
            rest.clear();
        }
        // What moved, the error ratio however it went.
        let is_error = |e: &Effect| error.is_some_and(|s| s.title == e.panel);
        let worded = |e: &Effect| {
            if e.improvement.abs() >= STILL {
                format!("{} {}", e.name, e.change)
            } else {
                let unit = board.unit(&e.panel);
                format!("{} {}", e.name, phrases::moved(unit, e.before, e.after))
            }
        };
        // The error ratio was bad and did not move: whatever else moved, customers saw nothing.
        let errors_unmoved = rest.iter().find(|e| is_error(e)).filter(|e| {
            e.improvement.abs() < STILL
                && error.is_some_and(|s| s.crit.is_some_and(|c| signals::is_bad(s, e.before, c)))
        });
        // It got better, only by less than counts: "little", not "no".
        let little = errors_unmoved.filter(|e| e.improvement > 0.0 && e.after != e.before);
        let no_effect = if !rest.is_empty() && !moved {
            let stayed: Vec<String> = rest.iter().map(worded).collect();
            Some(format!(
                "no visible effect within {within}: {}",
                words::and_list(&stayed)
            ))
        } else {
            errors_unmoved.filter(|_| little.is_none()).map(|e| {
                let unit = board.unit(&e.panel);
                format!(
                    "no visible effect on the error ratio within {within}: it {}",
                    phrases::moved(unit, e.before, e.after)
                )
            })
        };
        let little_effect = little.filter(|_| no_effect.is_none()).map(|e| {
            let unit = board.unit(&e.panel);
            format!(
                "little effect on the error ratio within {within}: it {}",
                phrases::moved(unit, e.before, e.after)
            )
        });
        let effect_text = (!rest.is_empty() && moved).then(|| {
            let parts: Vec<String> = rest
                .iter()
                .filter(|e| {
                    e.improvement.abs() >= STILL || (is_error(e) && errors_unmoved.is_none())
                })
                .map(worded)
                .collect();
            format!("{} within {within}", words::and_list(&parts))
        });
        out.push(Response {
            at: Moment::new(t0, tz),
            start: t0,
            steps: g
                .iter()
                .filter_map(|m| chosen.iter().position(|c| c == m))
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
            after: (!rest.is_empty()).then(|| Moment::new(after, tz)),
            effects: rest,
            effect_text,
            no_effect,
            little_effect,
            credited: false,
        });
    }
    // The recovery is credited to the last response that started before the errors had
    // fallen for good and visibly did something.
    if let Some((start, Some(end), panel)) = impact {
        let fallen = fallen_at(board, panel, start, end);
        if let Some(r) = out
            .iter_mut()
            .rev()
            .filter(|r| r.start < fallen)
            .find(|r| r.no_effect.is_none())
        {
            r.credited = true;
        }
    }
    out
}
