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
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::{Instant, MissedTickBehavior};

/// When the process started, for the start-to-first-frame figure (set by `main`).
pub static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Shortest time between two frames (the render cap).
pub const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// The slow tick: clocks, staleness ages, refresh scheduling.
pub const TICK: Duration = Duration::from_millis(250);
/// No query task outlives this, whatever the source's own timeout says.
pub const HARD_DEADLINE: Duration = Duration::from_secs(35);

/// `warroom open`: load the config, connect the source, open or continue the incident, run
/// the console.
pub async fn open(
    config_path: Option<&Path>,
    data_dir: &Path,
    args: crate::cli::OpenArgs,
) -> color_eyre::Result<ExitCode> {
    let mut config = Config::load(config_path)?;
    if let Some(url) = args.prometheus {
        config.prometheus.url = Some(url.trim_end_matches('/').to_string());
    }
    let source = super::source::from_config(&config)?;
    let requested = args.theme.as_deref().unwrap_or(&config.theme).to_string();
    let (theme, warning) = Theme::resolve(&requested, std::env::var_os("NO_COLOR").is_some());
    let clock: Arc<dyn Clock> = Arc::new(WallClock);
    let mut model = Model::new(&config, theme, source.describe(), clock.now());
    if let Some(w) = warning {
        model.notify(w, true, None);
    }
    // Checked before the incident is opened, so a bad URL never costs a recorder its lock.
    let alerts = crate::alerts::AlertIntake::from_config(&config)?;
    let journal = open_incident(
        &mut model,
        data_dir,
        args.incident.as_deref(),
        args.title,
        args.severity.as_deref(),
        args.take_over,
    )
    .await?;
    let id = (model.incident.as_ref()).and_then(|i| crate::incident::IncidentId::parse(&i.id).ok());
    let (github, warning) =
        super::github::setup(&config, &crate::incident::Store::new(data_dir), id.as_ref())?;
    if let Some(w) = warning {
        model.notify(w, true, Some(30));
    }
    let services = Services {
        source,
        journal: Some(journal),
        alerts,
        export: export_setup(&model, data_dir, &config),
        rehearsal: None,
        github,
        runbooks: super::runner::RunbookSetup::from_config(&config),
    };
    run_terminal(model, services, clock).await
}

/// How `E` exports the incident the model has open.
pub(crate) fn export_setup(
    model: &Model,
    data_dir: &Path,
    config: &Config,
) -> Option<super::export::ExportSetup> {
    let id = crate::incident::IncidentId::parse(&model.incident.as_ref()?.id).ok()?;
    Some(super::export::ExportSetup {
        store: crate::incident::Store::new(data_dir),
        id,
        panels: config.panels.clone(),
        timezone: config.timezone,
        step_s: config.refresh.as_secs_f64().max(1.0),
        gap_limit: config.gap_limit,
    })
}

/// Start a new incident (or continue `id`), hold its lock through a journal writer, and put
/// what it has recorded so far on the model's timeline.
pub async fn open_incident(
    model: &mut Model,
    data_dir: &Path,
    id: Option<&str>,
    title: Option<String>,
    severity: Option<&str>,
    take_over: bool,
) -> color_eyre::Result<crate::incident::JournalWriter> {
    open_incident_with_clock(model, data_dir, id, title, severity, take_over, None).await
}

