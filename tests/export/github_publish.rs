//! Publishing against a mock GitHub on loopback: publishing twice gives the same issues and one
//! pull request, an edited action item updates its issue, writes are paced and one request is
//! in flight, and a create answered with 502 after it succeeded yields exactly one issue.

use crate::support::github_mock;

use github_mock::{Fault, GithubMock, client, clock, incident_fixture};
use warroom::github::deliver::{deliver_pending, queue_and_deliver};
use warroom::github::marker::Marker;
use warroom::github::publish::Target;
use warroom::incident::event::{Event, Priority, Source};

fn repo() -> warroom::config::RepoName {
    "acme/pm".parse().unwrap()
}

#[tokio::test]
async fn publishing_twice_gives_the_same_issues_and_one_pull_request() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident_fixture(dir.path());
    let clock = clock();
    let mock = GithubMock::start(Some(clock.clone())).await;
    let gh = client(&mock.url, &clock, "t0ken");

    let first = queue_and_deliver(&store, &id, &gh, &repo(), Target::Pr, None)
        .await
        .unwrap();
    let outcome = first[0].result.as_ref().unwrap();
    assert!(first[0].on_timeline, "nobody held the incident");
    let writes_first = mock.log().iter().filter(|l| l.is_write()).count();

    let second = queue_and_deliver(&store, &id, &gh, &repo(), Target::Pr, None)
        .await
        .unwrap();
    assert_eq!(second.len(), 1);
    let again = second[0].result.as_ref().unwrap();
    assert_eq!(again.created, 0, "{again:?}");
    assert_eq!(again.items, outcome.items, "the same issue for each item");
    let writes_second = mock.log().iter().filter(|l| l.is_write()).count() - writes_first;
    assert_eq!(writes_second, 0, "nothing changed, so nothing is written");

    // The journal had no global id: the first publication gave it one, recorded.
    let publication = warroom::github::publication::Publication::load(&store, &id).unwrap();
    let uid = publication
        .uid
        .clone()
        .expect("a global id after publishing");
    let summary = warroom::incident::summary::summarize(&store.read(&id).unwrap().records);
    assert_eq!(summary.uid.as_deref(), Some(uid.as_str()));
    let st = mock.state.lock().unwrap();
    assert_eq!(st.prs().len(), 1);
    assert_eq!(st.plain_issues().len(), 3);
    let pr = st.prs()[0];
    let file = String::from_utf8(
        st.files[&(
            format!("warroom/postmortem-{id}-{}", &uid[..12]),
            format!(
                "postmortems/{}-journey-planner-outage.md",
                id.to_string().get(..10).unwrap()
            ),
        )]
            .clone(),
    )
    .unwrap();
    assert!(file.contains("`@oncall`"), "mentions defused: {file}");
    assert!(
        file.contains("-journey-planner-outage/pool.svg)"),
        "chart link rewritten: {file}"
    );
    for (item, obj) in &outcome.items {
        let issue = st.issues.iter().find(|i| i.number == obj.number).unwrap();
        assert!(Marker::action(&id.to_string(), Some(&uid), item).is_in(&issue.body));
        assert!(
            issue
                .body
                .contains(&outcome.postmortem.as_ref().unwrap().url),
            "item links the PR"
        );
        assert!(
            pr.body.contains(&format!("#{}", obj.number)),
            "PR links {item}"
        );
    }
    let ai = |n: &str| {
        let num = outcome.items[n].number;
        st.issues.iter().find(|i| i.number == num).unwrap().clone()
    };
    assert_eq!(ai("AI-1").labels, ["warroom", "action-item", "priority:P1"]);
    assert_eq!(ai("AI-1").assignees, ["ana"], "a login is assigned");
    assert!(
        ai("AI-2").assignees.is_empty(),
        "a team name is not a login"
    );
    assert!(
        ai("AI-3").assignees.is_empty(),
        "a login GitHub does not accept is not assigned"
    );
    assert!(ai("AI-1").body.contains("| Due | 2026-12-15 |"));
    // Untrusted text is fenced: the hostile fence inside cannot close it.
    let body = ai("AI-1").body;
    let fence_at = body.find("````text\n").expect("a four-backtick fence");
    assert!(body[fence_at..].contains("@everyone"));
    assert!(!body[..fence_at].contains("@everyone"));
    drop(st);
    assert_eq!(mock.state.lock().unwrap().max_in_flight, 1);
    let journal = std::fs::read_to_string(store.journal_path(&id)).unwrap();
    assert_eq!(journal.matches("Published to acme/pm").count(), 2);
}

