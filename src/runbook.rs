//! Runbooks (issue 5): steps written down in advance, shown as a plan, confirmed by the
//! operator, checked against live signals between every action, and recorded.
//!
//! - [`load`] reads `runbooks/*.toml` into a checked [`model::Runbook`], with `file:line:col`
//!   diagnostics; [`template`] fills `{{var}}` and `{{target}}` without ever using a shell.
//! - [`gate`] and [`batch`] are pure: verdicts from readings, a rollout from time passed in.
//! - [`http`], [`exec`], [`sql`] (PostgreSQL, PgBouncer's console) and [`haproxy`] (its runtime
//!   API) are the ways of acting; [`rows`] holds and judges what the last two read; [`plan`]
//!   shows each exactly as sent.
//! - [`executor`] drives the steps; it talks to the rest of warroom through [`report::RunSink`]
//!   (events), [`report::IntentStore`] (idempotency keys, durable before a send) and
//!   [`operator::Operator`] (typed confirmation, decisions at pauses); [`journal`] implements
//!   the first two over the incident's journal, and reads a run back from it to resume.
//!
//! Batches are a pure state machine in the spirit of Kubernetes' `maxUnavailable` and Argo's
//! analysis (`failed > failureLimit`); requests use full-jitter backoff and a retry budget. A run
//! (from the console, `warroom runbook run --incident ID` or a game day's play) is recorded on
//! the incident's journal, each idempotency key synced before its first send, so `--resume`
//! continues from the journal alone. Gates use the dashboard's Prometheus client: one set of
//! auth, headers, deadlines and size limits. The reference for runbook authors is
//! `runbooks/README.md` (also the man page's RUNBOOKS section).

pub mod batch;
pub mod catalog;
pub mod exec;
pub mod executor;
pub mod gate;
pub mod haproxy;
pub mod http;
pub mod journal;
pub mod label;
pub mod launch;
pub mod load;
pub mod mask;
pub mod model;
pub mod operator;
pub mod plan;
pub mod report;
pub mod resume;
pub mod rows;
pub mod setup;
pub mod sql;
pub mod template;
pub mod vars;

mod format;
pub mod progress;
pub mod quoting;
