//! Incident actions from the console: status, severity, action items, the impact window,
//! corrections, notes from `$EDITOR`, and the timeline pane's filter and order. Each becomes a
//! journal record (shown once it is synced).

use super::super::model::Model;
use super::super::panes::dialog::{Dialog, Field, Purpose};
use super::{Effect, record};
use crate::incident::event::{Priority, Severity, Status};
use crate::incident::{Event, Source};
use crate::keymap::Action;
use chrono::{NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};

/// The statuses in order.
pub const STATUSES: [Status; 4] = [
    Status::Investigating,
    Status::Identified,
    Status::Monitoring,
    Status::Resolved,
];
/// The severities, worst first.
pub const SEVERITIES: [Severity; 4] = [
    Severity::Sev1,
    Severity::Sev2,
    Severity::Sev3,
    Severity::Sev4,
];
/// The sources the timeline filter steps through, after "all".
pub const FILTERS: [Source; 7] = Source::ALL;

/// Format of times typed into the impact dialog.
pub const TIME_FORMAT: &str = "%Y-%m-%d %H:%M:%S";

/// A dashboard key for an incident action.
pub fn key(model: &mut Model, action: Action) -> Vec<Effect> {
    match action {
        Action::TimelineFilter => {
            model.show_timeline = true;
            model.timeline_filter = match model.timeline_filter {
                None => Some(FILTERS[0]),
                Some(s) => FILTERS
                    .iter()
                    .position(|f| *f == s)
                    .and_then(|i| FILTERS.get(i + 1))
                    .copied(),
            };
            return Vec::new();
        }
        Action::TimelineOrder => {
            model.show_timeline = true;
            model.oldest_first = !model.oldest_first;
            return Vec::new();
        }
        Action::JumpToPanel => {
            jump_to_panel(model);
            return Vec::new();
        }
        _ => {}
    }
    // While watching, the dialogs that record open as usual: what they record declares the
    // incident (an esc declares nothing). Nothing is there yet to correct or export.
    if model.incident.is_none() {
        let records = matches!(
            action,
            Action::Status
                | Action::Severity
                | Action::ActionItem
                | Action::ImpactStart
                | Action::ImpactEnd
                | Action::EditorNote
        );
        if !(model.declarable && records) {
            let text = if model.declarable {
                let d = model
                    .keymap
                    .hint(crate::keymap::Mode::Dashboard, Action::Declare);
                format!(
                    "no incident yet, nothing recorded to {}: {d} declares one (so does a note, status or action item)",
                    if action == Action::Export {
                        "export"
                    } else {
                        "correct"
                    }
                )
            } else {
                crate::strings::NO_INCIDENT.to_string()
            };
            model.notify(text, true, Some(5));
            return Vec::new();
        }
    }
    let summary = crate::incident::summary::summarize(&model.timeline);
    let local_now = model.now.with_timezone(&model.tz);
    model.dialog = Some(match action {
        Action::Status => pick(
            "Incident status",
            &STATUSES,
            summary.status,
            0,
            Purpose::Status,
        ),
        Action::Severity => pick(
            "Incident severity",
            &SEVERITIES,
            summary.severity,
            2,
            Purpose::Severity,
        ),
        Action::ActionItem => Dialog::form(
            "Action item".into(),
            vec!["Only the action is required.".into()],
            vec![
                Field::new("action", "what will be done", ""),
                Field::new("owner", "a team or person", ""),
                Field::new("priority", "P0 (highest) to P3", ""),
                Field::new("due", "YYYY-MM-DD", ""),
            ],
            Purpose::ActionItem,
        ),
        Action::ImpactStart | Action::ImpactEnd => {
            let start = action == Action::ImpactStart;
            Dialog::form(
                format!("Impact {}", if start { "started" } else { "ended" }),
                vec![format!(
                    "When it differs from the first crossing or the recovery; time in {}.",
                    local_now.format("%Z")
                )],
                vec![Field::new(
                    "at",
                    "YYYY-MM-DD HH:MM:SS or HH:MM",
                    local_now.format(TIME_FORMAT).to_string(),
                )],
                Purpose::Impact { start },
            )
        }
        Action::Correct => {
            let newest = model
                .timeline
                .iter()
                .rev()
                .find(|r| r.source == Source::Operator)
                .or(model.timeline.last())
                .map_or(String::new(), |r| r.seq.to_string());
            Dialog::form(
                "Correct a timeline record".into(),
                vec![
                    "The record stays in the journal; the correction supersedes it.".into(),
                    "A note can be replaced by new text; leave it empty to retract.".into(),
                ],
                vec![
                    Field::new("record #", "its sequence number", newest),
                    Field::new("reason", "why it was wrong", ""),
                    Field::new("replacement", "new note text, or empty", ""),
                ],
                Purpose::Correction,
            )
        }
        Action::EditorNote => return vec![Effect::EditNote],
        Action::Export => {
            model.notify("exporting the postmortem draft…", false, None);
            // A panel whose variable has no value sends nothing, its snapshot included.
            let sent = model.panels.iter().filter(|p| p.unset.is_none());
            let panels = sent.map(|p| p.config.clone()).collect();
            return vec![Effect::Export(panels)];
        }
        _ => return Vec::new(),
    });
    Vec::new()
}

