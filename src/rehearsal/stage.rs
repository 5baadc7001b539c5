//! The stage of a rehearsal: the simulator advancing at its speed in this process, its samples
//! going into the embedded metrics store every simulated scrape interval, and one loopback
//! server with the simulator's `/metrics` and control API and the store's Prometheus query API,
//! so runbooks act on it exactly as they would on a real service.
//!
//! One pacer task owns the simulated time: it advances the simulator at `speed`× the wall
//! clock while the rehearsal runs, never while it is paused ([`Pacer`]), stops at every
//! simulated scrape and at every deadline a sleeper of the [`SimClock`] waits for (so a gate
//! read every ten simulated seconds is read every ten simulated seconds at any speed), and
//! stops for good at the rehearsal's end.

use super::clock::{LastScrape, SimClock, SimTime, unix};
use super::error::RehearsalError;
use crate::metrics::embedded::EmbeddedSource;
use crate::sim::{Scenario, Sim, SimService, server};
use chrono::{DateTime, Utc};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
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
    /// Jobs waiting in the backlog (what `queue_depth` exposes).
    pub queue_depth: f64,
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
            queue_depth: sim.backlog.depth.floor(),
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
    /// The simulated time, as the pacer publishes it.
    pub time: Arc<SimTime>,
    /// The scenario's name and the noise seed.
    pub scenario: String,
    pub seed: u64,
    pacer: Pacer,
    tasks: Vec<JoinHandle<()>>,
}

/// Whether the rehearsal's time runs, and where it ends.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Pace {
    running: bool,
    /// The simulated second the rehearsal ends at (the pacer stops there for good).
    end_s: f64,
}

/// The rehearsal's pace: pause it, resume it, set its end, and learn that it ended. Cloned
/// into whatever front end runs the rehearsal (the console pauses it with `p`).
#[derive(Debug, Clone)]
pub struct Pacer {
    pace: Arc<watch::Sender<Pace>>,
    ended: watch::Receiver<bool>,
    time: Arc<SimTime>,
}

impl Pacer {
    /// No simulated time passes until [`Pacer::resume`].
    pub fn pause(&self) {
        self.pace
            .send_if_modified(|p| std::mem::replace(&mut p.running, false));
    }

    pub fn resume(&self) {
        self.pace
            .send_if_modified(|p| !std::mem::replace(&mut p.running, true));
    }

    pub fn is_running(&self) -> bool {
        self.pace.borrow().running
    }

    /// End the rehearsal at simulated second `t`.
    pub fn set_end(&self, t: f64) {
        self.pace.send_modify(|p| p.end_s = t);
    }

    /// The simulated second the rehearsal ends at.
    pub fn end_s(&self) -> f64 {
        self.pace.borrow().end_s
    }

    pub fn has_ended(&self) -> bool {
        *self.ended.borrow()
    }

    /// Resolves once the rehearsal reached its end.
    pub async fn ended(&self) {
        let mut rx = self.ended.clone();
        let _ = rx.wait_for(|e| *e).await;
    }

    /// The simulated time.
    pub fn time(&self) -> &Arc<SimTime> {
        &self.time
    }
}

/// What a stage plays and where it serves.
pub struct StageSpec<'a> {
    pub scenario: Scenario,
    pub seed: u64,
    /// Simulated seconds per wall second.
    pub speed: f64,
    /// The wall time of simulated second 0.
    pub epoch: DateTime<Utc>,
    pub listen: Option<&'a str>,
    /// Simulated time the store keeps.
    pub retention: Duration,
}

impl Stage {
    /// Stage `spec.scenario` five minutes before its first fault with twenty minutes of
    /// history in the store (keeping `retention` of simulated time), simulated second 0 being
    /// `epoch`, serving on `listen`, or by default on the shipped runbooks' default target,
    /// falling back to any free loopback port.
    pub async fn start(spec: StageSpec<'_>) -> Result<Stage, RehearsalError> {
        let wall: crate::clock::SharedClock = Arc::new(crate::clock::WallClock);
        Stage::start_with(spec, true, wall).await
    }

