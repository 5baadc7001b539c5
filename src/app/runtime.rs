//! The runtime: owns the terminal and the one event loop. It feeds input, worker answers, a
//! slow tick and signals to `update`, spawns the effects as tasks, and draws only when the
//! model changed, at most once per frame interval. A hung source never delays a keypress:
//! queries run in tasks and their answers arrive as messages.

use super::effect::Effect;
use super::model::{Model, Quit};
use super::msg::Msg;
use super::update::update;
use crate::clock::{Clock, WallClock};
use crate::config::Config;
use crate::metrics::Source;
use crate::theme::Theme;
use color_eyre::eyre::{WrapErr, eyre};
use crossterm::event::Event;
use futures::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::{Instant, MissedTickBehavior};

/// Shortest time between two frames (the render cap).
pub const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// Longest a frame waits for the rest of a refresh's answers once the first has landed.
pub const GATHER: Duration = Duration::from_millis(60);
/// The slow tick: clocks, staleness ages, refresh scheduling.
pub const TICK: Duration = Duration::from_millis(250);
/// Longest a change the clock alone makes (the status bar's minute, an age, a notice expiring)
/// waits to be drawn with the frame of a refresh that is coming, instead of a frame of its
/// own: the idle console then draws once per refresh (issue 20).
pub const HOLD: Duration = Duration::from_secs(5);
/// How long after the first frame the first fetches (and the runbook list) start. The terminal
/// still has to show that frame, and on a small machine beside a local Prometheus, eight range
/// queries answered in the same milliseconds took its CPU: the boxes showed 2 ms later than
/// grafatui's with a live Prometheus and no later with a dead one (issue 20). One frame
/// interval is not seen, and the data still comes several times sooner than grafatui's.
pub const FIRST_WAVE_AFTER: Duration = FRAME_INTERVAL;
/// No query task outlives this, whatever the source's own timeout says.
pub const HARD_DEADLINE: Duration = Duration::from_secs(35);

/// How `warroom open` takes the incident it records, once the setup that can fail is done.
pub type Lock = Box<
    dyn FnOnce(&crate::incident::Store) -> color_eyre::Result<crate::incident::open::Locked> + Send,
>;

/// `warroom open`: the console on the config's Prometheus, recording the incident `lock`
/// takes. `lock` is called once the fallible setup is done (the source, the alert intake), so a
/// bad URL never costs a recorder its lock. With `lock` `None` the console only watches until
/// an incident is declared (`D`, or the first note, status or action): then a new one is
/// created with `header`, and the crossings seen before go into it.
pub async fn open(
    config: Config,
    store: &crate::incident::Store,
    header: crate::incident::open::Header,
    lock: Option<Lock>,
) -> color_eyre::Result<ExitCode> {
    let Start {
        mut model,
        source,
        clock,
        discovery,
    } = start(&config)?;
    let alerts = crate::alerts::AlertIntake::from_config(&config)?;
    let (journal, declare) = match lock {
        Some(lock) => (
            Some(open_incident(&mut model, lock(store)?, header, None).await?),
            None,
        ),
        None => {
            model.declarable = true;
            let setup = DeclareSetup {
                store: store.clone(),
                config: config.clone(),
                header,
            };
            (None, Some(setup))
        }
    };
    let id = (model.incident.as_ref()).and_then(|i| crate::incident::IncidentId::parse(&i.id).ok());
    let (github, warning) = super::workers::github::setup(&config, store, id.as_ref())?;
    if let Some(w) = warning {
        model.notify(w, true, Some(30));
    }
    let services = Services {
        source,
        journal,
        declare,
        alerts,
        export: export_setup(&model, store, &config),
        rehearsal: None,
        github,
        runbooks: crate::runbook::setup::RunbookSetup::from_config(&config),
        serve: true,
        follow: None,
        discovery,
    };
    run_terminal(model, services, clock).await
}

