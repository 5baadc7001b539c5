//! `warroom silence …` (issue 35): the incident's Alertmanager silences made, listed and
//! expired, each change recorded in its journal once Alertmanager has made it (through the
//! holder when a console or recorder holds the incident). `incident status ID resolved` lists
//! the silences still in force through [`on_resolved`], and expires them when asked.
//!
//! Alertmanager is the truth of what is silenced and the journal the record of it: a silence of
//! the incident Alertmanager holds and the journal lacks (a record lost between the two) is
//! recorded when the incident's silences are next read, and one the journal holds in force that
//! Alertmanager shows expired is recorded expired; nothing is recorded twice.

use super::Context;
use super::incident::{Written, acknowledge, share_after, timezone, write_one};
use crate::alerts::silence::{
    CREATE_ATTEMPTS, Silence, SilenceClient, SilenceSpec, expire_recorded, make,
};
use crate::cli::{SilenceCmd, Via};
use crate::incident::event::{Event, Matcher, SilenceChange, SilenceRecord};
use crate::incident::silence::{IncidentMark, live, short};
use crate::incident::timeline::format_time;
use crate::sanitize;
use chrono::Utc;
use chrono_tz::Tz;
use color_eyre::eyre::{Result, bail, eyre};
use std::io::Write;
use std::process::ExitCode;

