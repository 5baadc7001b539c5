//! The outbox: with GitHub down, publishing fails fast, blocks nothing and loses nothing; once
//! the mock is back on the same address, delivering the outbox completes the work, once.

use crate::support::github_mock;

use github_mock::{GithubMock, client, clock, incident_fixture};
use std::time::Duration;
use warroom::github::deliver::{deliver_pending, queue_and_deliver};
use warroom::github::outbox::{Entry, Outbox};
use warroom::github::publish::Target;

#[tokio::test]
async fn the_outbox_completes_once_github_is_back() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident_fixture(dir.path());
    let clock = clock();
    // A port with nothing listening: GitHub is down.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}");
    let gh = client(&url, &clock, "t0ken");
    let repo = "acme/pm".parse().unwrap();

    // Something else keeps ticking on the same runtime while publishing fails.
    let ticker = tokio::spawn(async {
        let mut ticks = 0u32;
        for _ in 0..20 {
            tokio::time::sleep(Duration::from_millis(5)).await;
            ticks += 1;
        }
        ticks
    });
    let down = tokio::time::timeout(
        Duration::from_secs(20),
        queue_and_deliver(&store, &id, &gh, &repo, Target::Pr, None),
    )
    .await
    .expect("a refused connection ends at once")
    .unwrap();
    assert_eq!(ticker.await.unwrap(), 20);
    let err = down[0].result.as_ref().unwrap_err().to_string();
    assert!(err.contains("could not be reached"), "{err}");
    let outbox = Outbox::new(&store.dir(&id));
    let entries = outbox.entries().unwrap();
    assert!(
        matches!(entries.first(), Some(Entry::Queued { .. })),
        "queued before anything was attempted: {entries:?}"
    );
    assert_eq!(outbox.pending().unwrap().len(), 1);

    // GitHub comes back where the client points.
    let mock = GithubMock::start_on(port, Some(clock.clone())).await;
    let back = deliver_pending(&store, &id, &gh, None).await.unwrap();
    assert_eq!(back.len(), 1);
    let outcome = back[0].result.as_ref().unwrap();
    assert_eq!(outcome.items.len(), 3);
    assert!(outbox.pending().unwrap().is_empty());
    let known = outbox.known("acme/pm").unwrap();
    assert_eq!(known.len(), 4, "postmortem and 3 items recorded: {known:?}");
    // Delivering again (a restart) finds nothing to do and sends nothing.
    let requests = mock.log().len();
    assert!(
        deliver_pending(&store, &id, &gh, None)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(mock.log().len(), requests);
    let st = mock.state.lock().unwrap();
    assert_eq!((st.prs().len(), st.plain_issues().len()), (1, 3));
}

#[tokio::test]
async fn a_lost_outbox_is_rebuilt_from_the_markers() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident_fixture(dir.path());
    let clock = clock();
    let mock = GithubMock::start(Some(clock.clone())).await;
    let gh = client(&mock.url, &clock, "t0ken");
    let repo = "acme/pm".parse().unwrap();
    queue_and_deliver(&store, &id, &gh, &repo, Target::Issue, None)
        .await
        .unwrap();
    std::fs::remove_file(Outbox::new(&store.dir(&id)).path()).unwrap();
    let d = queue_and_deliver(&store, &id, &gh, &repo, Target::Issue, None)
        .await
        .unwrap();
    let outcome = d[0].result.as_ref().unwrap();
    assert_eq!(outcome.created, 0, "{outcome:?}");
    assert_eq!(mock.state.lock().unwrap().issues.len(), 4);
}

#[tokio::test]
async fn a_run_stopped_half_way_is_completed_after_a_restart_without_duplicates() {
    use github_mock::{Fault, LimitKind};
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident_fixture(dir.path());
    let clock = clock();
    let mock = GithubMock::start(Some(clock.clone())).await;
    // Everything is created, then the last write (linking the items from the pull request)
    // meets a limit an hour long: the run stops there.
    mock.push_fault(Fault::Limit {
        method: "PATCH",
        path_suffix: "",
        status: 429,
        kind: LimitKind::Reset(3600),
    });
    let repo = "acme/pm".parse().unwrap();
    let first = queue_and_deliver(
        &store,
        &id,
        &client(&mock.url, &clock, "t0ken"),
        &repo,
        Target::Pr,
        None,
    )
    .await
    .unwrap();
    assert!(first[0].result.is_err());
    let outbox = Outbox::new(&store.dir(&id));
    assert_eq!(outbox.pending().unwrap().len(), 1);
    assert_eq!(
        outbox.known("acme/pm").unwrap().len(),
        4,
        "what was made is recorded"
    );
    let pr_body_before = mock.state.lock().unwrap().prs()[0].body.clone();

    // An hour later, a new process (a new client) delivers the outbox.
    clock.advance(Duration::from_secs(3601));
    let later = deliver_pending(&store, &id, &client(&mock.url, &clock, "t0ken"), None)
        .await
        .unwrap();
    let outcome = later[0].result.as_ref().unwrap();
    assert_eq!(outcome.created, 0, "{outcome:?}");
    assert!(outbox.pending().unwrap().is_empty());
    let st = mock.state.lock().unwrap();
    assert_eq!((st.prs().len(), st.plain_issues().len()), (1, 3));
    let pr = st.prs()[0];
    assert_ne!(pr.body, pr_body_before, "the links were added");
    for obj in outcome.items.values() {
        assert!(pr.body.contains(&format!("#{}", obj.number)));
    }
}