/// [`open_incident`], its records stamped by `clock` when given (a rehearsal's simulated
/// time) instead of the wall clock.
pub async fn open_incident_with_clock(
    model: &mut Model,
    data_dir: &Path,
    id: Option<&str>,
    title: Option<String>,
    severity: Option<&str>,
    take_over: bool,
    clock: Option<Arc<dyn Clock>>,
) -> color_eyre::Result<crate::incident::JournalWriter> {
    use crate::incident::vocabulary::Severity;
    use crate::incident::{Event, JournalWriter, Source as RecordSource, Store};
    let store = Store::new(data_dir);
    let severity = severity.map(str::parse::<Severity>).transpose()?;
    let (id, new) = match id {
        Some(id) => (store.find(id)?, false),
        None => (store.create(model.now)?, true),
    };
    let (mut incident, recovery) = crate::incident::cli::open_for_console(&store, &id, take_over)?;
    if let Some(clock) = clock {
        incident.journal.set_clock(clock);
    }
    if let Some(torn) = &recovery.torn {
        model.notify(
            format!("the journal's last record was torn and set aside ({torn:?})"),
            true,
            None,
        );
    }
    let writer =
        JournalWriter::spawn(incident).wrap_err("cannot start the journal writer thread")?;
    let mut records = recovery.records;
    let actor = super::model::operator_name();
    if new {
        let title = title.clone().unwrap_or_else(|| "Untitled incident".into());
        let event = Event::IncidentOpened {
            title,
            severity: severity.unwrap_or(Severity::Sev3),
        };
        records.push(writer.append(RecordSource::Operator, &actor, event).await?);
        let uid = Event::new_incident_uid();
        records.push(writer.append(RecordSource::System, "warroom", uid).await?);
    } else {
        if let Some(t) = title {
            let event = Event::TitleChanged { title: t };
            records.push(writer.append(RecordSource::Operator, &actor, event).await?);
        }
        if let Some(severity) = severity {
            let event = Event::SeverityChanged { severity };
            records.push(writer.append(RecordSource::Operator, &actor, event).await?);
        }
    }
    let summary = crate::incident::summary::summarize(&records);
    model.incident = Some(super::model::IncidentView {
        id: id.to_string(),
        title: summary.title,
    });
    // Crossings already recorded (by a recorder before a takeover, or an earlier console) are
    // where the detectors start, so they are not recorded twice.
    model.detectors = (model.panels.iter())
        .map(|p| crate::record::panels::detector_from_journal(&p.config, &records))
        .collect();
    model.timeline = records;
    Ok(writer)
}

/// Run the console in the real terminal: raw mode, alternate screen, a panic hook that
/// restores the terminal (installed by `ratatui::init`), and restore on every exit path.
pub async fn run_terminal(
    model: Model,
    services: Services,
    clock: Arc<dyn Clock>,
) -> color_eyre::Result<ExitCode> {
    let mut terminal = ratatui::init();
    let size = terminal.size().unwrap_or_default();
    let mut model = model;
    model.width = size.width;
    model.height = size.height;
    let journal = services.journal.clone();
    let (input, suspend) = super::editor::input();
    let result = event_loop_with(
        &mut terminal,
        model,
        services,
        clock.clone(),
        input,
        sync_update,
        Some(suspend),
    )
    .await;
    ratatui::restore();
    let model = result?;
    if let (Some(journal), Some(Quit::Signal(signal))) = (&journal, &model.quit) {
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
        Some(Quit::Signal("SIGTERM")) => ExitCode::from(143),
        Some(Quit::Signal(_)) => ExitCode::from(130),
        _ => ExitCode::SUCCESS,
    })
}

/// What the loop's tasks talk to.
#[derive(Clone)]
pub struct Services {
    pub source: Arc<dyn Source>,
    /// The incident's journal, when the console records one.
    pub journal: Option<crate::incident::JournalWriter>,
    /// The alert intake, spawned next to the loop when an incident is recorded.
    pub alerts: Option<crate::alerts::AlertIntake>,
    /// Runbook directories, variables and the controls of running runs.
    pub runbooks: super::runner::RunbookSetup,
    /// Where and how the open incident is exported (`E`), when one is open.
    pub export: Option<super::export::ExportSetup>,
    /// The simulator of a rehearsal, whose faults go on the timeline as they land.
    pub rehearsal: Option<Arc<crate::sim::SimService>>,
    /// GitHub: the changes feed and publishing, on one client (`None` without `[github]`).
    pub github: Option<super::github::GithubSetup>,
}

impl Services {
    /// Only a metrics source: nothing is recorded.
    pub fn metrics_only(source: Arc<dyn Source>) -> Self {
        Services {
            source,
            journal: None,
            alerts: None,
            runbooks: Default::default(),
            export: None,
            rehearsal: None,
            github: None,
        }
    }
}

