//! `warroom demo` and `warroom gameday`: the console on a simulated outage with nothing to
//! install. The simulator runs in-process; its samples go into the embedded metrics store every
//! simulated scrape interval; its control API listens on loopback so the shipped runbooks act
//! on it exactly as they would on a real service; the clock shows simulated time.

use super::model::Model;
use crate::clock::Clock;
use crate::config::Config;
use crate::gameday::Stage;
use crate::metrics::embedded::DEFAULT_RETENTION;
use crate::sim::{Scenario, Sim, SimService};
use crate::theme::Theme;
use chrono::{DateTime, NaiveTime, TimeZone, Utc};
use color_eyre::eyre::{bail, eyre};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Simulated seconds between two samples put in the embedded store (a scrape interval; 5 s
/// keeps two simulated hours near 15 MB).
pub const SCRAPE_S: f64 = 5.0;
/// How much simulated history the charts start with.
pub const HISTORY_S: f64 = 1200.0;
/// Where the control API listens when it can (the shipped runbooks' default target).
pub const CONTROL_ADDR: &str = "127.0.0.1:9187";

/// The simulator's time as the console's clock: simulated second 0 is the scenario's start
/// time today in the configured timezone.
#[derive(Debug)]
pub struct SimClock {
    service: Arc<SimService>,
    epoch: DateTime<Utc>,
}

impl SimClock {
    pub fn new(service: Arc<SimService>, epoch: DateTime<Utc>) -> SimClock {
        SimClock { service, epoch }
    }
}

impl Clock for SimClock {
    fn now(&self) -> DateTime<Utc> {
        at(self.epoch, self.service.with_sim(Sim::now))
    }
}

/// The wall time of simulated second `t`.
pub fn at(epoch: DateTime<Utc>, t: f64) -> DateTime<Utc> {
    epoch + chrono::Duration::milliseconds((t * 1000.0) as i64)
}

/// Simulated second 0 as a date: today, at the scenario's "HH:MM" in `tz`.
pub fn epoch(start_clock: &str, tz: chrono_tz::Tz, today: DateTime<Utc>) -> DateTime<Utc> {
    let time = NaiveTime::parse_from_str(start_clock, "%H:%M").unwrap_or(NaiveTime::MIN);
    let day = today.with_timezone(&tz).date_naive();
    tz.from_local_datetime(&day.and_time(time))
        .earliest()
        .map_or(today, |d| d.with_timezone(&Utc))
}

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
    config_path: Option<&Path>,
    data_dir: &Path,
    scenario: &str,
    speed: f64,
    seed: u64,
    metrics: Metrics,
) -> color_eyre::Result<ExitCode> {
    if !(speed.is_finite() && speed > 0.0 && speed <= 1000.0) {
        bail!("--speed must be above 0 and at most 1000, not \"{speed}\"");
    }
    let mut config = Config::load(config_path)?;
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
    let r = Stage::start(scenario, seed, speed, epoch, listen, DEFAULT_RETENTION).await?;
    let (service, store, control) = (r.service.clone(), r.store.clone(), r.addr);
    if let Some(url) = metrics.prometheus {
        let names = Names {
            name,
            title,
            briefing,
        };
        return on_prometheus(config, data_dir, url, r, names, speed).await;
    }

    // Refresh once a wall-clock second: in simulated time that is `speed` seconds.
    config.refresh = Duration::from_secs_f64(speed.max(1.0));
    let (theme, warning) = Theme::resolve(&config.theme, std::env::var_os("NO_COLOR").is_some());
    let clock: Arc<dyn Clock> = Arc::new(r.clock());
    let source_name = format!("embedded · {name} {speed}× · control http://{control}");
    let mut model = Model::new(&config, theme, source_name, clock.now());
    model.briefing = Some(briefing);
    if let Some(w) = warning {
        model.notify(w, true, None);
    }
    // A rehearsal is an incident like any other, its records in simulated time: the timeline,
    // the runbooks' records and the export all work as they would for real.
    let journal = super::runtime::open_incident_with_clock(
        &mut model,
        data_dir,
        None,
        Some(title),
        None,
        false,
        Some(clock.clone()),
    )
    .await?;
    let services = super::runtime::Services {
        source: Arc::new(store.clone()),
        journal: Some(journal),
        alerts: None,
        export: super::runtime::export_setup(&model, data_dir, &config),
        runbooks: demo_runbooks(&config, &r.url(), &r.service_label, speed),
        rehearsal: Some(r.service.clone()),
        github: None,
    };
    let result = super::runtime::run_terminal(model, services, clock).await;
    drop(r);
    let code = result?;
    let score = service.with_sim(|s| s.score().clone());
    println!("warroom demo: {name}\n{}", score_text(&score));
    Ok(code)
}

/// `warroom gameday SCENARIO --prometheus URL`: the console on a real Prometheus that scrapes
/// the rehearsal's simulator. Its data are stamped with wall time, so the console's clock is
/// the wall clock; the simulated time is in the source line and the score at the end.
/// A rehearsal's names: the scenario's, the incident's title, and the briefing.
struct Names {
    name: String,
    title: String,
    briefing: String,
}

