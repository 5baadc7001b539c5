//! The console polls GitHub's changes through the shared intake: the real event loop (test
//! backend) with `[github]` pointing at the loopback mock records the fixture's deployments,
//! releases and merged pull requests on the timeline in the order they happened, once each,
//! however often it polls; opened again on the same incident it records only what is new.

use crate::support::console;
use console::{Silent, quit_when, run_console};

use crate::support::github_mock;

use chrono::{Duration as Span, Utc};
use github_mock::GithubMock;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use warroom::app::Model;
use warroom::app::model::IncidentHeader;
use warroom::app::workers::Services;
use warroom::app::workers::github::GithubSetup;
use warroom::config::Config;
use warroom::github::{ChangesIntake, Github, WallTimer};
use warroom::incident::{Event, IncidentId, JournalWriter, Record, Store};
use warroom::theme::Theme;

/// `minutes` ago, as GitHub writes times.
fn ago(minutes: i64) -> String {
    (Utc::now() - Span::minutes(minutes))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// Deployments, releases and pull requests around now: five inside the look-back (one with a
/// hostile title), and a deployment too old, a draft release and a closed pull request that
/// must not appear.
pub fn fixture() -> serde_json::Value {
    json!({
        "deployments": [
            {"id": 12, "sha": "9f8e7d6c5b4a", "ref": "v2.3.2", "environment": "production",
             "description": "", "created_at": ago(10), "creator": {"login": "ci-bot"}},
            {"id": 11, "sha": "abcdef1234567", "ref": "main", "environment": "production",
             "description": "planner v2.3.1", "created_at": ago(40), "creator": {"login": "ana"}},
            {"id": 10, "sha": "1111111", "ref": "main", "environment": "staging",
             "description": "too early", "created_at": ago(60 * 30)}
        ],
        "statuses": {
            "11": [{"state": "success", "target_url": "https://ci.example/deploy/11"}],
            "12": []
        },
        "releases": [
            {"id": 6, "tag_name": "v2.4.0", "name": "draft", "draft": true, "published_at": null},
            {"id": 5, "tag_name": "v2.3.1", "name": "Planner 2.3.1", "draft": false,
             "published_at": ago(45), "html_url": "https://github.example/acme/api/releases/tag/v2.3.1",
             "author": {"login": "bob"}}
        ],
        "pulls": [
            {"number": 44, "title": "Roll back the planner query", "merged_at": ago(25),
             "html_url": "https://github.example/acme/api/pull/44", "user": {"login": "eve"}},
            {"number": 43, "title": "Closed without merging", "merged_at": null,
             "html_url": "https://github.example/acme/api/pull/43"},
            {"number": 42, "title": "Skip the index for stale plans \u{1b}[2J", "merged_at": ago(50),
             "html_url": "https://github.example/acme/api/pull/42", "user": {"login": "ana"}}
        ]
    })
}

/// The references of the fixture's five changes, in the order they happened.
pub const EXPECTED: [&str; 5] = [
    "#42",
    "v2.3.1",
    "deploy production main@abcdef1",
    "#44",
    "deploy production v2.3.2@9f8e7d6",
];

fn changes(records: &[Record]) -> Vec<(String, Option<String>, String)> {
    records
        .iter()
        .filter_map(|r| match &r.kind {
            Event::Change { reference, url, .. } => {
                Some((reference.clone(), url.clone(), r.actor.clone()))
            }
            _ => None,
        })
        .collect()
}

fn journal_changes(store: &Store, id: &IncidentId) -> Vec<(String, Option<String>, String)> {
    changes(&store.read(id).unwrap().records)
}

/// Runs the console loop on `id` with the changes feed polling `url` every 100 ms until the
/// journal holds `want` changes and several more polls have passed; returns the final model.
async fn console(store: &Store, id: &IncidentId, url: &str, want: usize) -> Model {
    let (incident, recovery) = store
        .open_incident(id, warroom::incident::store::Role::Console)
        .unwrap();
    let journal = JournalWriter::spawn(incident).unwrap();
    let config = Config::parse(
        "warroom.toml",
        &format!("[github]\napi_url = \"{url}\"\nwatch = [\"acme/api\"]\n"),
    )
    .unwrap()
    .with_panels(warroom::metrics::presets::sim_panels());
    let mut model = Model::new(&config, Theme::fallback(), "silent".into(), Utc::now());
    model.incident = Some(IncidentHeader {
        id: id.to_string(),
        title: "t".into(),
    });
    model.timeline = recovery.records;
    let gh = Github::new(
        url,
        Some(&warroom::secret::Secret::new("t0ken")),
        Duration::from_secs(5),
        Arc::new(WallTimer),
    )
    .unwrap();
    let intake = ChangesIntake::new(
        Arc::new(gh),
        vec!["acme/api".parse().unwrap()],
        Duration::from_secs(2 * 3600),
        Duration::from_millis(100),
    );
    let services = Services {
        source: Arc::new(Silent),
        declare: None,
        journal: Some(journal),
        alerts: None,
        runbooks: Default::default(),
        export: None,
        rehearsal: None,
        github: Some(GithubSetup {
            changes: Some(intake),
            publish: None,
        }),
        serve: false,
        follow: None,
        discovery: None,
        variables: None,
        silences: None,
        engine: None,
        leaving: Default::default(),
    };
    let (store2, id2) = (store.clone(), id.clone());
    // Several more polls of the same changes once they are recorded.
    run_console(model, services, 120, Duration::from_secs(20), |tx| {
        quit_when(tx, 200, Duration::from_millis(600), move || {
            journal_changes(&store2, &id2).len() >= want
        })
    })
    .await
}

async fn released(store: &Store, id: &IncidentId) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while store.holder(id).unwrap().is_some() {
        assert!(
            std::time::Instant::now() < deadline,
            "the console kept the lock"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn polls(mock: &GithubMock) -> usize {
    mock.log()
        .iter()
        .filter(|l| l.path.contains("state=closed"))
        .count()
}

#[tokio::test]
async fn the_console_records_each_change_once_in_order_also_after_a_restart() {
    let mock = GithubMock::start(None).await;
    mock.state.lock().unwrap().changes = fixture();
    let data = tempfile::tempdir().unwrap();
    let store = Store::new(data.path());
    let id = store.create(Utc::now()).unwrap();
    {
        let (mut inc, _) = store
            .open_incident(&id, warroom::incident::store::Role::Cli)
            .unwrap();
        inc.journal
            .append(
                warroom::incident::Source::Operator,
                "ana",
                Event::IncidentOpened {
                    title: "Journey planner outage".into(),
                    severity: warroom::incident::event::Severity::Sev2,
                },
            )
            .unwrap();
    }

    let model = console(&store, &id, &mock.url, EXPECTED.len()).await;
    let first_polls = polls(&mock);
    assert!(first_polls >= 3, "polled again and again: {first_polls}");
    let recorded = journal_changes(&store, &id);
    let refs: Vec<&str> = recorded.iter().map(|(r, _, _)| r.as_str()).collect();
    assert_eq!(refs, EXPECTED, "in the order they happened, once each");
    assert_eq!(
        recorded[2],
        (
            EXPECTED[2].to_string(),
            Some("https://ci.example/deploy/11".to_string()),
            "ana".to_string()
        ),
        "with its link and who made it"
    );
    assert_eq!(
        changes(&model.timeline),
        recorded,
        "the console's timeline holds them"
    );
    let hostile = model
        .timeline
        .iter()
        .find_map(|r| match &r.kind {
            Event::Change { title, .. } if title.contains("stale plans") => Some(title.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(hostile, "merged: Skip the index for stale plans \\e[2J");
    assert!(model.changes.trouble.is_none());
    let log = mock.log();
    assert!(log.iter().all(|l| !l.is_write()), "the feed only reads");
    assert_eq!(
        mock.state.lock().unwrap().max_in_flight,
        1,
        "one request at a time"
    );
    assert!(
        log.iter()
            .all(|l| l.auth.as_deref() == Some("Bearer t0ken"))
    );

    // Opened again: the journal says what is known; only a new merge is recorded.
    released(&store, &id).await;
    mock.state.lock().unwrap().changes["pulls"]
        .as_array_mut()
        .unwrap()
        .insert(
            0,
            json!({"number": 45, "title": "Raise the pool size", "merged_at": ago(1),
                   "html_url": "https://github.example/acme/api/pull/45"}),
        );
    let model = console(&store, &id, &mock.url, EXPECTED.len() + 1).await;
    assert!(
        polls(&mock) >= first_polls + 3,
        "polled again after the restart"
    );
    let again = journal_changes(&store, &id);
    let refs: Vec<&str> = again.iter().map(|(r, _, _)| r.as_str()).collect();
    let mut want = EXPECTED.to_vec();
    want.push("#45");
    assert_eq!(refs, want, "nothing twice after the restart");
    assert_eq!(again[5].2, "github", "no author given: the feed's own name");
    assert_eq!(changes(&model.timeline), again);
}