    /// [`Stage::start`], paused unless `running` (the demo's time starts when the briefing is
    /// dismissed), its pace following `wall` (the wall clock; tests drive a manual one).
    pub async fn start_with(
        spec: StageSpec<'_>,
        running: bool,
        wall: crate::clock::SharedClock,
    ) -> Result<Stage, RehearsalError> {
        let StageSpec {
            scenario,
            seed,
            speed,
            epoch,
            listen,
            retention,
        } = spec;
        crate::clock::check_speed(speed, crate::clock::REHEARSAL_SPEED)?;
        let service_label = scenario.service.clone();
        let name = scenario.name.clone();
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
                .map_err(|source| RehearsalError::Listen {
                    addr: addr.to_string(),
                    source,
                })?,
            None => match tokio::net::TcpListener::bind(CONTROL_ADDR).await {
                Ok(l) => l,
                Err(_) => tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .map_err(RehearsalError::Loopback)?,
            },
        };
        let addr = listener.local_addr().map_err(RehearsalError::Loopback)?;
        let router = server::router(service.clone())
            .merge(crate::metrics::embedded::http::router(store.clone()));
        let serving = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        let time = SimTime::new(start_at);
        let (ended_tx, ended) = watch::channel(false);
        let pacer = Pacer {
            pace: Arc::new(watch::Sender::new(Pace {
                running,
                end_s: f64::INFINITY,
            })),
            ended,
            time: time.clone(),
        };
        let clock = {
            let keep = ((retention.as_secs_f64() / SCRAPE_S).ceil() as usize).max(1);
            let pace = Pacing {
                wall,
                service: service.clone(),
                store: store.clone(),
                scrapes: scrapes.clone(),
                time: time.clone(),
                epoch,
                speed,
                keep,
            };
            tokio::spawn(pace.run(pacer.pace.subscribe(), ended_tx, start_at))
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
            time,
            scenario: name,
            seed,
            pacer,
            tasks: vec![serving, clock],
        })
    }

    /// What a front end keeps of the running stage.
    pub fn live(&self) -> Live {
        Live {
            service: self.service.clone(),
            pacer: self.pacer.clone(),
            epoch: self.epoch,
            speed: self.speed,
            seed: self.seed,
            scenario: self.scenario.clone(),
            journal_in_sim_time: true,
        }
    }

    /// The rehearsal's pace (pause, resume, end).
    pub fn pacer(&self) -> Pacer {
        self.pacer.clone()
    }

    /// The base URL of the control API and of the Prometheus query API.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The simulated second now.
    pub fn now(&self) -> f64 {
        self.time.now()
    }

    /// The simulator's time as the console's clock.
    pub fn clock(&self) -> SimClock {
        SimClock::new(self.time.clone(), self.epoch)
    }

    /// A clock that reads the time of the latest scrape: readings taken at it fall exactly
    /// on the store's samples, so a crossing is dated at the scrape that showed it.
    pub fn scrape_clock(&self) -> LastScrape {
        LastScrape::new(
            self.scrapes.clone(),
            self.time.clone(),
            self.epoch,
            self.start_at,
        )
    }
}

/// A running stage as a front end (the console, the headless game day) holds it: the
/// simulator, its pace and its clock.
#[derive(Debug, Clone)]
pub struct Live {
    pub service: Arc<SimService>,
    pub pacer: Pacer,
    pub epoch: DateTime<Utc>,
    pub speed: f64,
    pub seed: u64,
    pub scenario: String,
    /// The journal is stamped on the simulated clock, so the simulator's events carry their
    /// own simulated second; false when the journal keeps the wall clock (a rehearsal on a
    /// real Prometheus, whose samples are in wall time).
    pub journal_in_sim_time: bool,
}

impl Live {
    /// The simulated time as a clock.
    pub fn clock(&self) -> SimClock {
        SimClock::new(self.pacer.time.clone(), self.epoch)
    }

