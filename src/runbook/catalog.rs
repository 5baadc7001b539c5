//! Which runbooks exist: the shipped ones (built into the binary, so an installed warroom has
//! them from any directory) and every `*.toml` in the runbook directories, searched in this
//! order: the XDG config dir's `warroom/runbooks/`, the config's `[runbooks] dir`, `./runbooks/`
//! and `--runbooks DIR`. A runbook of the same name found later replaces the one before it (a
//! user's file wins over a shipped one) and the list says which is used and where it came from.
//! A broken file is listed with its error and the others stay usable. The console, the command
//! line and the game day all take their runbooks from here.

use super::load;
use super::model::Runbook;
use std::path::{Path, PathBuf};

/// The shipped runbooks, as `runbooks/NAME.toml` and their text: the real-system ones
/// (PgBouncer, PostgreSQL, HAProxy, Kubernetes, Istio, Redis) and the rehearsal ones, which act on the
/// simulator's control API and say so in the first words of their description.
pub const SHIPPED: [(&str, &str); 15] = [
    (
        "runbooks/batch-restart.toml",
        include_str!("../../runbooks/batch-restart.toml"),
    ),
    (
        "runbooks/disable-retries.toml",
        include_str!("../../runbooks/disable-retries.toml"),
    ),
    (
        "runbooks/haproxy-batch-restart.toml",
        include_str!("../../runbooks/haproxy-batch-restart.toml"),
    ),
    (
        "runbooks/istio-retries-off.toml",
        include_str!("../../runbooks/istio-retries-off.toml"),
    ),
    (
        "runbooks/k8s-batch-restart.toml",
        include_str!("../../runbooks/k8s-batch-restart.toml"),
    ),
    (
        "runbooks/k8s-rollback.toml",
        include_str!("../../runbooks/k8s-rollback.toml"),
    ),
    (
        "runbooks/pg-cancel-long-transactions.toml",
        include_str!("../../runbooks/pg-cancel-long-transactions.toml"),
    ),
    (
        "runbooks/pgbouncer-raise-pool.toml",
        include_str!("../../runbooks/pgbouncer-raise-pool.toml"),
    ),
    (
        "runbooks/pool-exhaustion.toml",
        include_str!("../../runbooks/pool-exhaustion.toml"),
    ),
    (
        "runbooks/queue-drain.toml",
        include_str!("../../runbooks/queue-drain.toml"),
    ),
    (
        "runbooks/raise-pool.toml",
        include_str!("../../runbooks/raise-pool.toml"),
    ),
    (
        "runbooks/redis-queue-drain.toml",
        include_str!("../../runbooks/redis-queue-drain.toml"),
    ),
    (
        "runbooks/rollback-deploy.toml",
        include_str!("../../runbooks/rollback-deploy.toml"),
    ),
    (
        "runbooks/scale-headroom.toml",
        include_str!("../../runbooks/scale-headroom.toml"),
    ),
    (
        "runbooks/shed-load.toml",
        include_str!("../../runbooks/shed-load.toml"),
    ),
];

/// How the description of a rehearsal runbook (one on the simulator's control API) begins.
pub const REHEARSAL_PREFIX: &str = "Rehearsal, on the simulator's control API:";

/// One line of the runbook list: a runbook that loads, or a file that does not and why.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Ready(Box<Runbook>),
    Broken { file: String, error: String },
}