/// A status, severity or other incident event the operator gave (a dialog or the palette):
/// recorded, declaring the incident while watching; refused when there is none to record in.
pub fn operator_event(model: &mut Model, event: Event) -> Vec<Effect> {
    if model.incident.is_none() && !model.declarable {
        model.notify(crate::strings::NO_INCIDENT, true, Some(5));
        return Vec::new();
    }
    super::silence::on_resolved(model, &event);
    record_declaring(model, event)
}

/// Record `event` from the operator; while watching, the incident is declared first (the
/// first note, status, severity, action item or impact mark declares it).
pub fn record_declaring(model: &mut Model, event: Event) -> Vec<Effect> {
    let mut effects: Vec<Effect> = declaring(model).into_iter().collect();
    let actor = model.actor.clone();
    effects.push(record(model, Source::Operator, actor, event));
    effects
}

/// The event a submitted incident dialog records, or why it cannot.
pub fn event_of(model: &mut Model, d: &Dialog) -> Result<Option<Event>, String> {
    Ok(Some(match &d.purpose {
        Purpose::Status => Event::StatusChanged {
            status: STATUSES[d.selected().unwrap_or(0).min(3)],
        },
        Purpose::Severity => Event::SeverityChanged {
            severity: SEVERITIES[d.selected().unwrap_or(2).min(3)],
        },
        Purpose::ActionItem => {
            let action = d.field(0);
            if action.is_empty() {
                return Err("the action is empty: say what will be done".into());
            }
            let priority = match d.field(2) {
                "" => None,
                p => Some(p.parse::<Priority>().map_err(|e| e.to_string())?),
            };
            let due = match d.field(3) {
                "" => None,
                s => Some(
                    NaiveDate::parse_from_str(s, "%Y-%m-%d")
                        .map_err(|_| format!("due \"{s}\" is not a date: expected YYYY-MM-DD"))?,
                ),
            };
            // The journal numbers it, where every writer's records meet.
            Event::ActionItem {
                id: String::new(),
                action: action.to_string(),
                owner: Some(d.field(1).to_string()).filter(|s| !s.is_empty()),
                priority,
                due,
            }
        }
        Purpose::Impact { start } => {
            let at = parse_time(d.field(0), model)?;
            if *start {
                Event::ImpactStart { at }
            } else {
                Event::ImpactEnd { at }
            }
        }
        Purpose::Correction => {
            let seq: u64 = d.field(0).trim_start_matches('#').parse().map_err(|_| {
                format!(
                    "record \"{}\" is not a number: expected the record's #",
                    d.field(0)
                )
            })?;
            let Some(target) = model.timeline.iter().find(|r| r.seq == seq) else {
                return Err(format!("there is no record #{seq} on the timeline"));
            };
            let reason = d.field(1);
            if reason.is_empty() {
                return Err("say why the record is wrong".into());
            }
            let replacement = match (d.field(2), &target.kind) {
                ("", _) => None,
                (text, Event::Note { .. }) => Some(Box::new(Event::note(text))),
                _ => {
                    return Err(format!(
                        "record #{seq} is not a note: leave the replacement empty to retract it, then record the right one"
                    ));
                }
            };
            Event::Correction {
                supersedes: seq,
                reason: reason.to_string(),
                replacement,
            }
        }
        _ => return Ok(None),
    }))
}

