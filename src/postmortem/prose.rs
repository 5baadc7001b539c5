//! The judgement sections' opening prose, built from the facts alone (issue 32, point 7): the
//! Summary's sentences in the house's shape (what failed, for whom, for how long, the recorded
//! cause, how service was restored), Root Cause's cause on the timeline and measured
//! mechanism, and What Went Well / Poorly and Lessons Learned seeded from measured facts
//! (detection delay, time to first mitigation, wrong moves, steps that did nothing), each a
//! suggestion the template marks `[Suggested]` for the author to keep or delete.
//!
//! Every figure a sentence holds is one of the facts' own texts (a clock, a duration, a
//! reading as the facts write it): nothing here computes a number the facts do not show.

use super::customer::Headline;
use super::effects::Response;
use super::facts::{Facts, Moment, Notes};
use super::phrases;
use super::words;
use chrono::{DateTime, Utc};
use serde::Serialize;

/// An alert within this long of the impact's start is prompt.
const PROMPT_ALERT_S: i64 = 5 * 60;
/// A first mitigation within this long of the impact's start is prompt.
const PROMPT_MITIGATION_S: i64 = 15 * 60;

/// A fault or a change the timeline records: what the record names as the cause.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cause {
    pub at: Moment,
    /// As the timeline words it, without its full stop ("planner-api-2026.07.17.1 deployed").
    pub what: String,
    /// How long before the impact began it came ("5 minutes"); `None` when it came with it
    /// or after.
    pub before_impact: Option<String>,
}

/// The sentences built from the facts, by the sections the notes seed (`sections`: the
/// Summary's opening paragraphs and Root Cause's after the tagged notes, the cause on the
/// timeline and the measured mechanism; What Went Well, What Went Poorly and Lessons Learned's
/// lines, each a suggestion the author keeps, rewords or deletes), and what they quote that no
/// other fact holds: the time from the impact's start to the first response (time to first
/// mitigation), the first fault or change the timeline records before the impact ended, and
/// after which steps and how long the recovery came ("2 minutes after Roll the deploy back",
/// "52 minutes after Disable retries, as traffic fell; no step is credited with it").
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Prose {
    pub sections: Notes,
    pub first_mitigation_after: Option<String>,
    pub cause: Option<Cause>,
    pub recovered_after: Option<String>,
}

fn instant(m: &Moment) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(&m.utc)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

fn seconds_between(from: &Moment, to: &Moment) -> Option<i64> {
    Some((instant(to)? - instant(from)?).num_seconds())
}

/// The titles of a response, as a list.
fn titles(r: &Response) -> String {
    words::and_list(&r.titles)
}

/// The prose of `f`, whose causes the timeline recorded.
pub fn compute(f: &Facts, causes: &[Cause], recovered_after: Option<String>) -> Prose {
    let cause = first_cause(f, causes);
    let first_mitigation_after = mitigation_s(f).filter(|s| *s >= 0).map(words::delay);
    let mut p = Prose {
        first_mitigation_after,
        cause,
        recovered_after,
        ..Prose::default()
    };
    p.sections = Notes {
        summary: summary(f, &p),
        root_cause: root_cause(f, &p),
        went_well: went_well(f, &p),
        went_poorly: went_poorly(f, &p),
        lesson: lessons(f),
        ..Notes::default()
    };
    p
}

/// The first fault or change at or before the impact's end (or its start, when it has none).
fn first_cause(f: &Facts, causes: &[Cause]) -> Option<Cause> {
    let until = f
        .impact
        .as_ref()
        .map(|i| i.end.as_ref().unwrap_or(&i.start));
    let mut c = causes
        .iter()
        .find(|c| until.is_none_or(|u| seconds_between(&c.at, u).is_some_and(|s| s >= 0)))
        .cloned()?;
    c.before_impact = f
        .impact
        .as_ref()
        .and_then(|i| seconds_between(&c.at, &i.start))
        .filter(|s| *s > 0)
        .map(words::delay);
    Some(c)
}

fn outage_words(h: Option<Headline>) -> &'static str {
    match h {
        Some(Headline::Major) => "a major outage",
        Some(Headline::Partial) => "a partial outage",
        Some(Headline::Degraded) => "degraded performance",
        None => "an incident",
    }
}

