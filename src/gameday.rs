//! Game days: a simulated outage staged in-process (the simulator, the embedded store and one
//! loopback server for both), and `warroom gameday SCENARIO --headless`, a rehearsal with no
//! one at the console: the rehearsal is recorded as an incident in simulated time ([`record`]),
//! the plays given on the command line run the runbook executor against the stage ([`run`]),
//! and the score is printed at the end.

pub mod play;
pub mod record;
pub mod run;

use crate::app::demo::{CONTROL_ADDR, HISTORY_S, SCRAPE_S, SimClock, at, epoch, score_text};
use crate::metrics::embedded::EmbeddedSource;
use crate::runbook::executor::Control;
use crate::runbook::record::RunOutcome;
use crate::sim::{Scenario, Sim, SimService, server};
use chrono::{DateTime, NaiveTime, Utc};
use color_eyre::eyre::{WrapErr, bail, eyre};
use play::Play;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// How often the headless loop looks at the simulated clock (wall time).
const POLL: Duration = Duration::from_millis(50);
/// How often the stage's clock advances the simulator (wall time).
const CLOCK_TICK: Duration = Duration::from_millis(20);
/// Simulated seconds between two progress lines.
const PROGRESS_S: f64 = 300.0;
/// How long runbooks still running at the end get to record their interruption.
const STOP_GRACE: Duration = Duration::from_secs(10);

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
    /// Attempts answered with an error by any instance since the start (issue 17: the error
    /// ratio the instances' counters give, without the gateway's refusals).
    pub errors: f64,
    /// Logical requests that failed for good since the start (issue 17: the draft's failed
    /// user requests are checked against it).
    pub logical_failed: f64,
    /// Duplicate writes since the start.
    pub duplicates: f64,
}

