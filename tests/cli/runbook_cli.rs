//! The headless CLI through the real binary: check, plan, dry run, typed confirmation on
//! stdin, `--yes`, exit statuses, and the run's record on disk without secrets.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn warroom(args: &[&str], data: &Path, stdin: &str, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_warroom"));
    c.args(args)
        .arg("--data-dir")
        .arg(data)
        .arg("--log-file")
        .arg(data.join("warroom.log"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

const RUNBOOK: &str = r#"name = "cli-test"
description = "retries off"
[variables]
base_url = { default = "http://127.0.0.1:1" }
token = { secret = true, env = "WR_CLI_TOKEN" }

[[step]]
id = "disable"
kind = "http"
method = "POST"
url = "{{base_url}}/control/retries"
headers = { Authorization = "Bearer {{token}}" }
json = { layer = "all", enabled = false }

[[step]]
id = "echo"
kind = "exec"
argv = ["echo", "token is {{token}}"]
"#;

#[test]
fn check_reports_broken_runbooks_and_exits_non_zero() {
    let data = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ok = warroom(
        &[
            "runbook",
            "check",
            "--runbooks",
            root.join("runbooks").to_str().unwrap(),
        ],
        data.path(),
        "",
        &[],
    );
    assert!(ok.status.success(), "{}", text(&ok));
    assert!(text(&ok).contains(&format!(
        "{} runbook(s) ok, 0 broken",
        warroom::runbook::catalog::SHIPPED.len()
    )));
    let bad_dir = root.join("tests/fixtures/runbooks/bad");
    let bad = warroom(
        &["runbook", "check", "--runbooks", bad_dir.to_str().unwrap()],
        data.path(),
        "",
        &[],
    );
    assert_eq!(bad.status.code(), Some(1));
    let n = std::fs::read_dir(&bad_dir).unwrap().count();
    assert!(
        text(&bad).contains(&format!("0 runbook(s) ok, {n} broken")),
        "{}",
        text(&bad)
    );
    let unknown = warroom(
        &[
            "runbook",
            "plan",
            "nope",
            "--runbooks",
            root.join("runbooks").to_str().unwrap(),
        ],
        data.path(),
        "",
        &[],
    );
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown).contains("no runbook named \"nope\""));
}

#[tokio::test]
async fn run_dry_run_confirmation_and_yes() {
    let s = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200))
        .mount(&s)
        .await;
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cli-test.toml"), RUNBOOK).unwrap();
    let rb = dir.path().to_str().unwrap().to_string();
    let base = format!("base_url={}", s.uri());
    let canary = "tok-canary-51e7";
    let env = [("WR_CLI_TOKEN", canary)];
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "runbook",
            "run",
            "cli-test",
            "--runbooks",
            &rb,
            "--var",
            &base,
        ];
        a.extend_from_slice(extra);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run = |extra: &[&'static str], stdin: &str| {
        let a = args(extra);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        warroom(&a, data.path(), stdin, &env)
    };

    let dry = run(&["--dry-run"], "");
    assert!(dry.status.success(), "{}", text(&dry));
    assert!(text(&dry).contains("dry run: nothing was sent"));
    assert_eq!(s.received_requests().await.unwrap().len(), 0);

    // Enter alone, then end of input: nothing happens, exit 3 (aborted).
    let declined = run(&[], "\n");
    assert_eq!(declined.status.code(), Some(3), "{}", text(&declined));
    assert_eq!(s.received_requests().await.unwrap().len(), 0);

    // Typed confirmation for both steps.
    let typed = run(&[], "disable\necho\n");
    assert_eq!(typed.status.code(), Some(0), "{}", text(&typed));
    assert_eq!(s.received_requests().await.unwrap().len(), 1);

    let yes = run(&["--yes"], "");
    assert_eq!(yes.status.code(), Some(0), "{}", text(&yes));
    assert_eq!(s.received_requests().await.unwrap().len(), 2);

    // The secret reached the server, but nothing we print or record.
    let reqs = s.received_requests().await.unwrap();
    assert_eq!(
        reqs[0]
            .headers
            .get("authorization")
            .unwrap()
            .to_str()
            .unwrap(),
        format!("Bearer {canary}")
    );
    for o in [&dry, &declined, &typed, &yes] {
        assert!(!text(o).contains(canary), "{}", text(o));
    }
    let mut recorded = String::new();
    for e in walk(data.path()) {
        recorded.push_str(&std::fs::read_to_string(e).unwrap_or_default());
    }
    assert!(
        recorded.contains("\"type\":\"step_finished\""),
        "{recorded}"
    );
    assert!(recorded.contains("token is ***"), "{recorded}");
    assert!(!recorded.contains(canary));

    // A failing endpoint with --yes: the run stops (exit 1), it does not continue.
    let down = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(422))
        .mount(&down)
        .await;
    let a = [
        "runbook",
        "run",
        "cli-test",
        "--runbooks",
        &rb,
        "--var",
        &format!("base_url={}", down.uri()),
        "--yes",
    ];
    let failed = warroom(&a, data.path(), "", &env);
    assert_eq!(failed.status.code(), Some(1), "{}", text(&failed));
    assert!(
        !text(&failed).contains("| token is"),
        "the exec step ran after a failure"
    );
}

