//! A thin Prometheus HTTP API client of our own (issue 2): the existing crates drop warnings and
//! error messages, and an incident console needs both.
//!
//! [`parse`] and [`errors`] turn any reply into one outcome without I/O; [`client`] sends the
//! requests (timeouts, at most 4 in flight, no retries at this layer).

mod body;
pub mod client;
pub mod errors;
pub mod labels;
pub mod options;
pub mod parse;
pub mod variables;

pub(crate) use body::{Budget, read as read_body};
pub use client::{Auth, BuildInfo, ClientError, ClientOptions, PrometheusClient};
pub use labels::LabelList;
pub use parse::{MAX_BODY, parse_answer};