impl Scrape {
    fn of(sim: &Sim) -> Scrape {
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

/// See [`Stage::scrape_clock`].
#[derive(Debug)]
pub struct LastScrape {
    scrapes: Arc<std::sync::Mutex<Vec<Scrape>>>,
    epoch: DateTime<Utc>,
    start_at: f64,
}

impl crate::clock::Clock for LastScrape {
    fn now(&self) -> DateTime<Utc> {
        let t = self
            .scrapes
            .lock()
            .ok()
            .and_then(|s| s.last().map(|s| s.t))
            .unwrap_or(self.start_at);
        at(self.epoch, t)
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
        if !(speed.is_finite() && speed > 0.0 && speed <= 1000.0) {
            bail!("--speed must be above 0 and at most 1000, not \"{speed}\"");
        }
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
        LastScrape {
            scrapes: self.scrapes.clone(),
            epoch: self.epoch,
            start_at: self.start_at,
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

fn unix(epoch: DateTime<Utc>, t: f64) -> f64 {
    epoch.timestamp_millis() as f64 / 1000.0 + t
}

/// What `--headless` reports, as printed with `--json`.
#[derive(Debug, serde::Serialize)]
struct Report {
    scenario: String,
    seed: u64,
    speed: f64,
    simulated_from_s: f64,
    simulated_to_s: f64,
    score: crate::sim::score::Score,
    plays: Vec<PlayReport>,
    /// The incident the rehearsal was recorded in (`warroom export` drafts its postmortem).
    incident: String,
    /// Panel snapshots written beside its journal.
    snapshots: usize,
    /// Series and samples held by the embedded store at the end.
    store_series: usize,
    store_samples: usize,
    /// The process's peak resident memory (VmHWM), when the system tells it.
    peak_rss_bytes: Option<u64>,
    /// The simulator's own record at every scrape of the rehearsal.
    simulator: Vec<Scrape>,
    /// The time simulated second 0 stands for (the journal's and the snapshots' clock).
    epoch: DateTime<Utc>,
}

#[derive(Debug, serde::Serialize)]
struct PlayReport {
    runbook: String,
    at_s: f64,
    started_at_s: Option<f64>,
    /// How the run ended (succeeded, failed, aborted); `None` when it did not run or was
    /// stopped without an answer.
    outcome: Option<String>,
    /// The exit code `warroom runbook run` gives that outcome.
    exit_code: Option<i32>,
}

/// `warroom gameday SCENARIO --headless`.
pub async fn headless(
    config_path: Option<&std::path::Path>,
    data_dir: &std::path::Path,
    args: crate::cli::GamedayArgs,
) -> color_eyre::Result<ExitCode> {
    let config = crate::config::Config::load(config_path)?;
    let scenario = Scenario::load(&args.scenario).map_err(|d| eyre!("{d}"))?;
    let plays = args
        .plays
        .iter()
        .map(|p| Play::parse(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| eyre!(e))?;
    let start_clock = NaiveTime::parse_from_str(&scenario.start_clock, "%H:%M").map_err(|_| {
        eyre!(
            "the scenario's start_clock \"{}\" is not HH:MM",
            scenario.start_clock
        )
    })?;
    let mut schedule = Vec::new();
    for p in plays {
        let t = p
            .at(start_clock, scenario.fault_at())
            .map_err(|e| eyre!(e))?;
        schedule.push((t, p));
    }
    schedule.sort_by(|a, b| a.0.total_cmp(&b.0));
    let name = scenario.name.clone();
    let duration = scenario.duration_s;
    let epoch = epoch(&scenario.start_clock, config.timezone, Utc::now());
    let stage = Stage::start(
        scenario,
        args.seed,
        args.speed,
        epoch,
        args.listen.as_deref(),
        args.retention,
    )
    .await?;
    let end = match args.run_for {
        Some(d) => stage.start_at + d.as_secs_f64(),
        None => duration.max(stage.start_at),
    };
    let clock_text = |t: f64| {
        at(stage.epoch, t)
            .with_timezone(&config.timezone)
            .format("%H:%M:%S")
            .to_string()
    };
    eprintln!(
        "warroom gameday: {name} at {}x from {} to {}, rehearsal on {}",
        args.speed,
        clock_text(stage.start_at),
        clock_text(end),
        stage.url()
    );
    for (t, p) in &schedule {
        if *t < stage.start_at || *t > end {
            eprintln!(
                "warroom gameday: {} at {} is outside the rehearsal and will not run",
                p.runbook,
                clock_text(*t)
            );
        }
    }

    // The rehearsal is an incident, recorded in simulated time like the demo's.
    let recording =
        record::Recording::start(data_dir, args.incident.as_deref(), &config, &stage, &name)
            .await?;
    eprintln!(
        "warroom gameday: recording incident {} in simulated time",
        recording.id
    );
    // Gates and targets read the real Prometheus when there is one, else the embedded store.
    let stage_url = stage.url();
    let source: Arc<dyn crate::metrics::Source> = match &args.prometheus {
        Some(url) => {
            eprintln!("warroom gameday: runbooks read {url}; it must scrape {stage_url}/metrics");
            let mut c = config.clone();
            c.prometheus.url = Some(url.trim_end_matches('/').to_string());
            crate::app::source::from_config(&c)?
        }
        None => Arc::new(stage.store.clone()),
    };
    let setup =
        crate::app::demo::demo_runbooks(&config, &stage_url, &stage.service_label, args.speed);
    let clock: crate::clock::SharedClock = Arc::new(stage.clock());
    let mut reports: Vec<PlayReport> = schedule
        .iter()
        .map(|(t, p)| PlayReport {
            runbook: p.runbook.clone(),
            at_s: *t,
            started_at_s: None,
            outcome: None,
            exit_code: None,
        })
        .collect();
    let mut running: Vec<(usize, run::Running)> = Vec::new();
    let mut next_progress = stage.start_at + PROGRESS_S;
    let mut tick = tokio::time::interval(POLL);
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = &mut interrupted => {
                eprintln!("warroom gameday: interrupted; scoring what ran so far");
                break;
            }
        }
        let now = stage.now();
        for (i, (t, p)) in schedule.iter().enumerate() {
            if reports[i].started_at_s.is_none() && *t <= now && *t >= stage.start_at && *t <= end {
                eprintln!("[{}] play: {}", clock_text(now), p.runbook);
                reports[i].started_at_s = Some(now);
                match run::start(
                    &p.runbook,
                    &setup,
                    source.clone(),
                    recording.writer.clone(),
                    clock.clone(),
                    config.timezone,
                ) {
                    Ok(r) => running.push((i, r)),
                    Err(e) => {
                        eprintln!("[{}] {} did not start: {e}", clock_text(now), p.runbook);
                        reports[i].outcome = Some("did not start".into());
                        reports[i].exit_code = Some(2);
                    }
                }
            }
        }
        let mut still = Vec::new();
        for (i, r) in running.drain(..) {
            if r.task.is_finished() {
                let outcome = r.task.await.unwrap_or(RunOutcome::Failed);
                reports[i].outcome = Some(format!("{outcome:?}").to_lowercase());
                reports[i].exit_code = Some(i32::from(outcome.exit_code()));
                eprintln!(
                    "[{}] {} ended: {outcome:?}",
                    clock_text(now),
                    reports[i].runbook
                );
            } else {
                still.push((i, r));
            }
        }
        running = still;
        if now >= next_progress {
            next_progress += PROGRESS_S;
            eprintln!("[{}] {}", clock_text(now), progress_line(&stage));
        }
        if now >= end {
            break;
        }
    }
    // Runbooks still running are stopped between actions, as an operator's abort would.
    for (i, r) in running {
        let _ = r.control.send(Control::Abort);
        let abort = r.task.abort_handle();
        match tokio::time::timeout(STOP_GRACE, r.task).await {
            Ok(Ok(outcome)) => {
                reports[i].outcome = Some(format!("{outcome:?}").to_lowercase());
                reports[i].exit_code = Some(i32::from(outcome.exit_code()));
            }
            _ => abort.abort(),
        }
        eprintln!(
            "warroom gameday: {} was stopped at the end of the rehearsal",
            reports[i].runbook
        );
    }
    let incident = recording.id.to_string();
    let snapshots = recording.finish(&config, &stage).await?;
    let simulated_to_s = stage.now();
    let score = stage.service.with_sim(|s| s.score().clone());
    let (store_series, store_samples) = stage.store.size();
    let report = Report {
        scenario: name.clone(),
        seed: args.seed,
        speed: args.speed,
        simulated_from_s: stage.start_at,
        simulated_to_s,
        score,
        plays: reports,
        incident,
        snapshots,
        store_series,
        store_samples,
        peak_rss_bytes: peak_rss_bytes(),
        simulator: stage.scrapes.lock().map(|s| s.clone()).unwrap_or_default(),
        epoch: stage.epoch,
    };
    drop(stage);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("warroom gameday: {name}\n{}", score_text(&report.score));
        println!(
            "  incident {} ({} panel snapshots): warroom export {}",
            report.incident, report.snapshots, report.incident
        );
        for p in &report.plays {
            println!(
                "  play {:<22} {}",
                p.runbook,
                match (p.started_at_s, &p.outcome) {
                    (None, _) => "did not run".to_string(),
                    (Some(_), Some(outcome)) => outcome.clone(),
                    (Some(_), None) => "stopped".to_string(),
                }
            );
        }
    }
    let failed = report
        .plays
        .iter()
        .any(|p| p.started_at_s.is_some() && p.exit_code != Some(0));
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The signals a rehearsal is judged by, from the embedded store (the same queries as the
/// default dashboard's error-ratio and retry panels).
fn progress_line(stage: &Stage) -> String {
    let q = |query: &str| {
        stage
            .store
            .instant_now(&crate::metrics::InstantQuery {
                query: query.into(),
                time: None,
            })
            .ok()
            .and_then(|a| a.series.first().and_then(|s| s.last()).map(|p| p.v))
    };
    let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.1} %", v * 100.0));
    let errors =
        q("sum(rate(app_requests_total{code=~\"5..\"}[1m])) / sum(rate(app_requests_total[1m]))");
    let pool = q("max(db_pool_connections_in_use / db_pool_connections_max)");
    let attempts =
        q("sum(rate(app_requests_total[1m])) / sum(rate(app_logical_requests_total[1m]))");
    format!(
        "error ratio {} · pool {} · attempts/request {}",
        pct(errors),
        pct(pool),
        attempts.map_or("-".into(), |v| format!("{v:.2}"))
    )
}

/// Peak resident memory of this process (VmHWM), on Linux.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
