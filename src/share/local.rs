//! This machine's journal and the engine, for the one-shot commands: sharing what this
//! machine wrote, reading everyone's records merged, listing the engine's incidents. Every
//! question to the engine is bounded by [`ANSWER_WAIT`]: a command never hangs on an engine
//! that does not answer, it says so ([`ShareError::Unreachable`]).

use super::engine::{Engine, ShareError};
use super::sync::{ensure_stream, follow, incidents, publish_backlog};
use super::view::View;
use super::wire::{self, Shared, WriterId};
use crate::incident::{Event, IncidentId, Record, Store};
use async_nats::jetstream::{self, context::GetStreamErrorKind, stream};
use futures::StreamExt;
use std::time::Duration;

/// How long a command waits for the engine's answers before it calls it unreachable.
pub const ANSWER_WAIT: Duration = Duration::from_secs(5);

/// Connects and runs `what` on the engine for at most `wait`. A failure while the client is
/// not connected, or no answer in time, is [`ShareError::Unreachable`].
pub async fn within<T, F>(
    engine: &Engine,
    wait: Duration,
    what: impl FnOnce(jetstream::Context) -> F,
) -> Result<T, ShareError>
where
    F: Future<Output = Result<T, ShareError>>,
{
    let js = engine.connect().await?;
    let unreachable = |reason: String| ShareError::Unreachable {
        url: engine.url.clone(),
        reason,
    };
    let connected = |js: &jetstream::Context| {
        js.client().connection_state() == async_nats::connection::State::Connected
    };
    match tokio::time::timeout(wait, what(js.clone())).await {
        Ok(Err(ShareError::Engine(_))) if !connected(&js) => {
            Err(unreachable("not connected".into()))
        }
        Ok(done) => done,
        Err(_) if !connected(&js) => Err(unreachable("not connected".into())),
        Err(_) => Err(unreachable(format!("no answer in {} s", wait.as_secs()))),
    }
}

/// The incident's stream if the engine has it (`None`: nobody shared it yet).
async fn existing(
    js: &jetstream::Context,
    incident: &IncidentId,
) -> Result<Option<stream::Stream>, ShareError> {
    match js.get_stream(wire::stream_name(incident)).await {
        Ok(s) => Ok(Some(s)),
        Err(e) => match e.kind() {
            GetStreamErrorKind::JetStream(j)
                if j.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND =>
            {
                Ok(None)
            }
            _ => Err(ShareError::engine(e)),
        },
    }
}

/// This machine's records of the incident (none when it is not here) and its writer.
fn ours(store: &Store, id: &IncidentId) -> Result<Option<(WriterId, Vec<Record>)>, ShareError> {
    let dir = store.dir(id);
    if !dir.is_dir() {
        return Ok(None);
    }
    let writer = WriterId::for_incident(&dir).map_err(|source| ShareError::File {
        path: dir.join("writer-id"),
        source,
    })?;
    let records = store.read(id).map_err(ShareError::engine)?.records;
    Ok(Some((writer, records)))
}

/// Publishes what this machine recorded of `id` and the engine does not hold yet; returns
/// how many records were sent.
pub async fn share_journal(
    engine: &Engine,
    store: &Store,
    id: &IncidentId,
) -> Result<usize, ShareError> {
    let Some((writer, records)) = ours(store, id)? else {
        return Ok(0);
    };
    within(engine, ANSWER_WAIT, |js| async move {
        let stream = ensure_stream(&js, id, engine.replicas).await?;
        publish_backlog(&js, &stream, id, &writer, &records).await
    })
    .await
}

/// True when the engine holds incident `id` (someone shared it).
pub async fn on_engine(engine: &Engine, id: &IncidentId) -> Result<bool, ShareError> {
    within(engine, ANSWER_WAIT, |js| async move {
        Ok(existing(&js, id).await?.is_some())
    })
    .await
}

/// Every responder's records of `id`: this machine's journal merged with everything the
/// engine holds, in the view's order. Refused messages are in the view's `refused`.
pub async fn everyone(engine: &Engine, store: &Store, id: &IncidentId) -> Result<View, ShareError> {
    let mut view = View::default();
    if let Some((writer, records)) = ours(store, id)? {
        for record in records {
            view.merge(Ok(Shared {
                writer: writer.clone(),
                record,
            }));
        }
    }
    within(engine, ANSWER_WAIT * 2, |js| async move {
        let Some(mut stream) = existing(&js, id).await? else {
            return Ok(view);
        };
        let last = stream
            .info()
            .await
            .map_err(ShareError::engine)?
            .state
            .last_sequence;
        if last == 0 {
            return Ok(view);
        }
        let mut messages = Box::pin(follow(&stream, id, 0).await?);
        while let Some(m) = messages.next().await {
            let m = m?;
            view.merge(m.shared);
            if m.seq >= last {
                break;
            }
        }
        Ok(view)
    })
    .await
}

/// An incident on the engine: its id, and its title when its first record opens it.
#[derive(Debug, Clone, PartialEq)]
pub struct OnEngine {
    pub id: IncidentId,
    pub title: Option<String>,
}

/// The incidents the engine holds, by id.
pub async fn list(engine: &Engine) -> Result<Vec<OnEngine>, ShareError> {
    within(engine, ANSWER_WAIT * 2, |js| async move {
        let mut out = Vec::new();
        for id in incidents(&js).await? {
            let title = match existing(&js, &id).await? {
                Some(stream) => first_title(&stream).await,
                None => None,
            };
            out.push(OnEngine { id, title });
        }
        Ok(out)
    })
    .await
}

/// The title of the stream's first record, when it is the incident's opening.
async fn first_title(stream: &stream::Stream) -> Option<String> {
    let first = stream.cached_info().state.first_sequence;
    let m = stream.get_raw_message(first).await.ok()?;
    match Shared::decode(m.subject.as_str(), &m.payload)
        .ok()?
        .record
        .kind
    {
        Event::IncidentOpened { title, .. } => Some(title),
        _ => None,
    }
}
