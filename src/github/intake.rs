//! The changes intake: one task that polls the [`ChangesFeed`] slowly (one request at a time,
//! through the process's one [`Github`] client), records each new change once through the
//! incident's [`JournalWriter`] as a timeline event with its link, and reports to whoever
//! spawned it (the console's loop, `warroom record`'s status lines) on a channel. The console
//! and the recorder spawn the same task, as they do the alert intake.
//!
//! What is already on the timeline is not recorded again: the feed's seen set is rebuilt from
//! the journal when the task starts. A failed poll is tried again after the interval plus a
//! capped exponential [`Backoff`] with full jitter. The task ends when its report channel
//! closes, finishing the append in hand first.

use super::changes::{Change, ChangesFeed, Window};
use super::client::Github;
use crate::backoff::Backoff;
use crate::config::{GithubConfig, RepoName};
use crate::incident::{JournalWriter, Record, Source};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;

/// The actor of a change whose author GitHub did not say.
pub const ACTOR: &str = "github";

/// The longest wait between two polls while GitHub keeps failing.
const BACKOFF_CAP: Duration = Duration::from_secs(15 * 60);

/// What the intake tells whoever spawned it.
#[derive(Debug, Clone)]
pub enum ChangesReport {
    /// A change is recorded (synced).
    Recorded(Record),
    /// A change could not be recorded; it is tried again after the next poll.
    NotRecorded { change: String, error: String },
    /// GitHub did not answer the poll; it is asked again in `retry_in`.
    Down { error: String, retry_in: Duration },
    /// GitHub answers (again).
    Up,
}

/// The repositories to watch and how often.
#[derive(Debug, Clone)]
pub struct ChangesIntake {
    gh: Arc<Github>,
    repos: Vec<RepoName>,
    lookback: Duration,
    interval: Duration,
}

impl ChangesIntake {
    pub fn new(
        gh: Arc<Github>,
        repos: Vec<RepoName>,
        lookback: Duration,
        interval: Duration,
    ) -> ChangesIntake {
        ChangesIntake {
            gh,
            repos,
            lookback,
            interval,
        }
    }

    /// The intake `[github]` asks for, on the process's client; `None` when nothing is watched.
    pub fn from_config(cfg: &GithubConfig, gh: Arc<Github>) -> Option<ChangesIntake> {
        (!cfg.watch.is_empty())
            .then(|| ChangesIntake::new(gh, cfg.watch.clone(), cfg.lookback, cfg.poll))
    }

    /// The repositories watched.
    pub fn repos(&self) -> &[RepoName] {
        &self.repos
    }

    /// Spawns the intake on the current tokio runtime. `records` is what the journal holds so
    /// far (changes on it are not recorded again, and its first record starts the incident's
    /// window); each report goes to `tx` as `wrap` makes it (`None`: not wanted). The task ends
    /// when `tx` closes.
    pub fn spawn<T: Send + 'static>(
        self,
        journal: JournalWriter,
        records: &[Record],
        tx: UnboundedSender<T>,
        wrap: fn(ChangesReport) -> Option<T>,
    ) -> JoinHandle<()> {
        let mut feed = ChangesFeed::new(self.gh.clone(), self.repos.clone(), self.lookback);
        feed.remember(records);
        let window = window_of(records, self.gh.timer().now());
        tokio::spawn(self.run(journal, feed, window, tx, wrap))
    }

    async fn run<T: Send + 'static>(
        self,
        journal: JournalWriter,
        mut feed: ChangesFeed,
        window: Window,
        tx: UnboundedSender<T>,
        wrap: fn(ChangesReport) -> Option<T>,
    ) {
        let report = |r: ChangesReport| {
            if let Some(m) = wrap(r) {
                let _ = tx.send(m);
            }
        };
        let backoff = Backoff {
            base: self.interval,
            cap: BACKOFF_CAP.max(self.interval),
            max_attempts: u32::MAX,
        };
        let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::from_os_rng();
        let mut failures = 0u32;
        let mut up = None;
        loop {
            let polled = tokio::select! {
                _ = tx.closed() => return,
                p = feed.poll_once(window) => p,
            };
            let wait = match polled {
                Ok(changes) => {
                    failures = 0;
                    if up != Some(true) {
                        tracing::info!(repos = self.repos.len(), "changes feed up");
                        report(ChangesReport::Up);
                    }
                    up = Some(true);
                    record_all(&journal, &mut feed, changes, &report).await;
                    self.interval
                }
                Err(e) => {
                    let wait = self.interval + backoff.delay(failures, &mut rng);
                    failures = failures.saturating_add(1);
                    tracing::warn!(error = %e, retry_in_ms = wait.as_millis() as u64, "changes feed failed");
                    up = Some(false);
                    report(ChangesReport::Down {
                        error: e.to_string(),
                        retry_in: wait,
                    });
                    wait
                }
            };
            tokio::select! {
                _ = tx.closed() => return,
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }
}

/// The incident's window as the journal has it: from its first record, open-ended.
pub fn window_of(records: &[Record], now: chrono::DateTime<chrono::Utc>) -> Window {
    Window {
        start: records.first().map_or(now, |r| r.time),
        end: None,
    }
}

/// Appends `changes` in order; one that fails is forgotten by the feed so the next poll brings
/// it again, and so are the rest (the order stays the true one).
async fn record_all(
    journal: &JournalWriter,
    feed: &mut ChangesFeed,
    changes: Vec<Change>,
    report: &impl Fn(ChangesReport),
) {
    let mut pending = changes.into_iter();
    for change in pending.by_ref() {
        let actor = change.who.as_deref().unwrap_or(ACTOR);
        match journal
            .append(Source::Github, actor, change.event.clone())
            .await
        {
            Ok(record) => {
                tracing::info!(seq = record.seq, "change recorded");
                report(ChangesReport::Recorded(record));
            }
            Err(e) => {
                tracing::error!(error = %e, "change not recorded");
                report(ChangesReport::NotRecorded {
                    change: crate::incident::timeline::describe(&change.event),
                    error: e.to_string(),
                });
                feed.forget(&change.key);
                break;
            }
        }
    }
    for change in pending {
        feed.forget(&change.key);
    }
}
