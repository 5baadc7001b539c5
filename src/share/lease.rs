//! The executor lease: one responder at a time runs mutating steps. The lease is the key
//! `executor` of the incident's key-value bucket, taken with compare-and-set (create, then
//! update on the revision held), renewed while held, and gone when its holder has not renewed
//! it for the bucket's age limit (30 s by default): the server drops the entry, and the next
//! responder to ask takes it.

use super::engine::ShareError;
use crate::incident::IncidentId;
use async_nats::jetstream::{self, kv, stream};
use std::time::Duration;

/// How long a lease lasts without renewal.
pub const TIMEOUT: Duration = Duration::from_secs(30);
const KEY: &str = "executor";

/// The incident's lease bucket, made by whoever comes first.
pub async fn bucket(
    js: &jetstream::Context,
    incident: &IncidentId,
    timeout: Duration,
    replicas: usize,
) -> Result<kv::Store, ShareError> {
    kv_bucket(js, &format!("warroom-lease-{incident}"), timeout, replicas).await
}

/// A key-value bucket of one value per key whose entries age out after `max_age` (never when
/// zero), made by whoever comes first. Its stream is made here as the client's
/// `create_key_value` makes it, because that call first asks for the account's info, whose
/// answer from a 2.9 server the client cannot read.
pub(super) async fn kv_bucket(
    js: &jetstream::Context,
    name: &str,
    max_age: Duration,
    replicas: usize,
) -> Result<kv::Store, ShareError> {
    js.get_or_create_stream(stream::Config {
        name: format!("KV_{name}"),
        subjects: vec![format!("$KV.{name}.>")],
        max_messages_per_subject: 1,
        max_age,
        allow_rollup: true,
        deny_delete: true,
        allow_direct: true,
        discard: stream::DiscardPolicy::New,
        num_replicas: replicas.max(1),
        ..stream::Config::default()
    })
    .await
    .map_err(ShareError::engine)?;
    js.get_key_value(name).await.map_err(ShareError::engine)
}

/// A lease held: renew it at least once a timeout, release it when the run is done.
#[derive(Debug)]
pub struct Lease {
    store: kv::Store,
    holder: String,
    revision: u64,
}

/// The answer to asking for the lease.
#[derive(Debug)]
pub enum Taken {
    Ours(Box<Lease>),
    /// Someone else runs: who, so the run can be proposed to them.
    Held {
        by: String,
    },
}

/// Asks for the lease as `holder` (a responder's name). Exactly one of several asking at once
/// gets it: the server's create is a compare-and-set on "no entry".
pub async fn take(store: &kv::Store, holder: &str) -> Result<Taken, ShareError> {
    for _ in 0..3 {
        match store.create(KEY, holder.to_owned().into()).await {
            Ok(revision) => {
                return Ok(Taken::Ours(Box::new(Lease {
                    store: store.clone(),
                    holder: holder.to_owned(),
                    revision,
                })));
            }
            Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => {}
            Err(e) => return Err(ShareError::engine(e)),
        }
        // Held, unless it expired between the two questions: then ask again.
        if let Some(entry) = store.entry(KEY).await.map_err(ShareError::engine)?
            && entry.operation == kv::Operation::Put
        {
            let by = crate::sanitize::line(&String::from_utf8_lossy(&entry.value)).into_owned();
            return Ok(Taken::Held { by });
        }
    }
    Err(ShareError::Engine(
        "the lease changed hands three times while asked".into(),
    ))
}

impl Lease {
    /// Renews the lease (compare-and-set on the revision held); fails when it was lost.
    pub async fn renew(&mut self) -> Result<(), ShareError> {
        self.revision = self
            .store
            .update(KEY, self.holder.clone().into(), self.revision)
            .await
            .map_err(|e| ShareError::Engine(format!("the executor lease was lost: {e}")))?;
        Ok(())
    }

    /// Gives the lease back at once (only if still ours).
    pub async fn release(self) -> Result<(), ShareError> {
        self.store
            .delete_expect_revision(KEY, Some(self.revision))
            .await
            .map_err(ShareError::engine)
    }

    pub fn holder(&self) -> &str {
        &self.holder
    }
}

/// The lease asked for one run of a runbook that changes something.
#[derive(Debug)]
pub enum ForRun {
    /// Ours, renewed in the background until released.
    Held(Holding),
    /// Someone else runs: who (the run is not started; propose it to them).
    Busy { by: String },
}

/// A lease held for a run: renewed every third of [`TIMEOUT`] until [`Holding::release`];
/// `lost` says why when a renewal fails (another may take it: the run must stop acting).
#[derive(Debug)]
pub struct Holding {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<Option<Lease>>>,
    pub lost: tokio::sync::watch::Receiver<Option<String>>,
}

/// Who holds a lease this process takes: the person and the machine ("ana on laptop-3").
pub fn holder_name() -> String {
    format!(
        "{} on {}",
        crate::incident::actor::current(),
        crate::incident::store::this_host()
    )
}

/// Asks `engine` for the executor lease of `incident` as `holder`, for one run.
pub async fn for_run(
    engine: &super::Engine,
    incident: &IncidentId,
    holder: &str,
) -> Result<ForRun, ShareError> {
    let js = engine.connect().await?;
    let store = bucket(&js, incident, TIMEOUT, engine.replicas).await?;
    Ok(match take(&store, holder).await? {
        Taken::Ours(lease) => ForRun::Held(Holding::renewing(*lease, TIMEOUT / 3)),
        Taken::Held { by } => ForRun::Busy { by },
    })
}

impl Holding {
    fn renewing(mut lease: Lease, every: Duration) -> Holding {
        let (stop, mut stopped) = tokio::sync::oneshot::channel();
        let (lost_tx, lost) = tokio::sync::watch::channel(None);
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = &mut stopped => return Some(lease),
                    () = tokio::time::sleep(every) => {}
                }
                if let Err(e) = lease.renew().await {
                    let _ = lost_tx.send(Some(e.to_string()));
                    return None;
                }
            }
        });
        Holding {
            stop: Some(stop),
            task: Some(task),
            lost,
        }
    }

    /// Stops renewing and gives the lease back at once (when it is still ours); a lease
    /// never given back lapses after [`TIMEOUT`].
    pub async fn release(mut self) -> Result<(), ShareError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.task.take() {
            Some(task) => match task.await {
                Ok(Some(lease)) => lease.release().await,
                _ => Ok(()),
            },
            None => Ok(()),
        }
    }
}

impl Drop for Holding {
    /// Dropped without a release (a panic, a quit): the renewals stop, the lease lapses.
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}
