//! The malformed-runbook corpus: every file fails to load with `file:line:col`, the line and
//! what was expected; insta pins each message.

use std::path::Path;
use warroom::runbook::load;

#[test]
fn every_malformed_runbook_is_reported_where_it_is_wrong() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runbooks/bad");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 25, "{} files", files.len());
    for f in &files {
        let stem = f.file_stem().unwrap().to_str().unwrap().to_string();
        let label = format!("bad/{stem}.toml");
        let source = std::fs::read_to_string(f).unwrap();
        let err = match load::parse(&label, f, &source) {
            Ok(_) => panic!("{label} loaded but is malformed"),
            Err(e) => e,
        };
        for d in &err.0 {
            assert!(
                d.headline().starts_with(&format!("{label}:")),
                "{label}: {}",
                d.headline()
            );
            if !source.is_empty() {
                assert!(d.source_line.is_some(), "{label}: no source line");
            }
        }
        insta::assert_snapshot!(stem, err.to_string());
    }
}
