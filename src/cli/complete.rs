//! What the shell completes as values (clap_complete's dynamic completion: the shell asks
//! `warroom` itself at each tab, so new incidents and runbooks show at once): scenario names,
//! runbook names and incident ids. Each reads what exists now and never fails: a missing
//! directory is no candidates.

use clap_complete::engine::CompletionCandidate;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The built-in scenarios, then the scenario files under `./runbooks/gameday/`.
pub fn scenarios() -> Vec<CompletionCandidate> {
    let mut out: Vec<CompletionCandidate> = crate::sim::scenario::BUILTIN
        .iter()
        .map(|(name, _)| CompletionCandidate::new(*name).help(Some("built-in scenario".into())))
        .collect();
    if let Ok(dir) = std::fs::read_dir("runbooks/gameday") {
        let mut files: Vec<PathBuf> = dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        out.extend(
            files
                .into_iter()
                .map(|p| CompletionCandidate::new(p.display().to_string())),
        );
    }
    out
}

/// The runbooks `warroom runbook list` finds without a config: the shipped ones, the XDG
/// config dir's and `./runbooks` (broken files are left out), each with the start of its
/// description.
pub fn runbooks() -> Vec<CompletionCandidate> {
    let dirs = crate::runbook::catalog::search_dirs(None, None);
    let mut names: Vec<(String, String)> = crate::runbook::catalog::load(&dirs)
        .iter()
        .filter_map(|e| e.runbook())
        .map(|rb| {
            let about = rb
                .description
                .split_whitespace()
                .take(8)
                .collect::<Vec<_>>()
                .join(" ");
            (rb.name.clone(), about)
        })
        .collect();
    names.sort();
    names.dedup_by(|a, b| a.0 == b.0);
    names
        .into_iter()
        .map(|(n, about)| CompletionCandidate::new(n).help(Some(about.into())))
        .collect()
}

/// The incidents of the data directory the command line being completed names
/// (`--data-dir DIR`), else `$WARROOM_DATA_DIR`, else the default; newest first.
pub fn incidents() -> Vec<CompletionCandidate> {
    let dir = data_dir_in(std::env::args_os())
        .or_else(|| std::env::var_os("WARROOM_DATA_DIR").map(PathBuf::from))
        .unwrap_or_else(crate::paths::default_data_dir);
    incidents_in(&dir)
}

/// The incidents under `data_dir`, newest first.
pub fn incidents_in(data_dir: &Path) -> Vec<CompletionCandidate> {
    let mut ids = crate::incident::Store::new(data_dir)
        .list()
        .unwrap_or_default();
    ids.reverse();
    ids.into_iter()
        .map(|id| CompletionCandidate::new(id.to_string()))
        .collect()
}

/// `--data-dir DIR` or `--data-dir=DIR` among `args` (the shell passes the line being
/// completed as this process's arguments).
fn data_dir_in(args: impl IntoIterator<Item = OsString>) -> Option<PathBuf> {
    let mut args = args.into_iter();
    let mut found = None;
    while let Some(a) = args.next() {
        let s = a.to_string_lossy();
        if s == "--data-dir" {
            found = args.next().map(PathBuf::from).or(found);
        } else if let Some(v) = s.strip_prefix("--data-dir=") {
            found = Some(PathBuf::from(v));
        }
    }
    found.filter(|p| !p.as_os_str().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn values(c: Vec<CompletionCandidate>) -> Vec<String> {
        c.iter()
            .map(|c| c.get_value().to_string_lossy().into_owned())
            .collect()
    }

    /// What the shell gets for the last word of `line` (as `COMPLETE=bash warroom -- …`).
    fn complete(line: &[&str]) -> Vec<String> {
        let mut cmd = crate::cli::Cli::command();
        let args: Vec<OsString> = line.iter().map(OsString::from).collect();
        let index = args.len() - 1;
        values(clap_complete::engine::complete(&mut cmd, args, index, None).unwrap())
    }

    #[test]
    fn the_candidates_are_what_exists() {
        let s = values(scenarios());
        for (name, _) in crate::sim::scenario::BUILTIN {
            assert!(s.contains(&name.to_string()), "{s:?}");
        }
        let r = values(runbooks());
        assert!(r.contains(&"pool-exhaustion".to_string()), "{r:?}");
        assert!(
            r.windows(2).all(|w| w[0] < w[1]),
            "sorted, once each: {r:?}"
        );
    }

    #[test]
    fn the_shell_is_offered_scenarios_runbooks_and_incident_ids() {
        let demo = complete(&["warroom", "demo", "--scenario", ""]);
        assert!(demo.contains(&"planner-peak".to_string()), "{demo:?}");
        assert!(demo.contains(&"crash-loop".to_string()), "{demo:?}");
        let gameday = complete(&["warroom", "gameday", "bi"]);
        assert_eq!(gameday, ["bird-count"]);
        let plan = complete(&["warroom", "runbook", "run", "pool-"]);
        assert_eq!(plan, ["pool-exhaustion"]);

        let dir = tempfile::tempdir().unwrap();
        let store = crate::incident::Store::new(dir.path());
        let root = store.root().to_path_buf();
        for id in ["2026-07-17-1", "2026-07-17-2"] {
            std::fs::create_dir_all(root.join(id)).unwrap();
        }
        // A directory that is not an incident is not offered.
        std::fs::create_dir_all(root.join("notes")).unwrap();
        let ids = values(incidents_in(dir.path()));
        assert_eq!(ids, ["2026-07-17-2", "2026-07-17-1"], "newest first");
        assert!(values(incidents_in(&dir.path().join("nothing"))).is_empty());
    }

    #[test]
    fn every_incident_argument_completes_incident_ids() {
        // Each argument that takes an incident id (named id or incident) has candidates: a new
        // command's id without them fails here.
        fn walk(cmd: &clap::Command, path: String, missing: &mut Vec<String>) {
            for a in cmd.get_arguments() {
                let name = a.get_id().as_str();
                if matches!(name, "id" | "incident")
                    && a.get::<clap_complete::engine::ArgValueCandidates>()
                        .is_none()
                {
                    missing.push(format!("{path} {name}"));
                }
            }
            // Hidden commands (test helpers) are not completed at all.
            for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
                walk(sub, format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut cmd = crate::cli::Cli::command();
        cmd.build();
        let mut missing = Vec::new();
        walk(&cmd, "warroom".into(), &mut missing);
        assert!(missing.is_empty(), "without candidates: {missing:?}");
    }

    #[test]
    fn the_data_dir_is_read_from_the_line_being_completed() {
        let args = |l: &[&str]| l.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            data_dir_in(args(&[
                "warroom",
                "--",
                "warroom",
                "--data-dir",
                "/d",
                "export"
            ])),
            Some(PathBuf::from("/d"))
        );
        assert_eq!(
            data_dir_in(args(&["warroom", "--data-dir=/e", "show"])),
            Some(PathBuf::from("/e"))
        );
        assert_eq!(data_dir_in(args(&["warroom", "export", ""])), None);
    }
}
