//! The runtime: owns the terminal and the one event loop. It feeds input, worker answers, a
//! slow tick and signals to `update`, spawns the effects as tasks ([`super::workers`]), and
//! draws only when the model changed and the [`super::pacer`] says a frame is due. A hung
//! source never delays a keypress: queries run in tasks and their answers arrive as messages.

use super::effect::Effect;
use super::model::{Model, Quit};
use super::msg::Msg;
use super::pacer::{Pacer, TickChange, Wake};
use super::update::update;
use super::workers::Services;
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
use tokio::sync::mpsc;
use tokio::time::{Instant, MissedTickBehavior};

/// How long a closing console waits for the engine to take the record of its leaving.
const LEAVE_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// The slow tick (the pacer's): `update` schedules refreshes on it too.
pub use super::pacer::TICK;

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
    let (mut model, mut services, clock) = start(&config)?;
    match lock {
        Some(lock) => {
            let locked = lock(store)?;
            services.journal = Some(open_incident(&mut model, locked, header, None).await?);
        }
        None => {
            model.declarable = true;
            services.declare = Some(DeclareSetup {
                store: store.clone(),
                config: config.clone(),
                header,
            });
        }
    }
    let id = (model.incident.as_ref()).and_then(|i| crate::incident::IncidentId::parse(&i.id).ok());
    let (github, warning) = super::workers::github::setup(&config, store, id.as_ref())?;
    if let Some(w) = warning {
        model.notify(w, true, Some(30));
    }
    services.github = github;
    services.export = export_setup(&model, store, &config);
    services.engine = (config.share.as_ref()).map(|e| (e.into(), store.clone()));
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
    // After a takeover this console records what the holder did: its alerts too.
    let (mut model, mut services, clock) = start(&config)?;
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
    services.export = store.and_then(|s| export_setup(&model, s, &config));
    services.follow = Some(follow);
    run_terminal(model, services, clock).await
}

