//! Publishing one writer's records and following everyone's.

use super::engine::ShareError;
use super::wire::{self, Refused, Shared, WriterId};
use crate::incident::{IncidentId, Record};
use async_nats::jetstream::{self, consumer, message::PublishMessage, stream};
use futures::{Stream, StreamExt};
use std::time::Duration;

/// The incident's stream, made by whoever comes first (same config for everyone). Two
/// responders making it at the same moment: the one the server refuses (its subjects overlap
/// the other's new stream) takes the other's.
pub async fn ensure_stream(
    js: &jetstream::Context,
    incident: &IncidentId,
    replicas: usize,
) -> Result<stream::Stream, ShareError> {
    let made = js.get_or_create_stream(stream::Config {
        name: wire::stream_name(incident),
        subjects: vec![wire::all_subjects(incident)],
        num_replicas: replicas.max(1),
        // A record re-sent within ten minutes is dropped by the server; later, the backlog
        // starts past the last sequence the stream holds, and the view drops doubles anyway.
        duplicate_window: Duration::from_secs(600),
        ..stream::Config::default()
    });
    match made.await {
        Ok(s) => Ok(s),
        Err(e) => match js.get_stream(wire::stream_name(incident)).await {
            Ok(s) => Ok(s),
            Err(_) => Err(ShareError::engine(e)),
        },
    }
}

/// The last sequence of `writer` the stream holds (0 when none).
pub async fn last_shared(
    stream: &stream::Stream,
    incident: &IncidentId,
    writer: &WriterId,
) -> Result<u64, ShareError> {
    match stream
        .get_last_raw_message_by_subject(&wire::subject(incident, writer))
        .await
    {
        Ok(m) => Shared::decode(m.subject.as_str(), &m.payload)
            .map(|s| s.record.seq)
            .map_err(ShareError::engine),
        Err(e) if e.kind() == stream::LastRawMessageErrorKind::NoMessageFound => Ok(0),
        Err(e) => Err(ShareError::engine(e)),
    }
}

/// How many publishes wait for their acknowledgement at once: under async-nats's limit of
/// 5,000 (`max_ack_inflight`), past which the next send waits for a permit that only an
/// acknowledgement awaited frees; a backlog sent in one go past it would hang.
const SLICE: usize = 4_000;

/// Publishes the records (in sequence order) the stream does not hold yet (those past its last
/// sequence of this writer), each with its identity as `Nats-Msg-Id`, in slices of [`SLICE`], each slice's
/// acknowledgements awaited before the next is sent. Returns how many were sent. Run on every
/// (re)connect: a record sent twice is stored once.
pub async fn publish_backlog(
    js: &jetstream::Context,
    stream: &stream::Stream,
    incident: &IncidentId,
    writer: &WriterId,
    records: &[Record],
) -> Result<usize, ShareError> {
    let last = last_shared(stream, incident, writer).await?;
    let subject = wire::subject(incident, writer);
    // A journal's records are in sequence order: the backlog is its tail.
    let backlog = &records[records.partition_point(|r| r.seq <= last)..];
    for slice in backlog.chunks(SLICE) {
        let mut acks = Vec::with_capacity(slice.len());
        for record in slice {
            let payload = Shared {
                writer: writer.clone(),
                record: record.clone(),
            }
            .encode()
            .map_err(ShareError::engine)?;
            let publish = PublishMessage::build()
                .payload(payload.into())
                .message_id(wire::message_id(writer, record.seq));
            acks.push(
                js.send_publish(subject.clone(), publish)
                    .await
                    .map_err(ShareError::engine)?,
            );
        }
        for ack in acks {
            ack.await.map_err(ShareError::engine)?;
        }
    }
    Ok(backlog.len())
}

/// One message of the incident's stream: where it sits on the stream, and its record (or why
/// it was refused).
#[derive(Debug)]
pub struct Followed {
    pub seq: u64,
    pub shared: Result<Shared, Refused>,
}

/// Follows the incident's stream from past its sequence `after` (0: from the start), every
/// writer's records. An error of the engine ends nothing by itself: the caller starts a new
/// follow past the last sequence it took.
pub async fn follow(
    stream: &stream::Stream,
    incident: &IncidentId,
    after: u64,
) -> Result<impl Stream<Item = Result<Followed, ShareError>> + use<>, ShareError> {
    let deliver_policy = match after {
        0 => consumer::DeliverPolicy::All,
        n => consumer::DeliverPolicy::ByStartSequence {
            start_sequence: n + 1,
        },
    };
    let consumer = stream
        .create_consumer(consumer::pull::OrderedConfig {
            filter_subject: wire::all_subjects(incident),
            deliver_policy,
            ..Default::default()
        })
        .await
        .map_err(ShareError::engine)?;
    let messages = consumer.messages().await.map_err(ShareError::engine)?;
    Ok(messages.map(|m| {
        let m = m.map_err(ShareError::engine)?;
        let seq = m.info().map_err(ShareError::engine)?.stream_sequence;
        Ok(Followed {
            seq,
            shared: Shared::decode(m.subject.as_str(), &m.payload),
        })
    }))
}

/// The incidents on the engine: the names of its `warroom-` streams.
pub async fn incidents(js: &jetstream::Context) -> Result<Vec<IncidentId>, ShareError> {
    let mut names = js.stream_names();
    let mut out = Vec::new();
    while let Some(name) = names.next().await {
        let name = name.map_err(ShareError::engine)?;
        if let Some(id) = name
            .strip_prefix("warroom-")
            .and_then(|s| IncidentId::parse(s).ok())
        {
            out.push(id);
        }
    }
    out.sort_by_key(ToString::to_string);
    Ok(out)
}
