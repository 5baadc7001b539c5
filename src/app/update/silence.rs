//! Silences from the console (issue 35). `S` on a firing alert (the timeline pane's top row,
//! else a choice of the alerts firing now, else the only one) opens a form whose matchers come
//! from its labels, editable; how long defaults to "until resolved" (the ceiling, extended
//! while the incident lasts); the comment is the incident's mark and the note. The matchers
//! are counted against Alertmanager's alerts first, and a typed confirmation is asked when
//! they select more than fires here. Five minutes before one of the incident's silences lapses
//! the console warns (status line and timeline) and offers to extend it; setting the incident
//! resolved offers to expire those still in force. Alertmanager is asked off the loop
//! ([`crate::app::workers::silence`]); the records are the CLI's.

use super::super::model::Model;
use super::super::panes::dialog::{Body, Dialog, Field, Purpose};
use super::super::panes::timeline::TimelinePane;
use super::super::workers::silence::{Order, Report};
use super::{Effect, record};
use crate::alerts::board::AlertKey;
use crate::alerts::silence::{SilenceSpec, matches_everything};
use crate::incident::event::{Matcher, SilenceChange, SilenceRecord, Status};
use crate::incident::silence::{IncidentMark, live};
use crate::incident::{Event, Source};

/// How long before a silence lapses the console warns, in seconds.
pub const LAPSE_WARNING_SECS: i64 = 300;

/// The word typed to make a silence that selects more than fires here.
pub const BROAD_WORD: &str = "silence";

const UNCHOSEN: &str = "choose with ↑/↓ first, then enter: nothing is highlighted";

/// The alerts firing now as the timeline records them, newest first.
fn firing(model: &Model) -> Vec<AlertKey> {
    let mut on: Vec<AlertKey> = Vec::new();
    for r in &model.timeline {
        let Some(k) = AlertKey::of(&r.kind) else {
            continue;
        };
        on.retain(|x| *x != k);
        if matches!(r.kind, Event::AlertFiring { .. }) {
            on.push(k);
        }
    }
    on.reverse();
    on
}

/// The firing alert on the timeline pane's top row (where a search lands), when it is shown.
fn at_top(model: &Model, firing: &[AlertKey]) -> Option<AlertKey> {
    if !model.show_timeline {
        return None;
    }
    let rows = super::super::panes::timeline::rows(&model.timeline, &|p| model.unit_of(p));
    let shown = TimelinePane::shown(rows, model.timeline_filter, model.oldest_first);
    let seq = shown.get(model.timeline_pane.scroll)?.seq;
    let r = model.timeline.iter().find(|r| r.seq == seq)?;
    match &r.kind {
        Event::AlertFiring { .. } => AlertKey::of(&r.kind).filter(|k| firing.contains(k)),
        _ => None,
    }
}

/// `S`: the silence form for the alert on the timeline's top row, else for the only alert
/// firing, else the choice of the alerts firing.
pub(super) fn open(model: &mut Model) -> Vec<Effect> {
    let why = if model.silences.ceiling.is_none() {
        Some("no Alertmanager to silence in: set [alertmanager] url in the config".to_string())
    } else if model.incident.is_none() {
        Some(crate::strings::NO_INCIDENT.to_string())
    } else {
        None
    };
    if let Some(why) = why {
        model.notify(why, true, Some(8));
        return Vec::new();
    }
    let firing = firing(model);
    let dialog = match (at_top(model, &firing), firing.as_slice()) {
        (Some(k), _) => form(model, &k),
        (None, []) => {
            model.notify(
                "no alert fires on the timeline: nothing to silence",
                false,
                Some(5),
            );
            return Vec::new();
        }
        (None, [one]) => form(model, one),
        (None, _) => Dialog::choose(
            "Silence which alert?".into(),
            vec!["The alerts firing now, newest first.".into()],
            firing.iter().map(words).collect(),
            0,
            Purpose::SilencePick(firing.clone()),
        )
        .unselected(),
    };
    model.dialog = Some(dialog);
    Vec::new()
}

fn words(k: &AlertKey) -> String {
    Matcher::list(&Matcher::of_labels(&k.name, &k.labels))
}

fn mark(model: &Model) -> IncidentMark {
    IncidentMark::new(model.incident.as_ref().map_or("", |i| i.id.as_str()))
}

fn ceiling(model: &Model) -> std::time::Duration {
    model.silences.ceiling.unwrap_or_default()
}