/// `warroom open` on an incident another process holds: the same console, following the
/// holder's journal and recording through it (`follow`), with `records` already read from
/// the journal when it is on this host (the stream then starts after them).
pub async fn follow(
    config: Config,
    store: Option<&crate::incident::Store>,
    follow: super::sharing::FollowSetup,
    holder: crate::incident::store::Holder,
    records: Vec<crate::incident::Record>,
) -> color_eyre::Result<ExitCode> {
    // The same dashboard as the holder's: found by discovery when no `[[panel]]` is set.
    let Start {
        mut model,
        source,
        clock,
        discovery,
    } = start(&config)?;
    let summary = crate::incident::summary::summarize(&records);
    model.incident = Some(super::model::IncidentHeader {
        id: follow.incident.clone(),
        title: summary.title,
    });
    model.timeline = records;
    model.actor.clone_from(&follow.actor);
    model.sharing = super::sharing::Sharing::Following {
        holder,
        followers: 0,
        gone: None,
    };
    // After a takeover this console records what the holder did: its alerts too.
    let alerts = crate::alerts::AlertIntake::from_config(&config)?;
    let export = store.and_then(|s| export_setup(&model, s, &config));
    let services = Services {
        source,
        journal: None,
        declare: None,
        alerts,
        export,
        rehearsal: None,
        github: None,
        runbooks: crate::runbook::setup::RunbookSetup::from_config(&config),
        serve: true,
        follow: Some(follow),
        discovery,
    };
    run_terminal(model, services, clock).await
}

/// What `open` and `follow` start from: the config's Prometheus, the wall clock, and the model
/// (with the theme's warning shown).
struct Start {
    model: Model,
    source: Arc<dyn Source>,
    clock: Arc<dyn Clock>,
    /// The client discovery asks; `None` when `[[panel]]` entries are configured.
    discovery: Option<Arc<crate::metrics::prometheus::PrometheusClient>>,
}

fn start(config: &Config) -> color_eyre::Result<Start> {
    let client = crate::metrics::from_config::client(config)?;
    let source: Arc<dyn Source> = client.clone();
    let (theme, warning) = Theme::resolve(&config.theme, std::env::var_os("NO_COLOR").is_some());
    let clock: Arc<dyn Clock> = Arc::new(WallClock);
    let mut model = Model::new(config, theme, source.describe(), clock.now());
    if let Some(w) = warning {
        model.notify(w, true, None);
    }
    // No `[[panel]]`: the dashboard is what the Prometheus exports, found after the first
    // frame (the simulator's panels would only say "no data" on a real service).
    let discovery = config.panels.is_empty().then(|| {
        model.discovery = Some(super::model::Discovery::Due {
            at: None,
            attempts: 0,
            last_error: None,
        });
        client
    });
    Ok(Start {
        model,
        source,
        clock,
        discovery,
    })
}

/// How `E` exports the incident the model has open.
pub(crate) fn export_setup(
    model: &Model,
    store: &crate::incident::Store,
    config: &Config,
) -> Option<super::workers::export::ExportSetup> {
    let id = crate::incident::IncidentId::parse(&model.incident.as_ref()?.id).ok()?;
    Some(super::workers::export::ExportSetup {
        store: store.clone(),
        id,
        timezone: config.timezone,
        step_s: config.refresh.as_secs_f64().max(1.0),
        gap_limit: config.gap_limit,
    })
}

/// Start writing the incident `locked` holds, and put what it has recorded so far on the
/// model's timeline. Its records are stamped by `clock` when given (a rehearsal's simulated
/// time) instead of the wall clock.
pub async fn open_incident(
    model: &mut Model,
    locked: crate::incident::open::Locked,
    header: crate::incident::open::Header,
    clock: Option<Arc<dyn Clock>>,
) -> color_eyre::Result<crate::incident::JournalWriter> {
    use crate::incident::open;
    let opened = open::begin(locked, header, &model.actor, clock).await?;
    if let Some(torn) = &opened.torn {
        model.notify(
            format!(
                "the journal's last record was torn and set aside ({})",
                crate::sanitize::line(&torn.reason)
            ),
            true,
            None,
        );
    }
    let summary = crate::incident::summary::summarize(&opened.records);
    model.incident = Some(super::model::IncidentHeader {
        id: opened.id.to_string(),
        title: summary.title,
    });
    // Crossings already recorded (by a recorder before a takeover, or an earlier console) are
    // where the detectors start, so they are not recorded twice.
    model.detectors = (model.panels.iter())
        .map(|p| crate::recorder::panel_watch::detector_from_journal(&p.config, &opened.records))
        .collect();
    model.timeline = opened.records;
    Ok(opened.writer)
}

