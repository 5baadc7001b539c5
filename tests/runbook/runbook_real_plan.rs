//! The plans of the draft real-system runbooks, as an operator reads them before anything is
//! sent: every statement and runtime-API command exactly as it will go, where passwords come
//! from (never their values), the conditions, waits and timeouts.

use std::path::Path;
use warroom::runbook::{load, plan, vars};

#[test]
fn the_draft_real_system_runbooks_plan_readably() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runbooks/real");
    let loaded = load::load_dir(&dir).unwrap();
    if let Some((f, d)) = loaded.broken.first() {
        panic!("{} does not load:\n{d}", f.display());
    }
    assert_eq!(loaded.runbooks.len(), 3);
    for rb in &loaded.runbooks {
        let canary = "pw-canary-5d1f";
        let v = vars::resolve(rb, &[], |_| Some(canary.to_string())).unwrap();
        let bound = load::bind(rb, &v.values).unwrap();
        let text = plan::render(
            &bound,
            &v,
            &Default::default(),
            &warroom::backoff::Backoff::default(),
        );
        assert!(!text.contains(canary), "{}: a secret in the plan", rb.name);
        let text = text.replace(&rb.hash, "HASH");
        insta::assert_snapshot!(rb.name.clone(), text);
    }
}
