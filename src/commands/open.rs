//! `warroom open`: the console on a live Prometheus, watching until an incident is declared
//! (`D`, the first note, status or action; `--title`/`--severity` declare one at once), or
//! continuing one (`--incident ID`). When a headless recorder holds that incident, say who holds it, ask
//! (or take `--take-over` as the answer), stop the recorder through the store's takeover, and
//! record the takeover.

use super::Context;
use crate::cli::OpenArgs;
use crate::incident::event::{Event, Source};
use crate::incident::open::{Header, Locked, Which, open_waiting, resolve};
use crate::incident::store::{IncidentId, OpenIncident, Role, Store, StoreError};
use color_eyre::eyre::{Result, WrapErr, bail};
use std::io::Write;
use std::process::ExitCode;

/// Run `warroom open`.
pub async fn run(ctx: &Context, args: OpenArgs) -> Result<ExitCode> {
    let config = ctx.config()?.clone();
    let header = Header {
        title: args.title,
        severity: args.severity.as_deref().map(str::parse).transpose()?,
    };
    let (incident, take_over) = (args.incident, args.take_over);
    // Without --incident, --title or --severity the console watches: the incident is created
    // when it is declared (D, or the first note, status or action).
    if incident.is_none() && header.title.is_none() && header.severity.is_none() {
        crate::tui::require_terminal("warroom open")?;
        return crate::app::runtime::open(config, &ctx.store, header, None).await;
    }
    // The config and the source are checked first (their errors say more); then, before an
    // incident is created or a lock kept, that there is a terminal to show it on. A held
    // incident still says who holds it.
    let lock = move |store: &Store| {
        if incident.is_none() {
            crate::tui::require_terminal("warroom open")?;
        }
        let which = incident
            .as_deref()
            .map_or(Which::New(chrono::Utc::now()), Which::Existing);
        let (id, new) = resolve(store, which)?;
        let (incident, recovery) = open_for_console(store, &id, take_over)?;
        crate::tui::require_terminal("warroom open")?;
        Ok(Locked {
            incident,
            recovery,
            new,
        })
    };
    crate::app::runtime::open(config, &ctx.store, header, Some(Box::new(lock))).await
}

/// Opens `id` for the console. When a headless recorder holds it, says so and offers to take
/// over: with `take_over` (`--take-over`) at once, otherwise after a yes on the terminal (never
/// when stdin is not a terminal). The stop is recorded: the recorder records its interruption
/// and the console a notice of the takeover.
fn open_for_console(
    store: &Store,
    id: &IncidentId,
    take_over: bool,
) -> Result<(OpenIncident, crate::incident::Recovery)> {
    use std::io::IsTerminal;
    let holder = match open_waiting(store, id, Role::Console) {
        Err(StoreError::Held { holder, .. }) if holder.role == Role::Recorder => holder,
        other => return Ok(other?),
    };
    let held = format!(
        "incident {id} is held by {} (pid {}, since {})",
        holder.command(),
        holder.pid,
        holder.since.format("%Y-%m-%d %H:%M:%S UTC")
    );
    if !take_over {
        if !std::io::stdin().is_terminal() {
            bail!(
                "{held}; pass --take-over to stop it and open the console, or stop it first \
                 (`kill -TERM {}`)",
                holder.pid
            );
        }
        eprint!("{held}; take over? [y/N] ");
        std::io::stderr().flush()?;
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes" | "Yes" | "YES") {
            bail!("{held}; left to it. Its timeline: `warroom incident timeline {id}`");
        }
    }
    eprintln!("asking {} (pid {}) to stop…", holder.command(), holder.pid);
    let (mut incident, mut recovery, stopped) =
        store.take_over(id, Role::Console, crate::incident::store::TAKEOVER_WAIT)?;
    if let Some(h) = stopped {
        let notice = Event::JournalNotice {
            message: format!(
                "the console (pid {}) took over from {} (pid {})",
                std::process::id(),
                h.command(),
                h.pid
            ),
        };
        let record = incident
            .journal
            .append(Source::System, "warroom", notice)
            .wrap_err("the takeover could not be recorded")?;
        recovery.records.push(record);
    }
    Ok((incident, recovery))
}