/// Run the console in the real terminal: raw mode, alternate screen, a panic hook that
/// restores the terminal (installed by `ratatui::init`), and restore on every exit path.
pub async fn run_terminal(
    model: Model,
    services: Services,
    clock: Arc<dyn Clock>,
) -> color_eyre::Result<ExitCode> {
    let mut terminal = crate::tui::enter("the console")?;
    let size = terminal.size().unwrap_or_default();
    let mut model = model;
    model.width = size.width;
    model.height = size.height;
    let (input, suspend) = crate::tui::editor::input();
    let result = run_loop(
        &mut terminal,
        model,
        services,
        clock.clone(),
        input,
        // The real terminal's frames carry their synchronized-update marks (`tui::FrameOut`).
        |_| {},
        Some(suspend),
    )
    .await;
    crate::tui::restore();
    let (model, services) = result?;
    // What was recorded, and where to go from here.
    match &model.incident {
        Some(i) => println!("{}", next_commands(&i.id)),
        None if model.declarable => println!(
            "no incident was declared: nothing was recorded ({} seen while watching)",
            match model.pending.len() {
                1 => "1 crossing".to_string(),
                n => format!("{n} crossings"),
            }
        ),
        None => {}
    }
    if let (Some(journal), Some(Quit::Signal(signal))) = (&services.journal, &model.quit) {
        // Recorded after the terminal is back, so a slow disk cannot keep it in raw mode.
        let _ = journal
            .append(
                crate::incident::Source::System,
                "warroom",
                crate::incident::Event::Interrupted {
                    signal: (*signal).to_string(),
                },
            )
            .await;
    }
    Ok(match model.quit {
        Some(Quit::Signal(signal)) => crate::signals::exit_code(signal),
        _ => ExitCode::SUCCESS,
    })
}

/// The lines printed when the console closes on an incident: its id and what to do next.
pub fn next_commands(id: &str) -> String {
    format!(
        "incident {id} recorded. Next:\n  warroom incident timeline {id}   # what happened\n  warroom export {id}              # the postmortem draft\n  warroom open --incident {id}     # go on recording"
    )
}

/// What declaring an incident later needs (`warroom open` watching without one).
#[derive(Clone)]
pub struct DeclareSetup {
    pub store: crate::incident::Store,
    pub config: Config,
    pub header: crate::incident::open::Header,
}

/// One message through `update`, its effects started.
fn effects_of(
    model: &mut Model,
    msg: Msg,
    services: &Services,
    tx: &mpsc::UnboundedSender<Msg>,
    clock: &Arc<dyn Clock>,
) {
    let effects = update(model, msg);
    super::workers::spawn_all(effects, services, tx, clock);
}

/// What the loop's tasks talk to.
#[derive(Clone)]
pub struct Services {
    pub source: Arc<dyn Source>,
    /// The incident's journal, when the console records one.
    pub journal: Option<crate::incident::JournalWriter>,
    /// How to create the incident when it is declared (`None`: one is open, or none can be).
    pub declare: Option<DeclareSetup>,
    /// The alert intake, spawned next to the loop when an incident is recorded.
    pub alerts: Option<crate::alerts::AlertIntake>,
    /// Runbook directories, variables and the controls of running runs.
    pub runbooks: crate::runbook::setup::RunbookSetup,
    /// Where and how the open incident is exported (`E`), when one is open.
    pub export: Option<super::workers::export::ExportSetup>,
    /// The stage of a rehearsal: its faults go on the timeline as they land, its pace follows
    /// the console's, and its end is announced.
    pub rehearsal: Option<crate::rehearsal::stage::Live>,
    /// GitHub: the changes feed and publishing, on one client (`None` without `[github]`).
    pub github: Option<super::workers::github::GithubSetup>,
    /// Serve the incident this console holds on its socket, so the team records through it.
    pub serve: bool,
    /// The holder this console follows, when another process holds the incident.
    pub follow: Option<super::sharing::FollowSetup>,
    /// The Prometheus client discovery asks, when the dashboard is built by discovery.
    pub discovery: Option<Arc<crate::metrics::prometheus::PrometheusClient>>,
}

impl Services {
    /// Only a metrics source: nothing is recorded.
    pub fn metrics_only(source: Arc<dyn Source>) -> Self {
        Services {
            source,
            journal: None,
            declare: None,
            alerts: None,
            runbooks: Default::default(),
            export: None,
            rehearsal: None,
            github: None,
            serve: false,
            follow: None,
            discovery: None,
        }
    }
}

