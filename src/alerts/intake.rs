//! The alert intake: one task that polls each alert source in turn (one request at a time),
//! records what fires and resolves through the incident's [`JournalWriter`], and reports to
//! whoever spawned it (the console's loop, `warroom record`'s status lines) on a channel.
//!
//! A source that fails is asked again later, with capped exponential backoff and full jitter
//! ([`Backoff`]) on top of the interval, honouring `Retry-After`; the other sources go on. The
//! task ends when its report channel closes, finishing the append in hand first.

use super::{AlertBoard, AlertEndpoint, source_name};
use crate::backoff::Backoff;
use crate::config::Config;
use crate::incident::event::{AlertSource, Event};
use crate::incident::{JournalWriter, Record, Source};
use crate::metrics::prometheus::Auth;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// What the intake tells whoever spawned it.
#[derive(Debug, Clone)]
pub enum AlertReport {
    /// An alert event is recorded (synced).
    Recorded(Record),
    /// An alert event could not be recorded; it is tried again after the next poll.
    NotRecorded { event: String, error: String },
    /// A source did not answer; it is asked again in `retry_in`.
    SourceDown {
        source: AlertSource,
        error: String,
        retry_in: Duration,
    },
    /// A source answers (again), reporting `firing` alerts.
    SourceUp { source: AlertSource, firing: usize },
}

/// The sources to poll and how often.
#[derive(Debug, Clone)]
pub struct AlertIntake {
    endpoints: Vec<AlertEndpoint>,
    interval: Duration,
}

struct Polled {
    endpoint: AlertEndpoint,
    due: Instant,
    failures: u32,
    up: Option<bool>,
}

/// Why the alert intake the config asks for cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum IntakeConfigError {
    #[error(transparent)]
    Source(#[from] crate::metrics::from_config::SourceConfigError),
    #[error(transparent)]
    Endpoint(#[from] super::endpoint::EndpointError),
}

impl AlertIntake {
    pub fn new(endpoints: Vec<AlertEndpoint>, interval: Duration) -> AlertIntake {
        AlertIntake {
            endpoints,
            interval,
        }
    }

    /// The intake `config` asks for: Prometheus's alerts from the configured Prometheus (unless
    /// `[alerts] prometheus = false`) and Alertmanager's when `[alertmanager] url` is set.
    /// `None` when there is nothing to poll.
    pub fn from_config(config: &Config) -> Result<Option<AlertIntake>, IntakeConfigError> {
        let mut endpoints = Vec::new();
        let timeout = config.alerts.timeout;
        if config.alerts.prometheus
            && let Some(url) = &config.prometheus.url
        {
            let opts = crate::metrics::from_config::client_options(config)?;
            endpoints.push(AlertEndpoint::new(
                AlertSource::Prometheus,
                url,
                opts.auth,
                &opts.headers,
                timeout,
            )?);
        }
        if let Some(url) = &config.alertmanager {
            endpoints.push(AlertEndpoint::new(
                AlertSource::Alertmanager,
                url,
                Auth::None,
                &[],
                timeout,
            )?);
        }
        Ok((!endpoints.is_empty()).then(|| AlertIntake::new(endpoints, config.alerts.interval)))
    }

    /// The sources polled, in order.
    pub fn sources(&self) -> Vec<AlertSource> {
        self.endpoints.iter().map(|e| e.source).collect()
    }

    /// Spawns the intake on the current tokio runtime. `records` is what the journal holds so
    /// far (what is already recorded as firing is not recorded again); each report goes to
    /// `tx` as `wrap` makes it (`None`: not wanted). The task ends when `tx` closes.
    pub fn spawn<T: Send + 'static>(
        self,
        journal: JournalWriter,
        records: &[Record],
        tx: UnboundedSender<T>,
        wrap: fn(AlertReport) -> Option<T>,
    ) -> JoinHandle<()> {
        let board = AlertBoard::from_records(records, &self.sources());
        tokio::spawn(self.run(journal, board, tx, wrap))
    }

    /// The intake's loop (see [`AlertIntake::spawn`]).
    pub async fn run<T: Send + 'static>(
        self,
        journal: JournalWriter,
        mut board: AlertBoard,
        tx: UnboundedSender<T>,
        wrap: fn(AlertReport) -> Option<T>,
    ) {
        let report = |r: AlertReport| {
            if let Some(m) = wrap(r) {
                let _ = tx.send(m);
            }
        };
        let backoff = Backoff {
            base: self.interval,
            cap: Duration::from_secs(300).max(self.interval),
            max_attempts: u32::MAX,
        };
        let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::from_os_rng();
        let start = Instant::now();
        let mut sources: Vec<Polled> = self
            .endpoints
            .into_iter()
            .map(|endpoint| Polled {
                endpoint,
                due: start,
                failures: 0,
                up: None,
            })
            .collect();
        loop {
            let Some(next) = sources.iter().map(|s| s.due).min() else {
                return;
            };
            tokio::select! {
                _ = tx.closed() => return,
                _ = tokio::time::sleep_until(next) => {}
            }
            for s in sources.iter_mut().filter(|s| s.due <= Instant::now()) {
                if tx.is_closed() {
                    return;
                }
                let source = s.endpoint.source;
                let answer = tokio::select! {
                    _ = tx.closed() => return,
                    a = s.endpoint.poll(chrono::Utc::now()) => a,
                };
                match answer {
                    Ok(alerts) => {
                        s.failures = 0;
                        s.due = Instant::now() + self.interval;
                        let firing = alerts.iter().filter(|a| !a.ended).count();
                        if s.up != Some(true) {
                            tracing::info!(
                                source = source_name(source),
                                firing,
                                "alerts source up"
                            );
                            report(AlertReport::SourceUp { source, firing });
                        }
                        s.up = Some(true);
                        let events = board.observe(source, &alerts);
                        record_all(&journal, &mut board, source, events, &report).await;
                    }
                    Err(e) => {
                        let wait = self.interval
                            + backoff
                                .delay(s.failures, &mut rng)
                                .max(e.retry_after().unwrap_or_default());
                        s.failures = s.failures.saturating_add(1);
                        s.due = Instant::now() + wait;
                        tracing::warn!(
                            source = source_name(source),
                            error = %e,
                            retry_in_ms = wait.as_millis() as u64,
                            "alerts source failed"
                        );
                        s.up = Some(false);
                        report(AlertReport::SourceDown {
                            source,
                            error: e.to_string(),
                            retry_in: wait,
                        });
                    }
                }
            }
        }
    }
}

/// Appends `events` in order; one that fails is taken back off the board so the next answer
/// brings it again, and the rest wait for that answer too (the order stays the true one).
async fn record_all(
    journal: &JournalWriter,
    board: &mut AlertBoard,
    source: AlertSource,
    events: Vec<Event>,
    report: &impl Fn(AlertReport),
) {
    let mut pending = events.into_iter();
    for event in pending.by_ref() {
        match journal
            .append(Source::Alert, source_name(source), event.clone())
            .await
        {
            Ok(record) => {
                tracing::info!(seq = record.seq, "alert recorded");
                report(AlertReport::Recorded(record));
            }
            Err(e) => {
                tracing::error!(error = %e, "alert not recorded");
                report(AlertReport::NotRecorded {
                    event: crate::incident::timeline::describe(&event),
                    error: e.to_string(),
                });
                board.undo(source, &event);
                break;
            }
        }
    }
    for event in pending {
        board.undo(source, &event);
    }
}