/// What `open` and `follow` start from: the model (with the theme's warning shown) on the
/// config's Prometheus, the services every console has (the source, the alert intake, the
/// runbooks, its socket, discovery when no `[[panel]]` is configured), and the wall clock.
fn start(config: &Config) -> color_eyre::Result<(Model, Services, Arc<dyn Clock>)> {
    let client = crate::metrics::from_config::client(config)?;
    let source: Arc<dyn Source> = client.clone();
    let (theme, warning) = Theme::for_terminal(&config.theme);
    let clock: Arc<dyn Clock> = Arc::new(WallClock);
    let mut model = Model::new(config, theme, source.describe(), clock.now());
    model.graph_base = Some(client.base_url().to_string());
    if let Some(w) = warning {
        model.notify(w, true, None);
    }
    // No `[[panel]]`: the dashboard is what the Prometheus exports, found after the first
    // frame (the simulator's panels would only say "no data" on a real service).
    // The `[[variable]]`s resolve against the same Prometheus as the panels' queries.
    let variables = (!config.variables.is_empty())
        .then(|| client.clone() as Arc<dyn crate::variables::VariableResolver>);
    let discovery = config.panels.is_empty().then(|| {
        model.discovery = Some(super::model::Discovery::Due {
            at: None,
            attempts: 0,
            last_error: None,
        });
        client
    });
    let services = Services {
        alerts: crate::alerts::AlertIntake::from_config(config)?,
        runbooks: crate::runbook::setup::RunbookSetup::from_config(config),
        serve: true,
        discovery,
        variables,
        silences: crate::alerts::silence::SilenceClient::from_config(config).ok(),
        ..Services::metrics_only(source)
    };
    Ok((model, services, clock))
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
        public_names: config.public_names.clone(),
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
    if model.mouse {
        crate::tui::capture_mouse();
    }
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
    if let Some(leaving) = services.leaving.get()
        && !leaving.leave(LEAVE_WAIT).await
    {
        eprintln!(
            "warroom: leaving the shared incident is recorded here; the engine takes it next time"
        );
    }
    let code = match model.quit {
        Some(Quit::Signal(signal)) => crate::signals::exit_code(signal),
        _ => ExitCode::SUCCESS,
    };
    // What was recorded, and where to go from here: a rehearsal's report as its end overlay
    // shows it (and nothing left behind when it was quit at its briefing).
    if model.rehearsal {
        let briefing_up = model.briefing.is_some();
        if let Some(text) = super::workers::rehearsal::close(briefing_up, services).await {
            println!("{text}");
        }
        return Ok(code);
    }
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
    Ok(code)
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

/// The event loop, generic over the backend and the input stream so tests can drive it, with
/// no terminal to lend an editor (an editor request answers that there is none). Returns the
/// final model.
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
    let (model, _) = run_loop(terminal, model, services, clock, input, sync, None).await?;
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
/// journal now, which its stop is recorded in). It waits on input, the workers' answers, the
/// tick, signals and the pacer's timers, and asks the [`Pacer`] when to draw.
async fn run_loop<B, S>(
    terminal: &mut Terminal<B>,
    model: Model,
    services: Services,
    clock: Arc<dyn Clock>,
    mut input: S,
    sync: fn(bool),
    editor: Option<crate::tui::editor::Suspend>,
) -> color_eyre::Result<(Model, Services)>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    S: Stream<Item = std::io::Result<Event>> + Unpin,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
    start_recording(&services, &model, &tx);
    // The incident's socket: served while this console holds it, followed while another does.
    let serving = match (&services.journal, services.serve) {
        (Some(journal), true) => super::workers::share::hold(journal, &tx),
        _ => None,
    };
    let _following = FollowGuard((services.follow.as_ref()).map(|f| {
        super::workers::share::follow(f, model.timeline.last().map_or(0, |r| r.seq), &tx)
    }));
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut signals = crate::signals::Signals::new();
    let mut input_open = true;
    let mut run = Running {
        model,
        services,
        clock,
        tx,
        shown: Default::default(),
        pacer: Pacer::default(),
        _serving: serving,
        first_wave: None,
        editor,
        typing: Default::default(),
    };
    // The first tick schedules the first fetches; they go with the first wave, for the
    // panels the first frame will show (what is fetched follows what is shown).
    let showing = crate::ui::showing(&run.model);
    let mut first = update(&mut run.model, Msg::Showing(showing));
    first.extend(update(&mut run.model, Msg::Tick(run.clock.now())));
    run.first_wave = Some(first);
    loop {
        run.frame(terminal, sync)?;
        if run.model.quit.is_some() {
            return Ok((run.model, run.services));
        }
        let render_at = Instant::from_std(run.pacer.render_at(now()));
        let first_wave_at = run.pacer.first_wave_at().map(Instant::from_std);
        let was_dirty = run.model.dirty;
        let woke = tokio::select! {
            ev = input.next(), if input_open => match ev {
                Some(Ok(Event::Key(k))) => Some(match run.typing.fresh(now()) {
                    true => Msg::Key(k),
                    false => Msg::KeyAhead(k),
                }),
                Some(Ok(Event::Resize(width, height))) => Some(Msg::Resize { width, height }),
                Some(Ok(Event::Mouse(m))) => Some(Msg::Mouse(m)),
                Some(Ok(_)) => None,
                Some(Err(e)) => return Err(e).wrap_err("reading terminal input failed"),
                None => { input_open = false; None }
            },
            Some(m) = rx.recv() => Some(m),
            _ = tick.tick() => {
                run.tick(was_dirty);
                continue;
            }
            name = signals.next() => Some(Msg::Interrupted(name)),
            _ = tokio::time::sleep_until(render_at), if was_dirty => None,
            _ = tokio::time::sleep_until(first_wave_at.unwrap_or(render_at)),
                if first_wave_at.is_some() =>
            {
                run.first_wave();
                None
            }
        };
        let wake = match woke {
            Some(msg) => {
                let wake = wake_of(&msg);
                run.handle(terminal, msg).await;
                run.typing.target(run.model.targets_changed, now());
                wake
            }
            None => Wake::Other,
        };
        (run.pacer).woke(
            now(),
            wake,
            was_dirty,
            run.model.dirty,
            run.model.in_flight(),
        );
    }
}

