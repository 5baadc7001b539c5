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

#[test]
fn duration_fields_may_name_a_duration_variable_and_take_the_runs_value() {
    use warroom::runbook::vars;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("soak.toml");
    std::fs::write(
        &file,
        r#"name = "soak"
[variables]
soak = { default = "15s", type = "duration" }
[[step]]
id = "restart"
kind = "batch"
targets = ["api-1"]
size = 1
soak = "{{soak}}"
[step.action]
method = "POST"
url = "http://127.0.0.1:9187/control/restart"
[step.instance]
query = 'up{pod="{{target}}"}'
above = 0.5
interval = "{{ soak }}"
"#,
    )
    .unwrap();
    let soak_of = |rb: &warroom::runbook::model::Runbook| match &rb.steps[0].kind {
        StepKind::Batch(b) => (b.soak, b.instance.interval),
        other => panic!("{other:?}"),
    };
    let rb = load::load_file(&file).unwrap();
    let fifteen = std::time::Duration::from_secs(15);
    assert_eq!(soak_of(&rb), (fifteen, fifteen), "the default");
    let resolved = vars::resolve(&rb, &["soak=1500ms".into()], |_| None).unwrap();
    let bound = load::bind(&rb, &resolved.values).unwrap();
    let quick = std::time::Duration::from_millis(1500);
    assert_eq!(soak_of(&bound), (quick, quick), "the run's value");
    assert_eq!(bound.hash, rb.hash, "the same file: a run can still resume");
    // A value that is not a duration never gets that far.
    let e = vars::resolve(&rb, &["soak=soon".into()], |_| None).unwrap_err();
    assert!(e.to_string().contains("expected a duration"), "{e}");
}

/// A runbook with `[applies]`, a precondition and a step that acts.
const APPLIES: &str = r#"name = "p"
[applies]
on = "real"
symptom = { query = 'sum(waiting)', above = 0 }

[[step]]
id = "room"
kind = "check"
precondition = true
gate = { query = 'max(used)', below = 0.8 }

[[step]]
id = "act"
kind = "exec"
argv = ["true"]
"#;

/// Issue 30: `[applies]` says where a runbook acts and its symptom; `precondition = true` marks
/// read-only steps that must pass first, before anything changes.
#[test]
fn applies_and_preconditions_are_checked_where_they_are_written() {
    let good = APPLIES;
    let rb = load::parse("p.toml", Path::new("p.toml"), good).unwrap();
    let a = rb.applies.as_ref().unwrap();
    assert_eq!(a.on, warroom::runbook::model::Acts::Real);
    assert!(a.symptom.is_some());
    let pre: Vec<&str> = rb.preconditions().map(|s| s.id.as_str()).collect();
    assert_eq!(pre, ["room"]);
    let bad = |src: &str| load_err(src);
    // An `on` of neither kind.
    let e = bad(&good.replace("on = \"real\"", "on = \"prod\""));
    assert!(
        e.contains("p.toml:3:") && e.contains("expected \"real\""),
        "{e}"
    );
    // A precondition that changes the system, and one after a change.
    let acting = good.replace(
        "argv = [\"true\"]",
        "argv = [\"true\"]\nprecondition = true",
    );
    let e = bad(&acting);
    assert!(e.contains("applies to a step that only reads"), "{e}");
    let late = format!(
        "{good}\n[[step]]\nid = \"after\"\nkind = \"check\"\nprecondition = true\ngate = {{ query = 'x', above = 0 }}\n"
    );
    let e = bad(&late);
    assert!(
        e.contains("step \"after\" comes after \"act\", which changes the system"),
        "{e}"
    );
}

/// Issue 30 point 3: a symptom's and a precondition's `label` say their readings in words;
/// `runbook check` says where one has no reading mark, names an unknown variable, or sits where
/// nothing is read.
#[test]
fn labels_say_readings_in_words_and_are_checked_where_they_are_written() {
    let good = APPLIES
        .replace(
            "name = \"p\"\n",
            "name = \"p\"\n[variables]\ndatabase = { default = \"app\" }\n",
        )
        .replace(
            "above = 0 }\n",
            "above = 0 }\nlabel = \"waiting clients of {{database}} {value}\"\n",
        )
        .replace(
            "precondition = true\n",
            "precondition = true\nlabel = \"PostgreSQL at {percent} of max_connections\"\n",
        );
    let rb = load::parse("p.toml", Path::new("p.toml"), &good).unwrap();
    let values = warroom::runbook::template::Values::from([("database".into(), "appdb".into())]);
    let symptom = rb.applies.as_ref().unwrap().label.as_ref().unwrap();
    assert_eq!(
        symptom.words(&values).unwrap().reading(30.0),
        "waiting clients of appdb 30"
    );
    let room = rb.step("room").unwrap().label.as_ref().unwrap();
    let condition = warroom::runbook::gate::Condition::Below(0.8);
    assert_eq!(
        room.words(&values).unwrap().short_of(0.89, condition),
        "PostgreSQL at 89 % of max_connections, needs < 80 %"
    );
    let bad = |from: &str, to: &str| load_err(&good.replace(from, to));
    let e = bad("clients of {{database}} {value}", "clients");
    assert!(e.contains("p.toml:7:") && e.contains("{value}"), "{e}");
    let e = bad("{{database}} {value}", "{{db}} {value}");
    assert!(e.contains("unknown variable \"db\""), "{e}");
    let e = bad("of max_connections\"", "of {value} max_connections\"");
    assert!(e.contains("p.toml:13:") && e.contains("has 2"), "{e}");
    let e = bad(
        "argv = [\"true\"]",
        "argv = [\"true\"]\nlabel = \"{value} done\"",
    );
    assert!(e.contains("this step is no precondition"), "{e}");
    let e = bad("symptom = { query = 'sum(waiting)', above = 0 }\n", "");
    assert!(e.contains("[applies] has no symptom"), "{e}");
    // A reading that is not a number has no words to say it in.
    let text = "[[step]]\nid = \"mode\"\nkind = \"sql\"\nprecondition = true\nlabel = \"mode {value}\"\ndsn = \"host=127.0.0.1\"\nstatement = \"SHOW CONFIG\"\nread_only = true\nexpect = { column = \"value\", where = { key = \"pool_mode\" }, equals = \"transaction\" }\n\n[[step]]\nid = \"act\"";
    let e = bad("[[step]]\nid = \"act\"", text);
    assert!(e.contains("judges none"), "{e}");
}

/// The error of loading `src` as `p.toml`.
fn load_err(src: &str) -> String {
    load::parse("p.toml", Path::new("p.toml"), src)
        .unwrap_err()
        .to_string()
}
