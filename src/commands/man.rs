//! `warroom man`: the man page, generated from the same clap definitions as `--help`
//! (clap_mangen), with what `--help` cannot hold: every key of every mode (from the key map
//! itself, so the page and the console never disagree), the reference a README is too short for
//! (written in Markdown beside this file and in `runbooks/README.md`, rendered by
//! [`markdown`]), the files and environment, and examples. `--dir DIR` writes it with one page
//! per command, as `man warroom-open` expects.

mod markdown;

use crate::cli::{Cli, ManArgs};
use crate::keymap::{Keymap, Mode};
use clap::CommandFactory;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, italic, roman};
use std::io::Write;
use std::process::ExitCode;

/// Print `warroom.1`, or write every page into `--dir`.
pub fn run(args: ManArgs) -> color_eyre::Result<ExitCode> {
    match args.dir {
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&page()?)?;
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir)?;
            // One page per command (warroom-open.1, …), then ours over the top-level one.
            clap_mangen::generate_to(Cli::command(), &dir)?;
            let main = dir.join("warroom.1");
            std::fs::write(&main, page()?)?;
            let n = std::fs::read_dir(&dir)?
                .flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "1"))
                .count();
            println!("wrote {n} man pages into {}", dir.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The top-level page: clap's sections, then the keys, files, environment and examples.
pub fn page() -> std::io::Result<Vec<u8>> {
    let man = Man::new(Cli::command()).manual("warroom manual");
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    man.render_subcommands_section(&mut out)?;
    out.extend_from_slice(keys(&Keymap::default()).as_bytes());
    for (name, text) in REFERENCE {
        out.extend_from_slice(markdown::section(name, text).as_bytes());
    }
    out.extend_from_slice(rest().as_bytes());
    man.render_version_section(&mut out)?;
    Ok(out)
}

/// The reference sections, in the page's order: each a Markdown document, its first heading
/// left out.
const REFERENCE: &[(&str, &str)] = &[
    ("THE CONSOLE", include_str!("man/console.md")),
    ("YOUR OWN PROMETHEUS", include_str!("man/prometheus.md")),
    ("INCIDENTS", include_str!("man/incidents.md")),
    ("RUNBOOKS", include_str!("../../runbooks/README.md")),
    ("POSTMORTEMS", include_str!("man/postmortems.md")),
    ("REHEARSALS", include_str!("man/rehearsals.md")),
    ("AGENTS (MCP)", include_str!("man/agents.md")),
];

/// The KEYS section: every binding of every mode, as the `?` overlay lists them, then replay's.
pub fn keys(map: &Keymap) -> String {
    let mut r = Roff::new();
    r.control("SH", ["KEYS"]);
    r.text([roman(
        "The console's keys, by mode. [keys.MODE] in warroom.toml changes them (action = \"key\" or a list); the ? overlay shows the keys in use.",
    )]);
    for mode in Mode::ALL {
        let rows = map.help(mode);
        if rows.is_empty() {
            continue;
        }
        r.control("SS", [mode.title()]);
        for (keys, what) in rows {
            r.control("TP", []);
            r.text([bold(keys)]);
            r.text([roman(what)]);
        }
    }
    r.control("SS", ["Replay (warroom replay)"]);
    for (keys, what) in crate::replay::keys::help() {
        r.control("TP", []);
        r.text([bold(keys)]);
        r.text([roman(what)]);
    }
    r.to_roff()
}

/// FILES, ENVIRONMENT, EXAMPLES and SEE ALSO.
fn rest() -> String {
    let mut r = Roff::new();
    let item = |r: &mut Roff, name: &str, what: &str| {
        r.control("TP", []);
        r.text([bold(name)]);
        r.text([roman(what)]);
    };
    r.control("SH", ["FILES"]);
    item(
        &mut r,
        "$XDG_CONFIG_HOME/warroom/warroom.toml",
        "The configuration (or --config, $WARROOM_CONFIG). Everything is optional; warroom config example prints every section, commented.",
    );
    item(
        &mut r,
        "$XDG_DATA_HOME/warroom/incidents/ID/",
        "An incident: its journal (journal.jsonl, one checksummed record per line), panel snapshots and exports.",
    );
    item(
        &mut r,
        "$XDG_STATE_HOME/warroom/warroom.log",
        "The log (or --log-file); nothing is logged to the screen.",
    );
    r.control("SH", ["ENVIRONMENT"]);
    for (name, what) in [
        ("WARROOM_CONFIG", "The configuration file."),
        ("WARROOM_DATA_DIR", "Where incidents are kept."),
        ("WARROOM_LOG", "The log file."),
        ("WARROOM_LOG_LEVEL", "The log level (info; debug for more)."),
        ("NO_COLOR", "Selects the mono theme."),
        (
            "GITHUB_TOKEN",
            "The GitHub token for the changes feed and publishing (or [github] token_env / token_file).",
        ),
    ] {
        item(&mut r, name, what);
    }
    r.control("SH", ["EXAMPLES"]);
    for (cmd, what) in [
        (
            "warroom demo",
            "Rehearse a simulated outage; nothing to install.",
        ),
        (
            "warroom open --prometheus http://127.0.0.1:9090",
            "The console on a live Prometheus; without [[panel]] entries it discovers the dashboard.",
        ),
        (
            "warroom runbook plan pgbouncer-raise-pool",
            "Show what a runbook would do, with its variables resolved.",
        ),
        (
            "warroom export ID",
            "Write the postmortem draft of incident ID in the house format.",
        ),
        (
            "warroom man --dir ~/.local/share/man/man1",
            "Install this page and one per command.",
        ),
    ] {
        r.control("TP", []);
        r.text([bold(cmd)]);
        r.text([roman(what)]);
    }
    r.control("SH", ["SEE ALSO"]);
    r.text([
        italic("warroom-open"),
        roman("(1), "),
        italic("warroom-runbook"),
        roman("(1) and the other warroom-COMMAND(1) pages written by "),
        bold("warroom man --dir"),
        roman("; "),
        bold("warroom COMMAND --help"),
        roman("."),
    ]);
    r.to_roff()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_names_every_command_and_every_key_of_the_key_map() {
        let page = String::from_utf8(page().unwrap()).unwrap();
        assert!(
            page.starts_with(".ie \\n(.g .ds Aq"),
            "roff: {}",
            &page[..80]
        );
        for sub in Cli::command().get_subcommands() {
            assert!(
                page.contains(sub.get_name()),
                "{} missing from the page",
                sub.get_name()
            );
        }
        // Each binding of each mode, keys then description, in the key map's own words.
        let map = Keymap::default();
        let keys = keys(&map);
        for mode in Mode::ALL {
            for (k, what) in map.help(mode) {
                let row = format!("\\fB{}\\fR\n{}", roff_text(&k), roff_text(what));
                assert!(
                    keys.contains(&row),
                    "{}: {row:?} not in\n{keys}",
                    mode.title()
                );
            }
        }
        assert!(page.contains(&keys));
        for (k, what) in crate::replay::keys::help() {
            let row = format!("\\fB{}\\fR\n{}", roff_text(&k), roff_text(what));
            assert!(keys.contains(&row), "replay: {row:?} not in\n{keys}");
        }
        // Every reference section, with its subsections, and no Markdown left in the page.
        for (name, text) in REFERENCE {
            assert!(
                page.contains(&format!(".SH {}\n", roff_name(name))),
                "{name}"
            );
            for sub in text.lines().filter_map(|l| l.strip_prefix("## ")) {
                assert!(page.contains(&format!(".SS {}\n", roff_name(sub))), "{sub}");
            }
            let roff = markdown::section(name, text);
            assert!(!roff.contains('`'), "Markdown left in {name}:\n{roff}");
        }
        // A changed key map changes the page.
        let mut o = std::collections::BTreeMap::new();
        o.insert(
            "dashboard".to_string(),
            std::collections::BTreeMap::from([("quit".to_string(), vec!["x".to_string()])]),
        );
        let changed = super::keys(&Keymap::with_overrides(&o).unwrap());
        assert_ne!(changed, keys);
    }

    /// How a control line writes an argument: quoted when it has a space.
    fn roff_name(s: &str) -> String {
        if s.contains(' ') {
            format!("\"{s}\"")
        } else {
            s.to_string()
        }
    }

    /// How roff writes plain text: `-` as `\-`, `\` as `\\`.
    fn roff_text(s: &str) -> String {
        s.replace('\\', "\\\\").replace('-', "\\-")
    }
}
