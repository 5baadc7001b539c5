//! Detection as the house writes it: when the impact began, which signal led it (the first
//! to cross into its bad level that was still bad when the impact began, crossing before any
//! step acted: a signal that went bad only after a step, not already heading there before it, is
//! that step's effect, and said so)
//! and by how much it led, when the first alert fired (or that none did, and which signals that moved
//! no alert rule watches), when a person first acted, and the delays between them.

use super::board;
use super::facts::Moment;
use super::rules::{self, AlertRule};
use super::timeline::{Crossing, Planned};
use super::window;
use super::words;
use crate::incident::event::{Event, Source, StepState};
use crate::incident::record::Record;
use crate::incident::snapshot::PanelSnapshot;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;

/// How the incident was noticed.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Detection {
    pub impact_began: Option<Moment>,
    /// The first signal to cross a threshold (signals already past one when the record began
    /// and a runbook's planned effects left out).
    pub first_crossing: Option<Moment>,
    pub first_crossing_panel: Option<String>,
    /// How long the first signal led the impact ("40 seconds").
    pub lead: Option<String>,
    /// Signals that first went bad after a step acted: "PostgreSQL connection saturation went
    /// bad at 10:14, after Cancel long transactions began at 10:12: an effect of that step,
    /// not a cause."
    pub step_effects: Vec<String>,
    pub first_alert: Option<Moment>,
    pub first_alert_name: Option<String>,
    /// From the impact's start to the first alert.
    pub alert_after: Option<String>,
    /// Signals that crossed a threshold that no alert rule watches; `None` when the rules were
    /// not read.
    pub unwatched: Option<Vec<String>>,
    pub first_action: Option<Moment>,
    /// What the first person did ("opened the incident").
    pub first_action_what: Option<String>,
    /// From the impact's start (or the first crossing) to the first action.
    pub action_after: Option<String>,
    pub opened: Option<Moment>,
    /// The incident was opened before any signal crossed a threshold.
    pub opened_before_signals: bool,
    /// The section's paragraph, sentence by sentence.
    pub sentences: Vec<String>,
}

/// What a person's record says they did, if it is an action.
fn action(r: &Record, e: &Event) -> Option<String> {
    match (r.source, e) {
        (Source::Operator, Event::IncidentOpened { .. }) => Some("opened the incident".into()),
        (Source::Operator, Event::Note { .. }) => Some("wrote a note".into()),
        (Source::Operator, Event::StatusChanged { status }) => {
            Some(format!("set the status to {status}"))
        }
        (Source::Operator, Event::SeverityChanged { severity }) => {
            Some(format!("set the severity to {severity}"))
        }
        (Source::Operator, Event::ActionItem { .. }) => Some("filed an action item".into()),
        (
            _,
            Event::RunbookRun {
                run,
                state: StepState::Started,
            },
        ) => Some(format!("started the runbook {}", run.runbook)),
        _ => None,
    }
}

/// Every input of the section.
pub struct Input<'a> {
    pub events: &'a [(&'a Record, &'a Event)],
    pub crossings: &'a [Crossing],
    pub planned: &'a [Planned],
    pub standing: &'a dyn Fn(&Crossing) -> bool,
    pub impact_start: Option<DateTime<Utc>>,
    /// The panel that defined the impact's start, when the signals did.
    pub impact_panel: Option<&'a str>,
    pub opened: Option<DateTime<Utc>>,
    /// The steps that acted (started, title), in order: a signal first going bad after one
    /// is its effect.
    pub acted: &'a [(DateTime<Utc>, String)],
    pub panels: &'a [PanelSnapshot],
    pub rules: Option<&'a [AlertRule]>,
    /// How a panel is named mid-sentence.
    pub name: &'a dyn Fn(&str) -> String,
    pub tz: Tz,
}