#[tokio::test]
async fn an_edited_action_item_updates_its_issue() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident_fixture(dir.path());
    let clock = clock();
    let mock = GithubMock::start(Some(clock.clone())).await;
    let gh = client(&mock.url, &clock, "t0ken");
    let first = queue_and_deliver(&store, &id, &gh, &repo(), Target::Issue, None)
        .await
        .unwrap();
    let n = first[0].result.as_ref().unwrap().items["AI-2"].number;
    let issues_before = mock.state.lock().unwrap().issues.len();

    // Correct AI-2 (record 3): new text, owner and priority.
    let (mut inc, _) = store
        .open_incident(&id, warroom::incident::store::Role::Cli)
        .unwrap();
    inc.journal
        .append(
            Source::Operator,
            "ana",
            Event::Correction {
                supersedes: 3,
                reason: "sharper".into(),
                replacement: Some(Box::new(Event::ActionItem {
                    id: "AI-2".into(),
                    action: "Page on pool saturation above 90% for 2 minutes".into(),
                    owner: Some("bob".into()),
                    priority: Some(Priority::P1),
                    due: None,
                })),
            },
        )
        .unwrap();
    // Retract AI-3 (record 4).
    inc.journal
        .append(
            Source::Operator,
            "ana",
            Event::Correction {
                supersedes: 4,
                reason: "duplicate of AI-1".into(),
                replacement: None,
            },
        )
        .unwrap();
    drop(inc);
    let ai3 = first[0].result.as_ref().unwrap().items["AI-3"].number;
    let log_before = mock.log().len();
    let second = deliver_pending(&store, &id, &gh, None).await.unwrap();
    assert!(second.is_empty(), "nothing pending before queueing again");
    let second = queue_and_deliver(&store, &id, &gh, &repo(), Target::Issue, None)
        .await
        .unwrap();
    let out = second[0].result.as_ref().unwrap();
    assert_eq!(out.created, 0);
    assert_eq!(out.items["AI-2"].number, n);
    let st = mock.state.lock().unwrap();
    assert_eq!(st.issues.len(), issues_before, "no duplicate");
    let issue = st.issues.iter().find(|i| i.number == n).unwrap();
    assert_eq!(
        issue.title,
        "AI-2: Page on pool saturation above 90% for 2 minutes"
    );
    assert_eq!(issue.labels, ["warroom", "action-item", "priority:P1"]);
    assert_eq!(issue.assignees, ["bob"]);
    let patched: Vec<_> = st.log[log_before..]
        .iter()
        .filter(|l| l.method == "PATCH")
        .map(|l| l.path.clone())
        .collect();
    assert!(
        patched.contains(&format!("/repos/acme/pm/issues/{n}")),
        "{patched:?}"
    );
    let retracted = st.issues.iter().find(|i| i.number == ai3).unwrap();
    assert_eq!(
        retracted.state, "closed",
        "a retracted item's issue is closed"
    );
    let pm = st
        .issues
        .iter()
        .find(|i| i.body.contains("key=postmortem -->"))
        .unwrap();
    assert!(
        !pm.body.contains("AI-3"),
        "the postmortem no longer lists AI-3"
    );
    assert!(pm.body.contains(&format!("#{n}")));
}

#[tokio::test]
async fn writes_are_paced_and_one_request_is_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident_fixture(dir.path());
    let clock = clock();
    let mock = GithubMock::start(Some(clock.clone())).await;
    let gh = std::sync::Arc::new(client(&mock.url, &clock, "t0ken"));
    // A changes-feed poll races the publication on the same client.
    let feed_gh = gh.clone();
    let poll = tokio::spawn(async move {
        let mut feed = warroom::github::ChangesFeed::new(
            feed_gh,
            vec!["acme/api".parse().unwrap()],
            std::time::Duration::from_secs(3600),
        );
        for _ in 0..5 {
            let window = warroom::github::Window {
                start: chrono::Utc::now(),
                end: None,
            };
            let _ = feed.poll_once(window).await;
        }
    });
    let d = queue_and_deliver(&store, &id, &gh, &repo(), Target::Pr, None)
        .await
        .unwrap();
    poll.await.unwrap();
    assert!(d[0].result.is_ok(), "{:?}", d[0].result);
    let log = mock.log();
    let writes: Vec<_> = log.iter().filter(|l| l.is_write()).collect();
    assert!(writes.len() >= 8, "{}", writes.len());
    let min_gap = writes
        .windows(2)
        .map(|w| (w[1].at - w[0].at).num_milliseconds())
        .min()
        .unwrap();
    println!(
        "pacing: {} writes, smallest gap between writes {min_gap} ms; most requests in flight {}",
        writes.len(),
        mock.state.lock().unwrap().max_in_flight
    );
    assert!(min_gap >= 1000, "writes {min_gap} ms apart");
    assert_eq!(mock.state.lock().unwrap().max_in_flight, 1);
}

