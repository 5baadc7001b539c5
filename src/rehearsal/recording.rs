//! A headless rehearsal is an incident, as the demo's is: its journal is stamped in simulated
//! time and records what the console would have recorded (the panels' threshold crossings, by
//! the recorder's rule, and the simulator's faults), the plays' runbook steps, and at the end
//! the panel snapshots, so `warroom export` drafts its postmortem afterwards with no simulator
//! or Prometheus left running.

use super::error::RehearsalError;
use super::stage::Stage;
use crate::clock::SharedClock;
use crate::config::Config;
use crate::incident::open::{self, Header, Which};
use crate::incident::store::{IncidentId, Store};
use crate::incident::vocabulary::Severity;
use crate::incident::{Event, JournalWriter, Record, Source};
use crate::recorder::panel_watch::{PanelReport, PanelWatch};
use crate::runbook::journal::describe;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

/// The lock role of a headless game day.
pub const ROLE: crate::incident::store::Role = crate::incident::store::Role::Gameday;

/// The fastest the panel watch polls, in wall time, whatever the speed: up to 50× it reads
/// every simulated scrape; faster, some scrapes go unread and a crossing may be dated one
/// scrape late.
const MIN_REFRESH: Duration = Duration::from_millis(100);
/// How long the recording parts get to finish the append in hand.
const STOP_WAIT: Duration = Duration::from_secs(5);
/// The longest the snapshots at the end may take.
const SNAPSHOT_WAIT: Duration = Duration::from_secs(20);

/// The rehearsal's incident while it is recorded.
pub struct Recording {
    pub id: IncidentId,
    pub writer: JournalWriter,
    /// What the journal held when the rehearsal began (a continued incident's records).
    pub records: Vec<Record>,
    store: Store,
    parts: Vec<JoinHandle<()>>,
    /// Set to true to stop the panel watch and the fault recording.
    stop: watch::Sender<bool>,
    /// The incident's socket: the team records through the rehearsal while it runs.
    serving: Option<crate::incident::serve::Serving>,
}