/// What failed, for whom and for how long, then the cause and how service came back.
fn summary(f: &Facts, p: &Prose) -> Vec<String> {
    let mut out = Vec::new();
    let Some(i) = &f.impact else {
        return out;
    };
    let who = if f.services.is_empty() {
        "The service".to_string()
    } else {
        words::and_list(&f.services)
    };
    let what = outage_words(f.customer.headline);
    let mut first = vec![match (&i.end, &i.duration) {
        (Some(e), Some(d)) => format!(
            "On {}, {who} had {what} for {d}, from {} to {} {}.",
            i.start.date, i.start.clock, e.clock, f.time_words
        ),
        _ => format!(
            "On {}, {who} had {what} from {} {}; it had not ended when the record did.",
            i.start.date, i.start.clock, f.time_words
        ),
    }];
    let c = &f.customer;
    match (&c.failed, &c.requests, &c.failed_share) {
        (Some(failed), Some(made), Some(share)) => first.push(format!(
            "{} of {} user requests failed ({}).",
            failed.text, made.text, share.text
        )),
        _ => {
            if let Some(e) = &f.signals.error_ratio {
                first.push(format!(
                    "At the peak ({}), {} of attempts failed, retries included.",
                    e.at.clock, e.text
                ));
            }
        }
    }
    first.extend(backlog(f));
    out.push(first.join(" "));

    let mut second = Vec::new();
    if let Some(c) = &p.cause {
        second.push(format!(
            "The record names its cause at {} ({}).",
            c.at.clock,
            c.what.trim_end_matches('.')
        ));
    }
    if let (Some(panel), Some(lead)) = (&f.detection.first_crossing_panel, &f.detection.lead) {
        second.push(format!(
            "{panel} crossed its threshold first, {lead} before customers were affected."
        ));
    }
    second.push(restored(f, p));
    out.push(second.join(" "));
    out
}

/// The backlog as its own fact: its peak, and when and how fast it drained.
fn backlog(f: &Facts) -> Option<String> {
    let b = f.customer.backlog.as_ref()?;
    let name = match &b.queue {
        Some(q) => format!("The {q} backlog"),
        None => "The backlog".into(),
    };
    Some(match (&b.drained, &b.rate, &b.left) {
        (Some(d), Some(r), _) => format!(
            "{name} peaked at {} waiting and drained by {}, at about {} a minute.",
            b.peak.text, d.clock, r.text
        ),
        (Some(d), None, _) => format!(
            "{name} peaked at {} waiting and drained by {}.",
            b.peak.text, d.clock
        ),
        (None, _, Some(l)) => format!(
            "{name} peaked at {} waiting and still held {} when the record ended.",
            b.peak.text, l.text
        ),
        _ => format!(
            "{name} peaked at {} waiting and had not drained when the record ended.",
            b.peak.text
        ),
    })
}

/// How service came back: the response credited, or how long after the last one it came.
fn restored(f: &Facts, p: &Prose) -> String {
    let end = f.impact.as_ref().and_then(|i| i.end.as_ref());
    match (&f.recovery, end) {
        (Some(r), _) => {
            // Customers still waited on a backlog after the errors stopped: the errors' end
            // is not yet the service's.
            let verb = if end.is_some_and(|e| e.clock != r.at.clock) {
                "The errors stopped"
            } else if r.after.is_empty() {
                "Service recovered"
            } else {
                "Service was restored"
            };
            match &p.recovered_after {
                Some(a) => format!("{verb} at {}, {a}.", r.at.clock),
                None => format!("{verb} at {}.", r.at.clock),
            }
        }
        (None, _) if f.responses.is_empty() => {
            "When the record ended, customers were still affected and no step had been taken."
                .into()
        }
        (None, _) => {
            let all: Vec<String> = f.responses.iter().flat_map(|r| r.titles.clone()).collect();
            format!(
                "When the record ended, customers were still affected after {}.",
                words::and_list(&all)
            )
        }
    }
}

/// The cause the timeline records, and the mechanism the panels measured.
fn root_cause(f: &Facts, p: &Prose) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(c) = &p.cause {
        let when = match &c.before_impact {
            Some(b) => format!(", {b} before the impact began"),
            None => ", as the impact began".to_string(),
        };
        out.push(format!(
            "The timeline records the cause at {}{when}: {}.",
            c.at.clock,
            c.what.trim_end_matches('.')
        ));
    }
    let s = &f.signals;
    let mut mechanism = Vec::new();
    if let Some(pool) = &s.pool_saturation {
        mechanism.push(phrases::peak("Database connection-pool saturation", pool));
    }
    if let Some(a) = s.retry_amplification.as_ref().filter(|a| a.value >= 1.5) {
        mechanism.push(phrases::amplification(a));
    }
    if let Some(l) = &s.latency {
        mechanism.extend(phrases::latency_rose(l));
    }
    if !mechanism.is_empty() {
        out.push(mechanism.join(" "));
    }
    out
}