/// Wrap a frame in a synchronized update so terminals over ssh show it whole, not torn.
fn sync_update(begin: bool) {
    use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
    let mut out = std::io::stdout();
    let _ = if begin {
        crossterm::execute!(out, BeginSynchronizedUpdate)
    } else {
        crossterm::execute!(out, EndSynchronizedUpdate)
    };
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
    mut model: Model,
    services: Services,
    clock: Arc<dyn Clock>,
    mut input: S,
    sync: fn(bool),
    mut editor: Option<super::editor::Suspend>,
) -> color_eyre::Result<Model>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    S: Stream<Item = std::io::Result<Event>> + Unpin,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
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
        if let Some(publish) = github.publish.clone().filter(|p| p.has_pending()) {
            super::publish::spawn(publish, None, Some(journal), tx.clone());
        }
    }
    if let (Some(sim), Some(journal)) = (services.rehearsal.clone(), services.journal.clone()) {
        let (report, alive) = (tx.clone(), tx.clone());
        tokio::spawn(super::demo::record_faults(
            sim,
            journal,
            clock.clone(),
            move |r| {
                let _ = report.send(Msg::Recorded(r));
            },
            move || !alive.is_closed(),
        ));
    }
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut signals = Signals::new();
    let mut last_draw: Option<Instant> = None;
    let mut input_open = true;
    // The first tick schedules the first fetches.
    let first = update(&mut model, Msg::Tick(clock.now()));
    spawn_all(first, &services, &tx, &clock);
    loop {
        if model.dirty {
            let due = last_draw.map_or(Instant::now(), |t| t + FRAME_INTERVAL);
            if Instant::now() >= due {
                sync(true);
                terminal
                    .draw(|f| crate::ui::view(f, &model))
                    .map_err(|e| eyre!("drawing failed: {e}"))?;
                sync(false);
                model.dirty = false;
                if last_draw.is_none()
                    && let Some(started) = STARTED.get()
                {
                    tracing::info!(
                        micros = started.elapsed().as_micros() as u64,
                        "first frame drawn"
                    );
                }
                last_draw = Some(Instant::now());
            }
        }
        if model.quit.is_some() {
            return Ok(model);
        }
        let render_at = last_draw.map_or(Instant::now(), |t| t + FRAME_INTERVAL);
        let msg = tokio::select! {
            ev = input.next(), if input_open => match ev {
                Some(Ok(Event::Key(k))) => Some(Msg::Key(k)),
                Some(Ok(Event::Resize(width, height))) => Some(Msg::Resize { width, height }),
                Some(Ok(_)) => None,
                Some(Err(e)) => return Err(e).wrap_err("reading terminal input failed"),
                None => { input_open = false; None }
            },
            Some(m) = rx.recv() => Some(m),
            _ = tick.tick() => Some(Msg::Tick(clock.now())),
            name = signals.next() => Some(Msg::Interrupted(name)),
            _ = tokio::time::sleep_until(render_at), if model.dirty => None,
        };
        if let Some(msg) = msg {
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
                        suspend.resume();
                        model.dirty = true;
                        r
                    }
                    None => Err("no terminal to hand to an editor".into()),
                };
                effects.extend(update(&mut model, Msg::EditorClosed(text)));
            }
            spawn_all(effects, &services, &tx, &clock);
        }
    }
}

