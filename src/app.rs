//! The console: one [`Model`], messages in, effects out, and the runtime loop that owns the
//! terminal. `update` does no I/O; the runtime turns each [`Effect`] into a task whose answer
//! comes back as a [`Msg`].

pub mod changes;
pub mod demo;
pub mod dialog;
pub mod effect;
pub mod export;
pub mod github;
pub mod model;
pub mod msg;
pub mod operator;
pub mod panel;
pub mod publish;
pub mod run;
pub mod run_record;
pub mod runner;
pub mod runtime;
pub mod update;

pub use effect::Effect;
pub use model::Model;
pub use msg::Msg;
pub use panel::{Panel, PanelState};
pub use update::update;