/// The Detection facts and paragraph.
pub fn compute(i: &Input) -> Detection {
    let tz = i.tz;
    let counted =
        |c: &&Crossing| c.bad && !(i.standing)(c) && !i.planned.iter().any(|p| p.panel == c.panel);
    let first_step = i.acted.first().map(|a| a.0);
    let before_steps = |c: &&Crossing| first_step.is_none_or(|s| c.at < s);
    let first = i
        .crossings
        .iter()
        .filter(counted)
        .filter(before_steps)
        .filter(|c| bad_at_start(i.crossings, c, i.impact_start))
        .min_by_key(|c| c.at);
    let alert = i.events.iter().find_map(|(r, e)| match e {
        Event::AlertFiring { name, .. } => Some((r.time, name.clone())),
        _ => None,
    });
    let since = i.impact_start.or(first.map(|c| c.at));
    let human = i
        .events
        .iter()
        .filter(|(r, _)| since.is_none_or(|s| r.time >= s))
        .find_map(|(r, e)| action(r, e).map(|what| (r.time, what)));
    // Which signals that crossed have no rule on them.
    let unwatched = i.rules.map(|rules| {
        let mut out: Vec<String> = Vec::new();
        for c in i.crossings.iter().filter(counted) {
            let Some(p) = i.panels.iter().find(|p| p.title == c.panel) else {
                continue;
            };
            if !rules::covers(rules, &p.query) && !out.contains(&c.panel) {
                out.push(c.panel.clone());
            }
        }
        out
    });
    let mut d = Detection {
        impact_began: i.impact_start.map(|t| Moment::new(t, tz)),
        first_crossing: first.map(|c| Moment::new(c.at, tz)),
        first_crossing_panel: first.map(|c| c.panel.clone()),
        step_effects: Vec::new(),
        lead: first
            .zip(i.impact_start)
            .filter(|(c, s)| c.at < *s)
            .map(|(c, s)| words::delay((s - c.at).num_seconds())),
        first_alert: alert.as_ref().map(|a| Moment::new(a.0, tz)),
        first_alert_name: alert.as_ref().map(|a| a.1.clone()),
        alert_after: alert
            .as_ref()
            .zip(since)
            .filter(|(a, s)| a.0 >= *s)
            .map(|(a, s)| words::delay((a.0 - s).num_seconds())),
        unwatched,
        first_action: human.as_ref().map(|h| Moment::new(h.0, tz)),
        first_action_what: human.as_ref().map(|h| h.1.clone()),
        action_after: human
            .as_ref()
            .zip(since)
            .map(|(h, s)| words::delay((h.0 - s).num_seconds())),
        opened: i.opened.map(|t| Moment::new(t, tz)),
        opened_before_signals: first.zip(i.opened).is_some_and(|(c, o)| o < c.at),
        sentences: Vec::new(),
    };
    d.step_effects = step_effects(i, &|c| counted(&c));
    d.sentences = sentences(i, &d, first);
    d
}

/// Whether the signal of crossing `c` was still bad when the impact began: it crossed by
/// then and had not come back before it.
fn bad_at_start(crossings: &[Crossing], c: &Crossing, start: Option<DateTime<Utc>>) -> bool {
    let Some(start) = start else {
        return true;
    };
    c.at <= start
        && !crossings
            .iter()
            .any(|o| o.panel == c.panel && !o.bad && o.at > c.at && o.at <= start)
}