#[tokio::test]
async fn a_create_answered_502_after_it_succeeded_yields_exactly_one_issue() {
    for target in [Target::Issue, Target::Pr] {
        let dir = tempfile::tempdir().unwrap();
        let (store, id) = incident_fixture(dir.path());
        let clock = clock();
        let mock = GithubMock::start(Some(clock.clone())).await;
        // The first issue create (the postmortem issue, or AI-1 when it is a PR) succeeds and
        // answers 502; so does the pull request's create.
        mock.push_fault(Fault::SucceedThen502 {
            method: "POST",
            path_suffix: "/issues",
        });
        mock.push_fault(Fault::SucceedThen502 {
            method: "POST",
            path_suffix: "/pulls",
        });
        let gh = client(&mock.url, &clock, "t0ken");
        let d = queue_and_deliver(&store, &id, &gh, &repo(), target, None)
            .await
            .unwrap();
        let outcome = d[0].result.as_ref().unwrap();
        let st = mock.state.lock().unwrap();
        let answered_502 = st.log.iter().filter(|l| l.status == 502).count();
        assert!(answered_502 >= 1, "{target:?}");
        let pm = match target {
            Target::Pr => "postmortem-pr",
            Target::Issue => "postmortem",
        };
        let uid = warroom::github::publication::Publication::load(&store, &id)
            .unwrap()
            .uid;
        for key in [pm, "action:AI-1", "action:AI-2", "action:AI-3"] {
            let marker = warroom::github::marker::Marker {
                incident: id.to_string(),
                uid: uid.clone(),
                key: key.into(),
            };
            let copies = st.issues.iter().filter(|i| marker.is_in(&i.body)).count();
            assert_eq!(copies, 1, "{target:?} {key}: {copies} copies");
        }
        assert_eq!(st.prs().len(), usize::from(target == Target::Pr));
        assert_eq!(outcome.items.len(), 3);
        println!(
            "{target:?}: {answered_502} create(s) answered 502 after succeeding; issues with each marker: 1"
        );
    }
}

#[tokio::test]
async fn with_a_console_holding_the_incident_the_result_waits_in_the_outbox_for_it() {
    use warroom::github::deliver::{ACTOR, timeline_event};
    use warroom::github::outbox::{Entry, Outbox};
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident_fixture(dir.path());
    let (incident, _) = store
        .open_incident(&id, warroom::incident::store::Role::Console)
        .unwrap();
    let console = warroom::incident::JournalWriter::spawn(incident).unwrap();
    let clock = clock();
    let mock = GithubMock::start(Some(clock.clone())).await;
    let gh = client(&mock.url, &clock, "t0ken");
    let d = queue_and_deliver(&store, &id, &gh, &repo(), Target::Issue, None)
        .await
        .unwrap();
    let outcome = d[0].result.as_ref().unwrap();
    assert!(!d[0].on_timeline, "the console holds the incident");
    let journal = std::fs::read_to_string(store.journal_path(&id)).unwrap();
    assert!(!journal.contains("Published to"));
    let done = Outbox::new(&store.dir(&id))
        .entries()
        .unwrap()
        .into_iter()
        .filter(|e| matches!(e, Entry::Done { .. }))
        .count();
    assert_eq!(done, 1);
    // What the console does with it: one record through its own writer.
    let r = console
        .append(Source::Github, ACTOR, timeline_event(&d[0].job, outcome))
        .await
        .unwrap();
    let journal = std::fs::read_to_string(store.journal_path(&id)).unwrap();
    assert_eq!(
        journal.matches("Published to acme/pm (issue)").count(),
        1,
        "#{}",
        r.seq
    );
}
