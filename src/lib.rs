//! warroom: a terminal incident-response console for database-bound outages.
//!
//! Architecture (see `DESIGN.md`): one [`app::Model`] holds all state of the console;
//! `app::update(&mut Model, Msg) -> Vec<Effect>` is synchronous and does no I/O; `ui::view`
//! only draws; `app::runtime` owns the terminal and the one event loop, turns each `Effect`
//! into a task and feeds what tasks report back in as `Msg`s. Slow work (network, processes,
//! fsync, export) never runs on the loop.
//!
//! The domain does not depend on the terminal: [`metrics`] (the `Source` interface and the
//! Prometheus client), [`runbook`], [`incident`] (the journal), [`alerts`] (alert intake),
//! [`record`] (the headless recorder), [`sim`] (the outage simulator) are used alike by the
//! console, the headless subcommands and the tests. Text from outside
//! passes [`sanitize`] once where it enters; retries anywhere go through [`backoff`].

pub mod alerts;
pub mod app;
pub mod backoff;
pub mod cli;
pub mod clock;
pub mod config;
pub mod diagnostic;
pub mod gameday;
pub mod github;
pub mod incident;
pub mod keymap;
pub mod logging;
pub mod metrics;
pub mod paths;
pub mod postmortem;
pub mod record;
pub mod replay;
pub mod runbook;
pub mod sanitize;
pub mod secret;
pub mod signals;
pub mod sim;
pub mod theme;
pub mod ui;