/// A time typed in the configured zone: a full date and time, or a time today.
fn parse_time(s: &str, model: &Model) -> Result<chrono::DateTime<Utc>, String> {
    let local = model.now.with_timezone(&model.tz);
    let naive = NaiveDateTime::parse_from_str(s, TIME_FORMAT)
        .or_else(|_| NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M"))
        .or_else(|_| {
            NaiveTime::parse_from_str(s, "%H:%M:%S")
                .or_else(|_| NaiveTime::parse_from_str(s, "%H:%M"))
                .map(|t| local.date_naive().and_time(t))
        })
        .map_err(|_| {
            format!("\"{s}\" is not a time: expected YYYY-MM-DD HH:MM:SS, or HH:MM for today")
        })?;
    let at = model
        .tz
        .from_local_datetime(&naive)
        .earliest()
        .ok_or_else(|| format!("\"{s}\" does not exist in {} (a clock change)", model.tz))?
        .with_timezone(&Utc);
    if at > model.now + chrono::Duration::minutes(1) {
        return Err(format!("\"{s}\" is in the future"));
    }
    Ok(at)
}

/// Record a note written in the editor.
pub fn editor_closed(model: &mut Model, result: Result<String, String>) -> Vec<Effect> {
    match result {
        Ok(text) if text.is_empty() => {
            model.notify("the note was empty: nothing recorded", false, Some(5));
            Vec::new()
        }
        Ok(text) => record_declaring(model, Event::note(text)),
        Err(e) => {
            model.notify(e, true, Some(10));
            Vec::new()
        }
    }
}

/// `g`: select and zoom the panel of a threshold crossing on the timeline, and move the
/// window to it (a longer range when it happened before the range shown). The first press
/// goes to the first breach (what started the trouble), later presses to the breaches after
/// it, then to the recoveries, wrapping around. The crossing is marked in the pane, which
/// opens if it was closed. Crossings of a panel that is no longer configured are skipped.
pub fn jump_to_panel(model: &mut Model) {
    use crate::incident::event::Direction;
    let all: Vec<(u64, usize, Direction, chrono::DateTime<Utc>)> = model
        .timeline
        .iter()
        .filter_map(|r| match &r.kind {
            Event::ThresholdCrossed {
                panel,
                direction,
                at,
                ..
            } => model
                .panels
                .iter()
                .position(|p| &p.config.title == panel)
                .map(|i| (r.seq, i, *direction, *at)),
            _ => None,
        })
        .collect();
    let crossings: Vec<_> = (all.iter().filter(|c| c.2 == Direction::Up))
        .chain(all.iter().filter(|c| c.2 == Direction::Down))
        .copied()
        .collect();
    if crossings.is_empty() {
        model.notify(
            "no threshold crossing on the timeline yet to jump from",
            false,
            Some(5),
        );
        return;
    }
    let next = model
        .jumped
        .and_then(|seq| crossings.iter().position(|c| c.0 == seq))
        .map_or(0, |i| (i + 1) % crossings.len());
    let (seq, panel, _, at) = crossings[next];
    model.jumped = Some(seq);
    model.selected = panel;
    model.zoomed = true;
    model.show_timeline = true;
    // The window reaches back to the crossing.
    let ago = (model.now - at).num_seconds().max(0) as u64;
    let need = super::super::model::RANGES
        .iter()
        .position(|r| r.as_secs() >= ago + ago / 10)
        .unwrap_or(super::super::model::RANGES.len() - 1);
    if need > model.range_idx {
        model.range_idx = need;
        for p in &mut model.panels {
            p.reset();
        }
    }
    // The pane shows every source again, so the marked crossing is on it.
    if model.timeline_filter.is_some_and(|s| s != Source::Metric) {
        model.timeline_filter = None;
    }
}

/// The declaration the first note, status or action makes, once (`None`: there is nothing to
/// declare, or it is under way).
pub fn declaring(model: &mut Model) -> Option<Effect> {
    if model.incident.is_some() || !model.declarable || model.declaring {
        return None;
    }
    model.declaring = true;
    Some(Effect::Declare {
        title: suggested_title(model),
        severity: None,
    })
}

/// A title from what is wrong: the panels past their critical (else warning) threshold.
fn suggested_title(model: &Model) -> Option<String> {
    use crate::app::panes::panel::Level;
    for level in [Level::Crit, Level::Warn] {
        let names: Vec<&str> = (model.panels.iter())
            .filter(|p| p.current().is_some_and(|v| p.level(v) == level))
            .map(|p| p.config.title.as_str())
            .collect();
        if !names.is_empty() {
            let word = if level == Level::Crit {
                "critical"
            } else {
                "high"
            };
            return Some(format!("{} {word}", names.join(", ")));
        }
    }
    None
}

/// `D`: declare an incident, with a title and severity to confirm (prefilled, selected: typing
/// replaces them).
pub fn declare(model: &mut Model) -> Vec<Effect> {
    if let Some(i) = &model.incident {
        let text = format!("incident {} is already being recorded", i.id);
        model.notify(text, false, Some(5));
        return Vec::new();
    }
    if !model.declarable || model.declaring {
        model.notify(crate::strings::NO_INCIDENT, true, Some(5));
        return Vec::new();
    }
    let n = model.pending.len();
    model.dialog = Some(Dialog::form(
        "Declare an incident".into(),
        vec![
            "Recording starts now; the console has only watched so far.".into(),
            format!(
                "{n} threshold crossing{} seen while watching go{} in at the time{} happened.",
                if n == 1 { "" } else { "s" },
                if n == 1 { "es" } else { "" },
                if n == 1 { " it" } else { "s they" },
            ),
        ],
        vec![
            Field::new(
                "title",
                "what is wrong, for people",
                suggested_title(model).unwrap_or_default(),
            ),
            Field::new("severity", "SEV-1 … SEV-4", "SEV-3"),
        ],
        Purpose::Declare,
    ));
    Vec::new()
}

/// The declare dialog was answered.
pub fn declare_answered(model: &mut Model, d: &Dialog) -> Result<Vec<Effect>, String> {
    let severity = match d.field(1) {
        "" => None,
        s => Some(s.parse::<Severity>().map_err(|e| e.to_string())?),
    };
    let title = Some(d.field(0).to_string()).filter(|t| !t.is_empty());
    if model.incident.is_some() || model.declaring {
        return Ok(Vec::new());
    }
    model.declaring = true;
    Ok(vec![Effect::Declare { title, severity }])
}

/// The incident is declared: what was seen while watching is recorded, each at its time.
pub fn declared(model: &mut Model, result: Result<(), String>) -> Vec<Effect> {
    model.declaring = false;
    model.dirty = true;
    match result {
        Ok(()) => {
            let pending = std::mem::take(&mut model.pending);
            let id = model
                .incident
                .as_ref()
                .map_or(String::new(), |i| i.id.clone());
            model.notify(
                format!(
                    "incident {id} declared: recording; {} crossing(s) seen before it recorded",
                    pending.len()
                ),
                false,
                Some(10),
            );
            pending
                .into_iter()
                .map(|(source, actor, event)| record(model, source, actor, event))
                .collect()
        }
        Err(e) => {
            model.notify(
                format!("the incident could not be declared: {e}"),
                true,
                None,
            );
            Vec::new()
        }
    }
}

/// A choice of one of `all`, the current one (or `default`) highlighted and said.
fn pick<T: PartialEq + Copy + std::fmt::Display>(
    title: &str,
    all: &[T],
    now: Option<T>,
    default: usize,
    purpose: Purpose,
) -> Dialog {
    let said = now.map_or("not set".into(), |s| s.to_string());
    Dialog::choose(
        title.into(),
        vec![format!("now: {said}")],
        all.iter().map(std::string::ToString::to_string).collect(),
        all.iter().position(|s| Some(*s) == now).unwrap_or(default),
        purpose,
    )
}

/// The export finished: where the draft is and what the lint found (the first finding said at
/// once, all of them one key away), or why it failed.
pub fn exported(model: &mut Model, result: Result<(String, Vec<String>), String>) {
    use crate::keymap::Mode;
    if let Ok((path, _)) = &result {
        model.exported = Some(path.clone());
    }
    match result {
        Ok((path, findings)) if findings.is_empty() => {
            model.lint.clear();
            let text = format!("exported {path}; the lint found nothing");
            model.notify(text, false, Some(30));
        }
        // The keys stay where they are: `q` after `E` still quits.
        Ok((path, findings)) => {
            let n = findings.len();
            let m = model.keymap.hint(Mode::Dashboard, Action::Messages);
            let first = crate::sanitize::line(&findings[0]).into_owned();
            let text = match n {
                1 => format!("exported {path}; lint: {first}"),
                _ => format!(
                    "exported {path}; lint: {first} (and {} more: {m} lists them)",
                    n - 1
                ),
            };
            model.lint = findings;
            model.notify(text, false, Some(30));
        }
        Err(e) => model.notify(format!("export failed: {e}"), true, Some(30)),
    }
    model.dirty = true;
}

/// The journal took a record (the timeline shows it), or could not (the status bar says why).
pub fn recorded(model: &mut Model, result: Result<crate::incident::Record, String>) {
    model.recording = model.recording.saturating_sub(1);
    match result {
        Ok(record) => {
            model.add_record(record);
            model.journal_error = None;
        }
        Err(e) => model.journal_error = Some(crate::sanitize::line(&e).into_owned()),
    }
    model.dirty = true;
}

/// The journal refused a record (it was not written): said on the message line.
pub fn refused(model: &mut Model, error: &str) {
    model.recording = model.recording.saturating_sub(1);
    let text = format!("not recorded: {}", crate::sanitize::line(error));
    model.notify(text, true, Some(10));
    model.dirty = true;
}
