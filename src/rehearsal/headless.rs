//! `warroom gameday SCENARIO --headless`: a rehearsal with no one at the console. The stage
//! runs at its speed, the rehearsal is recorded as an incident in simulated time
//! ([`super::recording`]), the plays start at their moments ([`super::plays`]), a progress line
//! goes to stderr every five simulated minutes, and at the end the report holds the score,
//! each play's outcome and the simulator's own record.

use super::clock::{at, epoch};
use super::error::RehearsalError;
use super::plays::{self, Play};
use super::recording::Recording;
use super::stage::{Pacer, Scrape, Stage, StageSpec};
use crate::runbook::executor::Control;
use crate::runbook::report::RunOutcome;
use crate::sim::Scenario;
use chrono::{DateTime, NaiveTime, Utc};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// A play waiting for its moment or running: its report so far, its run's control once it
/// started, and its task (none when it falls outside the rehearsal).
struct PlayTask {
    report: Arc<Mutex<PlayReport>>,
    control: Arc<Mutex<Option<tokio::sync::watch::Sender<Control>>>>,
    handle: Option<tokio::task::JoinHandle<()>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Simulated seconds between two progress lines.
const PROGRESS_S: f64 = 300.0;
/// How long runbooks still running at the end get to record their interruption.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// What a headless rehearsal is asked to do (the command line's `gameday --headless`).
#[derive(Debug, Clone)]
pub struct Options {
    pub scenario: String,
    pub seed: u64,
    pub speed: f64,
    /// `RUNBOOK@WHEN`, as given.
    pub plays: Vec<String>,
    /// How much simulated time to run, from five minutes before the first fault.
    pub run_for: Option<Duration>,
    pub listen: Option<String>,
    pub retention: Duration,
    /// Record into this incident instead of a new one.
    pub incident: Option<String>,
    /// Gates and targets read this Prometheus (which must scrape the stage) instead of the
    /// embedded store.
    pub prometheus: Option<String>,
}

/// What a headless rehearsal reports, as printed with `--json`.
#[derive(Debug, serde::Serialize)]
pub struct Report {
    pub scenario: String,
    pub seed: u64,
    pub speed: f64,
    pub simulated_from_s: f64,
    pub simulated_to_s: f64,
    /// The simulator's own score.
    pub score: crate::sim::score::Score,
    /// The team's response, read from the incident's journal.
    pub response: super::score::Response,
    pub plays: Vec<PlayReport>,
    /// The incident the rehearsal was recorded in (`warroom export` drafts its postmortem).
    pub incident: String,
    /// Panel snapshots written beside its journal.
    pub snapshots: usize,
    /// Series and samples held by the embedded store at the end.
    pub store_series: usize,
    pub store_samples: usize,
    /// The process's peak resident memory (VmHWM), when the system tells it.
    pub peak_rss_bytes: Option<u64>,
    /// The simulator's own record at every scrape of the rehearsal.
    pub simulator: Vec<Scrape>,
    /// The time simulated second 0 stands for (the journal's and the snapshots' clock).
    pub epoch: DateTime<Utc>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct PlayReport {
    pub runbook: String,
    pub at_s: f64,
    pub started_at_s: Option<f64>,
    /// How the run ended (succeeded, failed, aborted); `None` when it did not run or was
    /// stopped without an answer.
    pub outcome: Option<String>,
    /// The exit code `warroom runbook run` gives that outcome.
    pub exit_code: Option<i32>,
}

/// Run a headless rehearsal of `args.scenario` with `config`, recording it under `data_dir`.
pub async fn run(
    config: &crate::config::Config,
    data_dir: &std::path::Path,
    args: Options,
) -> Result<Report, RehearsalError> {
    let config = config.clone();
    let scenario =
        Scenario::load(&args.scenario).map_err(|d| RehearsalError::Scenario(d.to_string()))?;
    let schedule = schedule_of(&scenario, &args.plays)?;
    let name = scenario.name.clone();
    let title = scenario.title.clone();
    let duration = scenario.duration_s;
    let epoch = epoch(&scenario.start_clock, config.timezone, Utc::now());
    let stage = Stage::start(StageSpec {
        scenario,
        seed: args.seed,
        speed: args.speed,
        epoch,
        listen: args.listen.as_deref(),
        retention: args.retention,
    })
    .await?;
    let end = match args.run_for {
        Some(d) => stage.start_at + d.as_secs_f64(),
        None => duration.max(stage.start_at),
    };
    announce(&stage, config.timezone, &name, args.speed, end, &schedule);

    // The rehearsal is an incident, recorded in simulated time like the demo's.
    let recording =
        Recording::start(data_dir, args.incident.as_deref(), &config, &stage, &title).await?;
    eprintln!(
        "warroom gameday: recording incident {} in simulated time",
        recording.id
    );
    let stage_url = stage.url();
    let source = runbooks_source(&config, args.prometheus.as_deref(), &stage, &stage_url)?;
    let setup = super::runbooks::setup(&config, &stage_url, &stage.service_label);
    let clock: crate::clock::SharedClock = Arc::new(stage.clock());
    let pacer = stage.pacer();
    pacer.set_end(end);
    let cast = Cast {
        setup: &setup,
        source: &source,
        writer: &recording.writer,
        clock: &clock,
        stage: &stage,
        tz: config.timezone,
    };
    // Each play waits on the simulated clock for its moment, so it starts at its simulated
    // second at any speed.
    let plays: Vec<PlayTask> = (schedule.iter())
        .map(|(t, p)| cast.play(&p.runbook, *t, end))
        .collect();
    let progress = start_progress(&stage, config.timezone);
    until_end(&pacer).await;
    progress.abort();
    let reports = stop_plays(plays).await;
    let report = finish(&args, &name, &config, data_dir, &stage, recording, reports).await?;
    drop(stage);
    Ok(report)
}

/// The plays of `given` (`RUNBOOK@WHEN`) at their simulated seconds, earliest first.
fn schedule_of(scenario: &Scenario, given: &[String]) -> Result<Vec<(f64, Play)>, RehearsalError> {
    // `seed` stands for the seed incident's own response, at its moments.
    let plays = given
        .iter()
        .flat_map(|p| match p.as_str() {
            "seed" => scenario.response.clone(),
            _ => vec![p.clone()],
        })
        .map(|p| Play::parse(&p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(RehearsalError::Play)?;
    let start_clock = NaiveTime::parse_from_str(&scenario.start_clock, "%H:%M")
        .map_err(|_| RehearsalError::StartClock(scenario.start_clock.clone()))?;
    let mut schedule = Vec::new();
    for p in plays {
        let t = p
            .at(start_clock, scenario.fault_at())
            .map_err(RehearsalError::Play)?;
        schedule.push((t, p));
    }
    schedule.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(schedule)
}

/// Simulated second `t` of the rehearsal on `epoch` as a wall-clock time in `tz`.
fn clock_text(epoch: DateTime<Utc>, tz: chrono_tz::Tz, t: f64) -> String {
    at(epoch, t)
        .with_timezone(&tz)
        .format("%H:%M:%S")
        .to_string()
}

/// Says on stderr what is rehearsed, when and where, and which plays fall outside it.
fn announce(
    stage: &Stage,
    tz: chrono_tz::Tz,
    name: &str,
    speed: f64,
    end: f64,
    schedule: &[(f64, Play)],
) {
    let clock_text = |t: f64| clock_text(stage.epoch, tz, t);
    eprintln!(
        "warroom gameday: {name} at {speed}x from {} to {}, rehearsal on {}",
        clock_text(stage.start_at),
        clock_text(end),
        stage.url()
    );
    for (t, p) in schedule {
        if *t < stage.start_at || *t > end {
            eprintln!(
                "warroom gameday: {} at {} is outside the rehearsal and will not run",
                p.runbook,
                clock_text(*t)
            );
        }
    }
}

/// What gates and targets read: the real Prometheus when there is one, else the embedded
/// store.
fn runbooks_source(
    config: &crate::config::Config,
    prometheus: Option<&str>,
    stage: &Stage,
    stage_url: &str,
) -> Result<Arc<dyn crate::metrics::Source>, RehearsalError> {
    Ok(match prometheus {
        Some(url) => {
            eprintln!("warroom gameday: runbooks read {url}; it must scrape {stage_url}/metrics");
            let mut c = config.clone();
            c.prometheus.url = Some(url.trim_end_matches('/').to_string());
            crate::metrics::from_config::from_config(&c)?
        }
        None => Arc::new(stage.store.clone()),
    })
}

/// What every play runs with: the rehearsal's runbook setup, source, journal and clocks.
struct Cast<'a> {
    setup: &'a crate::runbook::setup::RunbookSetup,
    source: &'a Arc<dyn crate::metrics::Source>,
    writer: &'a crate::incident::writer::JournalWriter,
    clock: &'a crate::clock::SharedClock,
    stage: &'a Stage,
    tz: chrono_tz::Tz,
}

impl Cast<'_> {
    /// Schedules `runbook` at simulated second `t` (it never starts when `t` falls outside the
    /// rehearsal, which ends at `end`).
    fn play(&self, runbook: &str, t: f64, end: f64) -> PlayTask {
        let report = Arc::new(Mutex::new(PlayReport {
            runbook: runbook.to_string(),
            at_s: t,
            started_at_s: None,
            outcome: None,
            exit_code: None,
        }));
        let control = Arc::new(Mutex::new(None));
        let runs = t >= self.stage.start_at && t <= end;
        let handle = runs.then(|| {
            let (report, control) = (report.clone(), control.clone());
            let (setup, source, writer) =
                (self.setup.clone(), self.source.clone(), self.writer.clone());
            let (clock, time, tz) = (self.clock.clone(), self.stage.time.clone(), self.tz);
            let (runbook, epoch) = (runbook.to_string(), self.stage.epoch);
            tokio::spawn(async move {
                time.sleep_until(t).await;
                let now = time.now();
                let stamp = clock_text(epoch, tz, now);
                eprintln!("[{stamp}] play: {runbook}");
                lock(&report).started_at_s = Some(now);
                match plays::start(&runbook, &setup, source, writer, clock, tz) {
                    Ok(r) => {
                        *lock(&control) = Some(r.control.clone());
                        let outcome = r.task.await.unwrap_or(RunOutcome::Failed);
                        let stamp = clock_text(epoch, tz, time.now());
                        eprintln!("[{stamp}] {runbook} ended: {}", outcome.word());
                        let mut rep = lock(&report);
                        rep.outcome = Some(outcome.word().to_string());
                        rep.exit_code = Some(i32::from(outcome.exit_code()));
                    }
                    Err(e) => {
                        eprintln!("[{stamp}] {runbook} did not start: {e}");
                        let mut rep = lock(&report);
                        rep.outcome = Some("did not start".into());
                        rep.exit_code = Some(2);
                    }
                }
            })
        });
        PlayTask {
            report,
            control,
            handle,
        }
    }
}

/// Starts the progress line on stderr, every [`PROGRESS_S`] simulated seconds.
fn start_progress(stage: &Stage, tz: chrono_tz::Tz) -> tokio::task::JoinHandle<()> {
    let (time, epoch) = (stage.time.clone(), stage.epoch);
    let store = stage.store.clone();
    let start = stage.start_at;
    tokio::spawn(async move {
        let mut next = start + PROGRESS_S;
        loop {
            time.sleep_until(next).await;
            let stamp = clock_text(epoch, tz, time.now());
            eprintln!("[{stamp}] {}", progress_line(&store));
            next += PROGRESS_S;
        }
    })
}

/// Waits for the rehearsal's end, or for a signal, which pauses it where it is.
async fn until_end(pacer: &Pacer) {
    let mut signals = crate::signals::Signals::new();
    tokio::select! {
        _ = pacer.ended() => {}
        signal = signals.next() => {
            eprintln!("warroom gameday: {signal}; scoring what ran so far");
            pacer.pause();
        }
    }
}

/// Each play's report, once runbooks still running are stopped between actions, as an
/// operator's abort would.
async fn stop_plays(plays: Vec<PlayTask>) -> Vec<PlayReport> {
    let mut reports = Vec::new();
    for play in plays {
        if let Some(handle) = play.handle
            && !handle.is_finished()
        {
            let control = lock(&play.control).clone();
            match control {
                Some(c) => {
                    let _ = c.send(Control::Abort);
                    let abort = handle.abort_handle();
                    if tokio::time::timeout(STOP_GRACE, handle).await.is_err() {
                        abort.abort();
                    }
                }
                None => handle.abort(),
            }
            eprintln!(
                "warroom gameday: {} was stopped at the end of the rehearsal",
                lock(&play.report).runbook
            );
        }
        let report = lock(&play.report).clone();
        reports.push(report);
    }
    reports
}

/// Ends the recording and reports the rehearsal on `stage`: its score, the team's response
/// (read back from the journal), each play's outcome and the simulator's own record.
async fn finish(
    args: &Options,
    name: &str,
    config: &crate::config::Config,
    data_dir: &std::path::Path,
    stage: &Stage,
    recording: Recording,
    plays: Vec<PlayReport>,
) -> Result<Report, RehearsalError> {
    let recording_id = recording.id.clone();
    let incident = recording.id.to_string();
    let snapshots = recording.finish(config, stage).await?;
    let response = match crate::incident::Store::new(data_dir).read(&recording_id) {
        Ok(journal) => super::score::response(&journal.records),
        Err(e) => {
            eprintln!("warroom gameday: cannot read the journal back for the score: {e}");
            super::score::response(&[])
        }
    };
    let simulated_to_s = stage.now();
    let score = stage.service.with_sim(|s| s.score().clone());
    let (store_series, store_samples) = stage.store.size();
    Ok(Report {
        scenario: name.to_string(),
        seed: args.seed,
        speed: args.speed,
        simulated_from_s: stage.start_at,
        simulated_to_s,
        score,
        response,
        plays,
        incident,
        snapshots,
        store_series,
        store_samples,
        peak_rss_bytes: peak_rss_bytes(),
        simulator: stage.scrapes.lock().map(|s| s.clone()).unwrap_or_default(),
        epoch: stage.epoch,
    })
}

/// The signals a rehearsal is judged by, from the embedded store (the same queries as the
/// default dashboard's error-ratio and retry panels).
fn progress_line(store: &crate::metrics::embedded::EmbeddedSource) -> String {
    let q = |query: &str| {
        store
            .instant_now(&crate::metrics::InstantQuery {
                query: query.into(),
                time: None,
            })
            .ok()
            .and_then(|a| {
                a.series
                    .first()
                    .and_then(super::super::metrics::series::Series::last)
                    .map(|p| p.v)
            })
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
