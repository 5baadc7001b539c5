//! The console: one [`Model`], messages in, effects out. `update` does no I/O; the runtime owns
//! the loop and the terminal, and [`workers`] turn each [`Effect`] into a task whose answer
//! comes back as a [`Msg`].
//!
//! - [`model`], [`msg`], [`effect`]: the state and what flows in and out of `update`;
//! - [`update`]: one handler per mode and feature, in the order of precedence its doc gives;
//! - [`gates`]: which panels a runbook's gates read (the panels a run needs, first);
//! - [`panes`]: the pure state of each pane (one suffix: `*Pane`) and of a panel;
//! - [`sharing`]: holding the incident and serving it, or following the process that does;
//! - [`runtime`]: the loop, which asks [`pacer`] (pure, `now` passed in) when to draw;
//!   [`workers`]: the tasks and the services they use; [`demo`]: the console opened on a
//!   rehearsal's stage.
//!
//! The loop is one `tokio::select!` over input, worker answers, a 250 ms tick and signals. It
//! draws only when the model changed, at most once per 16 ms, each frame one write inside a
//! synchronized update (`tui`). Queries run in tasks, so a hung Prometheus never delays a key:
//! a panel has at most one query in flight (answers of an older generation are dropped), at most
//! 4 requests are in flight in all, and after the first fetch only the new tail of the range is
//! asked for. Between two points of a panel's step grid the panel asks an instant query instead,
//! so the headline value is current, never a step old. The Prometheus client is our own, on
//! reqwest and serde (the existing crates drop warnings and error messages); it never retries:
//! the source's health backs off with full jitter and sends one probe at a time, so warroom is
//! never a retry storm.

pub mod cost;
pub mod demo;
pub mod effect;
pub mod gates;
pub mod model;
pub mod msg;
pub mod pacer;
pub mod panes;
pub mod runtime;
pub mod sharing;
pub mod typing;
pub mod update;
pub mod workers;

pub use effect::Effect;
pub use model::Model;
pub use msg::Msg;
pub use panes::panel::{Panel, PanelState};
pub use update::update;