    /// The simulator's own figures now, dated on the rehearsal's clock.
    pub fn figures(&self) -> crate::incident::event::RehearsalFigures {
        let (score, objective) = self
            .service
            .with_sim(|s| (s.score().clone(), s.scenario().objective_error_ratio));
        let at = |t: f64| super::clock::at(self.epoch, t);
        crate::incident::event::RehearsalFigures {
            objective_error_ratio: objective,
            fault_at: score.fault_at_s.map(at),
            recovered_at: score
                .fault_at_s
                .zip(score.time_to_recovery_s)
                .map(|(f, r)| at(f + r)),
            failed_requests: score.failed_logical_requests,
            duplicate_writes: score.duplicate_writes,
            minutes_over_objective: score.minutes_over_objective,
            speed: self.speed,
            seed: self.seed,
        }
    }

    /// Stop the rehearsal's time and record its end (with the simulator's figures) in its
    /// journal: whatever comes after it was added afterwards.
    pub async fn record_end(
        &self,
        journal: &crate::incident::JournalWriter,
    ) -> Result<crate::incident::Record, crate::incident::WriteError> {
        self.pacer.pause();
        journal
            .append(
                crate::incident::Source::Sim,
                "simulator",
                crate::incident::Event::RehearsalEnded {
                    scenario: self.scenario.clone(),
                    figures: self.figures(),
                },
            )
            .await
    }
}

/// The pacer task's state: advances the simulator to the time the wall clock and the speed
/// ask for, stopping at every simulated scrape and every sleeper's deadline on the way.
struct Pacing {
    /// The clock the speed is measured against: the wall clock.
    wall: crate::clock::SharedClock,
    service: Arc<SimService>,
    store: EmbeddedSource,
    scrapes: Arc<std::sync::Mutex<Vec<Scrape>>>,
    time: Arc<SimTime>,
    epoch: DateTime<Utc>,
    speed: f64,
    /// Scrapes of the simulator's record kept (as many as the store keeps samples).
    keep: usize,
}

impl Pacing {
    async fn run(self, mut pace: watch::Receiver<Pace>, ended: watch::Sender<bool>, start: f64) {
        let mut next_scrape = start + SCRAPE_S;
        // The simulated second and the wall instant the current stretch of running began at.
        let mut base = (self.time.now(), self.wall.now());
        loop {
            let p = *pace.borrow_and_update();
            if self.time.now() >= p.end_s {
                ended.send_replace(true);
            }
            if !p.running || self.time.now() >= p.end_s {
                // Paused or over: no time passes until the pace changes.
                if pace.changed().await.is_err() {
                    return;
                }
                base = (self.time.now(), self.wall.now());
                continue;
            }
            tokio::select! {
                _ = self.wall.sleep(CLOCK_TICK) => {}
                changed = pace.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    // Re-read the pace before moving on; what ran so far stands.
                    pace.mark_changed();
                    base = (self.time.now(), self.wall.now());
                    continue;
                }
            }
            let ran = self.wall.since(base.1).as_secs_f64();
            let target = (base.0 + ran * self.speed).min(p.end_s);
            self.advance(target, &mut next_scrape).await;
        }
    }

    /// Move the simulated time to `target`: scrape at every scrape interval on the way, and
    /// stop at every deadline a sleeper waits for so it wakes at its simulated second.
    async fn advance(&self, target: f64, next_scrape: &mut f64) {
        while self.time.now() < target {
            let now = self.time.now();
            let deadline = self.time.next_deadline().filter(|d| *d > now);
            let stop = deadline.map_or(target, |d| d.min(target)).min(*next_scrape);
            self.service.advance_to(stop);
            if stop >= *next_scrape {
                let (samples, t) = self.service.samples();
                self.store.ingest(unix(self.epoch, t), &samples);
                let scrape = self.service.with_sim(Scrape::of);
                if let Ok(mut s) = self.scrapes.lock() {
                    // As long a record as the store keeps samples, no longer.
                    if s.len() >= self.keep {
                        let excess = s.len() + 1 - self.keep;
                        s.drain(..excess);
                    }
                    s.push(scrape);
                }
                *next_scrape += SCRAPE_S;
            }
            self.time.publish(stop);
            if deadline.is_some_and(|d| d <= stop) {
                // Let the woken sleepers act at their second before time moves on.
                tokio::task::yield_now().await;
            }
        }
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}