/// The event loop, generic over the backend and the input stream so tests can drive it.
/// Returns the final model.
pub async fn event_loop<B, S>(
    terminal: &mut Terminal<B>,
    model: Model,
    services: Services,
    clock: Arc<dyn Clock>,
    input: S,
    sync: fn(bool),
) -> color_eyre::Result<Model>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    S: Stream<Item = std::io::Result<Event>> + Unpin,
{
    event_loop_with(terminal, model, services, clock, input, sync, None).await
}

/// The event loop with a way to lend the terminal to an external editor (`None` in tests:
/// an editor request then answers that there is no terminal).
pub async fn event_loop_with<B, S>(
    terminal: &mut Terminal<B>,
    model: Model,
    services: Services,
    clock: Arc<dyn Clock>,
    input: S,
    sync: fn(bool),
    editor: Option<crate::tui::editor::Suspend>,
) -> color_eyre::Result<Model>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    S: Stream<Item = std::io::Result<Event>> + Unpin,
{
    let (model, _) = run_loop(terminal, model, services, clock, input, sync, editor).await?;
    Ok(model)
}

/// Declare the incident: create it and start its journal, keeping the detectors (what was
/// seen while watching is not seen again). The loop then starts what records beside it.
async fn declare(
    model: &mut Model,
    services: &mut Services,
    clock: &Arc<dyn Clock>,
    title: Option<String>,
    severity: Option<crate::incident::event::Severity>,
) -> Result<(), String> {
    let setup = services
        .declare
        .clone()
        .ok_or_else(|| crate::strings::NO_INCIDENT.to_string())?;
    let locked = crate::incident::open::lock(
        &setup.store,
        crate::incident::open::Which::New(clock.now()),
        crate::incident::store::Role::Console,
    )
    .map_err(|e| e.to_string())?;
    let header = crate::incident::open::Header {
        title: title.or(setup.header.title.clone()),
        severity: severity.or(setup.header.severity),
    };
    let detectors = std::mem::take(&mut model.detectors);
    let journal = open_incident(model, locked, header, None)
        .await
        .map_err(|e| e.to_string())?;
    model.detectors = detectors;
    services.journal = Some(journal);
    services.export = export_setup(model, &setup.store, &setup.config);
    let id = (model.incident.as_ref()).and_then(|i| crate::incident::IncidentId::parse(&i.id).ok());
    match super::workers::github::setup(&setup.config, &setup.store, id.as_ref()) {
        Ok((github, warning)) => {
            services.github = github;
            if let Some(w) = warning {
                model.notify(w, true, Some(30));
            }
        }
        Err(e) => model.notify(format!("GitHub: {e}"), true, None),
    }
    services.declare = None;
    Ok(())
}