impl Entry {
    /// The name shown in the list: the runbook's name, or the broken file's stem.
    pub fn name(&self) -> String {
        match self {
            Entry::Ready(r) => r.name.clone(),
            Entry::Broken { file, .. } => Path::new(file)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| file.clone()),
        }
    }

    pub fn runbook(&self) -> Option<&Runbook> {
        match self {
            Entry::Ready(r) => Some(r),
            Entry::Broken { .. } => None,
        }
    }

    /// Why this runbook cannot act here (`rehearsal`: on the simulator), from its
    /// `[applies] on`; `None` when it can, or does not say.
    pub fn refused_here(&self, rehearsal: bool) -> Option<&'static str> {
        (self.runbook()?.applies.as_ref()).and_then(|a| a.on.refused_here(rehearsal))
    }

    /// Why this runbook cannot act here: where it acts ([`Entry::refused_here`]), else why
    /// its variables do not resolve here (`unresolved`, by name: see [`unresolved`]).
    pub fn not_here(&self, rehearsal: bool, unresolved: &Unresolved) -> Option<String> {
        if let Some(why) = self.refused_here(rehearsal) {
            return Some(format!("not for here: it {why}"));
        }
        let why = unresolved.get(&self.runbook()?.name)?;
        Some(format!("cannot be prepared here: {why}"))
    }

    /// The list as a pane shows it: the runbooks that can act here first, then the others,
    /// each group in catalog order.
    pub fn here_first(entries: &mut [Entry], rehearsal: bool) {
        Entry::here_first_resolved(entries, rehearsal, &Unresolved::new());
    }

    /// [`Entry::here_first`], with the runbooks whose variables do not resolve here among the
    /// others.
    pub fn here_first_resolved(entries: &mut [Entry], rehearsal: bool, unresolved: &Unresolved) {
        entries.sort_by_key(|e| e.not_here(rehearsal, unresolved).is_some());
    }
}

/// Runbook name → why its variables do not resolve here.
pub type Unresolved = std::collections::BTreeMap<String, String>;

/// The runbooks of `entries` whose variables `setup` (this front end's values, the config's
/// `[runbooks.vars]`, the environment, the defaults) cannot resolve, each with the resolver's
/// error: a secret with no environment variable, a value the config gets wrong. Their plans
/// cannot be made here; the list dims them and says why rather than hide them.
pub fn unresolved(entries: &[Entry], setup: &super::setup::RunbookSetup) -> Unresolved {
    entries
        .iter()
        .filter_map(Entry::runbook)
        .filter_map(|rb| {
            let e = setup.resolve(rb).err()?;
            Some((
                rb.name.clone(),
                crate::sanitize::line(&e.to_string()).into_owned(),
            ))
        })
        .collect()
}

/// Where a runbook came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Built into warroom.
    Shipped,
    /// A file in one of the runbook directories.
    File(PathBuf),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Shipped => f.write_str("built in"),
            Origin::File(p) => write!(f, "{}", crate::sanitize::line(&p.display().to_string())),
        }
    }
}

/// The shipped text `rb` was loaded from, if it is a shipped runbook (same path, same bytes).
fn shipped_text(rb: &Runbook) -> Option<&'static str> {
    SHIPPED
        .iter()
        .find(|(f, text)| Path::new(f) == rb.file && load::content_hash(text) == rb.hash)
        .map(|(_, text)| *text)
}

/// Where `rb` came from.
pub fn origin(rb: &Runbook) -> Origin {
    match shipped_text(rb) {
        Some(_) => Origin::Shipped,
        None => Origin::File(rb.file.clone()),
    }
}

/// The text `rb` was loaded from: built in, or its file read again (its hash is checked by
/// whoever parses it again).
pub fn text(rb: &Runbook) -> Result<String, String> {
    match shipped_text(rb) {
        Some(t) => Ok(t.to_string()),
        None => super::load::read_again(&rb.file),
    }
}

/// The runbook directories to search, in order (a later one's runbook wins): the XDG config
/// dir's `warroom/runbooks/` and `./runbooks/` when they exist, the config's `[runbooks] dir`
/// between them, and `extra` (`--runbooks DIR`) last.
pub fn search_dirs(configured: Option<&Path>, extra: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(d) = crate::paths::default_runbook_dir().filter(|d| d.is_dir()) {
        dirs.push(d);
    }
    dirs.extend(configured.map(Path::to_path_buf));
    let here = PathBuf::from("runbooks");
    if here.is_dir() {
        dirs.push(here);
    }
    dirs.extend(extra.map(Path::to_path_buf));
    // The same directory twice (./runbooks is also the config's) is searched once, last.
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut unique: Vec<PathBuf> = Vec::new();
    for d in dirs.into_iter().rev() {
        if !unique.iter().any(|u| canon(u) == canon(&d)) {
            unique.push(d);
        }
    }
    unique.reverse();
    unique
}

