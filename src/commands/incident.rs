//! `warroom incident …`: create and feed incidents without the console, so scripts and chat bots
//! can write to the timeline. Each writing command takes the incident's lock briefly, appends
//! one record (synced), and releases the lock; when another process holds the incident (a
//! console, a recorder, a game day) it records through that holder's socket instead, and
//! `--socket PATH` names the socket outright (one forwarded from another host). Either way it
//! exits 0 only once the record is synced.

use super::Context;
use crate::cli::{IncidentCmd, ShareArgs, Via};
use crate::incident::event::{Event, Priority, Severity, Source, Status};
use crate::incident::open::open_waiting;
use crate::incident::record::Record;
use crate::incident::serve::protocol::check_client_event;
use crate::incident::serve::{Client, ClientError, SOCKET_FILE};
use crate::incident::store::{IncidentId, OpenIncident, Role, Store, StoreError};
use crate::incident::summary::summarize;
use crate::incident::timeline::{format_time, render_table};
use crate::sanitize;
use chrono::{NaiveDate, Utc};
use chrono_tz::Tz;
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The timezone times are shown in: the config's `timezone`. A config that cannot be read
/// does not stop an incident from being fed: it is reported and times are shown in UTC.
pub(super) fn timezone(ctx: &Context) -> Tz {
    match ctx.config() {
        Ok(c) => c.timezone,
        Err(e) => {
            eprintln!("warning: {e}\nwarning: times are shown in UTC");
            Tz::UTC
        }
    }
}

