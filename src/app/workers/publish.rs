//! Publishing from the console (`P`): a dialog asks where and in which form, then the
//! publication runs off the UI loop in its own task, through the incident's outbox, exactly as
//! `warroom publish` does. The result is a notice, and a record on the timeline (the console
//! holds the incident, so it appends [`deliver::timeline_event`] itself).
//!
//! GitHub being down slows nothing: every call has a timeout, the task retries with
//! [`Backoff`] while the failure is transient, and what is not done stays in the outbox, which
//! the console completes when it opens the incident again.

use crate::app::msg::Msg;
use crate::backoff::Backoff;
use crate::config::RepoName;
use crate::github::deliver::{self, DeliveryError};
use crate::github::publish::Target;
use crate::github::{Github, Outbox};
use crate::incident::{IncidentId, JournalWriter, Source, Store};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;

/// What the publish task reports.
#[derive(Debug, Clone, PartialEq)]
pub enum PublishReport {
    /// Every pending publication is done: one summary line each.
    Done(Vec<String>),
    /// Not done; tried again in `retry_in`, or not by itself (`None`: the outbox keeps it for
    /// the next `P` or the next time the incident is opened).
    Failed {
        error: String,
        retry_in: Option<Duration>,
    },
}

/// What the console needs to publish its incident.
#[derive(Debug, Clone)]
pub struct PublishSetup {
    /// The process's one client.
    pub gh: Arc<Github>,
    pub store: Store,
    pub id: IncidentId,
    pub repo: RepoName,
    pub base_branch: Option<String>,
    /// How often a transient failure is tried again, and how many times.
    pub retry: Backoff,
    /// One delivery at a time: two would both work on the same pending job.
    lock: Arc<tokio::sync::Mutex<()>>,
}

/// Retries of a publication that GitHub could not take: from a minute to ten, six times.
pub const RETRY: Backoff = Backoff {
    base: Duration::from_secs(60),
    cap: Duration::from_secs(600),
    max_attempts: 6,
};

impl PublishSetup {
    pub fn new(
        gh: Arc<Github>,
        store: Store,
        id: IncidentId,
        repo: RepoName,
        base_branch: Option<String>,
        retry: Backoff,
    ) -> PublishSetup {
        PublishSetup {
            gh,
            store,
            id,
            repo,
            base_branch,
            retry,
            lock: Arc::default(),
        }
    }

    /// Whether the outbox holds publications not done yet (unreadable counts as none).
    pub fn has_pending(&self) -> bool {
        Outbox::new(&self.store.dir(&self.id))
            .pending()
            .is_ok_and(|p| !p.is_empty())
    }
}

/// Spawns the publish task: queue a publication as `target` (when given), then deliver every
/// pending one, retrying transient failures; reports come back on `tx`.
pub fn spawn(
    setup: PublishSetup,
    target: Option<Target>,
    journal: Option<JournalWriter>,
    tx: UnboundedSender<Msg>,
) {
    tokio::spawn(async move {
        let report = run(&setup, target, journal.as_ref(), &tx).await;
        let _ = tx.send(Msg::Published(report));
    });
}

async fn run(
    setup: &PublishSetup,
    target: Option<Target>,
    journal: Option<&JournalWriter>,
    tx: &UnboundedSender<Msg>,
) -> PublishReport {
    let failed = |error: String| PublishReport::Failed {
        error,
        retry_in: None,
    };
    let _one = setup.lock.lock().await;
    let outbox = Outbox::new(&setup.store.dir(&setup.id));
    if let Some(target) = target {
        let exported = setup
            .store
            .exports_dir(&setup.id)
            .join(crate::github::publication::POSTMORTEM_FILE);
        if !exported.exists() {
            return failed("there is no exported draft yet: press E to export, then P".into());
        }
        if let Err(e) = outbox.queue(&setup.repo.to_string(), target, setup.gh.timer().now()) {
            return failed(e.to_string());
        }
    }
    let mut done = Vec::new();
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        let deliveries = match deliver::deliver_pending(
            &setup.store,
            &setup.id,
            &setup.gh,
            setup.base_branch.as_deref(),
        )
        .await
        {
            Ok(d) => d,
            Err(e) => return failed(e.to_string()),
        };
        let mut errors = Vec::new();
        let mut transient = true;
        for d in deliveries {
            match d.result {
                Ok(outcome) => {
                    done.push(format!("{}: {}", d.job.repo, outcome.summary()));
                    if !d.on_timeline
                        && let Some(journal) = journal
                    {
                        let event = deliver::timeline_event(&d.job, &outcome);
                        match journal.append(Source::Github, deliver::ACTOR, event).await {
                            Ok(r) => {
                                let _ = tx.send(Msg::Journaled(Box::new(r)));
                            }
                            Err(e) if e.is_refusal() => {
                                let _ = tx.send(Msg::Refused(e.to_string()));
                            }
                            Err(e) => {
                                let _ = tx.send(Msg::Recorded(Err(e.to_string())));
                            }
                        }
                    }
                }
                Err(e) => {
                    transient &= is_transient(&e);
                    errors.push(e.to_string());
                }
            }
        }
        if errors.is_empty() {
            return PublishReport::Done(done);
        }
        let error = errors.join("; ");
        if !transient || !setup.retry.may_retry(attempt) {
            return failed(error);
        }
        // At least the base: full jitter alone may say "now" to a GitHub that is down.
        let wait = setup.retry.base + setup.retry.delay(attempt - 1, &mut rand::rng());
        tracing::warn!(%error, retry_in_ms = wait.as_millis() as u64, "publish not finished");
        let _ = tx.send(Msg::Published(PublishReport::Failed {
            error,
            retry_in: Some(wait),
        }));
        tokio::select! {
            // The console closed: what is not done waits in the outbox for the next one.
            _ = tx.closed() => return failed("the console closed".into()),
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

/// Whether trying again later may succeed (GitHub unreachable, slow, limited, or in doubt).
fn is_transient(e: &DeliveryError) -> bool {
    use crate::github::publish::PublishError;
    match e {
        DeliveryError::Publish(PublishError::Github(g)) => g.is_transient(),
        DeliveryError::Publish(PublishError::InDoubt { .. }) => true,
        _ => false,
    }
}
