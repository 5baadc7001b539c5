//! Rate limits, timeouts and give-up against a mock GitHub on loopback (RELIABILITY.md,
//! "GitHub"): the matrix of refusals (403 and 429; `retry-after`, a spent limit with its reset,
//! neither) with 0 requests before the allowed time, at least 60 s after a secondary limit and
//! longer each time, a clear error after 3 tries with the work kept in the outbox, and a server
//! that never answers. Waits run on a virtual clock, so nothing here waits 60 s.

use crate::support::github_mock;

use github_mock::{Fault, GithubMock, LimitKind, client, clock, incident_fixture, never_answers};
use std::time::Duration;
use warroom::clock::Clock;
use warroom::github::GithubError;
use warroom::github::deliver::{DeliveryError, queue_and_deliver};
use warroom::github::outbox::Outbox;
use warroom::github::publish::{PublishError, Target};

fn repo() -> warroom::config::RepoName {
    "acme/pm".parse().unwrap()
}

#[tokio::test]
async fn every_kind_of_refusal_is_waited_out_before_anything_else_is_sent() {
    let cases = [
        (403, LimitKind::RetryAfter(7), 7),
        (429, LimitKind::RetryAfter(7), 7),
        (403, LimitKind::Reset(30), 30),
        (429, LimitKind::Reset(30), 30),
        (403, LimitKind::Secondary, 60),
        (429, LimitKind::Secondary, 60),
    ];
    println!("status  refusal          required  waited  requests before allowed");
    for (status, kind, required) in cases {
        for (method, suffix) in [("POST", "/issues"), ("GET", "/assignees/ana")] {
            let dir = tempfile::tempdir().unwrap();
            let (store, id) = incident_fixture(dir.path());
            let clock = clock();
            let mock = GithubMock::start(Some(clock.clone())).await;
            mock.push_fault(Fault::Limit {
                method,
                path_suffix: suffix,
                status,
                kind,
            });
            let gh = client(&mock.url, &clock, "t0ken");
            let d = queue_and_deliver(&store, &id, &gh, &repo(), Target::Issue, None)
                .await
                .unwrap();
            assert!(d[0].result.is_ok(), "{:?}", d[0].result);
            let log = mock.log();
            let refused = log.iter().position(|l| l.status == status).unwrap();
            let t0 = log[refused].at;
            let allowed = t0 + chrono::Duration::seconds(required);
            let early = log[refused + 1..].iter().filter(|l| l.at < allowed).count();
            let waited = (log[refused + 1].at - t0).num_milliseconds() as f64 / 1000.0;
            println!(
                "{status}     {:<16} {required:>4} s  {waited:>5.1} s  {early}   ({method})",
                format!("{kind:?}")
            );
            assert_eq!(early, 0, "{status} {kind:?} {method}");
            assert_eq!(
                log[refused + 1].path,
                log[refused].path,
                "the refused request is the next one sent"
            );
        }
    }
}

#[tokio::test]
async fn secondary_limits_wait_longer_each_time_and_give_up_after_three_tries() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident_fixture(dir.path());
    let clock = clock();
    let mock = GithubMock::start(Some(clock.clone())).await;
    for _ in 0..3 {
        mock.push_fault(Fault::Limit {
            method: "POST",
            path_suffix: "/issues",
            status: 403,
            kind: LimitKind::Secondary,
        });
    }
    let gh = client(&mock.url, &clock, "t0ken");
    let d = queue_and_deliver(&store, &id, &gh, &repo(), Target::Issue, None)
        .await
        .unwrap();
    let err = d[0].result.as_ref().unwrap_err();
    assert!(
        matches!(
            err,
            DeliveryError::Publish(PublishError::Github(GithubError::RateLimited {
                tries: 3,
                ..
            }))
        ),
        "{err}"
    );
    let msg = err.to_string();
    assert!(msg.contains("3 refusal(s)"), "{msg}");
    let log = mock.log();
    let refused: Vec<_> = log.iter().filter(|l| l.status == 403).collect();
    assert_eq!(refused.len(), 3, "exactly 3 tries");
    let gaps: Vec<i64> = refused
        .windows(2)
        .map(|w| (w[1].at - w[0].at).num_seconds())
        .collect();
    println!("secondary limit: gaps between tries {gaps:?} s, then gave up: {msg}");
    assert!(gaps[0] >= 60 && gaps[1] > gaps[0], "{gaps:?}");
    assert!(
        !log.iter()
            .any(|l| l.method == "POST" && l.path.ends_with("/issues") && l.status == 201),
        "no issue was created"
    );
    let pending = Outbox::new(&store.dir(&id)).pending().unwrap();
    assert_eq!(pending.len(), 1, "the work stays in the outbox");
    assert_eq!(pending[0].failures, 1);
}

#[tokio::test]
async fn a_server_that_never_answers_costs_one_bounded_call() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident_fixture(dir.path());
    let (url, server) = never_answers().await;
    let timer = warroom::github::VirtualTimer::new(clock());
    let timeout = Duration::from_millis(300);
    let gh = warroom::github::Github::new(
        &url,
        Some(&warroom::secret::Secret::new("t0ken")),
        timeout,
        std::sync::Arc::new(timer),
    )
    .unwrap();
    let started = std::time::Instant::now();
    // The bound is generous: the assertion is that it ends at all, with the right error.
    let d = tokio::time::timeout(
        Duration::from_secs(20),
        queue_and_deliver(&store, &id, &gh, &repo(), Target::Pr, None),
    )
    .await
    .expect("publishing against a hung server must end")
    .unwrap();
    let elapsed = started.elapsed();
    server.abort();
    let err = d[0].result.as_ref().unwrap_err();
    assert!(
        matches!(
            err,
            DeliveryError::Publish(PublishError::Github(GithubError::TimedOut { .. }))
        ),
        "{err}"
    );
    println!(
        "hung server: gave up after {:.2} s with a {} ms call timeout: {err}",
        elapsed.as_secs_f64(),
        timeout.as_millis()
    );
    assert_eq!(Outbox::new(&store.dir(&id)).pending().unwrap().len(), 1);
}

#[tokio::test]
async fn a_limit_far_away_is_given_up_at_once_and_nothing_is_sent_early() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident_fixture(dir.path());
    let clock = clock();
    let start = clock.now();
    let mock = GithubMock::start(Some(clock.clone())).await;
    mock.push_fault(Fault::Limit {
        method: "POST",
        path_suffix: "/issues",
        status: 403,
        kind: LimitKind::Reset(3600),
    });
    let gh = client(&mock.url, &clock, "t0ken");
    let d = queue_and_deliver(&store, &id, &gh, &repo(), Target::Issue, None)
        .await
        .unwrap();
    let err = d[0].result.as_ref().unwrap_err().to_string();
    assert!(err.contains("rate limit holds until"), "{err}");
    let sent = mock.log().len();
    // Trying again at once sends nothing: the client knows the limit holds.
    let again = warroom::github::deliver::deliver_pending(&store, &id, &gh, None)
        .await
        .unwrap();
    assert!(again[0].result.is_err());
    assert_eq!(mock.log().len(), sent, "0 requests before the allowed time");
    assert!(
        clock.now() - start < chrono::Duration::seconds(60),
        "and no long wait either"
    );
    assert_eq!(Outbox::new(&store.dir(&id)).pending().unwrap().len(), 1);
}