fn went_well(f: &Facts, p: &Prose) -> Vec<String> {
    let mut out = Vec::new();
    let d = &f.detection;
    let alert_s = d
        .impact_began
        .as_ref()
        .zip(d.first_alert.as_ref())
        .and_then(|(s, a)| seconds_between(s, a));
    if let (Some(s), Some(after), Some(name)) = (alert_s, &d.alert_after, &d.first_alert_name)
        && s <= PROMPT_ALERT_S
    {
        out.push(format!(
            "The alert {name} fired {after} after the impact began."
        ));
    }
    if let (Some(after), Some(s)) = (&p.first_mitigation_after, mitigation_s(f))
        && s <= PROMPT_MITIGATION_S
    {
        out.push(format!(
            "The first mitigation started {after} after the impact began."
        ));
    }
    if f.recovery.as_ref().is_some_and(|r| !r.after.is_empty())
        && let Some(a) = &p.recovered_after
    {
        out.push(format!("The errors ended {a}."));
    }
    out
}

fn mitigation_s(f: &Facts) -> Option<i64> {
    let i = f.impact.as_ref()?;
    let r = f.responses.iter().find(|r| r.stopped.is_none())?;
    seconds_between(&i.start, &r.at)
}

/// Whether `r` started before the errors' recovery (or there was none): a step after it is
/// no part of what went poorly.
fn before_recovery(f: &Facts, r: &Response) -> bool {
    f.recovery
        .as_ref()
        .and_then(|rec| seconds_between(&r.at, &rec.at))
        .is_none_or(|s| s > 0)
}

fn went_poorly(f: &Facts, p: &Prose) -> Vec<String> {
    let mut out = Vec::new();
    let d = &f.detection;
    match (&d.first_alert, &d.alert_after) {
        (None, _) => out.push(match &d.action_after {
            Some(a) => {
                format!("No alert fired; the first person acted {a} after the impact began.")
            }
            None => "No alert fired.".into(),
        }),
        (Some(at), Some(after))
            if d.impact_began
                .as_ref()
                .and_then(|s| seconds_between(s, at))
                .is_some_and(|s| s > PROMPT_ALERT_S) =>
        {
            out.push(format!(
                "The first alert fired {after} after the impact began."
            ));
        }
        _ => {}
    }
    // Said once when the first person to act started the first mitigation.
    if let (Some(after), Some(s)) = (&p.first_mitigation_after, mitigation_s(f))
        && s > PROMPT_MITIGATION_S
        && (d.first_alert.is_some() || d.action_after.as_ref() != Some(after))
    {
        out.push(format!(
            "The first mitigation started {after} after the impact began."
        ));
    }
    for r in f.responses.iter().filter(|r| before_recovery(f, r)) {
        if let Some(w) = &r.worse {
            out.push(format!("{} made it worse: {w}.", titles(r)));
        }
        if let Some(w) = &r.wrong_move {
            out.push(words::sentence(&format!("on the simulator, {w}")));
        }
        if let Some(why) = &r.stopped {
            out.push(format!("{} acted on nothing: {why}.", titles(r)));
        } else if let Some(n) = &r.no_effect {
            out.push(format!("{} had {n}.", titles(r)));
        }
    }
    if let Some(r) = &f.recovery
        && r.after.is_empty()
        && let Some(a) = &p.recovered_after
    {
        out.push(format!("Service came back at {}, {a}.", r.at.clock));
    }
    out
}

fn lessons(f: &Facts) -> Vec<String> {
    let mut out = Vec::new();
    let d = &f.detection;
    if let (Some(panel), Some(lead), None) = (&d.first_crossing_panel, &d.lead, &d.first_alert) {
        out.push(format!(
            "{panel} crossed its threshold {lead} before customers were affected and no alert \
             fired: an alert on it would have given that warning."
        ));
    }
    let credited: Vec<&Response> = f.responses.iter().filter(|r| r.credited).collect();
    let idle: Vec<String> = f
        .responses
        .iter()
        .filter(|r| (r.no_effect.is_some() || r.stopped.is_some()) && before_recovery(f, r))
        .map(titles)
        .collect();
    if let (Some(c), false) = (credited.first(), idle.is_empty()) {
        out.push(format!(
            "Only {} changed what customers saw; {} did not.",
            titles(c),
            words::and_list(&idle)
        ));
    }
    for r in f
        .responses
        .iter()
        .filter(|r| r.worse.is_some() || r.wrong_move.is_some())
    {
        out.push(format!(
            "{} made this incident worse: its runbook should check for these conditions \
             before it acts.",
            titles(r)
        ));
    }
    out
}
