//! Delivering the outbox: a publication is queued (synced) before any request, then every
//! pending job of the incident is run; each object GitHub confirms is recorded at once, and the
//! job ends `done` or `failed` (and stays pending). The console can call [`deliver_pending`] on
//! a slow timer; `warroom publish` calls [`queue_and_deliver`].
//!
//! The result goes on the incident's timeline only when no console or recorder holds the
//! incident (its lock): then this process appends one record itself. Otherwise the result is
//! in the outbox only, for the console to record.

use super::client::Github;
use super::outbox::{Entry, Job, Object, Outbox, OutboxError};
use super::publication::{Publication, PublicationError};
use super::publish::{Outcome, PublishError, Publisher, Target};
use crate::config::RepoName;
use crate::incident::event::{Event, Source};
use crate::incident::store::{IncidentId, Store, StoreError};

/// What delivering one job came to.
#[derive(Debug)]
pub struct Delivery {
    pub job: Job,
    pub result: Result<Outcome, DeliveryError>,
    /// Whether the result was recorded on the timeline (false: a console holds the incident).
    pub on_timeline: bool,
}

/// Why a job was not delivered (it stays pending unless it could not be read at all).
#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    #[error(transparent)]
    Publish(#[from] PublishError),
    #[error(transparent)]
    Publication(#[from] PublicationError),
    #[error(transparent)]
    Outbox(#[from] OutboxError),
    #[error("the outbox names repository \"{0}\", which is not owner/name; it was skipped")]
    BadRepo(String),
    #[error(transparent)]
    Identity(#[from] super::identity::IdentityError),
}

/// Queues a publication of `id` to `repo` as `target`, then delivers every pending job.
pub async fn queue_and_deliver(
    store: &Store,
    id: &IncidentId,
    gh: &Github,
    repo: &RepoName,
    target: Target,
    base_branch: Option<&str>,
) -> Result<Vec<Delivery>, OutboxError> {
    let outbox = Outbox::new(&store.dir(id));
    outbox.queue(&repo.to_string(), target, gh.timer().now())?;
    deliver_pending(store, id, gh, base_branch).await
}

/// Runs every pending job of the incident, oldest first, one at a time.
pub async fn deliver_pending(
    store: &Store,
    id: &IncidentId,
    gh: &Github,
    base_branch: Option<&str>,
) -> Result<Vec<Delivery>, OutboxError> {
    let outbox = Outbox::new(&store.dir(id));
    let mut out = Vec::new();
    for job in outbox.pending()? {
        let result = deliver(store, id, gh, &outbox, &job, base_branch).await;
        let now = gh.timer().now();
        match &result {
            Ok(outcome) => {
                for older in outbox.superseded_by(&job)? {
                    outbox.append(&Entry::Done {
                        job: older,
                        at: now,
                        summary: format!("superseded by job {}", job.id),
                    })?;
                }
                outbox.append(&Entry::Done {
                    job: job.id,
                    at: now,
                    summary: outcome.summary(),
                })?;
            }
            Err(e) => outbox.append(&Entry::Failed {
                job: job.id,
                at: now,
                error: e.to_string(),
            })?,
        }
        let on_timeline = match &result {
            Ok(outcome) => record(store, id, &job, outcome).await,
            Err(_) => false,
        };
        out.push(Delivery {
            job,
            result,
            on_timeline,
        });
    }
    Ok(out)
}

async fn deliver(
    store: &Store,
    id: &IncidentId,
    gh: &Github,
    outbox: &Outbox,
    job: &Job,
    base_branch: Option<&str>,
) -> Result<Outcome, DeliveryError> {
    let repo: RepoName = job
        .repo
        .parse()
        .map_err(|_| DeliveryError::BadRepo(job.repo.clone()))?;
    // The incident's global id first (an old journal gets one now): the markers carry it.
    let (s, i, now) = (store.clone(), id.clone(), gh.timer().now());
    tokio::task::spawn_blocking(move || super::identity::ensure(&s, &i, now))
        .await
        .map_err(|e| super::identity::IdentityError::Journal {
            id: id.to_string(),
            reason: e.to_string(),
        })??;
    // The export and the journal as they are now: an action item edited since the job was
    // queued is published as edited.
    let publication = Publication::load(store, id)?;
    let known = outbox.known(&job.repo)?;
    let (job_id, repo_text) = (job.id, job.repo.clone());
    let outbox_for_record = outbox.clone();
    let clock = gh.timer().clone();
    let mut record = move |key: &str, obj: &Object| {
        outbox_for_record
            .append(&Entry::Object {
                job: job_id,
                at: clock.now(),
                repo: repo_text.clone(),
                key: key.to_string(),
                number: obj.number,
                url: obj.url.clone(),
            })
            .map_err(|e| e.to_string())
    };
    let mut publisher = Publisher::new(gh, &repo, known, &mut record);
    publisher.base_branch = base_branch.map(String::from);
    Ok(publisher.run(&publication, job.target).await?)
}

/// The timeline record of a finished publication (a note from the `github` source). The
/// console, which holds the incident, appends it through its own `JournalWriter` for every
/// [`Delivery`] that is not `on_timeline`.
pub fn timeline_event(job: &Job, outcome: &Outcome) -> Event {
    Event::note(format!(
        "Published to {} ({}): {}",
        job.repo,
        match job.target {
            Target::Pr => "pull request",
            Target::Issue => "issue",
        },
        outcome.summary()
    ))
}

/// The actor of publication records.
pub const ACTOR: &str = "warroom publish";

/// Appends the result to the timeline when nobody else holds the incident; false when a
/// console or recorder holds it (the result is then in the outbox only). The one append takes
/// the lock, syncs and lets go, like `warroom incident note`, on a blocking thread so the fsync
/// never stalls the async runtime. (A `JournalWriter` would release the lock only when its
/// thread ends, a moment later, and a second publication right after would find it held.)
async fn record(store: &Store, id: &IncidentId, job: &Job, outcome: &Outcome) -> bool {
    let (store, id, event) = (store.clone(), id.clone(), timeline_event(job, outcome));
    let append = move || match store.open_incident(&id, crate::incident::store::Role::Publish) {
        Ok((mut incident, _)) => incident
            .journal
            .append(Source::Github, ACTOR, event)
            .is_ok(),
        Err(StoreError::Held { .. }) => false,
        Err(e) => {
            tracing::warn!(error = %e, "publish result not recorded on the timeline");
            false
        }
    };
    tokio::task::spawn_blocking(append).await.unwrap_or(false)
}
