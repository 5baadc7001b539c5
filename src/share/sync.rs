//! Publishing one writer's records and following everyone's.

use super::engine::ShareError;
use super::wire::{self, Refused, Shared, WriterId};
use crate::incident::{IncidentId, Record};
use async_nats::jetstream::{self, consumer, message::PublishMessage, stream};
use futures::{Stream, StreamExt};
use std::time::Duration;

/// The incident's stream, made by whoever comes first (same config for everyone).
pub async fn ensure_stream(
    js: &jetstream::Context,
    incident: &IncidentId,
    replicas: usize,
) -> Result<stream::Stream, ShareError> {
    js.get_or_create_stream(stream::Config {
        name: wire::stream_name(incident),
        subjects: vec![wire::all_subjects(incident)],
        num_replicas: replicas.max(1),
        // A record re-sent within ten minutes is dropped by the server; later, the backlog
        // starts past the last sequence the stream holds, and the view drops doubles anyway.
        duplicate_window: Duration::from_secs(600),
        ..stream::Config::default()
    })
    .await
    .map_err(ShareError::engine)
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

/// Publishes the records the stream does not hold yet (those past its last sequence of this
/// writer), each with its identity as `Nats-Msg-Id`, and waits for every acknowledgement.
/// Returns how many were sent. Run on every (re)connect: a record sent twice is stored once.
pub async fn publish_backlog(
    js: &jetstream::Context,
    stream: &stream::Stream,
    incident: &IncidentId,
    writer: &WriterId,
    records: &[Record],
) -> Result<usize, ShareError> {
    let last = last_shared(stream, incident, writer).await?;
    let subject = wire::subject(incident, writer);
    let mut acks = Vec::new();
    for record in records.iter().filter(|r| r.seq > last) {
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
    let sent = acks.len();
    for ack in acks {
        ack.await.map_err(ShareError::engine)?;
    }
    Ok(sent)
}

/// Every message of the incident from the stream's start, then live: each one either a record
/// to merge or a refusal to report. The ordered consumer re-creates itself after a lost
/// connection and resumes where it was, so nothing is skipped or seen twice by it.
pub async fn follow(
    stream: &stream::Stream,
    incident: &IncidentId,
) -> Result<impl Stream<Item = Result<Shared, Refused>> + use<>, ShareError> {
    let consumer = stream
        .create_consumer(consumer::pull::OrderedConfig {
            filter_subject: wire::all_subjects(incident),
            deliver_policy: consumer::DeliverPolicy::All,
            ..Default::default()
        })
        .await
        .map_err(ShareError::engine)?;
    let messages = consumer.messages().await.map_err(ShareError::engine)?;
    Ok(messages.filter_map(|m| async move {
        let m = m.ok()?;
        Some(Shared::decode(m.subject.as_str(), &m.payload))
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
