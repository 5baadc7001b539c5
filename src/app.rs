//! The console: one [`Model`], messages in, effects out. `update` does no I/O; the runtime owns
//! the loop and the terminal, and [`workers`] turn each [`Effect`] into a task whose answer
//! comes back as a [`Msg`].
//!
//! - [`model`], [`msg`], [`effect`]: the state and what flows in and out of `update`;
//! - [`update`]: one handler per mode and feature, in the order of precedence its doc gives;
//! - [`gates`]: which panels a runbook's gates read (the panels a run needs, first);
//! - [`panes`]: the pure state of each pane (one suffix: `*Pane`) and of a panel;
//! - [`sharing`]: holding the incident and serving it, or following the process that does;
//! - [`runtime`]: the loop; [`workers`]: the tasks; [`demo`]: the console opened on a
//!   rehearsal's stage.

pub mod demo;
pub mod effect;
pub mod gates;
pub mod model;
pub mod msg;
pub mod pacer;
pub mod panes;
pub mod runtime;
pub mod sharing;
pub mod update;
pub mod workers;

pub use effect::Effect;
pub use model::Model;
pub use msg::Msg;
pub use panes::panel::{Panel, PanelState};
pub use update::update;