/// The signals whose first bad crossing came after a step acted, each with the last step
/// begun before it.
fn step_effects(i: &Input, counted: &dyn Fn(&Crossing) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for c in i.crossings.iter().filter(|c| c.bad) {
        if seen.contains(&c.panel.as_str()) {
            continue;
        }
        seen.push(&c.panel);
        if !counted(c) {
            continue;
        }
        let Some((at, title)) = i.acted.iter().rev().find(|a| a.0 <= c.at) else {
            continue;
        };
        let name = words::sentence(&(i.name)(&c.panel));
        let (name, when, step_at) = (
            name.trim_end_matches('.'),
            words::clock(c.at, i.tz),
            words::clock(*at, i.tz),
        );
        let snap = i.panels.iter().find(|p| p.title == c.panel);
        out.push(match snap.map(|s| heading_there(s, c, *at)) {
            Some(Trend::Flat) => format!(
                "{name} went bad only at {when}, after “{title}” began at {step_at}: an effect \
                 of that step, not a cause."
            ),
            Some(Trend::Heading) => format!(
                "{name} went bad at {when}, after “{title}” began at {step_at}, but it was \
                 already heading there before that step: not counted as the step's effect."
            ),
            _ => format!(
                "{name} went bad at {when}, after “{title}” began at {step_at}; too few readings \
                 before the step to tell whether it was the step's doing."
            ),
        });
    }
    out
}

/// How a signal moved in the two minutes before a step, against the crossing that followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trend {
    /// Its trend before the step does not reach the threshold by the crossing: the step's doing.
    Flat,
    /// Its trend before the step, carried on, reaches the threshold by the crossing: it was on
    /// its way there whatever the step did (a transaction's age grows by a minute a minute).
    Heading,
    /// Too few readings before the step to tell.
    Unknown,
}

/// Whether `snap`, carried on at its slope before `step` (the steepest the bad way over the
/// last half minute, minute and two minutes: a signal that began to move only just before the
/// step counts as moving), would have crossed `c`'s threshold by the time it did: then the
/// crossing is not the step's effect. Erring this way keeps a claim out of the draft, never
/// puts one in.
fn heading_there(snap: &PanelSnapshot, c: &Crossing, step: DateTime<Utc>) -> Trend {
    let t0 = board::secs(step);
    let before = window::readings(snap, t0 - 2.0 * window::WINDOW, t0);
    let Some(&(_, now)) = before.last() else {
        return Trend::Unknown;
    };
    let bad_way = if c.bad_above { 1.0 } else { -1.0 };
    let slopes = [0.5, 1.0, 2.0].map(|m| {
        let recent: Vec<(f64, f64)> = (before.iter())
            .filter(|p| p.0 >= t0 - m * window::WINDOW)
            .copied()
            .collect();
        window::slope(&recent)
    });
    let Some(slope) = slopes
        .into_iter()
        .flatten()
        .max_by(|a, b| (a * bad_way).total_cmp(&(b * bad_way)))
    else {
        return Trend::Unknown;
    };
    let minutes = (board::secs(c.at) - t0).max(0.0) / 60.0;
    let carried = now + slope * minutes;
    if (carried - c.threshold) * bad_way >= 0.0 {
        Trend::Heading
    } else {
        Trend::Flat
    }
}

