//! The pure state of what the console shows besides the model's own fields: a panel, the
//! runbook pane's plan and run, a dialog, the Changes pane, publishing. No I/O; `update`
//! changes them and `ui` draws them.

pub mod changes;
pub mod dialog;
pub mod panel;
pub mod publish;
pub mod run;
pub mod text;
pub mod timeline;
pub mod variables;
