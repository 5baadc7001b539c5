//! warroom: a terminal incident-response console for database-bound outages.
//!
//! The crate has four layers; arrows point down only (a layer uses those below it, never one
//! above), and `layers` below is the test that keeps it so.
//!
//! 1. **The command line**: `main.rs` parses, loads one [`commands::Context`] and dispatches;
//!    [`cli`] holds the clap types, which only [`commands`] reads (one thin file per
//!    subcommand: arguments, one call below, output and exit code).
//! 2. **Front ends**: the console, [`app`] (one `Model`; `update(&mut Model, Msg) ->
//!    Vec<Effect>` does no I/O; the runtime owns the loop and turns effects into tasks) and
//!    [`ui`] (pure drawing, one screen region per file), with [`keymap`] and [`theme`];
//!    [`replay`], the second front end on the same views; the terminal itself in [`tui`].
//! 3. **The domain**, which knows no terminal and no clap: [`metrics`] (the `Source` trait,
//!    the Prometheus client, the embedded store, the source factory), [`runbook`] (model, load,
//!    catalog, executor and its one builder, step kinds), [`incident`] (the journal, opening an
//!    incident, the actor), [`alerts`], [`postmortem`], [`github`], [`sim`] (the simulator),
//!    [`rehearsal`] (stage, simulated clock, faults, plays, recording, score), [`recorder`]
//!    (the headless recording engine) and [`config`].
//! 4. **Support**, used by all: [`backoff`], [`clock`], [`sanitize`], [`secret`],
//!    [`diagnostic`], [`paths`], [`logging`], [`strings`] (user text said in more than one place), and [`signals`] (SIGINT/SIGTERM as one stream,
//!    for every long-running command, the headless recorder included).
//!
//! Where a change goes: a new step kind in `runbook/` (model, load, executor, plan); a new
//! signal preset in `metrics/`; a new panel state in `app/panel.rs` and `ui/panel.rs`; a new key
//! in `keymap.rs`'s table and a handler in `app/update/`; a new postmortem field in
//! `postmortem/facts.rs` and its template. Text from outside passes [`sanitize`] once where it
//! enters; retries anywhere go through [`backoff`].

pub mod alerts;
pub mod app;
pub mod backoff;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod diagnostic;
pub mod github;
pub mod incident;
pub mod keymap;
pub mod logging;
pub mod metrics;
pub mod paths;
pub mod postmortem;
pub mod recorder;
pub mod rehearsal;
pub mod replay;
pub mod runbook;
pub mod sanitize;
pub mod secret;
pub mod signals;
pub mod sim;
pub mod strings;
pub mod theme;
pub mod tui;
pub mod ui;

/// The layers, checked by a scan of the sources: a domain or support module that names a layer
/// above it fails the build's tests.
#[cfg(test)]
mod layers {
    use std::path::{Path, PathBuf};

    const DOMAIN: &[&str] = &[
        "metrics",
        "runbook",
        "incident",
        "alerts",
        "postmortem",
        "github",
        "sim",
        "config",
        "rehearsal",
        "recorder",
    ];
    const SUPPORT: &[&str] = &[
        "strings",
        "backoff",
        "clock",
        "sanitize",
        "secret",
        "diagnostic",
        "paths",
        "logging",
        "signals",
    ];
    const FRONT: &[&str] = &["app", "ui", "cli", "commands", "replay", "tui"];

    fn files(module: &str) -> Vec<PathBuf> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut out = vec![src.join(format!("{module}.rs"))];
        let mut dirs = vec![src.join(module)];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    out.push(p);
                }
            }
        }
        out.retain(|p| p.exists());
        out
    }

    /// Every `crate::NAME` (or `crate::{NAME`) a file names, NAME being one of `above`.
    fn upward(text: &str, above: &[&str]) -> Vec<String> {
        let mut found = Vec::new();
        for (i, line) in text.lines().enumerate() {
            for name in above {
                for form in [
                    format!("crate::{name}::"),
                    format!("crate::{name};"),
                    format!("crate::{{{name}"),
                ] {
                    if line.contains(&form) {
                        found.push(format!("line {}: {}", i + 1, line.trim()));
                    }
                }
            }
        }
        found
    }

    #[test]
    fn the_domain_never_imports_the_console_the_ui_or_the_command_line() {
        let mut bad = Vec::new();
        for m in DOMAIN {
            for f in files(m) {
                let text = std::fs::read_to_string(&f).unwrap();
                for hit in upward(&text, FRONT) {
                    bad.push(format!("{}: {hit}", f.display()));
                }
            }
        }
        assert!(
            bad.is_empty(),
            "domain files import a layer above them:\n{}",
            bad.join("\n")
        );
    }

    #[test]
    fn support_imports_nothing_above_it() {
        let above: Vec<&str> = DOMAIN.iter().chain(FRONT).copied().collect();
        let mut bad = Vec::new();
        for m in SUPPORT {
            for f in files(m) {
                let text = std::fs::read_to_string(&f).unwrap();
                for hit in upward(&text, &above) {
                    bad.push(format!("{}: {hit}", f.display()));
                }
            }
        }
        assert!(
            bad.is_empty(),
            "support files import a layer above them:\n{}",
            bad.join("\n")
        );
    }

    #[test]
    fn the_scan_finds_an_upward_import() {
        let hits = upward(
            "use crate::app::model::Model;\nuse crate::{ui, sanitize};",
            FRONT,
        );
        assert_eq!(hits.len(), 2, "{hits:?}");
        assert!(upward("use crate::sanitize;", FRONT).is_empty());
    }
}
