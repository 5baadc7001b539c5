//! `warroom incident …`: create and feed incidents without the console, so scripts and chat bots
//! can write to the timeline. Each writing command takes the incident's lock briefly, appends
//! one record (synced), and releases the lock.

use super::Context;
use crate::cli::IncidentCmd;
use crate::incident::event::{Event, Priority, Severity, Source, Status};
use crate::incident::open::open_waiting;
use crate::incident::record::Record;
use crate::incident::store::{IncidentId, OpenIncident, Role, Store};
use crate::incident::summary::summarize;
use crate::incident::timeline::{format_time, render_table};
use crate::sanitize;
use chrono::{NaiveDate, Utc};
use chrono_tz::Tz;
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use std::io::Write;
use std::process::ExitCode;

/// The timezone times are shown in: the config's `timezone`. A config that cannot be read
/// does not stop an incident from being fed: it is reported and times are shown in UTC.
fn timezone(ctx: &Context) -> Tz {
    match ctx.config() {
        Ok(c) => c.timezone,
        Err(e) => {
            eprintln!("warning: {e}\nwarning: times are shown in UTC");
            Tz::UTC
        }
    }
}

/// Runs one `incident` subcommand.
pub fn run(ctx: &Context, cmd: IncidentCmd) -> Result<ExitCode> {
    let store = ctx.store.clone();
    let tz = timezone(ctx);
    let mut out = std::io::stdout().lock();
    match cmd {
        IncidentCmd::New { title, severity } => {
            let severity = match severity {
                Some(s) => s.parse::<Severity>()?,
                None => Severity::Sev3,
            };
            let title = title.unwrap_or_else(|| "Untitled incident".into());
            let id = store.create(Utc::now())?;
            let (mut incident, _) = open(&store, &id)?;
            append(&mut incident, Event::IncidentOpened { title, severity })?;
            append(&mut incident, Event::new_incident_uid())?;
            writeln!(out, "{id}")?;
        }
        IncidentCmd::List => list(&store, tz, &mut out)?,
        IncidentCmd::Show { id } => show(&store, &id, tz, &mut out)?,
        IncidentCmd::Note { id, text } => {
            let text = text.join(" ");
            if text.trim().is_empty() {
                bail!(
                    "the note is empty; write it after the incident id, e.g. `warroom incident note {id} \"pool at 100% #impact\"`"
                );
            }
            let record = write_one(&store, &id, Event::note(text))?;
            acknowledge(&mut out, &record, tz)?;
        }
        IncidentCmd::Severity { id, severity } => {
            let severity = severity.parse::<Severity>()?;
            let record = write_one(&store, &id, Event::SeverityChanged { severity })?;
            acknowledge(&mut out, &record, tz)?;
        }
        IncidentCmd::Services { id, services } => {
            let services: Vec<String> = services
                .iter()
                .flat_map(|s| s.split(','))
                .map(|s| sanitize::line(s.trim()).into_owned())
                .filter(|s| !s.is_empty())
                .collect();
            if services.is_empty() {
                bail!(
                    "no service named; list them after the incident id, e.g. `warroom incident services {id} \"journey planner, api\"`"
                );
            }
            let record = write_one(&store, &id, Event::ServicesChanged { services })?;
            acknowledge(&mut out, &record, tz)?;
        }
        IncidentCmd::Status { id, status } => {
            let status = status.parse::<Status>()?;
            let record = write_one(&store, &id, Event::StatusChanged { status })?;
            acknowledge(&mut out, &record, tz)?;
        }
        IncidentCmd::Action {
            id,
            text,
            owner,
            priority,
            due,
        } => {
            let action = text.join(" ");
            if action.trim().is_empty() {
                bail!("the action item is empty; say what must be done after the incident id");
            }
            let priority = priority.map(|p| p.parse::<Priority>()).transpose()?;
            let due = due
                .map(|d| {
                    NaiveDate::parse_from_str(d.trim(), "%Y-%m-%d").map_err(|_| {
                        eyre!(
                            "due date \"{}\" is not a date; write it as YYYY-MM-DD",
                            sanitize::line(&d)
                        )
                    })
                })
                .transpose()?;
            let found = store.find(&id)?;
            let (mut incident, recovery) = open(&store, &found)?;
            let action_id = summarize(&recovery.records).next_action_id();
            let record = append(
                &mut incident,
                Event::ActionItem {
                    id: action_id,
                    action,
                    owner,
                    priority,
                    due,
                },
            )?;
            acknowledge(&mut out, &record, tz)?;
        }
        IncidentCmd::Timeline { id, json } => {
            let found = store.find(&id)?;
            let recovery = store.read(&found)?;
            if json {
                for r in &recovery.records {
                    out.write_all(&r.encode()?)?;
                }
            } else {
                out.write_all(render_table(&recovery.records, tz).as_bytes())?;
            }
            if let Some(torn) = recovery.torn {
                eprintln!(
                    "warning: the journal's last line ({} bytes at line {}) is torn ({}); it is \
                     not shown and will be set aside when the incident is next written.",
                    torn.len, torn.line, torn.reason
                );
            }
        }
        IncidentCmd::Stress { id, count } => stress(&store, &id, count, &mut out)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// [`open_waiting`] for these commands, saying so when a torn tail was cut off.
fn open(store: &Store, id: &IncidentId) -> Result<(OpenIncident, crate::incident::Recovery)> {
    let (incident, recovery) = open_waiting(store, id, Role::Cli)?;
    if let Some(torn) = &recovery.torn {
        eprintln!(
            "warning: the journal's last line ({} bytes at line {}) was torn ({}); it \
             was cut off and kept in \"{}\"; every record before it is intact.",
            torn.len,
            torn.line,
            torn.reason,
            torn.kept_at
                .as_deref()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        );
    }
    Ok((incident, recovery))
}

fn append(incident: &mut OpenIncident, event: Event) -> Result<Record> {
    incident
        .journal
        .append(Source::Operator, &crate::incident::actor::current(), event)
        .wrap_err_with(|| format!("incident \"{}\": nothing was recorded", incident.id))
}

fn write_one(store: &Store, id: &str, event: Event) -> Result<Record> {
    let found = store.find(id)?;
    let (mut incident, _) = open(store, &found)?;
    append(&mut incident, event)
}

fn acknowledge(out: &mut impl Write, record: &Record, tz: Tz) -> Result<()> {
    writeln!(
        out,
        "recorded #{} at {}",
        record.seq,
        format_time(record.time, tz, true)
    )?;
    Ok(())
}

fn list(store: &Store, tz: Tz, out: &mut impl Write) -> Result<()> {
    let ids = store.list()?;
    if ids.is_empty() {
        writeln!(
            out,
            "No incidents yet; `warroom incident new --title \"…\"` starts one."
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "{:<14}  {:<23}  {:<5}  {:<13}  TITLE",
        "ID", "OPENED", "SEV", "STATUS"
    )?;
    for id in ids {
        match store.read(&id) {
            Ok(recovery) => {
                let s = summarize(&recovery.records);
                writeln!(
                    out,
                    "{:<14}  {:<23}  {:<5}  {:<13}  {}",
                    id.to_string(),
                    s.opened_at
                        .map(|t| format_time(t, tz, true))
                        .unwrap_or_else(|| "-".into()),
                    s.severity
                        .map(|v| v.to_string())
                        .unwrap_or_else(|| "-".into()),
                    s.status
                        .map(|v| v.to_string())
                        .unwrap_or_else(|| "-".into()),
                    s.title
                )?;
            }
            Err(e) => writeln!(out, "{:<14}  (unreadable: {e})", id.to_string())?,
        }
    }
    Ok(())
}

fn show(store: &Store, id: &str, tz: Tz, out: &mut impl Write) -> Result<()> {
    let found = store.find(id)?;
    let recovery = store.read(&found)?;
    let s = summarize(&recovery.records);
    let time = |t: Option<chrono::DateTime<Utc>>| {
        t.map(|t| format_time(t, tz, true))
            .unwrap_or_else(|| "-".into())
    };
    writeln!(out, "Incident {found}: {}", s.title)?;
    writeln!(
        out,
        "Severity:  {}",
        s.severity
            .map(|v| v.to_string())
            .unwrap_or_else(|| "-".into())
    )?;
    writeln!(
        out,
        "Status:    {}",
        s.status
            .map(|v| v.to_string())
            .unwrap_or_else(|| "-".into())
    )?;
    if !s.services.is_empty() {
        writeln!(out, "Services:  {}", s.services.join(", "))?;
    }
    writeln!(out, "Opened:    {}", time(s.opened_at))?;
    if s.resolved_at.is_some() {
        writeln!(out, "Resolved:  {}", time(s.resolved_at))?;
    }
    if s.impact_start.is_some() || s.impact_end.is_some() {
        writeln!(
            out,
            "Impact:    {} to {}",
            time(s.impact_start),
            time(s.impact_end)
        )?;
    }
    writeln!(
        out,
        "Records:   {} (last {}), {} note(s)",
        s.records,
        time(s.last_time),
        s.notes.len()
    )?;
    match store.holder(&found)? {
        Some(h) => writeln!(out, "Writer:    {h}")?,
        None => writeln!(out, "Writer:    none")?,
    }
    if !s.actions.is_empty() {
        writeln!(out, "Action items:")?;
        for a in &s.actions {
            let mut line = format!("  {}  {}", a.id, a.action);
            if let Some(o) = &a.owner {
                line.push_str(&format!("  owner {o}"));
            }
            if let Some(p) = a.priority {
                line.push_str(&format!("  {p}"));
            }
            if let Some(d) = a.due {
                line.push_str(&format!("  due {d}"));
            }
            writeln!(out, "{}", sanitize::line(&line))?;
        }
    }
    if let Some(torn) = recovery.torn {
        writeln!(
            out,
            "Warning:   the journal's last line (line {}) is torn",
            torn.line
        )?;
    }
    Ok(())
}

/// The crash test's writer: appends `count` notes, printing each sequence number only after its
/// record is synced. Whatever it printed must survive a `kill -9` at any moment.
fn stress(store: &Store, id: &str, count: u64, out: &mut impl Write) -> Result<()> {
    let found = store.find(id)?;
    let (mut incident, _) = store.open_incident(&found, Role::Stress)?;
    for i in 0..count {
        let record = incident.journal.append(
            Source::Sim,
            "stress",
            Event::note(format!("stress record {i} of pid {}", std::process::id())),
        )?;
        writeln!(out, "{}", record.seq)?;
        out.flush()?;
    }
    Ok(())
}
