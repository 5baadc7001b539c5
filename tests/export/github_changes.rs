//! The changes feed turns a fixture of deployments, releases and merged pull requests into the
//! expected timeline events, in order, once each; a deployment whose status moves on comes
//! back once with its new state.

use crate::support::github_mock;

use github_mock::{GithubMock, client, clock};
use std::sync::Arc;
use std::time::Duration;
use warroom::github::{ChangesFeed, Window};
use warroom::incident::event::Event;

fn fixture() -> serde_json::Value {
    serde_json::from_str(include_str!("../fixtures/github/changes.json")).unwrap()
}

fn describe(events: &[warroom::github::Change]) -> Vec<(String, String, String, Option<String>)> {
    events
        .iter()
        .map(|c| match &c.event {
            Event::Change {
                repo,
                reference,
                title,
                url,
                ..
            } => (
                c.at.format("%H:%M").to_string() + " " + repo,
                reference.clone(),
                title.clone(),
                url.clone(),
            ),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn the_fixture_becomes_timeline_events_in_order_once_each() {
    let clock = clock();
    let mock = GithubMock::start(Some(clock.clone())).await;
    mock.state.lock().unwrap().changes = fixture();
    let gh = Arc::new(client(&mock.url, &clock, "t0ken"));
    let mut feed = ChangesFeed::new(
        gh,
        vec!["acme/api".parse().unwrap()],
        Duration::from_secs(3600),
    );
    let window = Window {
        start: "2026-11-29T10:00:00Z".parse().unwrap(),
        end: Some("2026-11-29T11:00:00Z".parse().unwrap()),
    };
    let first = feed.poll_once(window).await.unwrap();
    let url = |s: &str| Some(s.to_string());
    assert_eq!(
        describe(&first),
        vec![
            (
                "09:30 acme/api".into(),
                "#42".into(),
                "merged: Skip the index for stale plans \\e[2J".into(),
                url("https://github.example/acme/api/pull/42")
            ),
            (
                "09:35 acme/api".into(),
                "v2.3.1".into(),
                "release Planner 2.3.1".into(),
                url("https://github.example/acme/api/releases/tag/v2.3.1")
            ),
            (
                "09:40 acme/api".into(),
                "deploy production main@abcdef1".into(),
                "planner v2.3.1 (success)".into(),
                url("https://ci.example/deploy/11")
            ),
            (
                "10:05 acme/api".into(),
                "#44".into(),
                "merged: Roll back the planner query".into(),
                url("https://github.example/acme/api/pull/44")
            ),
            (
                "10:20 acme/api".into(),
                "deploy production v2.3.2@9f8e7d6".into(),
                "deployment (pending)".into(),
                None
            ),
        ]
    );
    for c in &first {
        assert!(c.event.clone().sanitized() == c.event, "already sanitized");
    }
    assert!(
        feed.poll_once(window).await.unwrap().is_empty(),
        "once each"
    );

    mock.state.lock().unwrap().changes["statuses"]["12"] =
        serde_json::json!([{"state": "failure", "log_url": "https://ci.example/deploy/12/log"}]);
    let third = feed.poll_once(window).await.unwrap();
    assert_eq!(
        describe(&third),
        vec![(
            "10:20 acme/api".into(),
            "deploy production v2.3.2@9f8e7d6".into(),
            "deployment (failure)".into(),
            url("https://ci.example/deploy/12/log")
        )]
    );
    let writes = mock.log().iter().filter(|l| l.is_write()).count();
    assert_eq!(writes, 0, "the feed only reads");
    assert_eq!(mock.state.lock().unwrap().max_in_flight, 1);
}