/// The form silencing alert `k`: a field per matcher (its labels), how long, the note.
fn form(model: &Model, k: &AlertKey) -> Dialog {
    let ceiling = humantime::format_duration(ceiling(model));
    let mut fields: Vec<Field> = (Matcher::of_labels(&k.name, &k.labels).iter().enumerate())
        .map(|(i, m)| {
            Field::new(
                format!("matcher {}", i + 1),
                "name=value (!=, =~, !~); empty: not matched",
                m.shown(),
            )
        })
        .collect();
    fields.push(Field::new(
        "for",
        format!("e.g. 2h; empty: until resolved (at most {ceiling})"),
        "",
    ));
    fields.push(Field::new("note", "why, for the comment", ""));
    Dialog::form(
        format!("Silence {}", k.name),
        vec![
            format!(
                "Comment \"{}\", created by {}.",
                mark(model).comment("<note>"),
                model.actor
            ),
            "Until resolved: 5 minutes before it lapses the console offers to extend it.".into(),
        ],
        fields,
        Purpose::SilenceForm,
    )
}

/// Enter on one of the silence dialogs: what it starts, or why the answer is not taken.
pub(super) fn answered(model: &mut Model, d: &Dialog) -> Result<Vec<Effect>, String> {
    let author = model.actor.clone();
    match &d.purpose {
        Purpose::SilencePick(alerts) => {
            let i = d.selected().ok_or(UNCHOSEN)?;
            if let Some(k) = alerts.get(i) {
                model.dialog = Some(form(model, k));
            }
            Ok(Vec::new())
        }
        Purpose::SilenceForm => form_answered(model, d),
        Purpose::SilenceBroad(_) if !d.typed_matches() => Err(format!(
            "type exactly \"{BROAD_WORD}\" to make it, or esc to say no"
        )),
        Purpose::SilenceBroad(spec) => Ok(make(model, spec.clone(), true)),
        Purpose::SilenceLapsing(s) => match d.selected().ok_or(UNCHOSEN)? {
            0 => {
                let until =
                    model.now + chrono::Duration::from_std(ceiling(model)).unwrap_or_default();
                Ok(vec![Effect::Silence(Order::Extend {
                    id: s.id.clone(),
                    until,
                    author,
                })])
            }
            _ => Ok(Vec::new()),
        },
        Purpose::SilenceExpire(silences) => match d.selected().ok_or(UNCHOSEN)? {
            0 => Ok(vec![Effect::Silence(Order::Expire {
                silences: silences.clone(),
                author,
            })]),
            _ => Ok(Vec::new()),
        },
        _ => Ok(Vec::new()),
    }
}

