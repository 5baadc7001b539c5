//! `warroom demo` and `warroom gameday`: the console on a simulated outage with nothing to
//! install. The simulator runs in-process; its samples go into the embedded metrics store every
//! simulated scrape interval; its control API listens on loopback so the shipped runbooks act
//! on it exactly as they would on a real service; the clock shows simulated time.
//!
//! The rehearsal's clock is the operator's: it starts when the briefing is dismissed, `p`
//! pauses the simulation with the panels, and at the scenario's end the time stops and the
//! console announces the score, the incident and the next commands.

use super::model::Model;
use crate::clock::Clock;
use crate::config::Config;
use crate::incident::{Event, JournalWriter, Source};
use crate::metrics::embedded::DEFAULT_RETENTION;
use crate::rehearsal::clock::epoch;
use crate::rehearsal::stage::CONTROL_ADDR;
use crate::rehearsal::{Stage, StageSpec, reflow};
use crate::sim::Scenario;
use crate::theme::Theme;
use chrono::Utc;
use color_eyre::eyre::eyre;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Where a rehearsal's console reads its metrics.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    /// A real Prometheus that scrapes the simulator (at `listen`); `None`: the embedded store.
    pub prometheus: Option<String>,
    /// Where the simulator listens (default 127.0.0.1:9187, or any free port without
    /// `prometheus`).
    pub listen: Option<String>,
}

/// Run the console on `scenario` at `speed`× with noise `seed`.
pub async fn run(
    config: Config,
    data_dir: &Path,
    scenario: &str,
    speed: f64,
    seed: u64,
    metrics: Metrics,
) -> color_eyre::Result<ExitCode> {
    crate::clock::check_speed(speed, crate::clock::REHEARSAL_SPEED)?;
    let mut config = config;
    // The simulator's panels, unless the config names its own.
    config.panels = crate::rehearsal::panels(&config);
    let scenario = Scenario::load(scenario).map_err(|d| eyre!("{d}"))?;
    let name = scenario.name.clone();
    let title = format!("Rehearsal: {}", scenario.title);
    let briefing = reflow(&scenario.briefing);
    let epoch = epoch(&scenario.start_clock, config.timezone, Utc::now());
    // A real Prometheus expects its target where it was told: no fallback port then.
    let listen = match (&metrics.prometheus, &metrics.listen) {
        (_, Some(l)) => Some(l.as_str()),
        (Some(_), None) => Some(CONTROL_ADDR),
        (None, None) => None,
    };
    let end_s = scenario.duration_s;
    let wall: Arc<dyn Clock> = Arc::new(crate::clock::WallClock);
    let spec = StageSpec {
        scenario,
        seed,
        speed,
        epoch,
        listen,
        retention: DEFAULT_RETENTION,
    };
    let r = Stage::start_with(spec, false, wall).await?;
    r.pacer().set_end(end_s.max(r.start_at));
    let control = r.addr;
    let names = Names {
        name,
        title,
        briefing,
    };
    if let Some(url) = metrics.prometheus {
        return on_prometheus(config, data_dir, url, r, names, speed).await;
    }

    // Refresh once a wall-clock second: in simulated time that is `speed` seconds.
    config.refresh = Duration::from_secs_f64(speed.max(1.0));
    let feed = Feed {
        source: Arc::new(r.store.clone()),
        source_name: format!(
            "embedded · {} {speed}× · control http://{control}",
            names.name
        ),
        clock: Arc::new(r.clock()),
        in_sim_time: true,
    };
    play(&config, data_dir, r, feed, names).await
}

/// Records the scenario's service as the one affected, as the headless game day does, so the
/// draft's header and the status page name it.
async fn record_service(model: &mut Model, journal: &JournalWriter, service: &str) {
    if service.is_empty() {
        return;
    }
    let event = Event::ServicesChanged {
        services: vec![service.to_string()],
    };
    match journal.append(Source::Sim, &model.actor, event).await {
        Ok(record) => model.add_record(record),
        Err(e) => model.notify(
            format!("NOT RECORDED (the journal is not durable): the service affected: {e}"),
            true,
            None,
        ),
    }
}

