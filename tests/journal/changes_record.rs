//! `warroom record ID` as a child process with only `[github]` configured (pointing at the
//! loopback mock, the token from an owner-only file): the fixture's changes reach the journal
//! in the order they happened, once each; SIGTERM stops it; started again on the same
//! incident, it polls again and records nothing twice.

use crate::support::github_mock;

use chrono::{Duration as Span, Utc};
use github_mock::GithubMock;
use serde_json::json;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use warroom::incident::{Event, IncidentId, Store};

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn ago(minutes: i64) -> String {
    (Utc::now() - Span::minutes(minutes))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn fixture() -> serde_json::Value {
    json!({
        "deployments": [
            {"id": 11, "sha": "abcdef1234567", "ref": "main", "environment": "production",
             "description": "planner v2.3.1", "created_at": ago(40), "creator": {"login": "ana"}},
            {"id": 10, "sha": "1111111", "ref": "main", "environment": "staging",
             "description": "too early", "created_at": ago(60 * 30)}
        ],
        "statuses": {"11": [{"state": "success", "target_url": "https://ci.example/deploy/11"}]},
        "releases": [
            {"id": 5, "tag_name": "v2.3.1", "name": "Planner 2.3.1", "draft": false,
             "published_at": ago(45), "html_url": "https://github.example/acme/api/releases/tag/v2.3.1"}
        ],
        "pulls": [
            {"number": 42, "title": "Skip the index \u{1b}[2J", "merged_at": ago(50),
             "html_url": "https://github.example/acme/api/pull/42"}
        ]
    })
}

const EXPECTED: [&str; 3] = ["#42", "v2.3.1", "deploy production main@abcdef1"];

fn changes(store: &Store, id: &IncidentId) -> Vec<String> {
    store
        .read(id)
        .unwrap()
        .records
        .iter()
        .filter_map(|r| match &r.kind {
            Event::Change { reference, .. } => Some(reference.clone()),
            _ => None,
        })
        .collect()
}

fn record(data: &Path, id: &IncidentId) -> Killed {
    let child = Command::new(env!("CARGO_BIN_EXE_warroom"))
        .arg("--data-dir")
        .arg(data)
        .arg("--config")
        .arg(data.join("warroom.toml"))
        .arg("--log-file")
        .arg(data.join("warroom.log"))
        .args(["record", &id.to_string()])
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start warroom record");
    Killed(child)
}

async fn stop(mut rec: Killed) {
    let pid = nix::unistd::Pid::from_raw(rec.0.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(status) = rec.0.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the recorder did not stop on SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn polls(mock: &GithubMock) -> usize {
    mock.log()
        .iter()
        .filter(|l| l.path.contains("state=closed"))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_recorder_records_github_changes_once_each() {
    let mock = GithubMock::start(None).await;
    mock.state.lock().unwrap().changes = fixture();
    let data = tempfile::tempdir().unwrap();
    let token = data.path().join("github-token");
    std::fs::write(&token, "t0ken-from-file\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    std::fs::write(
        data.path().join("warroom.toml"),
        format!(
            "[github]\napi_url = \"{}\"\nwatch = [\"acme/api\"]\nlookback = \"2h\"\ntoken_file = \"{}\"\n",
            mock.url,
            token.display()
        ),
    )
    .unwrap();
    let store = Store::new(data.path());
    let id = store.create(Utc::now()).unwrap();

    let rec = record(data.path(), &id);
    let deadline = Instant::now() + Duration::from_secs(20);
    while changes(&store, &id).len() < EXPECTED.len() {
        assert!(
            Instant::now() < deadline,
            "changes not recorded: {:?}",
            changes(&store, &id)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop(rec).await;
    assert_eq!(changes(&store, &id), EXPECTED, "in order, once each");
    let records = store.read(&id).unwrap().records;
    assert!(matches!(
        records.last().map(|r| &r.kind),
        Some(Event::Interrupted { signal }) if signal == "SIGTERM"
    ));
    let log = mock.log();
    assert!(
        log.iter()
            .all(|l| l.auth.as_deref() == Some("Bearer t0ken-from-file")),
        "the token from the file"
    );
    let logged = std::fs::read_to_string(data.path().join("warroom.log")).unwrap_or_default();
    assert!(
        !logged.contains("t0ken-from-file"),
        "the token is never logged"
    );

    // Started again: it polls, and records nothing twice.
    let before = polls(&mock);
    let rec = record(data.path(), &id);
    let deadline = Instant::now() + Duration::from_secs(20);
    while polls(&mock) == before {
        assert!(Instant::now() < deadline, "the recorder did not poll again");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The poll's answer is being recorded: give it a moment.
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop(rec).await;
    assert_eq!(
        changes(&store, &id),
        EXPECTED,
        "nothing twice after a restart"
    );
}