fn sentences(i: &Input, d: &Detection, first: Option<&Crossing>) -> Vec<String> {
    let name = |p: &str| (i.name)(p);
    let mut s = Vec::new();
    if let Some(began) = &d.impact_began {
        s.push(match i.impact_panel {
            Some(p) => format!(
                "Customer impact began at {}, when the {} crossed its threshold.",
                began.clock,
                name(p)
            ),
            None => format!("Customer impact began at {}.", began.clock),
        });
    }
    if let (Some(c), Some(at)) = (first, &d.first_crossing) {
        let led = match (&d.lead, i.impact_panel) {
            (Some(lead), Some(p)) if p != c.panel => format!(", {lead} before the {}", name(p)),
            (Some(lead), _) => format!(", {lead} before the impact began"),
            _ => String::new(),
        };
        let still = match (d.impact_began.is_some(), led.is_empty()) {
            (false, _) => "",
            (true, true) => " and was still past it when the impact began",
            (true, false) => ", and was still past it when the impact began",
        };
        s.push(format!(
            "The leading signal was {}: it crossed its threshold at {}{led}{still}.",
            name(&c.panel),
            at.clock
        ));
    }
    s.extend(d.step_effects.iter().cloned());
    match (&d.first_alert, &d.first_alert_name) {
        (Some(at), Some(n)) => s.push(match &d.alert_after {
            Some(after) if d.impact_began.is_some() => format!(
                "The first alert, {n}, fired at {}, {after} after the impact began.",
                at.clock
            ),
            _ => format!("The first alert, {n}, fired at {}.", at.clock),
        }),
        _ => s.push("No alert fired.".into()),
    }
    if let Some(u) = d.unwatched.as_ref().filter(|u| !u.is_empty()) {
        let names: Vec<String> = u.iter().map(|p| name(p)).collect();
        s.push(format!("No alert rule watches {}.", words::or_list(&names)));
    }
    if let (Some(at), Some(what)) = (&d.first_action, &d.first_action_what) {
        let after = match (&d.action_after, d.impact_began.is_some()) {
            (Some(a), true) => format!(", {a} after the impact began"),
            (Some(a), false) => format!(", {a} after the first signal crossed"),
            _ => String::new(),
        };
        s.push(format!(
            "The first person to act {what} at {}{after}.",
            at.clock
        ));
    } else if d.opened_before_signals
        && let Some(o) = &d.opened
    {
        s.push(format!(
            "The incident was opened at {}, before any signal crossed a threshold.",
            o.clock
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::postmortem::signals::tests::snap;

    fn crossing(panel: &str, at: i64, threshold: f64) -> Crossing {
        Crossing {
            at: DateTime::from_timestamp(at, 0).unwrap(),
            panel: panel.into(),
            level: crate::incident::vocabulary::Level::Warn,
            bad: true,
            bad_above: true,
            value: threshold,
            threshold,
        }
    }

    /// A transaction's age grows a minute a minute from the fault at 100 s and crosses 60 s
    /// after a step at 140 s: it was heading there, not the step's effect. A connection count
    /// flat at 40 % until a raise at 300 s and past 80 % at 330 s: the raise's effect. A
    /// signal with no readings before its step: the draft says it cannot tell.
    #[test]
    fn a_signal_already_heading_bad_is_not_called_a_steps_effect() {
        let age: Vec<[f64; 2]> = (0..=40)
            .map(|k| [k as f64 * 10.0, (k as f64 * 10.0 - 100.0).max(0.0)])
            .collect();
        let conns: Vec<[f64; 2]> = (0..=40)
            .map(|k| [k as f64 * 10.0, if k < 31 { 0.4 } else { 0.9 }])
            .collect();
        let late: Vec<[f64; 2]> = (35..=40).map(|k| [k as f64 * 10.0, 9.0]).collect();
        let panels = [
            snap("Longest transaction", "seconds", vec![age]),
            snap("Connection saturation", "percent", vec![conns]),
            snap("Late", "count", vec![late]),
        ];
        let crossings = [
            crossing("Longest transaction", 160, 60.0),
            crossing("Connection saturation", 310, 0.8),
            crossing("Late", 360, 5.0),
        ];
        let at = |s: i64| DateTime::from_timestamp(s, 0).unwrap();
        let acted = [
            (at(140), "Cancel long transactions".to_string()),
            (at(300), "Raise the pool".to_string()),
        ];
        let name = |p: &str| p.to_string();
        let input = Input {
            events: &[],
            crossings: &crossings,
            planned: &[],
            standing: &|_| false,
            impact_start: None,
            impact_panel: None,
            opened: None,
            acted: &acted,
            panels: &panels,
            rules: None,
            name: &name,
            tz: chrono_tz::UTC,
        };
        let said = step_effects(&input, &|_| true);
        assert_eq!(said.len(), 3, "{said:?}");
        assert!(
            said[0].contains("already heading there") && !said[0].contains("went bad only"),
            "{}",
            said[0]
        );
        assert!(
            said[1].starts_with("Connection saturation went bad only")
                && said[1].contains("“Raise the pool”")
                && said[1].ends_with("an effect of that step, not a cause."),
            "{}",
            said[1]
        );
        assert!(said[2].contains("too few readings"), "{}", said[2]);
    }
}