/// Runs one `silence` subcommand.
pub async fn run(ctx: &Context, cmd: SilenceCmd) -> Result<ExitCode> {
    match cmd {
        SilenceCmd::Add {
            id,
            matchers,
            length,
            comment,
            confirm_broad,
            via,
            ..
        } => {
            let matchers = matchers
                .iter()
                .map(|m| m.parse::<Matcher>())
                .collect::<Result<Vec<_>, _>>()?;
            let asked = Asked {
                matchers,
                length,
                note: comment.unwrap_or_default(),
                confirm_broad,
            };
            add(ctx, &id, asked, &via).await?;
            share_after(ctx, &id, &via.share).await?;
        }
        SilenceCmd::List { id, via, .. } => {
            let s = Silences::load(ctx, &id)?;
            let theirs = s.reconcile(&via).await?;
            s.print(&theirs, &mut std::io::stdout().lock())?;
            share_after(ctx, &id, &via.share).await?;
        }
        SilenceCmd::Expire {
            id, silences, via, ..
        } => {
            let s = Silences::load(ctx, &id)?;
            let theirs = s.reconcile(&via).await?;
            let chosen = s.choose(&theirs, &silences)?;
            s.expire(&chosen, &via).await?;
            share_after(ctx, &id, &via.share).await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What `silence add` asks for.
struct Asked {
    matchers: Vec<Matcher>,
    length: Option<std::time::Duration>,
    note: String,
    confirm_broad: bool,
}

async fn add(ctx: &Context, id: &str, asked: Asked, via: &Via) -> Result<()> {
    let config = ctx.config()?;
    let found = ctx.store.find(id)?.to_string();
    let ceiling = config.alerts.silence_ceiling;
    // "Until the incident is resolved": the ceiling, extended while it lasts.
    let length = asked.length.unwrap_or(ceiling);
    let author = crate::incident::actor::current();
    let request = SilenceSpec::new(
        &IncidentMark::new(&found),
        asked.matchers,
        Utc::now(),
        length,
        &author,
        &asked.note,
    );
    // Refused before Alertmanager is asked anything.
    request.check(ceiling, asked.confirm_broad)?;
    let client = SilenceClient::from_config(config)?;
    let matchers = request.matchers();
    let now_matching = client.matching_alerts(&matchers).await?;
    let made = make(
        &client,
        &request,
        ceiling,
        asked.confirm_broad,
        CREATE_ATTEMPTS,
    )
    .await?;
    let silence = made.id.clone();
    let event = Event::Silence(made);
    let tz = timezone(ctx);
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "silence {silence}: {} until {} ({now_matching} alert(s) match it now)",
        Matcher::list(&matchers),
        format_time(request.ends_at, tz, true)
    )?;
    let written = write_one(&ctx.store, &found, event, via).map_err(|e| {
        e.wrap_err(format!(
            "the silence {silence} is made in Alertmanager but not recorded; `warroom silence \
             list {found}` records it"
        ))
    })?;
    acknowledge(&mut out, &written, tz)
}

/// An incident's silences: what its journal knows and where to ask Alertmanager.
struct Silences<'a> {
    ctx: &'a Context,
    id: String,
    mark: IncidentMark,
    client: SilenceClient,
    tz: Tz,
}

impl<'a> Silences<'a> {
    fn load(ctx: &'a Context, id: &str) -> Result<Silences<'a>> {
        let id = ctx.store.find(id)?.to_string();
        Ok(Silences {
            client: SilenceClient::from_config(ctx.config()?)?,
            mark: IncidentMark::new(&id),
            tz: timezone(ctx),
            ctx,
            id,
        })
    }

    /// The incident's silences in Alertmanager, after recording what the journal lacks: one in
    /// force it does not know, one it holds in force that has expired.
    async fn reconcile(&self, via: &Via) -> Result<Vec<Silence>> {
        let theirs = self.client.of_incident(&self.mark).await?;
        let known = in_force_by_journal(self.ctx, &self.id)?;
        let recorded = self.recorded_ids()?;
        for s in &theirs {
            let knows = known.iter().find(|k| k.id == s.id);
            let change = match (s.in_force(), knows) {
                (true, None) if !recorded.contains(&s.id) => SilenceChange::Made,
                (true, Some(k)) if k.until != s.spec.ends_at => SilenceChange::Extended,
                (false, Some(_)) => SilenceChange::Expired,
                _ => continue,
            };
            let event = Event::Silence(SilenceRecord {
                change,
                id: s.id.clone(),
                matchers: s.matchers(),
                until: s.spec.ends_at,
                author: s.spec.created_by.clone(),
            });
            let written = write_one(&self.ctx.store, &self.id, event, via)?;
            self.say(&written, "the journal lacked it")?;
        }
        Ok(theirs)
    }

    /// Every silence id the journal names.
    fn recorded_ids(&self) -> Result<Vec<String>> {
        let found = self.ctx.store.find(&self.id)?;
        let records = self.ctx.store.read(&found)?.records;
        Ok(records
            .into_iter()
            .filter_map(|r| match r.kind {
                Event::Silence(s) => Some(s.id),
                _ => None,
            })
            .collect())
    }

    fn say(&self, written: &Written, why: &str) -> Result<()> {
        let mut out = std::io::stdout().lock();
        write!(
            out,
            "{} ({why}): ",
            crate::incident::timeline::describe(&written.record.kind)
        )?;
        acknowledge(&mut out, written, self.tz)
    }

    fn print(&self, theirs: &[Silence], out: &mut impl Write) -> Result<()> {
        if theirs.is_empty() {
            writeln!(out, "Incident {} has no silences in Alertmanager.", self.id)?;
            return Ok(());
        }
        writeln!(
            out,
            "{:<36}  {:<8}  {:<23}  {:<12}  MATCHERS",
            "SILENCE", "STATE", "UNTIL", "BY"
        )?;
        for s in theirs {
            let state = format!("{:?}", s.status.state).to_lowercase();
            let line = format!(
                "{:<36}  {:<8}  {:<23}  {:<12}  {}",
                s.id,
                state,
                format_time(s.spec.ends_at, self.tz, true),
                s.spec.created_by,
                Matcher::list(&s.matchers())
            );
            writeln!(out, "{}", sanitize::line(&line))?;
        }
        Ok(())
    }

    /// The silences `named` (ids or unique prefixes) among the incident's, or every one in
    /// force when none is named.
    fn choose(&self, theirs: &[Silence], named: &[String]) -> Result<Vec<Silence>> {
        if named.is_empty() {
            return Ok(theirs.iter().filter(|s| s.in_force()).cloned().collect());
        }
        named
            .iter()
            .map(|n| {
                let n = n.trim();
                let hits: Vec<&Silence> = theirs
                    .iter()
                    .filter(|s| !n.is_empty() && s.id.starts_with(n))
                    .collect();
                match hits.as_slice() {
                    [one] => Ok((*one).clone()),
                    [] => Err(eyre!(
                        "no silence of incident {} starts with \"{}\"; `warroom silence list {}` \
                         shows them",
                        self.id,
                        sanitize::line(n),
                        self.id
                    )),
                    _ => Err(eyre!(
                        "\"{}\" starts more than one silence id; give more of it",
                        sanitize::line(n)
                    )),
                }
            })
            .collect()
    }

    /// Expires `chosen` and records each expiry Alertmanager made.
    async fn expire(&self, chosen: &[Silence], via: &Via) -> Result<()> {
        let author = crate::incident::actor::current();
        let mut out = std::io::stdout().lock();
        if chosen.iter().all(|s| !s.in_force()) {
            writeln!(
                out,
                "Nothing to expire: no silence of {} is in force.",
                self.id
            )?;
            return Ok(());
        }
        for s in chosen {
            let Some(expired) = expire_recorded(&self.client, &s.id, s.matchers(), &author).await?
            else {
                writeln!(out, "silence {} had already expired", short(&s.id))?;
                continue;
            };
            let event = Event::Silence(expired);
            let written = write_one(&self.ctx.store, &self.id, event, via)?;
            write!(out, "expired silence {}: ", s.id)?;
            acknowledge(&mut out, &written, self.tz)?;
        }
        Ok(())
    }
}

/// After `incident status ID resolved`: the incident's silences still in force, expired with
/// `expire`. Without an Alertmanager configured, the journal's list is shown.
pub async fn on_resolved(ctx: &Context, id: &str, expire: bool, via: &Via) -> Result<()> {
    let configured = ctx.config().is_ok_and(|c| c.alertmanager.is_some());
    if !configured {
        let s = in_force_by_journal(ctx, id)?;
        if !s.is_empty() {
            println!(
                "The journal names {} silence(s) in force; no Alertmanager is configured to \
                 expire them ([alertmanager] url or --alertmanager URL):",
                s.len()
            );
            for k in s {
                println!("  {}  {}", k.id, Matcher::list(&k.matchers));
            }
        }
        if expire {
            bail!("no Alertmanager is configured: set [alertmanager] url or pass --alertmanager");
        }
        return Ok(());
    }
    let s = Silences::load(ctx, id)?;
    let theirs = s.reconcile(via).await?;
    let in_force: Vec<Silence> = theirs.into_iter().filter(Silence::in_force).collect();
    if in_force.is_empty() {
        println!("No silence of {} is in force.", s.id);
        return Ok(());
    }
    if expire {
        return s.expire(&in_force, via).await;
    }
    println!("Silences of {} still in force:", s.id);
    s.print(&in_force, &mut std::io::stdout().lock())?;
    println!(
        "`warroom silence expire {}` lifts them (or resolve with --expire-silences).",
        s.id
    );
    Ok(())
}

/// The journal's silences of incident `id` in force now.
fn in_force_by_journal(ctx: &Context, id: &str) -> Result<Vec<SilenceRecord>> {
    let found = ctx.store.find(id)?;
    Ok(live(&ctx.store.read(&found)?.records, Utc::now()))
}
