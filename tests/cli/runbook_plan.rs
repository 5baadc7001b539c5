//! The plan of every shipped runbook, snapshot-tested: requests and commands exactly as sent,
//! targets and batch order, gates and their conventions; secrets never appear.

use std::collections::BTreeMap;
use std::path::Path;
use warroom::backoff::Backoff;
use warroom::runbook::model::StepKind;
use warroom::runbook::{load, plan, vars};

#[test]
fn plans_of_the_shipped_runbooks() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("runbooks");
    let loaded = load::load_dir(&dir).unwrap();
    assert_eq!(
        loaded.runbooks.len(),
        warroom::runbook::catalog::SHIPPED.len()
    );
    for rb in &loaded.runbooks {
        // Secrets come from the environment: a canary that must not reach the plan.
        let canary = "pw-canary-5d1f";
        let v = vars::resolve(rb, &[], |_| Some(canary.to_string())).unwrap();
        // Batch targets as a query would resolve them: eight pods.
        let mut targets = BTreeMap::new();
        for s in &rb.steps {
            if let StepKind::Batch(_) = s.kind {
                targets.insert(s.id.clone(), (0..8).map(|i| format!("api-{i}")).collect());
            }
        }
        let text = plan::render(rb, &v, &targets, &Backoff::default());
        assert!(!text.contains(canary), "{}: a secret in the plan", rb.name);
        insta::with_settings!({filters => vec![(r"crc32:[0-9a-f]{8}:\d+", "[hash]")]}, {
            insta::assert_snapshot!(format!("plan-{}", rb.name), text);
        });
    }
}

#[test]
fn secrets_and_hostile_targets_in_a_plan() {
    let src = r#"name = "s"
[variables]
token = { secret = true, env = "WR_TEST_TOKEN" }
base_url = { default = "http://127.0.0.1:9187" }

[[step]]
id = "call"
kind = "http"
method = "POST"
url = "{{base_url}}/control/scale"
headers = { Authorization = "Bearer {{token}}" }
json = { replicas = 4, note = "by {{token}}" }

[[step]]
id = "restart"
kind = "batch"
targets = ["$(touch /tmp/x)", "a b/c", "x\"} or vector(1)"]
size = 1
[step.action]
argv = ["echo", "restart", "{{target}}"]
[step.instance]
query = 'up{pod="{{target}}"}'
above = 0.5
"#;
    let rb = load::parse("s.toml", Path::new("s.toml"), src).unwrap();
    let canary = "canary-secret-9d2c";
    let v = vars::resolve(&rb, &[], |k| {
        (k == "WR_TEST_TOKEN").then(|| canary.to_string())
    })
    .unwrap();
    let text = plan::render(&rb, &v, &BTreeMap::new(), &Backoff::default());
    assert!(!text.contains(canary), "{text}");
    assert!(!format!("{v:?}{rb:?}").contains(canary));
    // The hostile label value stays one argv element, and is escaped inside PromQL.
    assert!(
        text.contains(r#"argv: ["echo","restart","$(touch /tmp/x)"]"#),
        "{text}"
    );
    assert!(
        text.contains(r#"query:     up{pod="$(touch /tmp/x)"}"#),
        "{text}"
    );
    insta::with_settings!({filters => vec![(r"crc32:[0-9a-f]{8}:\d+", "[hash]")]}, {
        insta::assert_snapshot!("plan-secrets", text);
    });
    // A secret on the command line is refused.
    assert!(vars::resolve(&rb, &["token=x".into()], |_| None).is_err());

    // A secret with no value: a run refuses, a plan shows it as not set and says what it needs.
    assert!(vars::resolve(&rb, &[], |_| None).is_err());
    let v = vars::resolve_for(&rb, &[], |_| None, vars::Purpose::Plan).unwrap();
    assert_eq!(
        v.unset,
        vec![("token".into(), Some("WR_TEST_TOKEN".into()))]
    );
    let text = plan::render(&rb, &v, &BTreeMap::new(), &Backoff::default());
    assert!(
        text.contains("token = <not set>  (secret, from $WR_TEST_TOKEN)"),
        "{text}"
    );
    assert!(
        text.contains(
            "needed before a run: the secret \"token\" (set the environment variable WR_TEST_TOKEN)"
        ),
        "{text}"
    );
}

/// `warroom runbook plan` shows the plan of a runbook whose secret is not set (a responder
/// reads what it would do before anyone fetches the password); `runbook run` still refuses.
#[test]
fn plan_with_a_secret_not_set_shows_it_and_run_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_warroom"))
            .args(args)
            .env_remove("PGBOUNCER_ADMIN_PASSWORD")
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env("XDG_STATE_HOME", dir.path().join("state"))
            .output()
            .unwrap()
    };
    let plan = run(&["runbook", "plan", "pgbouncer-raise-pool"]);
    let text = String::from_utf8_lossy(&plan.stdout);
    assert!(
        plan.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    assert!(text.contains("pgbouncer_password = <not set>"), "{text}");
    assert!(text.contains("PGBOUNCER_ADMIN_PASSWORD"), "{text}");
    assert!(text.contains("\nSteps"), "the whole plan is shown: {text}");
    let dry = run(&["runbook", "run", "pgbouncer-raise-pool", "--dry-run"]);
    let err = String::from_utf8_lossy(&dry.stderr);
    assert!(!dry.status.success(), "a run needs the secret: {err}");
    assert!(err.contains("pgbouncer_password"), "{err}");
}

#[test]
fn hostile_runbook_text_never_reaches_the_plan_raw() {
    for (i, h) in warroom::sanitize::HOSTILE_SAMPLES.iter().enumerate() {
        let quoted = toml::Value::String(h.to_string()).to_string();
        let src = format!(
            "name = {quoted}\ndescription = {quoted}\n[[step]]\nid = \"a\"\nkind = \"exec\"\ntitle = {quoted}\nargv = [\"echo\", {quoted}]\n[[step]]\nid = \"b\"\nkind = \"note\"\ntext = {quoted}\n"
        );
        let rb = match load::parse("h.toml", Path::new("h.toml"), &src) {
            Ok(rb) => rb,
            // Some samples are not valid in a runbook at all (e.g. a lone "{{"): refused is fine.
            Err(e) => {
                assert!(
                    warroom::sanitize::is_clean(&e.to_string(), true),
                    "sample {i}"
                );
                continue;
            }
        };
        let v = vars::resolve(&rb, &[], |_| None).unwrap();
        let text = plan::render(&rb, &v, &BTreeMap::new(), &Backoff::default());
        assert!(
            warroom::sanitize::is_clean(&text, true),
            "sample {i}: {text:?}"
        );
        assert!(warroom::sanitize::is_clean(&rb.description, true));
        assert!(warroom::sanitize::is_clean(&rb.steps[0].title, false));
    }
}
