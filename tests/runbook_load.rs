//! Loading runbooks: the shipped ones load, templates are checked, one broken file never hides
//! the others.

use std::path::{Path, PathBuf};
use warroom::runbook::load;
use warroom::runbook::model::StepKind;

fn shipped() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("runbooks")
}

#[test]
fn every_shipped_runbook_loads() {
    let loaded = load::load_dir(&shipped()).unwrap();
    for (f, d) in &loaded.broken {
        eprintln!("{}: {d}", f.display());
    }
    assert!(loaded.broken.is_empty());
    assert!(!loaded.runbooks.is_empty());
    let dr = loaded
        .runbooks
        .iter()
        .find(|r| r.name == "disable-retries")
        .unwrap();
    let step = dr.step("disable").unwrap();
    assert!(step.mutating, "a POST is mutating by default");
    assert!(matches!(step.kind, StepKind::Http(_)));
}

#[test]
fn one_broken_runbook_does_not_hide_the_others() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        shipped().join("disable-retries.toml"),
        dir.path().join("a.toml"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b.toml"),
        "name = \"b\"\n[[step]]\nid = 1\n",
    )
    .unwrap();
    std::fs::copy(
        shipped().join("disable-retries.toml"),
        dir.path().join("c.toml"),
    )
    .unwrap();
    let loaded = load::load_dir(dir.path()).unwrap();
    assert_eq!(loaded.runbooks.len(), 2);
    assert_eq!(loaded.broken.len(), 1);
    let msg = loaded.broken[0].1.to_string();
    assert!(msg.contains("b.toml:3:6"), "{msg}");
}

#[test]
fn all_problems_of_a_file_are_reported() {
    let src = r#"name = "x"
[[step]]
id = "a"
kind = "exec"
argv = []
[[step]]
id = "a"
kind = "note"
text = "{{nope}}"
"#;
    let err = load::parse("x.toml", Path::new("x.toml"), src).unwrap_err();
    assert_eq!(err.0.len(), 2, "{err}");
    assert!(
        err.0[0].headline().starts_with("x.toml:5:8: argv is empty"),
        "{err}"
    );
    assert!(
        err.0[1]
            .headline()
            .starts_with("x.toml:7:6: duplicate step id"),
        "{err}"
    );
}