/// A rehearsal's names: the scenario's, the incident's title, and the briefing.
struct Names {
    name: String,
    title: String,
    briefing: String,
}

/// The console of a rehearsal: its model (the briefing up, the rehearsal's clock), its
/// incident opened (records in simulated time when `in_sim_time`, else the wall clock's, as the
/// data are), and the services that act on the stage.
#[allow(clippy::too_many_arguments)]
/// Where a rehearsal's console reads its data, and in which clock.
struct Feed {
    source: Arc<dyn crate::metrics::Source>,
    source_name: String,
    clock: Arc<dyn Clock>,
    /// The journal is stamped in simulated time (the embedded store), not wall time.
    in_sim_time: bool,
}

async fn rehearsal_console(
    config: &Config,
    data_dir: &Path,
    r: &Stage,
    feed: Feed,
    names: Names,
) -> color_eyre::Result<(Model, super::workers::Services)> {
    let Feed {
        source,
        source_name,
        clock,
        in_sim_time,
    } = feed;
    let clock = &clock;
    let (theme, warning) = Theme::for_terminal(&config.theme);
    let mut model = Model::new(config, theme, source_name, clock.now());
    model.briefing = Some(names.briefing);
    model.rehearsal = true;
    model.wall = Some(Utc::now());
    if let Some(w) = warning {
        model.notify(w, true, None);
    }
    // A rehearsal is an incident like any other: the timeline, the runbooks' records and the
    // export all work as they would for real.
    let header = crate::incident::open::Header {
        title: Some(names.title),
        severity: None,
    };
    let store = crate::incident::Store::new(data_dir);
    let locked = crate::incident::open::lock(
        &store,
        crate::incident::open::Which::New(model.now),
        crate::incident::store::Role::Console,
    )?;
    let journal_clock = in_sim_time.then(|| clock.clone());
    let journal = super::runtime::open_incident(&mut model, locked, header, journal_clock).await?;
    record_service(&mut model, &journal, &r.service_label).await;
    let services = super::workers::Services {
        journal: Some(journal),
        export: super::runtime::export_setup(&model, &store, config),
        runbooks: crate::rehearsal::runbooks::setup(config, &r.url(), &r.service_label),
        rehearsal: Some(crate::rehearsal::stage::Live {
            journal_in_sim_time: in_sim_time,
            ..r.live()
        }),
        serve: true,
        ..super::workers::Services::metrics_only(source)
    };
    Ok((model, services))
}

/// `warroom gameday SCENARIO --prometheus URL`: the console on a real Prometheus that scrapes
/// the rehearsal's simulator. Its data are stamped with wall time, so the console's clock is
/// the wall clock; the simulated time is in the source line and the score at the end.
async fn on_prometheus(
    mut config: Config,
    data_dir: &Path,
    url: String,
    r: Stage,
    names: Names,
    speed: f64,
) -> color_eyre::Result<ExitCode> {
    config.prometheus.url = Some(url.trim_end_matches('/').to_string());
    let source = crate::metrics::from_config::from_config(&config)?;
    let clock: Arc<dyn Clock> = Arc::new(crate::clock::WallClock);
    let source_name = format!(
        "{} · {} {speed}× · scrapes http://{}",
        source.describe(),
        names.name,
        r.addr
    );
    let feed = Feed {
        source,
        source_name,
        clock,
        in_sim_time: false,
    };
    play(&config, data_dir, r, feed, names).await
}

/// Runs the rehearsal's console until it quits (the console prints its report).
async fn play(
    config: &Config,
    data_dir: &Path,
    r: Stage,
    feed: Feed,
    names: Names,
) -> color_eyre::Result<ExitCode> {
    let clock = feed.clock.clone();
    let (model, services) = rehearsal_console(config, data_dir, &r, feed, names).await?;
    // The console prints the rehearsal's report as it closes.
    let result = super::runtime::run_terminal(model, services, clock).await;
    drop(r);
    result
}