async fn on_prometheus(
    mut config: Config,
    data_dir: &Path,
    url: String,
    r: Stage,
    names: Names,
    speed: f64,
) -> color_eyre::Result<ExitCode> {
    let Names {
        name,
        title,
        briefing,
    } = names;
    config.prometheus.url = Some(url.trim_end_matches('/').to_string());
    let source = super::source::from_config(&config)?;
    let (theme, warning) = Theme::resolve(&config.theme, std::env::var_os("NO_COLOR").is_some());
    let clock: Arc<dyn Clock> = Arc::new(crate::clock::WallClock);
    let source_name = format!(
        "{} · {name} {speed}× · scrapes http://{}",
        source.describe(),
        r.addr
    );
    let mut model = Model::new(&config, theme, source_name, clock.now());
    model.briefing = Some(briefing);
    if let Some(w) = warning {
        model.notify(w, true, None);
    }
    let journal =
        super::runtime::open_incident(&mut model, data_dir, None, Some(title), None, false).await?;
    let services = super::runtime::Services {
        source,
        journal: Some(journal),
        alerts: None,
        export: super::runtime::export_setup(&model, data_dir, &config),
        runbooks: demo_runbooks(&config, &r.url(), &r.service_label, speed),
        rehearsal: Some(r.service.clone()),
        github: None,
    };
    let result = super::runtime::run_terminal(model, services, clock).await;
    let service = r.service.clone();
    drop(r);
    let code = result?;
    let score = service.with_sim(|s| s.score().clone());
    println!("warroom gameday: {name}\n{}", score_text(&score));
    Ok(code)
}

/// The runbooks of a rehearsal act on the in-process simulator: its control API is their
/// `base_url` and the scenario's service is their `service`; their gates read the embedded
/// store the dashboard reads. The config's `[runbooks.vars]` fill in the variables the
/// rehearsal does not set itself.
pub fn demo_runbooks(
    config: &Config,
    control_url: &str,
    service: &str,
    speed: f64,
) -> super::runner::RunbookSetup {
    let dirs: Vec<std::path::PathBuf> = config.runbook_dir.iter().cloned().collect();
    let mut vars = vec![
        ("base_url".into(), control_url.to_string()),
        ("service".into(), service.to_string()),
    ];
    // Gate intervals, soaks and settle times on the simulated clock, as they would be at 1x
    // (a name shared by two runbooks takes the first one's value).
    for entry in super::catalog::load(&dirs) {
        if let super::catalog::Entry::Ready(rb) = entry {
            for (k, v) in crate::gameday::play::simulated_durations(&rb, speed) {
                if !vars.iter().any(|(name, _)| *name == k) {
                    vars.push((k, v));
                }
            }
        }
    }
    super::runner::RunbookSetup::new(dirs, vars).with_config_vars(config)
}

/// Put the rehearsal's faults on the incident's timeline as they land (its control actions are
/// recorded by the runbooks that make them). Each append's result goes to `report`; the task
/// ends once `alive` says whoever listens (the console, the game day) has gone.
pub async fn record_faults(
    service: Arc<SimService>,
    journal: crate::incident::JournalWriter,
    clock: Arc<dyn Clock + Send + Sync>,
    report: impl Fn(Result<crate::incident::Record, String>) + Send,
    alive: impl Fn() -> bool + Send,
) {
    use crate::incident::{Event, Source as RecordSource};
    let mut seen = service.with_sim(|s| s.events().len());
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    while alive() {
        tick.tick().await;
        let new: Vec<crate::sim::model::Event> =
            service.with_sim(|s| s.events().iter().skip(seen).cloned().collect());
        seen += new.len();
        let (now, sim_now) = (clock.now(), service.with_sim(|s| s.now()));
        for e in new.into_iter().filter(|e| !e.mitigation) {
            // When it happened, not when this poll saw it (up to a poll's worth of simulated
            // time later).
            let lag = chrono::Duration::milliseconds(((sim_now - e.at_s).max(0.0) * 1000.0) as i64);
            let event = Event::SimFault {
                fault: e.what.trim_start_matches("fault: ").to_string(),
                detail: format!("injected at simulated second {:.0}", e.at_s),
                active: true,
                at: Some(now - lag),
            };
            let result = journal
                .append(RecordSource::Sim, "simulator", event)
                .await
                .map_err(|e| e.to_string());
            report(result);
        }
    }
}

/// Join the hard-wrapped lines of each paragraph so the overlay can wrap them to its width.
pub fn reflow(text: &str) -> String {
    text.trim()
        .split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The game-day score as lines of text.
pub fn score_text(s: &crate::sim::score::Score) -> String {
    let mins = |v: Option<f64>| v.map_or("not yet".to_string(), |s| format!("{:.1} min", s / 60.0));
    format!(
        "  time to first mitigation  {}\n  time to recovery          {}\n  failed requests           {:.0}\n  duplicate writes          {:.0}\n  minutes over objective    {}",
        mins(s.time_to_first_mitigation_s),
        mins(s.time_to_recovery_s),
        s.failed_logical_requests,
        s.duplicate_writes,
        s.minutes_over_objective
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn briefings_are_reflowed_by_paragraph() {
        assert_eq!(reflow("a b\nc\n\nd\ne\n"), "a b c\n\nd e");
    }

    #[test]
    fn simulated_second_zero_is_the_scenario_start_today() {
        let today = DateTime::parse_from_rfc3339("2026-07-17T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let e = epoch("06:40", chrono_tz::Europe::London, today);
        assert_eq!(e.to_rfc3339(), "2026-07-17T05:40:00+00:00");
        assert_eq!(at(e, 1200.0).to_rfc3339(), "2026-07-17T06:00:00+00:00");
    }
}
