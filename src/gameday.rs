//! Game days: a simulated outage staged in-process (the simulator, the embedded store and one
//! loopback server for both), and `warroom gameday SCENARIO --headless`, a rehearsal with no
//! one at the console: the plays given on the command line run as real `warroom runbook run`
//! processes against the stage, and the score is printed at the end.

pub mod play;

use crate::app::demo::{CONTROL_ADDR, HISTORY_S, SCRAPE_S, SimClock, at, epoch, score_text};
use crate::metrics::embedded::EmbeddedSource;
use crate::sim::{Scenario, Sim, SimService, server};
use chrono::{DateTime, NaiveTime, Utc};
use color_eyre::eyre::{WrapErr, bail, eyre};
use play::Play;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;
use tokio::task::JoinHandle;

/// How often the headless loop looks at the simulated clock (wall time).
const POLL: Duration = Duration::from_millis(50);
/// How often the stage's clock advances the simulator (wall time).
const CLOCK_TICK: Duration = Duration::from_millis(20);
/// Simulated seconds between two progress lines.
const PROGRESS_S: f64 = 300.0;
/// How long runbooks still running at the end get to record their interruption.
const STOP_GRACE: Duration = Duration::from_secs(10);

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
            let (service, store) = (service.clone(), store.clone());
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
    /// Series and samples held by the embedded store at the end.
    store_series: usize,
    store_samples: usize,
    /// The process's peak resident memory (VmHWM), when the system tells it.
    peak_rss_bytes: Option<u64>,
}

#[derive(Debug, serde::Serialize)]
struct PlayReport {
    runbook: String,
    at_s: f64,
    started_at_s: Option<f64>,
    /// The runbook process's exit code; `None` when it did not start or was stopped.
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

    // Gates and targets read the real Prometheus when there is one, else the embedded store.
    let stage_url = stage.url();
    let metrics_url = args.prometheus.as_deref().unwrap_or(&stage_url);
    if let Some(url) = &args.prometheus {
        eprintln!("warroom gameday: runbooks read {url}; it must scrape {stage_url}/metrics");
    }
    let exe = std::env::current_exe().wrap_err("cannot find warroom's own executable")?;
    let mut reports: Vec<PlayReport> = schedule
        .iter()
        .map(|(t, p)| PlayReport {
            runbook: p.runbook.clone(),
            at_s: *t,
            started_at_s: None,
            exit_code: None,
        })
        .collect();
    let mut running: Vec<(usize, tokio::process::Child, JoinHandle<()>)> = Vec::new();
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
                let mut cmd = tokio::process::Command::new(&exe);
                cmd.arg("--data-dir").arg(data_dir);
                if let Some(c) = config_path {
                    cmd.arg("--config").arg(c);
                }
                cmd.args(["runbook", "run", &p.runbook, "--yes", "--prometheus"])
                    .arg(metrics_url)
                    .arg("--var")
                    .arg(format!("base_url={}", stage.url()));
                // Waits and gate intervals on the simulated clock, as they would be at 1x.
                for var in play::simulated_time_vars(Path::new("runbooks"), &p.runbook, args.speed)
                {
                    cmd.arg("--var").arg(var);
                }
                if let Some(id) = &args.incident {
                    cmd.args(["--incident", id]);
                }
                cmd.stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .kill_on_drop(true);
                eprintln!("[{}] play: {}", clock_text(now), p.runbook);
                reports[i].started_at_s = Some(now);
                match cmd.spawn() {
                    Ok(mut child) => {
                        let relay = relay_output(
                            &mut child,
                            p.runbook.clone(),
                            stage.service.clone(),
                            stage.epoch,
                            config.timezone,
                        );
                        running.push((i, child, relay));
                    }
                    Err(e) => eprintln!("[{}] {} did not start: {e}", clock_text(now), p.runbook),
                }
            }
        }
        let mut still = Vec::new();
        for (i, mut child, relay) in running.drain(..) {
            match child.try_wait() {
                Ok(Some(status)) => {
                    let _ = relay.await;
                    reports[i].exit_code = status.code();
                    eprintln!(
                        "[{}] {} ended: {}",
                        clock_text(now),
                        reports[i].runbook,
                        describe_exit(status.code())
                    );
                }
                _ => still.push((i, child, relay)),
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
    for (i, mut child, relay) in running {
        if let Some(pid) = child.id() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        match tokio::time::timeout(STOP_GRACE, child.wait()).await {
            Ok(Ok(status)) => reports[i].exit_code = status.code(),
            _ => {
                let _ = child.kill().await;
            }
        }
        let _ = relay.await;
        eprintln!(
            "warroom gameday: {} was stopped at the end of the rehearsal",
            reports[i].runbook
        );
    }
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
        store_series,
        store_samples,
        peak_rss_bytes: peak_rss_bytes(),
    };
    drop(stage);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("warroom gameday: {name}\n{}", score_text(&report.score));
        for p in &report.plays {
            println!(
                "  play {:<22} {}",
                p.runbook,
                match (p.started_at_s, p.exit_code) {
                    (None, _) => "did not run".to_string(),
                    (Some(_), code) => describe_exit(code),
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

/// Print a runbook process's output as it comes, each line stamped with the simulated time.
fn relay_output(
    child: &mut tokio::process::Child,
    name: String,
    service: Arc<SimService>,
    epoch: DateTime<Utc>,
    tz: chrono_tz::Tz,
) -> JoinHandle<()> {
    let out = child.stdout.take();
    let err = child.stderr.take();
    tokio::spawn(async move {
        let stamp = move |line: &str| {
            let t = at(epoch, service.with_sim(Sim::now)).with_timezone(&tz);
            eprintln!(
                "[{}] {name} | {}",
                t.format("%H:%M:%S"),
                crate::sanitize::line(line)
            );
        };
        let mut out = out.map(|o| tokio::io::BufReader::new(o).lines());
        let mut err = err.map(|e| tokio::io::BufReader::new(e).lines());
        // Bounded by the child: both streams end when it exits.
        loop {
            let line = tokio::select! {
                l = async { match out.as_mut() { Some(o) => o.next_line().await, None => std::future::pending().await } } => {
                    match l { Ok(Some(l)) => Some(l), _ => { out = None; None } }
                }
                l = async { match err.as_mut() { Some(e) => e.next_line().await, None => std::future::pending().await } } => {
                    match l { Ok(Some(l)) => Some(l), _ => { err = None; None } }
                }
            };
            if let Some(l) = line {
                stamp(&l);
            }
            if out.is_none() && err.is_none() {
                break;
            }
        }
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

/// A `warroom runbook run` exit code in words.
fn describe_exit(code: Option<i32>) -> String {
    match code {
        Some(0) => "completed (exit 0)".into(),
        Some(1) => "failed (exit 1)".into(),
        Some(3) => "aborted (exit 3)".into(),
        Some(c) => format!("ended with exit {c}"),
        None => "stopped by a signal".into(),
    }
}