/// The loop itself; returns the services as they ended (a follower that took over holds a
/// journal now, which its stop is recorded in).
async fn run_loop<B, S>(
    terminal: &mut Terminal<B>,
    mut model: Model,
    mut services: Services,
    clock: Arc<dyn Clock>,
    mut input: S,
    sync: fn(bool),
    mut editor: Option<crate::tui::editor::Suspend>,
) -> color_eyre::Result<(Model, Services)>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    S: Stream<Item = std::io::Result<Event>> + Unpin,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
    start_recording(&services, &model, &tx);
    // The incident's socket: served while this console holds it, followed while another does.
    let mut _serving: Option<crate::incident::serve::Serving> =
        match (&services.journal, services.serve) {
            (Some(journal), true) => super::workers::share::hold(journal, &tx),
            _ => None,
        };
    let _following = FollowGuard((services.follow.as_ref()).map(|f| {
        super::workers::share::follow(f, model.timeline.last().map_or(0, |r| r.seq), &tx)
    }));
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut signals = crate::signals::Signals::new();
    let mut last_draw: Option<Instant> = None;
    // The frame on screen: one that would write the same cells is not written.
    let mut shown = crate::tui::frames::Shown::default();
    // What the clock alone changes on screen, as last drawn (`ui::idle`): a tick that changes
    // none of it draws nothing.
    let mut idle_key: Option<u64> = None;
    // While the answers of one refresh land, the frame waits for the last of them (at most
    // `GATHER`), so a refresh of eight panels draws once, not once per answer.
    let mut gather_until: Option<Instant> = None;
    // A change the clock alone made waits until then for the next refresh's frame (`HOLD`).
    let mut hold_until: Option<Instant> = None;
    let mut input_open = true;
    // The first tick schedules the first fetches; they and the runbook list go out a frame
    // interval after the first frame (`FIRST_WAVE_AFTER`).
    let mut first_wave = Some(update(&mut model, Msg::Tick(clock.now())));
    let mut first_wave_at: Option<Instant> = None;
    loop {
        if gather_until.is_some_and(|g| Instant::now() >= g || model.in_flight() == 0) {
            gather_until = None;
        }
        if hold_until.is_some_and(|h| Instant::now() >= h) {
            hold_until = None;
        }
        if model.dirty && gather_until.is_none() && hold_until.is_none() {
            let due = last_draw.map_or(Instant::now(), |t| t + FRAME_INTERVAL);
            if Instant::now() >= due {
                shown
                    .draw(terminal, sync, |f| crate::ui::view(f, &model))
                    .map_err(|e| eyre!("drawing failed: {e}"))?;
                model.dirty = false;
                idle_key = Some(crate::ui::idle::key(&model));
                if last_draw.is_none() {
                    crate::tui::first_frame("console");
                    first_wave_at = Some(Instant::now() + FIRST_WAVE_AFTER);
                }
                last_draw = Some(Instant::now());
            }
        }
        if model.quit.is_some() {
            return Ok((model, services));
        }
        let render_at = last_draw
            .map_or(Instant::now(), |t| t + FRAME_INTERVAL)
            .max(gather_until.unwrap_or_else(Instant::now))
            .max(hold_until.unwrap_or_else(Instant::now));
        let was_dirty = model.dirty;
        let mut ticked = false;
        let msg = tokio::select! {
            ev = input.next(), if input_open => match ev {
                Some(Ok(Event::Key(k))) => Some(Msg::Key(k)),
                Some(Ok(Event::Resize(width, height))) => Some(Msg::Resize { width, height }),
                Some(Ok(_)) => None,
                Some(Err(e)) => return Err(e).wrap_err("reading terminal input failed"),
                None => { input_open = false; None }
            },
            Some(m) = rx.recv() => Some(m),
            _ = tick.tick() => {
                ticked = true;
                if services.rehearsal.is_some() {
                    // Notices expire on the wall clock, not the simulated one.
                    effects_of(&mut model, Msg::Wall(chrono::Utc::now()), &services, &tx, &clock);
                }
                Some(Msg::Tick(clock.now()))
            }
            name = signals.next() => Some(Msg::Interrupted(name)),
            _ = tokio::time::sleep_until(render_at), if model.dirty => None,
            _ = tokio::time::sleep_until(first_wave_at.unwrap_or_else(Instant::now)),
                if first_wave_at.is_some() =>
            {
                first_wave_at = None;
                let mut effects = first_wave.take().unwrap_or_default();
                // The runbook list goes with them: parsing it on another thread took the
                // second core from the first frame too. It still loads before anyone opens
                // the pane, so the "what's wrong" line can suggest a runbook.
                effects.push(Effect::LoadRunbooks);
                super::workers::spawn_all(effects, &services, &tx, &clock);
                None
            }
        };
        if ticked {
            // The tick's own changes (`update` marks the model changed each second) draw only
            // when they change what is on screen.
            let effects = match msg {
                Some(msg) => update(&mut model, msg),
                None => Vec::new(),
            };
            if !was_dirty && model.dirty {
                if idle_key == Some(crate::ui::idle::key(&model)) {
                    model.dirty = false;
                } else if let Some(due) = model.refresh_due_in().filter(|d| *d <= HOLD) {
                    // Drawn with the refresh's answers (or when the hold runs out). The
                    // refresh goes on the first tick at or after it is due: a tick later at
                    // most.
                    hold_until.get_or_insert_with(|| Instant::now() + due + TICK + GATHER);
                }
            }
            super::workers::spawn_all(effects, &services, &tx, &clock);
            continue;
        }
        // A refresh's first answer while others are in flight: the frame waits for them. A
        // key or a resize draws at once.
        let answer = matches!(msg, Some(Msg::Answer { .. } | Msg::Latest { .. }));
        let urgent = matches!(msg, Some(Msg::Key(_) | Msg::Resize { .. }));
        if let Some(msg) = msg {
            if let Msg::Share(super::sharing::ShareMsg::TookOver(Ok(took))) = &msg {
                // This console holds the incident now: it records, serves and runs runbooks.
                services.journal = Some(took.writer.clone());
                services.follow = None;
                start_recording(&services, &model, &tx);
                _serving = super::workers::share::hold(&took.writer, &tx);
            }
            let mut effects = update(&mut model, msg);
            if let Some(i) = effects.iter().position(|e| *e == Effect::EditNote) {
                effects.remove(i);
                let text = match editor.as_mut() {
                    Some(suspend) => {
                        let r = suspend.edit().await;
                        // The screen was cleared: forget both frames so the next draw is whole.
                        // (`Terminal::clear` would ask the terminal where its cursor is, and
                        // the answer can be lost to the input reader.)
                        terminal.swap_buffers();
                        terminal.swap_buffers();
                        shown.forget();
                        suspend.resume();
                        model.dirty = true;
                        r
                    }
                    None => Err("no terminal to hand to an editor".into()),
                };
                effects.extend(update(&mut model, Msg::EditorClosed(text)));
            }
            while let Some(i) = effects
                .iter()
                .position(|e| matches!(e, Effect::Declare { .. }))
            {
                let Effect::Declare { title, severity } = effects.remove(i) else {
                    continue;
                };
                let result = declare(&mut model, &mut services, &clock, title, severity).await;
                if result.is_ok()
                    && let Some(journal) = services.journal.clone()
                {
                    // Recording from now on: alerts, changes, the incident's socket.
                    start_recording(&services, &model, &tx);
                    if services.serve {
                        _serving = super::workers::share::hold(&journal, &tx);
                    }
                }
                // Where the declaration was: the crossings seen before it are recorded before
                // the note or status that declared it.
                let declared = update(&mut model, Msg::Declared(result));
                effects.splice(i..i, declared);
            }
            super::workers::spawn_all(effects, &services, &tx, &clock);
        }
        // Anything but a tick ends a hold: an answer draws its frame (gathered with the rest
        // of its refresh), a key at once.
        let held = hold_until.take().is_some();
        if urgent {
            gather_until = None;
        } else if answer && (!was_dirty || held) && model.dirty && model.in_flight() > 0 {
            gather_until.get_or_insert_with(|| Instant::now() + GATHER);
        }
    }
}