impl Recording {
    /// Opens incident `id` (continuing it) or a new one titled after the scenario (`title`, the
    /// scenario's own title; its service is recorded as the service affected), holds its
    /// lock, stamps its journal with the stage's clock, and starts recording the panels (from
    /// the stage's own store, in simulated time) and the simulator's faults.
    pub async fn start(
        data_dir: &std::path::Path,
        id: Option<&str>,
        config: &Config,
        stage: &Stage,
        title: &str,
    ) -> Result<Recording, RehearsalError> {
        let clock: SharedClock = Arc::new(stage.clock());
        let store = Store::new(data_dir);
        let which = id.map_or(Which::New(clock.now()), Which::Existing);
        let locked = open::lock(&store, which, ROLE)?;
        let new = locked.new;
        let header = Header {
            title: Some(format!("Rehearsal: {title}")),
            severity: Some(Severity::Sev2),
        };
        // Only a new incident takes the rehearsal's header.
        let header = if new { header } else { Header::default() };
        let actor = crate::incident::actor::current();
        let opened = open::begin(locked, header, &actor, Some(clock.clone())).await?;
        let (id, writer, records) = (opened.id, opened.writer, opened.records);
        if new && !stage.service_label.is_empty() {
            let services = Event::ServicesChanged {
                services: vec![stage.service_label.clone()],
            };
            if let Err(e) = writer.append(Source::Sim, &actor, services).await {
                eprintln!("NOT RECORDED (the journal is not durable): the service affected: {e}");
            }
        }
        let serving = match crate::incident::serve::serve(writer.clone(), None, Default::default())
        {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("warning: {e}; other responders cannot record through this game day");
                None
            }
        };
        let (stop, stopped) = watch::channel(false);
        let tz = config.timezone;
        let (tx, mut rx) = mpsc::unbounded_channel::<PanelReport>();
        let watch = PanelWatch {
            source: Arc::new(stage.store.clone()),
            panels: super::panels(config),
            refresh: scrape_wall(stage.speed),
            clock: Arc::new(stage.scrape_clock()),
        };
        let mut parts = vec![tokio::spawn(watch.run(
            writer.clone(),
            records.clone(),
            tx,
            Some,
        ))];
        // Status lines on stderr (stdout is for the report). Stopping drops the receiver, which
        // is what ends the watch.
        let mut stopping = stopped.clone();
        parts.push(tokio::spawn(async move {
            loop {
                let r = tokio::select! {
                    r = rx.recv() => r,
                    _ = stopping.wait_for(|s| *s) => None,
                };
                let Some(r) = r else { break };
                match r {
                    PanelReport::Recorded(r) => line(&r, tz),
                    PanelReport::NotRecorded { event, error } => {
                        eprintln!("NOT RECORDED (the journal is not durable): {event}: {error}");
                    }
                    PanelReport::Refused { event, error } => {
                        eprintln!(
                            "not recorded (refused; the journal is durable): {event}: {error}"
                        );
                    }
                    PanelReport::PanelFailed { panel, error } => {
                        eprintln!("panel \"{panel}\": query refused: {error}");
                    }
                    PanelReport::SourceDown { .. } | PanelReport::SourceUp => {}
                }
            }
        }));
        parts.push(tokio::spawn(super::faults::record_faults(
            stage.service.clone(),
            stage.time.clone(),
            Some(stage.epoch),
            writer.clone(),
            move |r| match r {
                Ok(r) => line(&r, tz),
                Err(e) => eprintln!("NOT RECORDED (the journal is not durable): a fault: {e}"),
            },
            move || !*stopped.borrow(),
        )));
        Ok(Recording {
            id,
            writer,
            records,
            store,
            parts,
            stop,
            serving,
        })
    }

    /// Records the rehearsal's end (its time stops there), stops recording, takes the panel
    /// snapshots from the stage's store over the incident, and releases the lock. Returns how
    /// many snapshots were written.
    pub async fn finish(mut self, config: &Config, stage: &Stage) -> Result<usize, RehearsalError> {
        // The time stops first: what happened up to here is recorded, then the end.
        stage.pacer().pause();
        let _ = self.stop.send(true);
        self.serving = None;
        for part in self.parts.drain(..) {
            let abort = part.abort_handle();
            if tokio::time::timeout(STOP_WAIT, part).await.is_err() {
                abort.abort();
            }
        }
        if let Err(e) = stage.live().record_end(&self.writer).await {
            eprintln!("NOT RECORDED (the journal is not durable): the rehearsal's end: {e}");
        }
        let panels = super::panels(config);
        let take = crate::postmortem::take_snapshots(
            &self.store,
            &self.id,
            &stage.store,
            &panels,
            super::stage::SCRAPE_S,
        );
        let written = match tokio::time::timeout(SNAPSHOT_WAIT, take).await {
            Ok(Ok(n)) => n,
            Ok(Err(e)) => {
                eprintln!("warroom gameday: the panel snapshots were not taken: {e}");
                0
            }
            Err(_) => {
                eprintln!("warroom gameday: the panel snapshots took too long and were skipped");
                0
            }
        };
        Ok(written)
    }
}

/// One simulated scrape interval in wall time at `speed`, not below [`MIN_REFRESH`].
fn scrape_wall(speed: f64) -> Duration {
    Duration::from_secs_f64(super::stage::SCRAPE_S / speed.max(f64::MIN_POSITIVE)).max(MIN_REFRESH)
}

/// A recorded event as a status line, stamped with its (simulated) time.
fn line(r: &Record, tz: chrono_tz::Tz) {
    eprintln!(
        "[{}] {} {}",
        r.time.with_timezone(&tz).format("%H:%M:%S"),
        r.source,
        crate::sanitize::line(&describe(&r.kind))
    );
}
