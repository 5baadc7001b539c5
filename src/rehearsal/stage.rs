//! The stage of a rehearsal: the simulator advancing at its speed in this process, its samples
//! going into the embedded metrics store every simulated scrape interval, and one loopback
//! server with the simulator's `/metrics` and control API and the store's Prometheus query API,
//! so runbooks act on it exactly as they would on a real service.

use super::clock::{LastScrape, SimClock, unix};
use crate::metrics::embedded::EmbeddedSource;
use crate::sim::{Scenario, Sim, SimService, server};
use chrono::{DateTime, Utc};
use color_eyre::eyre::WrapErr;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// Simulated seconds between two samples put in the embedded store (a scrape interval; 5 s
/// keeps two simulated hours near 15 MB).
pub const SCRAPE_S: f64 = 5.0;
/// How much simulated history the charts start with.
pub const HISTORY_S: f64 = 1200.0;
/// Where the control API listens when it can (the shipped runbooks' default target).
pub const CONTROL_ADDR: &str = "127.0.0.1:9187";

/// How often the stage's clock advances the simulator (wall time).
const CLOCK_TICK: Duration = Duration::from_millis(20);

/// The simulator's own figures at one scrape: its ground truth, in the game day's JSON report.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Scrape {
    /// Simulated second.
    pub t: f64,
    /// Errors over attempts answered in the minute before `t` (what `rate(...[1m])` reads).
    pub error_ratio: f64,
    /// Attempts answered by any instance since the start (planned restarts included).
    pub answered: f64,
    /// Logical requests since the start.
    pub logical: f64,
    /// Attempts answered with an error by any instance since the start (the error ratio the
    /// instances' counters give, without the gateway's refusals).
    pub errors: f64,
    /// Logical requests that failed for good since the start (the draft's failed user
    /// requests are checked against it).
    pub logical_failed: f64,
    /// Duplicate writes since the start.
    pub duplicates: f64,
}

impl Scrape {
    pub(super) fn of(sim: &Sim) -> Scrape {
        let t = sim.now();
        Scrape {
            t,
            error_ratio: sim.window(t - 60.0, t).error_ratio,
            answered: sim
                .instances()
                .iter()
                .map(|i| i.codes.iter().sum::<f64>())
                .sum(),
            logical: sim.totals().logical,
            errors: sim
                .instances()
                .iter()
                .map(|i| i.codes.iter().skip(1).sum::<f64>())
                .sum(),
            logical_failed: sim.totals().logical_failed,
            duplicates: sim.totals().duplicates,
        }
    }
}

/// A running rehearsal: the simulator advancing at `speed`, its samples going into the
/// embedded store every simulated scrape interval, and one loopback HTTP server with the
/// simulator's `/metrics` and control API and the store's Prometheus query API.
pub struct Stage {
    pub service: Arc<SimService>,
    pub store: EmbeddedSource,
    pub addr: SocketAddr,
    /// The scenario's `service` label (runbooks' `service`).
    pub service_label: String,
    /// The wall time of simulated second 0.
    pub epoch: DateTime<Utc>,
    /// The simulated second the stage started at.
    pub start_at: f64,
    /// Simulated seconds per wall second.
    pub speed: f64,
    /// The simulator's own record at every scrape (as far back as the store's retention), for
    /// checking what warroom made of it.
    pub scrapes: Arc<std::sync::Mutex<Vec<Scrape>>>,
    tasks: Vec<JoinHandle<()>>,
}

impl Stage {
    /// Stage `scenario` five minutes before its first fault with twenty minutes of history in
    /// the store (keeping `retention` of simulated time), simulated second 0 being `epoch`,
    /// serving on `listen`, or by default on the shipped runbooks' default target, falling
    /// back to any free loopback port.
    pub async fn start(
        scenario: Scenario,
        seed: u64,
        speed: f64,
        epoch: DateTime<Utc>,
        listen: Option<&str>,
        retention: Duration,
    ) -> color_eyre::Result<Stage> {
        crate::clock::check_speed(speed, crate::clock::REHEARSAL_SPEED)?;
        let service_label = scenario.service.clone();
        let start_at = scenario.fault_at().map_or(0.0, |f| (f - 300.0).max(0.0));
        let mut sim = Sim::new(scenario, seed);
        let store = EmbeddedSource::new(retention);
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
        let scrapes = Arc::new(std::sync::Mutex::new(Vec::new()));
        let listener = match listen {
            Some(addr) => tokio::net::TcpListener::bind(addr)
                .await
                .wrap_err_with(|| format!("cannot listen on \"{addr}\""))?,
            None => match tokio::net::TcpListener::bind(CONTROL_ADDR).await {
                Ok(l) => l,
                Err(_) => tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .wrap_err("cannot listen on a loopback port for the rehearsal")?,
            },
        };
        let addr = listener.local_addr()?;
        let router = server::router(service.clone())
            .merge(crate::metrics::embedded::http::router(store.clone()));
        let serving = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        // One task advances the simulator and scrapes it at every simulated scrape interval on
        // the way, so the store sees a sample every SCRAPE_S simulated seconds at any speed.
        let clock = {
            let (service, store, scrapes) = (service.clone(), store.clone(), scrapes.clone());
            let keep = ((retention.as_secs_f64() / SCRAPE_S).ceil() as usize).max(1);
            tokio::spawn(async move {
                let began = tokio::time::Instant::now();
                let mut next_scrape = start_at + SCRAPE_S;
                let mut tick = tokio::time::interval(CLOCK_TICK);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
                loop {
                    tick.tick().await;
                    let target = start_at + began.elapsed().as_secs_f64() * speed;
                    while next_scrape <= target {
                        service.advance_to(next_scrape);
                        let (samples, t) = service.samples();
                        store.ingest(unix(epoch, t), &samples);
                        let scrape = service.with_sim(Scrape::of);
                        if let Ok(mut s) = scrapes.lock() {
                            // As long a record as the store keeps samples, no longer.
                            if s.len() >= keep {
                                let excess = s.len() + 1 - keep;
                                s.drain(..excess);
                            }
                            s.push(scrape);
                        }
                        next_scrape += SCRAPE_S;
                    }
                    service.advance_to(target);
                }
            })
        };
        Ok(Stage {
            service,
            store,
            addr,
            service_label,
            epoch,
            start_at,
            speed,
            scrapes,
            tasks: vec![serving, clock],
        })
    }

    /// The base URL of the control API and of the Prometheus query API.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The simulated second now.
    pub fn now(&self) -> f64 {
        self.service.with_sim(Sim::now)
    }

    /// The simulator's time as the console's clock.
    pub fn clock(&self) -> SimClock {
        SimClock::new(self.service.clone(), self.epoch)
    }

    /// A clock that reads the time of the latest scrape: readings taken at it fall exactly
    /// on the store's samples, so a crossing is dated at the scrape that showed it.
    pub fn scrape_clock(&self) -> LastScrape {
        LastScrape::new(self.scrapes.clone(), self.epoch, self.start_at)
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}
