//! One incident, many machines (issue 36): local-first journals shared through a NATS
//! JetStream engine.
//!
//! Every responder keeps writing its own local journal exactly as before (durable before it is
//! acknowledged); that journal stays the durable copy. Each responder publishes only its own
//! records, each with a stable identity (its [`wire::WriterId`] and the record's sequence
//! number), to the incident's stream on the subject `warroom.<incident>.<writer>`, with the
//! `Nats-Msg-Id` header set from that identity so the server drops a record published twice.
//! Whatever the engine has not acknowledged yet is the backlog ([`sync::publish_backlog`]),
//! published again on every (re)connect from the last sequence the stream holds for the writer.
//! Everyone reads the stream from its start ([`sync::follow`]) and merges the others' records
//! into one [`view::View`], ordered by (time, writer, sequence), so every view of the same
//! records is the same. A message that does not parse, is too large, or claims another writer's
//! identity is refused ([`wire::Refused`]) and reported, never merged.
//!
//! The executor lease ([`lease`]) is a key in a JetStream key-value bucket, taken and renewed
//! by compare-and-set on its revision and lost when its holder stops renewing it. Who works
//! the incident now ([`presence`]) is a beat in another bucket; joining, leaving and going
//! silent are records of the timeline like any other.

pub mod engine;
pub mod lease;
pub mod local;
pub mod presence;
pub mod session;
pub mod sync;
pub mod view;
pub mod wire;

pub use engine::{Engine, Files, ShareError};
pub use view::View;
pub use wire::{Refused, Shared, WriterId};
