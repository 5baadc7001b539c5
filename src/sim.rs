//! The outage simulator (issue 3): a deterministic model of a service fleet in front of a
//! database that fails the way the three house-format incidents did, served over HTTP for a
//! real Prometheus to scrape and for runbooks to act on.
//!
//! [`model::Sim`] is pure (no I/O, no clock): a function of the [`scenario::Scenario`] and a
//! seed, advanced in fixed steps. [`control`] parses and applies the team's actions,
//! [`exposition`] turns the model into metric samples and the Prometheus text format, and
//! [`server`] runs the model at `--speed`× wall time behind the control API.

pub mod backlog;
pub mod control;
pub mod exposition;
pub mod fleet;
pub mod histogram;
pub mod lifecycle;
pub mod model;
pub mod retry;
pub mod scenario;
pub mod score;
pub mod server;
pub mod service;
pub mod state;
pub mod stats;

pub use control::{Control, ControlError};
pub use model::{STEP_S, Sim};
pub use scenario::Scenario;
pub use service::{Reply, SimService};
