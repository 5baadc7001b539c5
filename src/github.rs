//! GitHub at both ends of an incident (issue 8), through `octocrab`.
//!
//! During the incident the [`changes`] feed shows what changed recently in the watched
//! repositories (deployments with their statuses, releases, merged pull requests) and turns each
//! change into one `Event::Change` for the timeline. Afterwards [`publish`] puts the postmortem
//! up as a pull request (or an issue) and files its action items as issues.
//!
//! Every request goes through one [`client::Github`]: one request in flight, at least 1 s between
//! writes, a timeout on every call, rate limits obeyed ([`limits`]), and no blind retry of a
//! write: every body carries a hidden [`marker`], and after an ambiguous failure the marker is
//! searched for before anything is posted again. Publishing is recorded in the incident's
//! [`outbox`] before it is attempted, so a GitHub outage or an offline laptop loses nothing
//! and blocks nothing: the outbox completes the work later.

pub mod body;
pub mod changes;
pub mod client;
pub mod deliver;
pub mod identity;
pub mod intake;
pub mod limits;
pub mod marker;
pub mod outbox;
pub mod plan;
pub mod publication;
pub mod publish;
pub mod timer;

pub use changes::{Change, ChangesFeed, Window};
pub use client::{Github, GithubError};
pub use intake::{ChangesIntake, ChangesReport};
pub use outbox::Outbox;
pub use publication::Publication;
pub use timer::{Timer, VirtualTimer, WallTimer};