/// What [`load_catalog`] found: the entries, and the runbooks a later one replaced.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// Sorted by name.
    pub entries: Vec<Entry>,
    /// `(name, what was replaced)` for each runbook a later one of the same name replaced.
    pub replaced: Vec<(String, Origin)>,
}

impl Catalog {
    /// The runbook called `name` (or whose file stem is `name`).
    pub fn find(&self, name: &str) -> Option<&Runbook> {
        let ready = || self.entries.iter().filter_map(Entry::runbook);
        ready()
            .find(|r| r.name == name)
            .or_else(|| ready().find(|r| r.file.file_stem().is_some_and(|s| s == name)))
    }

    /// The broken entry whose file is called `name`, if any.
    pub fn broken(&self, name: &str) -> Option<(&str, &str)> {
        self.entries.iter().find_map(|e| match e {
            Entry::Broken { file, error }
                if Path::new(file).file_stem().is_some_and(|s| s == name) =>
            {
                Some((file.as_str(), error.as_str()))
            }
            _ => None,
        })
    }

    /// The runbooks that load.
    pub fn runbooks(&self) -> impl Iterator<Item = &Runbook> {
        self.entries.iter().filter_map(Entry::runbook)
    }
}

/// Load the shipped runbooks and those in `dirs`, sorted by name; a directory that cannot be
/// read is listed as a broken entry that says so.
pub fn load(dirs: &[PathBuf]) -> Vec<Entry> {
    load_catalog(dirs).entries
}