fn walk(p: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).unwrap().flatten() {
        let path = e.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// `warroom runbook list` run from a directory with no `runbooks/` (an installed warroom):
/// the shipped runbooks are there; a user's runbook of the same name (in the XDG config dir)
/// replaces the shipped one and the list says where each comes from.
#[test]
fn runbooks_are_found_from_any_directory_and_a_users_own_wins() {
    let data = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let config_home = home.path().join("config");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_warroom"))
            .args(args)
            .arg("--data-dir")
            .arg(data.path())
            .arg("--log-file")
            .arg(data.path().join("warroom.log"))
            .current_dir(elsewhere.path())
            .env("XDG_CONFIG_HOME", &config_home)
            .env("HOME", home.path())
            .env_remove("WARROOM_CONFIG")
            .output()
            .unwrap()
    };
    let list = run(&["runbook", "list"]);
    assert!(list.status.success(), "{}", text(&list));
    let shown = String::from_utf8_lossy(&list.stdout).to_string();
    let shipped = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("runbooks"))
        .unwrap()
        .filter_map(std::result::Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "toml"))
        .count();
    let built_in = shown.lines().filter(|l| l.ends_with("[built in]")).count();
    assert_eq!(
        built_in, shipped,
        "every shipped runbook, built in:\n{shown}"
    );
    assert!(shown.contains("pool-exhaustion"), "{shown}");

    // A user's own shed-load in the XDG config dir wins, and the list says so.
    let mine = config_home.join("warroom/runbooks");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(
        mine.join("shed-load.toml"),
        "name = \"shed-load\"\ndescription = \"our own shedding\"\n[[step]]\nid = \"n\"\nkind = \"note\"\ntext = \"hi\"\n",
    )
    .unwrap();
    let list = run(&["runbook", "list"]);
    let shown = String::from_utf8_lossy(&list.stdout).to_string();
    let shed: Vec<&str> = shown
        .lines()
        .filter(|l| l.starts_with("shed-load "))
        .collect();
    assert_eq!(shed.len(), 1, "{shown}");
    assert!(
        shed[0].contains("our own shedding") && shed[0].contains("shed-load.toml"),
        "{shown}"
    );
    assert!(
        shown.contains("note: shed-load is your own; it replaces the built-in one"),
        "{shown}"
    );
    // The plan of a shipped runbook works from here too.
    let plan = run(&["runbook", "plan", "disable-retries"]);
    assert!(plan.status.success(), "{}", text(&plan));
}