/// Ends following (the reader thread sees the stream close) when the loop ends, however.
struct FollowGuard(Option<Arc<std::sync::Mutex<Option<crate::incident::serve::Closer>>>>);

impl Drop for FollowGuard {
    fn drop(&mut self) {
        if let Some(closer) = (self.0.take()).and_then(|c| c.lock().ok().and_then(|mut c| c.take()))
        {
            closer.close();
        }
    }
}

/// The parts that record into the incident this console holds: alerts, GitHub changes, a
/// rehearsal's faults (started when the loop starts, and again after a takeover).
fn start_recording(services: &Services, model: &Model, tx: &mpsc::UnboundedSender<Msg>) {
    if let (Some(intake), Some(journal)) = (services.alerts.clone(), services.journal.clone()) {
        intake.spawn(journal, &model.timeline, tx.clone(), |r| match r {
            crate::alerts::AlertReport::Recorded(record) => Some(Msg::Recorded(Ok(record))),
            crate::alerts::AlertReport::NotRecorded { error, .. } => {
                Some(Msg::Recorded(Err(error)))
            }
            _ => None,
        });
    }
    if let (Some(github), Some(journal)) = (services.github.as_ref(), services.journal.clone()) {
        if let Some(intake) = github.changes.clone() {
            intake.spawn(journal.clone(), &model.timeline, tx.clone(), |r| {
                Some(Msg::Changes(r))
            });
        }
        // What an earlier console or `warroom publish` left in the outbox is finished now.
        if let Some(publish) = github
            .publish
            .clone()
            .filter(super::workers::publish::PublishSetup::has_pending)
        {
            super::workers::publish::spawn(publish, None, Some(journal), tx.clone());
        }
    }
    if let (Some(live), Some(journal)) = (services.rehearsal.clone(), services.journal.clone()) {
        super::workers::rehearsal::spawn(live, journal, services, tx);
    }
}
