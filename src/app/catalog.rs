//! The runbooks the console offers: the shipped ones (built into the binary, so `warroom demo`
//! has them from any directory) and every `*.toml` in the configured directories. A file in a
//! directory replaces a shipped runbook of the same name; a broken file is listed with its
//! error and the others stay usable.

use crate::runbook::load;
use crate::runbook::model::Runbook;
use std::path::{Path, PathBuf};

/// The shipped runbooks, as `runbooks/NAME.toml` and their text.
pub const SHIPPED: [(&str, &str); 7] = [
    (
        "runbooks/batch-restart.toml",
        include_str!("../../runbooks/batch-restart.toml"),
    ),
    (
        "runbooks/disable-retries.toml",
        include_str!("../../runbooks/disable-retries.toml"),
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
        "runbooks/rollback-deploy.toml",
        include_str!("../../runbooks/rollback-deploy.toml"),
    ),
    (
        "runbooks/shed-load.toml",
        include_str!("../../runbooks/shed-load.toml"),
    ),
];

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
}

/// Load the shipped runbooks and those in `dirs`, sorted by name; a directory that cannot be
/// read is listed as a broken entry that says so.
pub fn load(dirs: &[PathBuf]) -> Vec<Entry> {
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
                        "cannot read the runbook directory \"{}\": {e}; check runbook_dir in warroom.toml",
                        dir.display()
                    ),
                });
                continue;
            }
        };
        for r in loaded.runbooks {
            entries.retain(|e| e.name() != r.name);
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
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_runbooks_all_load() {
        let entries = load(&[]);
        assert_eq!(entries.len(), SHIPPED.len());
        for e in &entries {
            assert!(e.runbook().is_some(), "{e:?}");
        }
        assert!(entries.iter().any(|e| e.name() == "pool-exhaustion"));
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
        let entries = load(&[dir.path().to_path_buf()]);
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
}