/// The pacer's time: tokio's clock (paused in tests), as a plain instant.
fn now() -> std::time::Instant {
    Instant::now().into_std()
}

/// What a message is to the pacer: a key or a resize draws at once, a refresh's answer with
/// the rest of the refresh.
fn wake_of(msg: &Msg) -> Wake {
    match msg {
        Msg::Key(_) | Msg::KeyAhead(_) | Msg::Resize { .. } => Wake::Key,
        Msg::Answer { .. } | Msg::Latest { .. } => Wake::Answer,
        _ => Wake::Other,
    }
}

/// What the loop holds besides its input and timers.
struct Running {
    model: Model,
    services: Services,
    clock: Arc<dyn Clock>,
    tx: mpsc::UnboundedSender<Msg>,
    /// The frame on screen: one that would write the same cells is not written.
    shown: crate::tui::frames::Shown,
    pacer: Pacer,
    /// The incident's socket, served while this console holds the incident (kept for its drop).
    _serving: Option<crate::incident::serve::Serving>,
    /// The first tick's effects, waiting for the first wave.
    first_wave: Option<Vec<Effect>>,
    /// How to lend the terminal to an editor (`None`: there is no terminal to lend).
    editor: Option<crate::tui::editor::Suspend>,
    /// Which keys were typed for what is on screen.
    typing: super::typing::Typing,
}

impl Running {
    /// Draw the model if it changed and the pacer says a frame is due.
    fn frame<B>(&mut self, terminal: &mut Terminal<B>, sync: fn(bool)) -> color_eyre::Result<()>
    where
        B: Backend,
        B::Error: Send + Sync + 'static,
    {
        if !(self.pacer).draw_now(now(), self.model.dirty, self.model.in_flight()) {
            return Ok(());
        }
        (self.shown)
            .draw(terminal, sync, |f| crate::ui::view(f, &self.model))
            .map_err(|e| eyre!("drawing failed: {e}"))?;
        self.model.dirty = false;
        if (self.pacer).drawn(now(), crate::ui::idle::key(&self.model)) {
            crate::tui::first_frame("console");
        }
        // The view reports how the panels are shown when that changed; fetching follows.
        let showing = crate::ui::showing(&self.model);
        if self.model.cost.showing.as_ref() != Some(&showing) {
            let effects = update(&mut self.model, Msg::Showing(showing));
            self.spawn(effects);
        }
        Ok(())
    }

    /// The slow tick. Its own changes (`update` marks the model changed each second) draw
    /// only when they change what is on screen, and wait for a refresh that is coming.
    fn tick(&mut self, was_dirty: bool) {
        if self.services.rehearsal.is_some() {
            // Notices expire on the wall clock, not the simulated one.
            let effects = update(&mut self.model, Msg::Wall(chrono::Utc::now()));
            self.spawn(effects);
        }
        let effects = update(&mut self.model, Msg::Tick(self.clock.now()));
        if !was_dirty && self.model.dirty {
            let key = crate::ui::idle::key(&self.model);
            let change = (self.pacer).tick_changed(now(), key, self.model.refresh_due_in());
            self.model.dirty = change != TickChange::Unseen;
        }
        self.spawn(effects);
    }

    /// The first fetches go, and the runbook list with them: parsing it on another thread
    /// took the second core from the first frame too. It still loads before anyone opens the
    /// pane, so the "what's wrong" line can suggest a runbook.
    fn first_wave(&mut self) {
        self.pacer.first_wave_gone();
        let mut effects = self.first_wave.take().unwrap_or_default();
        effects.push(Effect::LoadRunbooks);
        self.spawn(effects);
    }

