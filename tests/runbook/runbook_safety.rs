//! What runbooks may contain: a hostile name or step id is refused at load with `file:line:col`
//! (a `../` name once wrote the run record outside the data dir), hostile text in either is
//! never shown raw, and invalid UTF-8 is reported at its line.

use std::path::Path;
use warroom::runbook::load;

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runbooks")
}

#[test]
fn hostile_names_and_ids_are_refused_where_they_are_written() {
    let cases = [
        ("43-name-path-traversal", 1, "holds a path separator"),
        (
            "44-name-control-character",
            1,
            "holds a control, bidi or invisible character",
        ),
        (
            "45-step-id-bidi-override",
            4,
            "holds a control, bidi or invisible character",
        ),
        (
            "46-step-id-nul",
            4,
            "holds a control, bidi or invisible character",
        ),
        ("47-step-id-dotdot-slash", 4, "holds a path separator"),
    ];
    for (stem, line, why) in cases {
        let path = fixtures().join(format!("bad/{stem}.toml"));
        let err = load::load_file(&path).expect_err(stem);
        let d = &err.0[0];
        assert_eq!(d.line, line, "{stem}: {}", d.headline());
        assert!(d.message.contains(why), "{stem}: {}", d.message);
        // What is shown of it is escaped, never raw.
        let text = err.to_string();
        assert!(
            !text
                .chars()
                .any(|c| c != '\n' && warroom::sanitize::is_hostile(c)),
            "{stem}: raw control characters in {text:?}"
        );
    }
}

#[test]
fn every_clean_name_still_loads() {
    for name in ["raise-pool", "pg.cancel_long-tx", "k8s-rollback", "a"] {
        let src = format!(
            "name = \"{name}\"\n[[step]]\nid = \"{name}\"\nkind = \"note\"\ntext = \"x\"\n"
        );
        let rb = load::parse("t.toml", Path::new("t.toml"), &src).unwrap();
        assert_eq!(rb.name, name);
    }
}

#[test]
fn invalid_utf8_is_reported_at_its_line_and_column() {
    let path = fixtures().join("bad-bytes/invalid-utf8.toml");
    let err = load::load_file(&path).expect_err("invalid UTF-8 loaded");
    let d = &err.0[0];
    assert_eq!((d.line, d.col), (6, 12), "{}", d.headline());
    assert!(d.message.contains("byte 0xe9"), "{}", d.message);
    let shown = err
        .to_string()
        .replace(&path.display().to_string(), "bad-bytes/invalid-utf8.toml");
    insta::assert_snapshot!("invalid-utf8", shown);
}
