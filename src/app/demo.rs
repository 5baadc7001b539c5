//! `warroom demo` and `warroom gameday`: the console on a simulated outage with nothing to
//! install. The simulator runs in-process; its samples go into the embedded metrics store every
//! simulated scrape interval; its control API listens on loopback so the shipped runbooks act
//! on it exactly as they would on a real service; the clock shows simulated time.

use super::model::Model;
use crate::clock::Clock;
use crate::config::Config;
use crate::metrics::embedded::{DEFAULT_RETENTION, EmbeddedSource};
use crate::sim::{Scenario, Sim, SimService, server};
use crate::theme::Theme;
use chrono::{DateTime, NaiveTime, TimeZone, Utc};
use color_eyre::eyre::{WrapErr, bail, eyre};
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

impl Clock for SimClock {
    fn now(&self) -> DateTime<Utc> {
        at(self.epoch, self.service.with_sim(Sim::now))
    }
}

/// The wall time of simulated second `t`.
pub fn at(epoch: DateTime<Utc>, t: f64) -> DateTime<Utc> {
    epoch + chrono::Duration::milliseconds((t * 1000.0) as i64)
}

fn unix(epoch: DateTime<Utc>, t: f64) -> f64 {
    epoch.timestamp_millis() as f64 / 1000.0 + t
}

/// Simulated second 0 as a date: today, at the scenario's "HH:MM" in `tz`.
pub fn epoch(start_clock: &str, tz: chrono_tz::Tz, today: DateTime<Utc>) -> DateTime<Utc> {
    let time = NaiveTime::parse_from_str(start_clock, "%H:%M").unwrap_or(NaiveTime::MIN);
    let day = today.with_timezone(&tz).date_naive();
    tz.from_local_datetime(&day.and_time(time))
        .earliest()
        .map_or(today, |d| d.with_timezone(&Utc))
}

/// Run the console on `scenario` at `speed`× with noise `seed`.
pub async fn run(
    config_path: Option<&Path>,
    scenario: &str,
    speed: f64,
    seed: u64,
) -> color_eyre::Result<ExitCode> {
    if !(speed.is_finite() && speed > 0.0 && speed <= 1000.0) {
        bail!("--speed must be above 0 and at most 1000, not \"{speed}\"");
    }
    let mut config = Config::load(config_path)?;
    let scenario = Scenario::load(scenario).map_err(|d| eyre!("{d}"))?;
    let name = scenario.name.clone();
    let briefing = reflow(&scenario.briefing);
    let epoch = epoch(&scenario.start_clock, config.timezone, Utc::now());
    let r = Rehearsal::start(scenario, seed, speed, epoch, CONTROL_ADDR).await?;
    let (service, store, control) = (r.service.clone(), r.store.clone(), r.control);

    // Refresh once a wall-clock second: in simulated time that is `speed` seconds.
    config.refresh = Duration::from_secs_f64(speed.max(1.0));
    let (theme, warning) = Theme::resolve(&config.theme, std::env::var_os("NO_COLOR").is_some());
    let clock: Arc<dyn Clock> = Arc::new(SimClock {
        service: service.clone(),
        epoch,
    });
    let source_name = format!("embedded · {name} {speed}× · control http://{control}");
    let mut model = Model::new(&config, theme, source_name, clock.now());
    model.briefing = Some(briefing);
    if let Some(w) = warning {
        model.notify(w, true, None);
    }
    let mut services = super::runtime::Services::metrics_only(Arc::new(store.clone()));
    services.runbooks = demo_runbooks(&config, &r.control_url(), &r.service_label);
    let result = super::runtime::run_terminal(model, services, clock).await;
    drop(r);
    let code = result?;
    let score = service.with_sim(|s| s.score().clone());
    println!("warroom demo: {name}\n{}", score_text(&score));
    Ok(code)
}

/// The simulator running in-process: its model on its own clock, its control API on loopback,
/// and its samples scraped into an embedded store every [`SCRAPE_S`] simulated seconds. The
/// tasks stop when this is dropped.
pub struct Rehearsal {
    pub service: Arc<SimService>,
    pub store: EmbeddedSource,
    pub control: std::net::SocketAddr,
    /// The scenario's `service` label.
    pub service_label: String,
    /// Simulated second 0 as a date.
    pub epoch: DateTime<Utc>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Rehearsal {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl Rehearsal {
    /// Start `scenario` a few minutes before its fault, with [`HISTORY_S`] of history in the
    /// store, the control API on `listen` (or a free loopback port when it is taken).
    pub async fn start(
        scenario: Scenario,
        seed: u64,
        speed: f64,
        epoch: DateTime<Utc>,
        listen: &str,
    ) -> color_eyre::Result<Rehearsal> {
        let service_label = scenario.service.clone();
        let start_at = scenario.fault_at().map_or(0.0, |f| (f - 300.0).max(0.0));
        let mut sim = Sim::new(scenario, seed);
        let store = EmbeddedSource::new(DEFAULT_RETENTION);
        let mut t = (start_at - HISTORY_S).max(0.0);
        while t <= start_at {
            sim.run_until(t);
            store.ingest(
                unix(epoch, sim.now()),
                &crate::sim::exposition::samples(&sim),
            );
            t += SCRAPE_S;
        }
        let service = Arc::new(SimService::new(sim, speed));
        let listener = match tokio::net::TcpListener::bind(listen).await {
            Ok(l) => l,
            Err(_) => tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .wrap_err("cannot listen on a loopback port for the simulator's control API")?,
        };
        let control = listener.local_addr()?;
        let router = server::router(service.clone());
        let serving = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        let clock_task = tokio::spawn(server::run_clock(service.clone(), start_at));
        let scraper = {
            let (service, store) = (service.clone(), store.clone());
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_secs_f64(SCRAPE_S / speed));
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
                loop {
                    tick.tick().await;
                    let (samples, t) = service.samples();
                    store.ingest(unix(epoch, t), &samples);
                }
            })
        };
        Ok(Rehearsal {
            service,
            store,
            control,
            service_label,
            epoch,
            tasks: vec![serving, clock_task, scraper],
        })
    }

    /// The control API's base URL, as runbooks' `base_url`.
    pub fn control_url(&self) -> String {
        format!("http://{}", self.control)
    }

    /// The simulator's time as a clock.
    pub fn clock(&self) -> SimClock {
        SimClock {
            service: self.service.clone(),
            epoch: self.epoch,
        }
    }
}

/// The runbooks of a rehearsal act on the in-process simulator: its control API is their
/// `base_url` and the scenario's service is their `service`; their gates read the embedded
/// store the dashboard reads.
pub fn demo_runbooks(
    config: &Config,
    control_url: &str,
    service: &str,
) -> super::runner::RunbookSetup {
    super::runner::RunbookSetup::new(
        config.runbook_dir.iter().cloned().collect(),
        vec![
            ("base_url".into(), control_url.to_string()),
            ("service".into(), service.to_string()),
        ],
    )
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