/// Runs one `incident` subcommand.
pub async fn run(ctx: &Context, cmd: IncidentCmd) -> Result<ExitCode> {
    let store = ctx.store.clone();
    let tz = timezone(ctx);
    let mut out = std::io::stdout().lock();
    match cmd {
        IncidentCmd::New {
            title,
            severity,
            share,
        } => create(ctx, title, severity, &share, &mut out).await?,
        IncidentCmd::List { share } => match ctx.engine(&share)? {
            Some(engine) => list_shared(&store, &engine, &mut out).await?,
            None => list(&store, tz, &mut out)?,
        },
        IncidentCmd::Show { id } => show(&store, &id, tz, &mut out)?,
        IncidentCmd::Note { id, text, via } => {
            let text = text.join(" ");
            if text.trim().is_empty() {
                bail!(
                    "the note is empty; write it after the incident id, e.g. `warroom incident note {id} \"pool at 100% #impact\"`"
                );
            }
            record(ctx, &id, Event::note(text), &via, &mut out, tz).await?;
        }
        IncidentCmd::Status {
            id,
            status,
            expire_silences,
            via,
            ..
        } => {
            let status = status.parse::<Status>()?;
            if expire_silences && status != Status::Resolved {
                bail!("--expire-silences goes with `resolved`: silences are lifted at the end");
            }
            record(
                ctx,
                &id,
                Event::StatusChanged { status },
                &via,
                &mut out,
                tz,
            )
            .await?;
            if status == Status::Resolved {
                drop(out);
                super::silence::on_resolved(ctx, &id, expire_silences, &via).await?;
            }
        }
        IncidentCmd::Severity { id, severity, via } => {
            let severity = severity.parse::<Severity>()?;
            record(
                ctx,
                &id,
                Event::SeverityChanged { severity },
                &via,
                &mut out,
                tz,
            )
            .await?;
        }
        IncidentCmd::Services { id, services, via } => {
            let event = services_changed(&id, &services)?;
            record(ctx, &id, event, &via, &mut out, tz).await?;
        }
        IncidentCmd::Action {
            id,
            text,
            owner,
            priority,
            due,
            via,
        } => {
            let event = action_item(&text, owner, priority, due)?;
            record(ctx, &id, event, &via, &mut out, tz).await?;
        }
        IncidentCmd::Impact { id, edge, at, via } => {
            let event = impact_edge(&edge, at.as_deref(), tz)?;
            record(ctx, &id, event, &via, &mut out, tz).await?;
        }
        IncidentCmd::Correct {
            id,
            seq,
            reason,
            text,
            via,
        } => {
            let event = correction(seq, reason, &text);
            record(ctx, &id, event, &via, &mut out, tz).await?;
        }
        IncidentCmd::Timeline { id, json, share } => {
            timeline(ctx, &id, json, &share, tz, &mut out).await?;
        }
        IncidentCmd::Stress { id, count } => stress(&store, &id, count, &mut out)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `incident new`: a new incident with its title and severity (SEV-3 unless given), its id on
/// `out`; with an engine, shared after.
async fn create(
    ctx: &Context,
    title: Option<String>,
    severity: Option<String>,
    share: &ShareArgs,
    out: &mut impl Write,
) -> Result<()> {
    let severity = match severity {
        Some(s) => s.parse::<Severity>()?,
        None => Severity::Sev3,
    };
    let title = title.unwrap_or_else(|| "Untitled incident".into());
    let store = &ctx.store;
    let id = store.create(Utc::now())?;
    let (mut incident, _) = open(store, &id)?;
    append(&mut incident, Event::IncidentOpened { title, severity })?;
    append(&mut incident, Event::new_incident_uid())?;
    drop(incident);
    writeln!(out, "{id}")?;
    share_after(ctx, &id.to_string(), share).await
}

/// `incident services`: the services named, split at commas, blanks dropped; at least one.
fn services_changed(id: &str, services: &[String]) -> Result<Event> {
    let services: Vec<String> = services
        .iter()
        .flat_map(|s| s.split(','))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if services.is_empty() {
        bail!("name at least one service, e.g. `warroom incident services {id} planner-api`");
    }
    Ok(Event::ServicesChanged { services })
}

/// `incident action`: an action item; its id is handed out where every writer's records
/// meet, the journal.
fn action_item(
    text: &[String],
    owner: Option<String>,
    priority: Option<String>,
    due: Option<String>,
) -> Result<Event> {
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
    Ok(Event::ActionItem {
        id: String::new(),
        action,
        owner,
        priority,
        due,
    })
}

/// `incident impact`: where the impact started or ended, at `at` (local time) or now.
fn impact_edge(edge: &str, at: Option<&str>, tz: Tz) -> Result<Event> {
    let at = match at {
        Some(text) => parse_local_time(text, tz)?,
        None => Utc::now(),
    };
    Ok(match edge.trim() {
        "start" | "started" => Event::ImpactStart { at },
        "end" | "ended" => Event::ImpactEnd { at },
        other => bail!(
            "\"{}\" is not an edge of the impact; write `start` or `end`",
            sanitize::line(other)
        ),
    })
}

/// `incident correct`: record `seq` superseded for `reason`, by a note of `text` when there
/// is one (a retraction when there is none).
fn correction(seq: u64, reason: String, text: &[String]) -> Event {
    let text = text.join(" ");
    let replacement = (!text.trim().is_empty()).then(|| Box::new(Event::note(text)));
    Event::Correction {
        supersedes: seq,
        reason,
        replacement,
    }
}

/// `incident timeline`: the records as a table (or JSON lines), and a warning for a torn
/// last line.
async fn timeline(
    ctx: &Context,
    id: &str,
    json: bool,
    share: &ShareArgs,
    tz: Tz,
    out: &mut impl Write,
) -> Result<()> {
    let (records, torn) = timeline_records(ctx, id, share).await?;
    if json {
        for r in &records {
            out.write_all(&r.encode()?)?;
        }
    } else {
        let table = render_table(&records, tz, &crate::runbook::journal::describe);
        out.write_all(table.as_bytes())?;
    }
    if let Some(torn) = torn {
        eprintln!(
            "warning: the journal's last line ({} bytes at line {}) is torn ({}); it is \
             not shown and will be set aside when the incident is next written.",
            torn.len, torn.line, torn.reason
        );
    }
    Ok(())
}

/// Records `event` (see [`write_one`]) and says so on `out`; with an engine, joins an
/// incident that is only on the engine first, and shares the record after.
async fn record(
    ctx: &Context,
    id: &str,
    event: Event,
    via: &Via,
    out: &mut impl Write,
    tz: Tz,
) -> Result<()> {
    join_if_shared(ctx, id, &via.share).await?;
    let written = write_one(&ctx.store, id, event, via)?;
    acknowledge(out, &written, tz)?;
    share_after(ctx, id, &via.share).await
}

/// With an engine: an incident that is not on this machine but on the engine is joined (a
/// place is made for it here, where this machine's own records of it are kept).
pub(super) async fn join_if_shared(ctx: &Context, id: &str, share: &ShareArgs) -> Result<()> {
    let Some(engine) = ctx.engine(share)? else {
        return Ok(());
    };
    let parsed = IncidentId::parse(id)?;
    if ctx.store.dir(&parsed).is_dir() {
        return Ok(());
    }
    let shared = crate::share::local::on_engine(&engine, &parsed)
        .await
        .wrap_err_with(|| format!("incident \"{parsed}\" is not on this machine"))?;
    if shared {
        ctx.store.adopt(&parsed)?;
        eprintln!("joined incident {parsed} from {}", engine.url);
    }
    Ok(())
}

/// With an engine: publishes what this machine recorded of `id` that the engine lacks. An
/// engine out of reach is said on stderr and is no failure: the records are kept here and
/// shared by the next command or console that reaches it.
pub(super) async fn share_after(ctx: &Context, id: &str, share: &ShareArgs) -> Result<()> {
    let Some(engine) = ctx.engine(share)? else {
        return Ok(());
    };
    let id = IncidentId::parse(id)?;
    if let Err(e) = crate::share::local::share_journal(&engine, &ctx.store, &id).await {
        eprintln!("warning: recorded on this machine, not shared yet: {e}");
    }
    Ok(())
}

/// The timeline's records: this machine's journal, merged with every responder's when there
/// is an engine. An engine out of reach is said on stderr and the local journal shown; an
/// incident neither here nor reachable is an error.
async fn timeline_records(
    ctx: &Context,
    id: &str,
    share: &ShareArgs,
) -> Result<(Vec<Record>, Option<crate::incident::journal::TornTail>)> {
    let parsed = IncidentId::parse(id)?;
    let local = ctx.store.dir(&parsed).is_dir();
    if let Some(engine) = ctx.engine(share)? {
        match crate::share::local::everyone(&engine, &ctx.store, &parsed).await {
            Ok(view) if !local && view.is_empty() => {
                bail!(
                    "incident \"{parsed}\" is neither on this machine nor on {}",
                    engine.url
                )
            }
            Ok(view) => {
                for why in view.refused() {
                    eprintln!("warning: refused a record on the engine: {why}");
                }
                return Ok((view.records().cloned().collect(), None));
            }
            Err(e) if local => eprintln!("warning: {e}; showing this machine's records only"),
            Err(e) => {
                return Err(
                    eyre!(e).wrap_err(format!("incident \"{parsed}\" is not on this machine"))
                );
            }
        }
    }
    let found = ctx.store.find(id)?;
    let recovery = ctx.store.read(&found)?;
    Ok((recovery.records, recovery.torn))
}

/// [`open_waiting`] for these commands, saying so when a torn tail was cut off.
fn open(store: &Store, id: &IncidentId) -> Result<(OpenIncident, crate::incident::Recovery)> {
    let (incident, recovery) = open_waiting(store, id, Role::Cli)?;
    warn_torn(&recovery);
    Ok((incident, recovery))
}

fn append(incident: &mut OpenIncident, event: Event) -> Result<Record> {
    incident
        .journal
        .append(Source::Operator, &crate::incident::actor::current(), event)
        .wrap_err_with(|| format!("incident \"{}\": nothing was recorded", incident.id))
}

/// A record and who wrote it to the journal: this command, or the holder it went through.
pub(super) struct Written {
    pub(super) record: Record,
    through: Option<String>,
}

/// How long a command keeps trying while the incident changes hands (a holder stopping, the
/// lock not yet free).
const HANDOVER_WAIT: Duration = Duration::from_secs(5);

/// Records `event`: through `--socket` when given; otherwise directly when nobody holds the
/// incident, and through the holder's socket when someone does. Returns only once the record
/// is synced; a request the holder took without answering is reported, never re-sent.
pub(super) fn write_one(store: &Store, id: &str, event: Event, via: &Via) -> Result<Written> {
    check_client_event(&event, Utc::now()).map_err(|e| eyre!("{e}; nothing was recorded"))?;
    let actor = crate::incident::actor::current();
    if let Some(path) = &via.socket {
        let id = IncidentId::parse(id)?;
        let record = Client::new(path, &actor)
            .append(&id.to_string(), event)
            .wrap_err_with(|| format!("incident \"{id}\""))?;
        return Ok(Written {
            record,
            through: Some(format!("the holder at {}", path.display())),
        });
    }
    let found = store.find(id)?;
    let deadline = Instant::now() + HANDOVER_WAIT;
    loop {
        match open_waiting(store, &found, Role::Cli) {
            Ok((mut incident, recovery)) => {
                warn_torn(&recovery);
                let record = append(&mut incident, event)?;
                return Ok(Written {
                    record,
                    through: None,
                });
            }
            Err(StoreError::Held { holder, hint, .. }) => {
                let path = store.dir(&found).join(SOCKET_FILE);
                match Client::new(&path, &actor).append(&found.to_string(), event.clone()) {
                    Ok(record) => {
                        return Ok(Written {
                            record,
                            through: Some(holder.to_string()),
                        });
                    }
                    // The holder does not serve (an older warroom) or is just going: nothing
                    // was sent, so trying again is safe.
                    Err(ClientError::NoHolder { .. }) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    Err(ClientError::NoHolder { .. }) => bail!(
                        "incident \"{found}\" is being written by {holder}, which does not serve \
                         it (no socket answers); {hint}. Nothing was recorded"
                    ),
                    Err(e) => return Err(eyre!(e).wrap_err(format!("incident \"{found}\""))),
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
}

fn warn_torn(recovery: &crate::incident::Recovery) {
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
}

/// A time typed in zone `tz`: a full date and time, or a time today.
fn parse_local_time(s: &str, tz: Tz) -> Result<chrono::DateTime<Utc>> {
    use chrono::{NaiveDateTime, NaiveTime, TimeZone};
    let s = s.trim();
    let today = Utc::now().with_timezone(&tz).date_naive();
    let naive = NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S")
        .or_else(|_| NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M"))
        .or_else(|_| {
            NaiveTime::parse_from_str(s, "%H:%M:%S")
                .or_else(|_| NaiveTime::parse_from_str(s, "%H:%M"))
                .map(|t| today.and_time(t))
        })
        .map_err(|_| {
            eyre!(
                "\"{}\" is not a time: write \"YYYY-MM-DD HH:MM:SS\", or HH:MM for today ({tz})",
                sanitize::line(s)
            )
        })?;
    tz.from_local_datetime(&naive)
        .earliest()
        .map(|t| t.with_timezone(&Utc))
        .ok_or_else(|| {
            eyre!(
                "\"{}\" does not exist in {tz} (a clock change)",
                sanitize::line(s)
            )
        })
}

pub(super) fn acknowledge(out: &mut impl Write, written: &Written, tz: Tz) -> Result<()> {
    let record = &written.record;
    write!(
        out,
        "recorded #{} at {}",
        record.seq,
        format_time(record.time, tz, true)
    )?;
    match &written.through {
        Some(holder) => writeln!(out, " (through {})", sanitize::line(holder))?,
        None => writeln!(out)?,
    }
    Ok(())
}

/// The incidents on the engine, and whether each is on this machine.
async fn list_shared(
    store: &Store,
    engine: &crate::share::Engine,
    out: &mut impl Write,
) -> Result<()> {
    let on = crate::share::local::list(engine).await?;
    if on.is_empty() {
        writeln!(out, "No incidents on {} yet.", engine.url)?;
        return Ok(());
    }
    writeln!(out, "{:<14}  {:<4}  TITLE", "ID", "HERE")?;
    for i in on {
        let here = if store.dir(&i.id).is_dir() {
            "yes"
        } else {
            "no"
        };
        let title = i.title.as_deref().map_or("-".into(), sanitize::line);
        writeln!(out, "{:<14}  {here:<4}  {title}", i.id.to_string())?;
    }
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
                    dash(s.severity),
                    dash(s.status),
                    s.title
                )?;
            }
            Err(e) => writeln!(out, "{:<14}  (unreadable: {e})", id.to_string())?,
        }
    }
    Ok(())
}

/// A value as shown, or `-` when there is none.
fn dash(v: Option<impl std::fmt::Display>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
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
    writeln!(out, "Severity:  {}", dash(s.severity))?;
    writeln!(out, "Status:    {}", dash(s.status))?;
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
        Some(h) => {
            writeln!(out, "Writer:    {h}")?;
            let path = store.dir(&found).join(SOCKET_FILE);
            let hello = Client::new(&path, &crate::incident::actor::current())
                .with_wait(Duration::from_secs(1))
                .hello();
            match hello {
                Ok(w) => writeln!(
                    out,
                    "Serving:   {} ({} following)",
                    path.display(),
                    w.followers
                )?,
                Err(e) => writeln!(out, "Serving:   no ({e})")?,
            }
        }
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