/// [`load`], with what each later runbook replaced.
pub fn load_catalog(dirs: &[PathBuf]) -> Catalog {
    let mut replaced = Vec::new();
    let mut entries: Vec<Entry> = SHIPPED
        .iter()
        .map(
            |(file, text)| match load::parse(file, Path::new(file), text) {
                Ok(r) => Entry::Ready(Box::new(r)),
                Err(d) => Entry::Broken {
                    file: (*file).to_string(),
                    error: crate::sanitize::multiline(&d.to_string()).into_owned(),
                },
            },
        )
        .collect();
    for dir in dirs {
        let loaded = match load::load_dir(dir) {
            Ok(l) => l,
            Err(e) => {
                entries.push(Entry::Broken {
                    file: dir.display().to_string(),
                    error: format!(
                        "cannot read the runbook directory \"{}\": {e}; check [runbooks] dir in warroom.toml or --runbooks",
                        dir.display()
                    ),
                });
                continue;
            }
        };
        for r in loaded.runbooks {
            entries.retain(|e| match e.runbook() {
                Some(old) if old.name == r.name => {
                    // A copy of the same text (the checkout's own runbooks/) replaces nothing.
                    if old.hash != r.hash {
                        replaced.push((r.name.clone(), origin(old)));
                    }
                    false
                }
                _ => true,
            });
            entries.push(Entry::Ready(Box::new(r)));
        }
        for (f, d) in loaded.broken {
            entries.push(Entry::Broken {
                file: f.display().to_string(),
                error: crate::sanitize::multiline(&d.to_string()).into_owned(),
            });
        }
    }
    entries.sort_by_key(Entry::name);
    Catalog { entries, replaced }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_runbook_file_of_the_checkout_is_shipped_and_nothing_else() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("runbooks");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(std::result::Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".toml"))
            .map(|n| format!("runbooks/{n}"))
            .collect();
        on_disk.sort();
        let mut shipped: Vec<String> = SHIPPED.iter().map(|(f, _)| f.to_string()).collect();
        shipped.sort();
        assert_eq!(shipped, on_disk, "SHIPPED must list every runbooks/*.toml");
        for (f, text) in SHIPPED {
            assert_eq!(
                std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(f)).unwrap(),
                text
            );
        }
    }

    #[test]
    fn shipped_runbooks_all_load() {
        let entries = load(&[]);
        assert_eq!(entries.len(), SHIPPED.len());
        for e in &entries {
            assert!(e.runbook().is_some(), "{e:?}");
        }
        assert!(entries.iter().any(|e| e.name() == "pool-exhaustion"));
    }

    /// The runbooks that act on the simulator say so where the list and the pane show them
    /// (the first words of the description); the real-system ones never touch its control API.
    #[test]
    fn rehearsal_runbooks_are_named_as_such_and_real_ones_act_on_real_systems() {
        let entries = load(&[]);
        let mut rehearsal = 0;
        for rb in entries.iter().filter_map(Entry::runbook) {
            let text = shipped_text(rb).unwrap();
            let on_simulator = text.contains("/control/");
            assert_eq!(
                rb.description.starts_with(REHEARSAL_PREFIX),
                on_simulator,
                "{}: a runbook on the simulator's control API starts its description with {REHEARSAL_PREFIX:?}, and only such a one",
                rb.name
            );
            rehearsal += usize::from(on_simulator);
            // `[applies] on` says the same, typed: what the list and the suggestions read.
            let on = rb.applies.as_ref().map(|a| a.on);
            let want = if on_simulator {
                crate::runbook::model::Acts::Simulator
            } else {
                crate::runbook::model::Acts::Real
            };
            assert_eq!(on, Some(want), "{}: [applies] on", rb.name);
        }
        assert_eq!(
            rehearsal, 8,
            "the seven first rehearsal runbooks and scale-headroom"
        );
    }

    /// Issue 30 point 3: every shipped symptom, and every shipped precondition that judges a
    /// number, says its reading in words (`label`): the headline reads as the label says.
    #[test]
    fn shipped_symptoms_and_preconditions_say_their_readings_in_words() {
        let mut labels = 0;
        for rb in load(&[]).iter().filter_map(Entry::runbook) {
            let applies = rb.applies.as_ref().unwrap();
            assert_eq!(
                applies.symptom.is_some(),
                applies.label.is_some(),
                "{}: a symptom and its label",
                rb.name
            );
            for s in rb.preconditions() {
                let numeric = s.kind.condition().is_some();
                assert_eq!(numeric, s.label.is_some(), "{}: {}", rb.name, s.id);
                labels += usize::from(numeric);
            }
            labels += usize::from(applies.label.is_some());
        }
        assert!(labels >= 20, "{labels} labels");
    }

    /// Issue 30: the list shows first what can act here, the rest after it, each with why not.
    #[test]
    fn the_runbooks_that_can_act_here_come_first() {
        for rehearsal in [true, false] {
            let mut entries = load(&[]);
            Entry::here_first(&mut entries, rehearsal);
            let refused: Vec<bool> = (entries.iter())
                .map(|e| e.refused_here(rehearsal).is_some())
                .collect();
            let first_refused = refused.iter().position(|r| *r).unwrap();
            assert!(first_refused > 0, "something acts here");
            assert!(refused[first_refused..].iter().all(|r| *r), "{refused:?}");
            let why = entries.last().unwrap().refused_here(rehearsal).unwrap();
            match rehearsal {
                true => assert_eq!(first_refused, 8, "the eight rehearsal runbooks first"),
                false => assert!(why.contains("rehearsals only"), "{why}"),
            }
        }
    }

    /// Run from the checkout, `./runbooks/` holds the shipped files themselves: listing them
    /// says nothing about replacing, and they still count as built in.
    #[test]
    fn a_copy_of_a_shipped_runbook_replaces_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (file, text) = SHIPPED[0];
        let name = Path::new(file).file_name().unwrap();
        std::fs::write(dir.path().join(name), text).unwrap();
        let catalog = load_catalog(&[dir.path().to_path_buf()]);
        assert!(catalog.replaced.is_empty(), "{:?}", catalog.replaced);
        assert_eq!(catalog.entries.len(), SHIPPED.len());
        // Changed by one byte, it is the user's own and the note says so.
        std::fs::write(dir.path().join(name), format!("{text}\n")).unwrap();
        let catalog = load_catalog(&[dir.path().to_path_buf()]);
        assert_eq!(catalog.replaced.len(), 1, "{:?}", catalog.replaced);
    }

    #[test]
    fn a_broken_file_is_listed_and_a_directory_runbook_replaces_a_shipped_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("zz-broken.toml"), "name = \"x\"\n[[step]\n").unwrap();
        std::fs::write(
            dir.path().join("mine.toml"),
            "name = \"shed-load\"\ndescription = \"mine\"\n[[step]]\nid = \"n\"\nkind = \"note\"\ntext = \"hi\"\n",
        )
        .unwrap();
        let catalog = load_catalog(&[dir.path().to_path_buf()]);
        assert_eq!(
            catalog.replaced,
            vec![("shed-load".to_string(), Origin::Shipped)]
        );
        let mine = catalog.find("shed-load").unwrap();
        assert_eq!(origin(mine), Origin::File(dir.path().join("mine.toml")));
        assert_eq!(
            text(mine).unwrap(),
            std::fs::read_to_string(dir.path().join("mine.toml")).unwrap()
        );
        let entries = catalog.entries;
        let broken: Vec<_> = entries
            .iter()
            .filter(|e| matches!(e, Entry::Broken { .. }))
            .collect();
        assert_eq!(broken.len(), 1, "{entries:?}");
        let Entry::Broken { error, .. } = broken[0] else {
            unreachable!()
        };
        assert!(error.contains("zz-broken.toml:2"), "{error}");
        let shed: Vec<_> = entries.iter().filter(|e| e.name() == "shed-load").collect();
        assert_eq!(shed.len(), 1);
        assert_eq!(shed[0].runbook().unwrap().description, "mine");
        assert_eq!(entries.len(), SHIPPED.len() + 1);
    }

    #[test]
    fn a_runbook_whose_variables_do_not_resolve_here_is_listed_after_with_why() {
        let config =
            crate::config::Config::parse("w.toml", "[runbooks.vars]\ndrained_below = \"many\"\n")
                .unwrap();
        let setup = super::super::setup::RunbookSetup::from_config(&config);
        let mut entries: Vec<Entry> = load(&[])
            .into_iter()
            .filter(|e| {
                ["redis-queue-drain", "pgbouncer-raise-pool", "k8s-rollback"]
                    .contains(&e.name().as_str())
            })
            .collect();
        let unresolved = unresolved(&entries, &setup);
        // The config's bad value, from the resolver's typed error.
        let why = &unresolved["redis-queue-drain"];
        assert!(
            why.contains("\"many\"") && why.contains("[runbooks.vars]"),
            "{why}"
        );
        let e = setup.resolve(
            entries
                .iter()
                .find(|e| e.name() == "redis-queue-drain")
                .unwrap()
                .runbook()
                .unwrap(),
        );
        assert!(matches!(
            e,
            Err(super::super::setup::ResolveError::FromConfig { .. })
        ));
        assert!(!unresolved.contains_key("k8s-rollback"));
        Entry::here_first_resolved(&mut entries, false, &unresolved);
        assert_eq!(entries[0].name(), "k8s-rollback");
        let last = entries.last().unwrap();
        assert_eq!(
            last.not_here(false, &unresolved),
            Some(format!("cannot be prepared here: {why}"))
        );
        assert_eq!(entries[0].not_here(false, &unresolved), None);
        // Where it acts is said before its variables.
        let sim = load(&[])
            .into_iter()
            .find(|e| e.name() == "disable-retries")
            .unwrap();
        let all: Unresolved = [("disable-retries".to_string(), "x".to_string())].into();
        assert!(
            sim.not_here(false, &all)
                .unwrap()
                .starts_with("not for here: it ")
        );
    }
}
