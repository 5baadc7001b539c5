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
//!    [`replay`], the second front end on the same views; the terminal itself in [`tui`];
//!    [`mcp`], the incident served to an AI assistant (read-only, proposals only).
//! 3. **The domain**, which knows no terminal and no clap: [`metrics`] (the `Source` trait,
//!    the Prometheus client, the embedded store, the source factory), [`runbook`] (model, load,
//!    catalog, executor and its one builder, step kinds), [`incident`] (the journal, opening an
//!    incident, the actor), [`alerts`], [`postmortem`], [`github`], [`sim`] (the simulator),
//!    [`rehearsal`] (stage, simulated clock, faults, plays, recording, score), [`recorder`]
//!    (the headless recording engine), [`config`], [`import`] (dashboards of other tools
//!    made into panels; it writes for the config, which never names it) and [`variables`]
//!    (Grafana's template variables, which the importer and the console both resolve) and [`share`]
//!    (one incident shared between machines through NATS JetStream). No two domain rooms
//!    name each other, directly or through others: `domain_rooms_form_no_loop` checks it.
//! 4. **Support**, used by all: [`backoff`], [`clock`], [`sanitize`], [`secret`],
//!    [`diagnostic`], [`paths`], [`logging`], [`strings`] (user text said in more than one place), and [`signals`] (SIGINT/SIGTERM as one stream,
//!    for every long-running command, the headless recorder included).
//!
//! Where a change goes: a new step kind in `runbook/` (model, load, executor, plan); a new
//! signal preset in `metrics/presets/`; a new panel state in `app/panes/panel.rs` and
//! `ui/panel.rs`; a new key in `keymap.rs`'s table and a handler in `app/update/`; a new
//! postmortem field in `postmortem/facts.rs` and its template. Text from outside passes
//! [`sanitize`] once where it enters; retries anywhere go through [`backoff`].

pub mod alerts;
pub mod app;
pub mod backoff;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod diagnostic;
pub mod github;
pub mod import;
pub mod incident;
pub mod keymap;
pub mod logging;
pub mod mcp;
pub mod metrics;
pub mod paths;
pub mod postmortem;
pub mod recorder;
pub mod rehearsal;
pub mod replay;
pub mod runbook;
pub mod sanitize;
pub mod secret;
pub mod share;
pub mod signals;
pub mod sim;
pub mod strings;
pub mod theme;
pub mod tui;
pub mod ui;
pub mod variables;

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
        "import",
        "variables",
        "share",
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
    const FRONT: &[&str] = &[
        "app", "ui", "cli", "commands", "replay", "tui", "keymap", "theme", "mcp",
    ];

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

    /// The top-level modules a text names through `crate::`, with their line: `crate::NAME::…`,
    /// `crate::NAME;`, and every item of a `crate::{A, B::c, {…}}` list, over several lines.
    fn named(text: &str) -> Vec<(usize, String)> {
        let ident = |s: &str| -> String {
            let s = s.trim_start();
            s.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        };
        let mut out = Vec::new();
        for (at, _) in text.match_indices("crate::") {
            let line = text[..at].matches('\n').count() + 1;
            let after = &text[at + "crate::".len()..];
            let Some(list) = after.strip_prefix('{') else {
                out.push((line, ident(after)));
                continue;
            };
            // The list's items at depth 0, up to its closing brace.
            let (mut depth, mut start) = (0usize, 0usize);
            for (i, c) in list.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.push((line, ident(&list[start..i])));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push((line, ident(&list[start..i])));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        }
        out.retain(|(_, n)| !n.is_empty());
        out
    }

    /// Every line of `text` that names one of `above`.
    fn upward(text: &str, above: &[&str]) -> Vec<String> {
        let lines: Vec<&str> = text.lines().collect();
        named(text)
            .into_iter()
            .filter(|(_, n)| above.contains(&n.as_str()))
            .map(|(l, n)| format!("line {l} names {n}: {}", lines[l - 1].trim()))
            .collect()
    }

    /// Which domain rooms each domain room names, with a file that does.
    fn domain_graph() -> std::collections::BTreeMap<&'static str, Vec<(&'static str, PathBuf)>> {
        let mut graph = std::collections::BTreeMap::new();
        for m in DOMAIN {
            let mut to: Vec<(&'static str, PathBuf)> = Vec::new();
            for f in files(m) {
                let text = std::fs::read_to_string(&f).unwrap();
                for (_, n) in named(&text) {
                    if let Some(d) = DOMAIN.iter().find(|d| **d == n && *d != m)
                        && !to.iter().any(|(x, _)| x == d)
                    {
                        to.push((d, f.clone()));
                    }
                }
            }
            graph.insert(*m, to);
        }
        graph
    }

    /// A loop through `from`, as the rooms and the files that name the next one.
    fn loop_through(
        graph: &std::collections::BTreeMap<&'static str, Vec<(&'static str, PathBuf)>>,
        from: &'static str,
    ) -> Option<Vec<String>> {
        let mut stack = vec![(from, vec![from.to_string()])];
        let mut seen = vec![from];
        while let Some((room, path)) = stack.pop() {
            for (next, file) in &graph[room] {
                let mut path = path.clone();
                path.push(format!("{next} (named in {})", file.display()));
                if *next == from {
                    return Some(path);
                }
                if !seen.contains(next) {
                    seen.push(next);
                    stack.push((next, path));
                }
            }
        }
        None
    }

    #[test]
    fn domain_rooms_form_no_loop() {
        let graph = domain_graph();
        let loops: Vec<String> = DOMAIN
            .iter()
            .filter_map(|m| loop_through(&graph, m))
            .map(|p| p.join(" -> "))
            .collect();
        assert!(
            loops.is_empty(),
            "domain rooms name each other in a loop:\n{}",
            loops.join("\n")
        );
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
    fn the_scan_finds_an_upward_import_in_any_form() {
        let hits = upward(
            "use crate::app::model::Model;\nuse crate::{ui, sanitize};\nuse crate::{\n    sanitize,\n    keymap::{Mode, Action},\n};\nlet t = crate::theme::Theme::fallback();",
            FRONT,
        );
        assert_eq!(hits.len(), 4, "{hits:?}");
        assert!(hits[2].starts_with("line 3 names keymap"), "{hits:?}");
        assert!(
            upward(
                "use crate::sanitize;\nuse crate::{sanitize, {clock}};",
                FRONT
            )
            .is_empty()
        );
        // A loop is found and named, through a third room too.
        let p = |s: &str| PathBuf::from(s);
        let graph = std::collections::BTreeMap::from([
            ("metrics", vec![("config", p("src/metrics/a.rs"))]),
            ("config", vec![("runbook", p("src/config/b.rs"))]),
            ("runbook", vec![("metrics", p("src/runbook/c.rs"))]),
            ("sim", vec![]),
        ]);
        let l = loop_through(&graph, "metrics").unwrap().join(" -> ");
        assert_eq!(
            l,
            "metrics -> config (named in src/metrics/a.rs) -> runbook (named in src/config/b.rs) -> metrics (named in src/runbook/c.rs)"
        );
        assert!(loop_through(&graph, "sim").is_none());
    }
}
