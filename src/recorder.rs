//! The headless recorder (`warroom record ID`): the recording engine without a screen, so the timeline records itself
//! even when nobody has the console open (for example on a server).
//!
//! It takes the incident's lock as `recorder` and runs up to three parts, each a task the
//! console can spawn too, all writing through one [`JournalWriter`]: the panel watch
//! ([`panel_watch`]: the dashboard's queries, threshold crossings by the console's `Detector` rule),
//! the alert intake ([`crate::alerts`]) and the GitHub changes intake
//! ([`crate::github::intake`]). Shared through an engine ([`crate::share`]), it publishes the
//! journal and follows the team's records; with nothing else configured it does that alone. Each recorded event is one status line on stderr; logs go to
//! the log file. While it holds the incident it serves it ([`crate::incident::serve`]): the
//! team's notes go through it. SIGINT or SIGTERM (a console taking over sends one) stops the
//! parts after the append in hand, takes the panel snapshots that answer within the second,
//! records the interruption, and releases the lock, all within a second of the signal even
//! when Prometheus hangs. It leaves how to restart it ([`restart`]) so a console that took over
//! hands the incident back when it quits.

pub mod panel_watch;
pub mod restart;

use crate::alerts::{AlertIntake, AlertReport, source_name};
use crate::config::Config;
use crate::github::{ChangesIntake, ChangesReport};
use crate::incident::store::Store;
use crate::incident::timeline::format_time;
use crate::incident::{Event, JournalWriter, Record, Source};
use crate::runbook::journal::describe;

use panel_watch::{PanelReport, PanelWatch};
use std::process::ExitCode;
use std::time::Duration;
use tokio::sync::mpsc;

/// The lock role of the headless recorder.
pub const ROLE: crate::incident::store::Role = crate::incident::store::Role::Recorder;

/// How long the parts get to finish the append in hand once asked to stop (an append is one
/// fsync; a part still waiting on a hung backend is cut off: it has nothing in hand).
const STOP_WAIT: Duration = Duration::from_millis(250);
/// How long a stopping recorder waits for the engine to take the record of its leaving.
const LEAVE_WAIT: Duration = Duration::from_secs(1);
/// When the panel snapshots must be in, counted from the signal: what answered by then is
/// written, and the stop is recorded and the lock released well within a second.
const SNAPSHOT_BY: Duration = Duration::from_millis(800);

/// What the parts report, for the status lines.
#[derive(Debug)]
enum Report {
    Alert(AlertReport),
    Panel(PanelReport),
    Changes(ChangesReport),
}