/// Start the work `effects` describe, each in its own task; answers come back on `tx`. (The
/// editor is the loop's own business: see [`event_loop_with`].)
pub fn spawn_all(
    effects: Vec<Effect>,
    services: &Services,
    tx: &mpsc::UnboundedSender<Msg>,
    clock: &Arc<dyn Clock>,
) {
    for effect in effects {
        match effect {
            Effect::Fetch {
                panel,
                ticket,
                pass,
                query,
            } => {
                let fut = services.source.query_range(query.clone());
                spawn_query(fut, tx, clock, move |result, at| Msg::Answer {
                    panel,
                    ticket,
                    pass,
                    query,
                    result,
                    at,
                });
            }
            Effect::FetchLatest { panel, pass, query } => {
                let fut = services.source.query(query);
                spawn_query(fut, tx, clock, move |result, at| Msg::Latest {
                    panel,
                    pass,
                    result,
                    at,
                });
            }
            Effect::Record {
                source,
                actor,
                event,
            } => {
                let Some(journal) = services.journal.clone() else {
                    let _ = tx.send(Msg::Recorded(Err("no incident is open".into())));
                    continue;
                };
                let tx = tx.clone();
                tokio::spawn(async move {
                    let result = journal
                        .append(source, &actor, event)
                        .await
                        .map_err(|e| e.to_string());
                    let _ = tx.send(Msg::Recorded(result));
                });
            }
            Effect::LoadRunbooks => {
                let (tx, dirs) = (tx.clone(), services.runbooks.dirs.clone());
                tokio::task::spawn_blocking(move || {
                    let _ = tx.send(Msg::RunbooksLoaded(super::catalog::load(&dirs)));
                });
            }
            Effect::PlanRunbook(rb) => {
                let (tx, setup, source, clock) = (
                    tx.clone(),
                    services.runbooks.clone(),
                    services.source.clone(),
                    clock.clone(),
                );
                tokio::spawn(async move {
                    let result = super::runner::prepare_plan(&rb, &setup, source, clock).await;
                    let _ = tx.send(Msg::Planned {
                        name: rb.name.clone(),
                        result,
                    });
                });
            }
            Effect::StartRun { runbook, run_id } => super::runner::start(
                &runbook,
                run_id,
                &services.runbooks,
                services.source.clone(),
                services.journal.clone(),
                clock.clone(),
                tx,
            ),
            Effect::ControlRun { run_id, control } => {
                services.runbooks.control(&run_id, control);
            }
            Effect::Answer { reply, answer } => reply.send(answer),
            // Handled by the loop, which owns the terminal.
            Effect::EditNote => {}
            Effect::Publish(target) => {
                match services.github.as_ref().and_then(|g| g.publish.clone()) {
                    Some(setup) => super::publish::spawn(
                        setup,
                        Some(target),
                        services.journal.clone(),
                        tx.clone(),
                    ),
                    None => {
                        let _ = tx.send(Msg::Published(super::publish::PublishReport::Failed {
                            error: "publishing is not configured here".into(),
                            retry_in: None,
                        }));
                    }
                }
            }
            Effect::Export => {
                let tx = tx.clone();
                let Some(setup) = services.export.clone() else {
                    let _ = tx.send(Msg::Exported(Err("no incident is open".into())));
                    continue;
                };
                let source = services.source.clone();
                tokio::spawn(async move {
                    let _ = tx.send(Msg::Exported(super::export::run(setup, source).await));
                });
            }
        }
    }
}

/// Run one query in a task, never longer than [`HARD_DEADLINE`], and send its answer back.
fn spawn_query(
    fut: futures::future::BoxFuture<
        'static,
        Result<crate::metrics::QueryAnswer, crate::metrics::SourceError>,
    >,
    tx: &mpsc::UnboundedSender<Msg>,
    clock: &Arc<dyn Clock>,
    answer: impl FnOnce(
        Result<crate::metrics::QueryAnswer, crate::metrics::SourceError>,
        chrono::DateTime<chrono::Utc>,
    ) -> Msg
    + Send
    + 'static,
) {
    let (tx, clock) = (tx.clone(), clock.clone());
    tokio::spawn(async move {
        let result = match tokio::time::timeout(HARD_DEADLINE, fut).await {
            Ok(r) => r,
            Err(_) => Err(crate::metrics::SourceError::Timeout(HARD_DEADLINE)),
        };
        // The loop may have ended; nothing to do then.
        let _ = tx.send(answer(result, clock.now()));
    });
}

/// SIGINT and SIGTERM as a stream of names (raw mode turns Ctrl-C into a key; these come from
/// `kill`).
struct Signals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn new() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Signals {
                term: signal(SignalKind::terminate()).ok(),
                int: signal(SignalKind::interrupt()).ok(),
            }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            let term = async {
                match self.term.as_mut() {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            let int = async {
                match self.int.as_mut() {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = term => "SIGTERM",
                _ = int => "SIGINT",
            }
        }
        #[cfg(not(unix))]
        std::future::pending().await
    }
}