/// The form's answer: its silence checked here (a matcher that matches every value is asked
/// about once counted, not refused), then counted by Alertmanager.
fn form_answered(model: &mut Model, d: &Dialog) -> Result<Vec<Effect>, String> {
    let Body::Form { fields, .. } = &d.body else {
        return Ok(Vec::new());
    };
    let n = fields.len().saturating_sub(2);
    let matchers = (0..n)
        .map(|i| d.field(i))
        .filter(|v| !v.is_empty())
        .map(|v| v.parse::<Matcher>().map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let length = match d.field(n) {
        "" => ceiling(model),
        s => humantime::parse_duration(s)
            .map_err(|e| format!("\"{s}\" is not a duration ({e}): write e.g. 2h or 30m"))?,
    };
    let spec = SilenceSpec::new(
        &mark(model),
        matchers,
        model.now,
        length,
        &model.actor,
        d.field(n + 1),
    );
    spec.check(ceiling(model), true)
        .map_err(|e| e.to_string())?;
    model.notify(
        "asking Alertmanager which alerts the matchers select…",
        false,
        Some(5),
    );
    Ok(vec![Effect::Silence(Order::Count(Box::new(spec)))])
}

fn make(model: &Model, spec: Box<SilenceSpec>, broad_confirmed: bool) -> Vec<Effect> {
    vec![Effect::Silence(Order::Make {
        spec,
        ceiling: ceiling(model),
        broad_confirmed,
    })]
}

/// Shows `d` now, or after the dialog open.
fn queue(model: &mut Model, d: Dialog) {
    match model.dialog {
        None => model.dialog = Some(d),
        Some(_) => model.dialogs_waiting.push_back(d),
    }
    model.dirty = true;
}

/// Alertmanager counted the alerts `spec`'s matchers select now: made at once when that is no
/// more than fires on the timeline, else asked about with a typed word.
pub(super) fn counted(
    model: &mut Model,
    spec: Box<SilenceSpec>,
    result: Result<usize, String>,
) -> Vec<Effect> {
    let n = match result {
        Ok(n) => n,
        Err(e) => {
            model.notify(format!("nothing silenced: {e}"), true, Some(15));
            return Vec::new();
        }
    };
    let matchers = spec.matchers();
    let here = (firing(model).iter())
        .filter(|k| matchers.iter().all(|m| m.matches(&k.name, &k.labels)))
        .count();
    let every: Vec<String> = (matchers.iter())
        .filter(|m| matches_everything(m))
        .map(Matcher::shown)
        .collect();
    if n <= here && every.is_empty() {
        return make(model, spec, false);
    }
    let mut text = vec![format!(
        "{} select {n} alert(s) in Alertmanager now; {here} of them fire on this incident's timeline.",
        Matcher::list(&matchers)
    )];
    if !every.is_empty() {
        text.push(format!(
            "{} matches every value: alerts nobody has seen yet would be silenced too.",
            every.join(", ")
        ));
    }
    text.push(format!("Type \"{BROAD_WORD}\" to make it anyway, or esc."));
    let d = Dialog::typed(
        "Silence more than fires here?".into(),
        text,
        BROAD_WORD.into(),
        Purpose::SilenceBroad(spec),
    );
    queue(model, d);
    Vec::new()
}

/// A silence made, extended or expired: said, and its records appended.
pub(super) fn reported(model: &mut Model, report: Report) -> Vec<Effect> {
    let mut effects = Vec::new();
    for r in report.records {
        model.notify(r.sentence(model.tz), false, Some(10));
        let actor = model.actor.clone();
        effects.push(record(model, Source::Operator, actor, Event::Silence(r)));
    }
    if let Some(e) = report.error {
        model.notify(format!("Alertmanager: {e}"), true, Some(15));
    }
    effects
}

/// Each tick while the incident is open: a silence that lapses within five minutes is warned
/// of once (the status line, a timeline record) and offered for extension.
pub(super) fn tick(model: &mut Model) -> Vec<Effect> {
    if model.incident.is_none() || model.sharing.following() {
        return Vec::new();
    }
    let now = model.now;
    let soon: Vec<SilenceRecord> = live(&model.timeline, now)
        .into_iter()
        .filter(|s| (s.until - now).num_seconds() <= LAPSE_WARNING_SECS)
        .filter(|s| !warned(model, s))
        .collect();
    if soon.is_empty() || resolved(model) {
        return Vec::new();
    }
    let mut effects = Vec::new();
    for s in soon {
        model.silences.warned.push((s.id.clone(), s.until));
        let lapsing = SilenceRecord {
            change: SilenceChange::Lapsing,
            ..s.clone()
        };
        model.notify(lapsing.sentence(model.tz), true, None);
        let actor = model.actor.clone();
        effects.push(record(
            model,
            Source::Operator,
            actor,
            Event::Silence(lapsing),
        ));
        let d = Dialog::choose(
            "A silence lapses soon".into(),
            vec![
                s.sentence(model.tz),
                format!(
                    "Extending keeps it until resolved again (at most {} from now).",
                    humantime::format_duration(ceiling(model))
                ),
            ],
            vec!["extend it".into(), "let it lapse".into()],
            0,
            Purpose::SilenceLapsing(Box::new(s)),
        );
        queue(model, d.unselected());
    }
    effects
}

/// Whether the lapse of `s` was warned of, here or (before a restart) in the journal.
fn warned(model: &Model, s: &SilenceRecord) -> bool {
    let key = (s.id.clone(), s.until);
    model.silences.warned.contains(&key)
        || model.timeline.iter().any(|r| match &r.kind {
            Event::Silence(w) => {
                w.change == SilenceChange::Lapsing && (w.id == s.id && w.until == s.until)
            }
            _ => false,
        })
}

fn resolved(model: &Model) -> bool {
    crate::incident::summary::summarize(&model.timeline).status == Some(Status::Resolved)
}

/// After the status dialog: when it set the incident resolved, its silences still in force
/// are listed and offered for expiry.
pub(super) fn on_resolved(model: &mut Model, event: &Event) {
    let Event::StatusChanged {
        status: Status::Resolved,
    } = event
    else {
        return;
    };
    let silences = live(&model.timeline, model.now);
    if silences.is_empty() {
        return;
    }
    let mut text = vec![format!(
        "{} silence(s) of this incident are still in force:",
        silences.len()
    )];
    text.extend(silences.iter().map(|s| s.sentence(model.tz)));
    let d = Dialog::choose(
        "Expire the incident's silences?".into(),
        text,
        vec!["expire them".into(), "keep them".into()],
        0,
        Purpose::SilenceExpire(silences),
    );
    queue(model, d.unselected());
}