/// Why the recorder could not start.
#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    #[error(transparent)]
    Store(#[from] crate::incident::StoreError),
    #[error(transparent)]
    Source(#[from] crate::metrics::from_config::SourceConfigError),
    #[error(transparent)]
    Alerts(#[from] crate::alerts::intake::IntakeConfigError),
    #[error("the GitHub changes feed cannot be set up: {0}")]
    Github(#[from] crate::github::GithubError),
    #[error(
        "nothing to record: no Prometheus, no Alertmanager, no GitHub repositories and no \
         engine to share through; pass --prometheus URL, --alertmanager URL and/or --share URL, \
         or set [prometheus] url / [alertmanager] url / [github] watch / [share] url in \
         warroom.toml"
    )]
    NothingToRecord,
    #[error("cannot start the journal writer of incident \"{id}\": {source}")]
    Writer {
        id: String,
        #[source]
        source: std::io::Error,
    },
}

/// The panels the recorder watches: the configured ones without variables at first, filled
/// in by the panel part (discovered or with their variables resolved); the snapshots take them
/// from here.
type Watched = std::sync::Arc<std::sync::Mutex<Vec<crate::config::PanelConfig>>>;

/// What the recorder records from, as the config names it.
struct Sources {
    client: Option<std::sync::Arc<crate::metrics::prometheus::PrometheusClient>>,
    intake: Option<AlertIntake>,
    changes: Option<ChangesIntake>,
    panels: Watched,
}

impl Sources {
    fn from_config(config: &Config) -> Result<Sources, RecorderError> {
        let client = match config.prometheus.url {
            Some(_) => Some(crate::metrics::from_config::client(config)?),
            None => None,
        };
        // A panel using `[[variable]]`s joins once they are resolved (its template is never
        // sent).
        let vars = &config.variables;
        let plain = (config.panels.iter()).filter(|p| !crate::config::variables::uses(p, vars));
        Ok(Sources {
            client,
            intake: AlertIntake::from_config(config)?,
            changes: changes_intake(config)?,
            panels: std::sync::Arc::new(std::sync::Mutex::new(plain.cloned().collect())),
        })
    }

    fn is_empty(&self) -> bool {
        self.client.is_none() && self.intake.is_none() && self.changes.is_none()
    }
}

/// Record incident `id` with what `config` names (its Prometheus, Alertmanager and GitHub
/// repositories, and the team's records when it is shared through `engine`) until SIGINT or
/// SIGTERM.
pub async fn run(
    config: &Config,
    store: &Store,
    id: &str,
    engine: Option<crate::share::Engine>,
) -> Result<ExitCode, RecorderError> {
    // Signals first: a takeover's SIGTERM that arrives just after the lock is taken must stop
    // the recorder cleanly, not kill it mid-append.
    let mut signals = crate::signals::Signals::new();
    let tz = config.timezone;
    let store = store.clone();
    let id = store.find(id)?;
    let sources = Sources::from_config(config)?;
    if sources.is_empty() && engine.is_none() {
        return Err(RecorderError::NothingToRecord);
    }
    let (incident, recovery) = crate::incident::open::open_waiting(&store, &id, ROLE)?;
    if let Some(torn) = &recovery.torn {
        eprintln!(
            "warning: the journal's last line ({} bytes at line {}) was torn ({}); it was cut off \
             and kept aside; every record before it is intact.",
            torn.len, torn.line, torn.reason
        );
    }
    // How to start this recorder again, for a console that takes over and later hands back.
    if let Some(restart) = restart::Restart::of_this_process()
        && let Err(e) = restart.save(&store.dir(&id))
    {
        eprintln!("warning: cannot note how to restart this recorder: {e}");
    }
    let journal = JournalWriter::spawn(incident).map_err(|source| RecorderError::Writer {
        id: id.to_string(),
        source,
    })?;
    // The rest of the team records through this recorder while it holds the incident.
    let serving = match crate::incident::serve::serve(journal.clone(), None, Default::default()) {
        Ok(s) => {
            eprintln!(
                "warroom record: serving the incident on {} (`warroom incident note {id} …` \
                 and followers go through it)",
                s.path().display()
            );
            Some(s)
        }
        Err(e) => {
            eprintln!("warning: {e}; other responders cannot record through this recorder");
            None
        }
    };
    let mut what = Vec::new();
    let mut shared = engine.and_then(|e| share(e, &store, &id, &journal, &recovery.records));
    if let Some(s) = &shared {
        what.push(format!("the team's records, shared through {}", s.url));
    }
    let snapshot_source = sources.client.clone();
    let panels = sources.panels.clone();
    let (tx, rx) = mpsc::unbounded_channel::<Report>();
    let parts = spawn_parts(config, sources, &journal, &recovery.records, &tx, &mut what);
    drop(tx);
    tracing::info!(incident = %id, pid = std::process::id(), "recorder started");
    eprintln!(
        "warroom record: recording incident {id} (pid {}): {}; SIGINT or SIGTERM stops",
        std::process::id(),
        what.join(", ")
    );
    let (signal, rx) = until_stopped(&mut signals, rx, shared.as_mut(), tz).await;
    let stopping = tokio::time::Instant::now();
    // Closing the channel stops the parts; each finishes the append it has in hand.
    drop(rx);
    for part in parts {
        let abort = part.abort_handle();
        if tokio::time::timeout_at(stopping + STOP_WAIT, part)
            .await
            .is_err()
        {
            abort.abort();
        }
    }
    // Nobody records through this holder from here on.
    drop(serving);
    if let Some(source) = snapshot_source {
        let panels = panels.lock().map(|p| p.clone()).unwrap_or_default();
        let every = config.refresh.as_secs_f64().max(1.0);
        snapshots(&store, &id, source.as_ref(), &panels, every, stopping).await;
    }
    let stopped = journal
        .append(
            Source::System,
            "warroom",
            Event::Interrupted {
                signal: signal.to_string(),
            },
        )
        .await;
    if let Err(e) = &stopped {
        eprintln!("warroom record: the stop could not be recorded: {e}");
    }
    if let Some(s) = shared
        && !s.leaving.leave(LEAVE_WAIT).await
    {
        eprintln!(
            "warroom record: leaving the shared incident is recorded here; the engine takes it \
             next time"
        );
    }
    drop(journal);
    tracing::info!(incident = %id, signal, "recorder stopped");
    eprintln!("warroom record: stopped by {signal}; incident {id} released");
    Ok(ExitCode::SUCCESS)
}

/// A recorder's sharing: the sync's news, the handle to leave with, the engine's address.
struct Sharing {
    news: mpsc::UnboundedReceiver<crate::share::session::News>,
    leaving: crate::share::presence::Handle,
    url: String,
}

/// Starts sharing the incident through `engine`.
fn share(
    engine: crate::share::Engine,
    store: &Store,
    id: &crate::incident::IncidentId,
    journal: &JournalWriter,
    records: &[Record],
) -> Option<Sharing> {
    let url = engine.url.clone();
    match crate::share::session::start(engine, store, id, journal, records.to_vec()) {
        Ok((news, leaving)) => {
            eprintln!("warroom record: sharing incident {id} through {url}");
            Some(Sharing { news, leaving, url })
        }
        Err(e) => {
            eprintln!("warning: not shared: {e}");
            None
        }
    }
}

/// Spawns the recorder's parts (the panel watch, the alert intake, the changes intake) that
/// `sources` has, each reporting on `tx`; says what each records in `what`.
fn spawn_parts(
    config: &Config,
    sources: Sources,
    journal: &JournalWriter,
    records: &[Record],
    tx: &mpsc::UnboundedSender<Report>,
    what: &mut Vec<String>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let mut parts = Vec::new();
    if let Some(client) = sources.client {
        parts.push(panel_part(
            config,
            client,
            sources.panels,
            journal,
            records,
            tx,
            what,
        ));
    }
    if let Some(intake) = sources.intake {
        let names: Vec<&str> = intake.sources().into_iter().map(source_name).collect();
        what.push(format!("alerts from {}", names.join(" and ")));
        parts.push(intake.spawn(journal.clone(), records, tx.clone(), |r| {
            Some(Report::Alert(r))
        }));
    }
    if let Some(changes) = sources.changes {
        let repos: Vec<String> = changes
            .repos()
            .iter()
            .map(std::string::ToString::to_string)
            .collect();
        what.push(format!("changes in {}", repos.join(", ")));
        parts.push(changes.spawn(journal.clone(), records, tx.clone(), |r| {
            Some(Report::Changes(r))
        }));
    }
    parts
}

/// The panel watch: the configured panels (their variables resolved), or with no `[[panel]]`
/// the panels discovery finds on the Prometheus (so alerts and changes are recorded meanwhile).
fn panel_part(
    config: &Config,
    client: std::sync::Arc<crate::metrics::prometheus::PrometheusClient>,
    watched: Watched,
    journal: &JournalWriter,
    records: &[Record],
    tx: &mpsc::UnboundedSender<Report>,
    what: &mut Vec<String>,
) -> tokio::task::JoinHandle<()> {
    let source: std::sync::Arc<dyn crate::metrics::Source> = client.clone();
    let discovering = config.panels.is_empty();
    what.push(if discovering {
        format!("the panels discovery finds on {}", source.describe())
    } else {
        format!("{} panels from {}", config.panels.len(), source.describe())
    });
    let (journal, records, tx) = (journal.clone(), records.to_vec(), tx.clone());
    let (refresh, configured) = (config.refresh, config.panels.clone());
    let vars = config.variables.clone();
    tokio::spawn(async move {
        let found = if discovering {
            match discovered_panels(&client, &tx).await {
                Some(p) => p,
                None => return,
            }
        } else {
            with_variables(&client, configured, &vars).await
        };
        if let Ok(mut p) = watched.lock() {
            *p = found.clone();
        }
        let watch = PanelWatch {
            source,
            panels: found,
            refresh,
            clock: std::sync::Arc::new(crate::clock::WallClock),
        };
        watch
            .run(journal, records, tx, |r| Some(Report::Panel(r)))
            .await;
    })
}

/// Says each report and the sharing's news until a signal, or until every part has ended and
/// nothing is shared; a recorder that shares goes on serving and sharing the incident until
/// it is stopped. Returns what stopped it, and the reports' receiver (its closing stops the
/// parts).
async fn until_stopped(
    signals: &mut crate::signals::Signals,
    mut rx: mpsc::UnboundedReceiver<Report>,
    sharing: Option<&mut Sharing>,
    tz: chrono_tz::Tz,
) -> (&'static str, mpsc::UnboundedReceiver<Report>) {
    let mut reporting = true;
    // The news stays open after the stop (the sync shares the leaving); only news that ended
    // is let go.
    let mut shared = sharing.map(|s| &mut s.news);
    let signal = loop {
        if !reporting && shared.is_none() {
            break "the end of its tasks";
        }
        tokio::select! {
            s = signals.next() => break s,
            r = rx.recv(), if reporting => match r {
                Some(r) => status_line(&r, tz),
                None => reporting = false,
            },
            n = async { shared.as_mut()?.recv().await }, if shared.is_some() => match n {
                Some(crate::share::session::News::Record(_)) => {}
                Some(n) => eprintln!("{n}"),
                None => shared = None,
            },
        }
    };
    (signal, rx)
}

/// Writes the panels' snapshots over the incident so far, for the postmortem: what answers
/// within the stop's second (counted from `stopping`), so a hung Prometheus never keeps the
/// lock.
async fn snapshots(
    store: &Store,
    id: &crate::incident::IncidentId,
    source: &crate::metrics::prometheus::PrometheusClient,
    panels: &[crate::config::PanelConfig],
    every: f64,
    stopping: tokio::time::Instant,
) {
    if panels.is_empty() {
        return;
    }
    let take = crate::postmortem::take_snapshots_until(
        store,
        id,
        source,
        panels,
        every,
        stopping + SNAPSHOT_BY,
    );
    match tokio::time::timeout_at(stopping + SNAPSHOT_BY + STOP_WAIT, take).await {
        Ok(Ok((n, of))) if n == of => eprintln!("warroom record: {n} panel snapshots written"),
        Ok(Ok((n, of))) => eprintln!(
            "warroom record: {n} of {of} panel snapshots written (the others did not answer \
             within the stop's second; `warroom export ID --prometheus URL` takes them later)"
        ),
        Ok(Err(e)) => eprintln!("warroom record: panel snapshots not taken: {e}"),
        Err(_) => eprintln!("warroom record: panel snapshots not taken within the stop's second"),
    }
}

/// The configured panels with their `[[variable]]`s resolved against `client` and filled in,
/// as the console fills its own in when it opens; a panel whose variable has no value is said
/// on stderr, with which variable and why, and never sent.
async fn with_variables(
    client: &crate::metrics::prometheus::PrometheusClient,
    panels: Vec<crate::config::PanelConfig>,
    vars: &[crate::variables::Variable],
) -> Vec<crate::config::PanelConfig> {
    let filled = crate::config::variables::fill_panels(panels, vars, client).await;
    for f in &filled.findings {
        eprintln!("warroom record: {f}");
    }
    for (title, why) in &filled.refused {
        eprintln!(
            "warroom record: panel \"{}\" is not recorded: {}; nothing is sent for it",
            crate::sanitize::line(title),
            crate::sanitize::line(why)
        );
    }
    filled.panels
}

/// The dashboard discovery builds, for a recorder with no `[[panel]]`: asked again with
/// backoff while it fails, and every 15 s while the Prometheus holds no known exporter (a
/// Prometheus that has only just started has scraped nothing yet); each outcome one line.
/// `None` once the recorder stops (its report channel closed).
async fn discovered_panels(
    client: &crate::metrics::prometheus::PrometheusClient,
    tx: &mpsc::UnboundedSender<Report>,
) -> Option<Vec<crate::config::PanelConfig>> {
    use crate::metrics::discover::{DiscoverOptions, discover};
    let (presets, warning) = crate::metrics::from_config::presets();
    if let Some(w) = warning {
        eprintln!("warning: your presets are not used: {w}");
    }
    let mut said = String::new();
    for attempt in 0u32.. {
        if tx.is_closed() {
            return None;
        }
        let now = chrono::Utc::now().timestamp_millis() as f64 / 1000.0;
        let wait = match discover(client, &presets, &DiscoverOptions::default(), now).await {
            Ok(d) if !d.dashboard.is_empty() => {
                eprintln!("warroom record: {}", d.status_line());
                return Some(d.dashboard.panel_configs());
            }
            Ok(d) => {
                let line = d.status_line();
                if line != said {
                    eprintln!("warroom record: {line}; looking again every 15s");
                    said = line;
                }
                Duration::from_secs(15)
            }
            Err(e) => {
                let wait = e
                    .retry_after()
                    .unwrap_or(Duration::from_secs((2u64 << attempt.min(5)).min(60)));
                eprintln!(
                    "warroom record: discovery failed: {}; next try in {}s",
                    crate::sanitize::line(&e.to_string()),
                    wait.as_secs()
                );
                wait
            }
        };
        // Sleep, but stop at once when the recorder does.
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = tx.closed() => return None,
        }
    }
    None
}