    /// One message through `update`, with what the loop does itself: a takeover, the editor,
    /// a declaration. The other effects go to the workers.
    async fn handle<B: Backend>(&mut self, terminal: &mut Terminal<B>, msg: Msg) {
        if let Msg::Share(super::sharing::ShareMsg::TookOver(Ok(took))) = &msg {
            // This console holds the incident now: it records, serves and runs runbooks.
            self.services.journal = Some(took.writer.clone());
            self.services.follow = None;
            start_recording(&self.services, &self.model, &self.tx);
            self._serving = super::workers::share::hold(&took.writer, &self.tx);
        }
        let mut effects = update(&mut self.model, msg);
        // Copies go out here, between frames; with no real terminal (tests) there is nowhere.
        while let Some(i) = effects.iter().position(|e| matches!(e, Effect::Copy(_))) {
            if let (Effect::Copy(text), Some(_)) = (effects.remove(i), &self.editor)
                && let Err(e) = crate::tui::copy(&text)
            {
                self.model
                    .notify(format!("could not copy: {e}"), true, Some(10));
            }
        }
        if let Some(i) = effects.iter().position(|e| *e == Effect::EditNote) {
            effects.remove(i);
            let text = self.edit(terminal).await;
            effects.extend(update(&mut self.model, Msg::EditorClosed(text)));
        }
        while let Some(i) = (effects.iter()).position(|e| matches!(e, Effect::Declare { .. })) {
            let Effect::Declare { title, severity } = effects.remove(i) else {
                continue;
            };
            // Where the declaration was: the crossings seen before it are recorded before
            // the note or status that declared it.
            let declared = self.declare(title, severity).await;
            effects.splice(i..i, declared);
        }
        self.spawn(effects);
    }

    /// Lend the terminal to the editor; what was written, or why nothing was.
    async fn edit<B: Backend>(&mut self, terminal: &mut Terminal<B>) -> Result<String, String> {
        let Some(suspend) = self.editor.as_mut() else {
            return Err("no terminal to hand to an editor".into());
        };
        let r = suspend.edit().await;
        // The screen was cleared: forget both frames so the next draw is whole.
        // (`Terminal::clear` would ask the terminal where its cursor is, and the answer can be
        // lost to the input reader.)
        terminal.swap_buffers();
        terminal.swap_buffers();
        self.shown.forget();
        suspend.resume();
        self.model.dirty = true;
        r
    }

    /// Declare the incident, and start recording into it; the effects of its outcome.
    async fn declare(
        &mut self,
        title: Option<String>,
        severity: Option<crate::incident::event::Severity>,
    ) -> Vec<Effect> {
        let result = declare(
            &mut self.model,
            &mut self.services,
            &self.clock,
            title,
            severity,
        )
        .await;
        if result.is_ok()
            && let Some(journal) = self.services.journal.clone()
        {
            // Recording from now on: alerts, changes, the incident's socket.
            start_recording(&self.services, &self.model, &self.tx);
            if self.services.serve {
                self._serving = super::workers::share::hold(&journal, &self.tx);
            }
        }
        update(&mut self.model, Msg::Declared(result))
    }

    fn spawn(&self, effects: Vec<Effect>) {
        super::workers::spawn_all(effects, &self.services, &self.tx, &self.clock);
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
    start_sharing(services, model, tx);
}

/// Shared through an engine: the sync of the incident this console records, its news
/// forwarded to the loop.
fn start_sharing(services: &Services, model: &Model, tx: &mpsc::UnboundedSender<Msg>) {
    let (Some((engine, store)), Some(journal), Some(incident)) =
        (&services.engine, &services.journal, &model.incident)
    else {
        return;
    };
    let Ok(id) = crate::incident::IncidentId::parse(&incident.id) else {
        return;
    };
    let started =
        crate::share::session::start(engine.clone(), store, &id, journal, model.timeline.clone());
    let mut news = match started {
        Ok((news, leaving)) => {
            let _ = services.leaving.set(leaving);
            news
        }
        Err(e) => {
            let _ = tx.send(Msg::Recorded(Err(format!("not shared: {e}"))));
            return;
        }
    };
    let tx = tx.clone();
    // The news is read until the sync ends, after the loop too: the sync goes on sharing
    // until the console has left the incident.
    tokio::spawn(async move {
        while let Some(n) = news.recv().await {
            let _ = tx.send(Msg::Share(super::sharing::ShareMsg::Engine(n)));
        }
    });
}
