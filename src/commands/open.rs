//! `warroom open`: the console on a live Prometheus, watching until an incident is declared
//! (`D`, or the first note, status or action; `--title`/`--severity` declare one at once), or
//! continuing one (`--incident ID`). When another process holds that incident, the console
//! follows it (its journal live, notes and actions recorded through it); `--socket PATH`
//! follows a holder on another host through a forwarded socket. When the holder is a headless
//! recorder, ask whether to take over instead (or take `--take-over` as the answer), stop the
//! recorder through the store's takeover, record the takeover, and when the console quits
//! start the recorder again so its watch goes on.

use super::Context;
use crate::app::sharing::FollowSetup;
use crate::cli::OpenArgs;
use crate::incident::event::{Event, Source};
use crate::incident::open::{Header, Locked, Which, open_waiting, resolve};
use crate::incident::serve::{Client, SOCKET_FILE};
use crate::incident::store::{Holder, IncidentId, OpenIncident, Role, Store, StoreError};
use crate::recorder::restart::{HandBack, LOG_FILE, Restart, hand_back};
use color_eyre::eyre::{Result, WrapErr, bail};
use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

/// How long a quitting console waits for its lock to go and for the restarted recorder to
/// hold the incident.
const HAND_BACK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Run `warroom open`.
pub async fn run(ctx: &Context, args: OpenArgs) -> Result<ExitCode> {
    let mut config = ctx.config()?.clone();
    // Shared through an engine: an incident only there is joined (a place made for it here).
    config.share = ctx.engine(&args.share)?.as_ref().map(Into::into);
    if let Some(id) = args.incident.as_deref() {
        super::incident::join_if_shared(ctx, id, &args.share).await?;
    }
    if let Some(socket) = &args.socket {
        return follow(config, None, socket, args.incident.as_deref()).await;
    }
    let mut take_over = args.take_over;
    if let Some(id) = args.incident.as_deref() {
        let found = ctx.store.find(id)?;
        if let Some(holder) = ctx.store.holder(&found)?.filter(|h| h.pid != 0) {
            let follows = match holder.role {
                // A short `warroom incident` command: waited for below, then opened.
                Role::Cli => false,
                Role::Recorder => {
                    take_over = take_over || ask_take_over(&holder, &found)?;
                    !take_over
                }
                _ => true,
            };
            if follows {
                let socket = ctx.store.dir(&found).join(SOCKET_FILE);
                let local = Some((ctx.store.clone(), found));
                return follow(config, local, &socket, None).await;
            }
        }
    }
    let header = Header {
        title: args.title,
        severity: args.severity.as_deref().map(str::parse).transpose()?,
    };
    let incident = args.incident;
    // Without --incident, --title or --severity the console watches: the incident is created
    // when it is declared (D, or the first note, status or action).
    if incident.is_none() && header.title.is_none() && header.severity.is_none() {
        crate::tui::require_terminal("warroom open")?;
        return crate::app::runtime::open(config, &ctx.store, header, None).await;
    }
    let handed: Arc<Mutex<Option<(IncidentId, Restart)>>> = Arc::default();
    let slot = handed.clone();
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
        let (incident, recovery, restart) = open_for_console(store, &id, take_over)?;
        if let (Some(r), Ok(mut slot)) = (restart, slot.lock()) {
            *slot = Some((id, r));
        }
        crate::tui::require_terminal("warroom open")?;
        Ok(Locked {
            incident,
            recovery,
            new,
        })
    };
    let opened = crate::app::runtime::open(config, &ctx.store, header, Some(Box::new(lock))).await;
    // Takeover without loss: the recorder this console stopped goes on recording (however the
    // console ended).
    let handed = handed.lock().ok().and_then(|mut h| h.take());
    if let Some((id, restart)) = handed {
        let (store, log) = (ctx.store.clone(), ctx.store.dir(&id).join(LOG_FILE));
        let how =
            tokio::task::spawn_blocking(move || hand_back(&store, &id, &restart, HAND_BACK_WAIT))
                .await
                .unwrap_or_else(|e| HandBack::Failed(e.to_string()));
        match how {
            HandBack::Recording { pid } => eprintln!(
                "warroom: the incident is handed back to warroom record (pid {pid}); its status \
                 lines go to {}",
                log.display()
            ),
            HandBack::Failed(why) => eprintln!(
                "warroom: the recorder this console took over from was not restarted: {why}"
            ),
        }
    }
    opened
}

/// Opens `id` for the console. When a headless recorder holds it, says so and offers to take
/// over: with `take_over` (`--take-over`) at once, otherwise after a yes on the terminal (never
/// when stdin is not a terminal). The stop is recorded: the recorder records its interruption
/// and the console a notice of the takeover.
fn open_for_console(
    store: &Store,
    id: &IncidentId,
    take_over: bool,
) -> Result<(OpenIncident, crate::incident::Recovery, Option<Restart>)> {
    let holder = match open_waiting(store, id, Role::Console) {
        Err(StoreError::Held { holder, .. }) if holder.role == Role::Recorder => holder,
        other => {
            let (incident, recovery) = other?;
            return Ok((incident, recovery, None));
        }
    };
    if !take_over && !ask_take_over(&holder, id)? {
        bail!(
            "incident {id} is held by {}; left to it. Its timeline: `warroom incident timeline {id}`",
            holder.command()
        );
    }
    // How to start the recorder again once this console lets go (it left that at its start).
    let restart = Restart::load(&store.dir(id));
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
    Ok((incident, recovery, restart))
}

/// When a headless recorder holds `id`: ask whether to take it over (a no follows it). Without
/// a terminal to ask on, it is an error that says what to pass.
fn ask_take_over(holder: &Holder, id: &IncidentId) -> Result<bool> {
    use std::io::IsTerminal;
    let held = format!(
        "incident {id} is held by {} (pid {}, since {})",
        holder.command(),
        holder.pid,
        holder.since.format("%Y-%m-%d %H:%M:%S UTC")
    );
    if !std::io::stdin().is_terminal() {
        bail!(
            "{held}; pass --take-over to stop it and open the console, or stop it first \
             (`kill -TERM {}`)",
            holder.pid
        );
    }
    eprint!("{held}; take over? [y/N] (no: follow it, recording through it) ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes" | "YES"))
}

/// Open a follower on the holder behind `socket` (`local`: the incident on this host, which a
/// follower may take over when its holder goes).
async fn follow(
    config: crate::config::Config,
    local: Option<(Store, IncidentId)>,
    socket: &std::path::Path,
    incident: Option<&str>,
) -> Result<ExitCode> {
    crate::tui::require_terminal("warroom open")?;
    let actor = crate::incident::actor::current();
    let client = Client::new(socket, &actor);
    let asked = client.clone();
    let welcome = tokio::task::spawn_blocking(move || asked.hello())
        .await?
        .wrap_err_with(|| format!("cannot follow the incident behind \"{}\"", socket.display()))?;
    if let Some(id) = incident.filter(|id| *id != welcome.incident) {
        bail!(
            "\"{}\" serves incident \"{}\", not \"{}\"",
            socket.display(),
            welcome.incident,
            crate::sanitize::line(id)
        );
    }
    let records = match &local {
        Some((store, id)) => store.read(id)?.records,
        None => Vec::new(),
    };
    let setup = FollowSetup {
        client,
        incident: welcome.incident,
        actor,
        local: local.clone(),
    };
    let store = local.as_ref().map(|(s, _)| s);
    crate::app::runtime::follow(config, store, setup, welcome.holder, records).await
}