fn recorded(r: &Record, tz: chrono_tz::Tz) {
    eprintln!(
        "{}  #{}  {}  {}",
        format_time(r.time, tz, false),
        r.seq,
        r.source,
        describe(&r.kind)
    );
}

/// One short line on stderr per event or source change.
fn status_line(report: &Report, tz: chrono_tz::Tz) {
    match report {
        Report::Alert(AlertReport::Recorded(r))
        | Report::Panel(PanelReport::Recorded(r))
        | Report::Changes(ChangesReport::Recorded(r)) => recorded(r, tz),
        Report::Alert(AlertReport::NotRecorded { event, error })
        | Report::Panel(PanelReport::NotRecorded { event, error })
        | Report::Changes(ChangesReport::NotRecorded {
            change: event,
            error,
        }) => {
            eprintln!("NOT RECORDED (the journal is not durable): {event}: {error}");
        }
        Report::Changes(ChangesReport::Down { error, retry_in }) => eprintln!(
            "GitHub changes unavailable: {error}; next try in {}s",
            retry_in.as_secs()
        ),
        Report::Changes(ChangesReport::Up) => eprintln!("GitHub changes: answering"),
        Report::Alert(AlertReport::SourceDown {
            source,
            error,
            retry_in,
        }) => eprintln!(
            "{} alerts unavailable: {error}; next try in {}s",
            source_name(*source),
            retry_in.as_secs()
        ),
        Report::Alert(AlertReport::SourceUp { source, firing }) => {
            eprintln!(
                "{} alerts: answering, {firing} firing",
                source_name(*source)
            );
        }
        Report::Panel(PanelReport::Refused { event, error }) => {
            eprintln!("not recorded (refused; the journal is durable): {event}: {error}");
        }
        Report::Panel(PanelReport::SourceDown { error, retry_in }) => eprintln!(
            "metrics unavailable: {error}; next try in {}s",
            retry_in.as_secs()
        ),
        Report::Panel(PanelReport::SourceUp) => eprintln!("metrics: answering"),
        Report::Panel(PanelReport::PanelFailed { panel, error }) => {
            eprintln!("panel \"{panel}\": query refused: {error}");
        }
    }
}

/// The changes intake `[github] watch` asks for, on the process's one GitHub client. Without a
/// token only public repositories can be read; that is said once, not an error.
fn changes_intake(config: &Config) -> Result<Option<ChangesIntake>, crate::github::GithubError> {
    let Some(cfg) = config.github.as_ref().filter(|g| !g.watch.is_empty()) else {
        return Ok(None);
    };
    let token = match crate::github::client::load_token(&cfg.token) {
        Ok(t) => Some(t),
        Err(e) => {
            eprintln!("warning: {e}; only public repositories can be read");
            None
        }
    };
    let gh = crate::github::Github::new(
        &cfg.api_url,
        token.as_ref(),
        cfg.timeout,
        std::sync::Arc::new(crate::github::WallTimer),
    )?;
    Ok(ChangesIntake::from_config(cfg, std::sync::Arc::new(gh)))
}
