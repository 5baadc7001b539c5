//! Publishing identity (issue 17): local incident ids (`2026-12-01-1`) repeat across machines
//! and data dirs, so the markers warroom leaves on GitHub carry each incident's global id. Two
//! incidents with the same local id, from two data dirs, published to one mock repository,
//! get two separate sets of issues (and branches), and publishing either again touches only
//! its own. One of them is a journal from before the global id (it gets one on its first
//! publication, recorded in its journal); the other has one from its creation.

use crate::support::github_mock;

use github_mock::{GithubMock, client, clock, incident_fixture};
use std::collections::BTreeMap;
use warroom::github::deliver::queue_and_deliver;
use warroom::github::publication::Publication;
use warroom::github::publish::Target;
use warroom::incident::event::{Event, Source};
use warroom::incident::summary::summarize;

fn repo() -> warroom::config::RepoName {
    "acme/pm".parse().unwrap()
}

/// Issue number → (title, body) of every issue and pull request in the mock.
fn bodies(mock: &GithubMock) -> BTreeMap<u64, (String, String)> {
    let st = mock.state.lock().unwrap();
    st.issues
        .iter()
        .map(|i| (i.number, (i.title.clone(), i.body.clone())))
        .collect()
}

#[tokio::test]
async fn two_incidents_with_one_local_id_from_two_data_dirs_get_separate_issues() {
    for target in [Target::Issue, Target::Pr] {
        let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        // A: a journal from before the global id. B: one created with it.
        let (store_a, id_a) = incident_fixture(dir_a.path());
        let (store_b, id_b) = incident_fixture(dir_b.path());
        {
            // Waiting, as the CLI does: another test's child, forked before it execs, can
            // hold the fixture's lock for a moment.
            let (mut inc, _) = warroom::incident::open::open_waiting(
                &store_b,
                &id_b,
                warroom::incident::store::Role::Cli,
            )
            .unwrap();
            inc.journal
                .append(Source::System, "warroom", Event::new_incident_uid())
                .unwrap();
        }
        assert_eq!(id_a.to_string(), id_b.to_string(), "the same local id");
        assert!(
            summarize(&store_a.read(&id_a).unwrap().records)
                .uid
                .is_none()
        );

        let clock = clock();
        let mock = GithubMock::start(Some(clock.clone())).await;
        let gh = client(&mock.url, &clock, "t0ken");

        let a = queue_and_deliver(&store_a, &id_a, &gh, &repo(), target, None)
            .await
            .unwrap();
        let a = a[0].result.as_ref().unwrap().clone();
        // The old journal got its global id, recorded in the journal.
        let uid_a = summarize(&store_a.read(&id_a).unwrap().records)
            .uid
            .expect("recorded on the first publication");
        let after_a = bodies(&mock);

        let b = queue_and_deliver(&store_b, &id_b, &gh, &repo(), target, None)
            .await
            .unwrap();
        let b = b[0].result.as_ref().unwrap().clone();
        let uid_b = Publication::load(&store_b, &id_b).unwrap().uid.unwrap();
        assert_ne!(uid_a, uid_b);

        // B created its own objects: as many as A did, none of A's numbers.
        assert_eq!(b.created, a.created, "{target:?}: {b:?}");
        // (Its one update is its own postmortem, linked to its items once they exist.)
        assert_eq!(b.updated, a.updated, "{target:?}: {a:?} {b:?}");
        let (pa, pb) = (a.postmortem.clone().unwrap(), b.postmortem.clone().unwrap());
        assert_ne!(pa.number, pb.number, "{target:?}");
        for (item, obj) in &b.items {
            assert_ne!(a.items[item].number, obj.number, "{target:?} {item}");
        }
        // A's issues are exactly as A left them.
        let after_b = bodies(&mock);
        for (n, before) in &after_a {
            assert_eq!(&after_b[n], before, "{target:?}: #{n} was changed by B");
        }
        {
            let st = mock.state.lock().unwrap();
            let expected_plain = match target {
                Target::Issue => 2 * 4,
                Target::Pr => 2 * 3,
            };
            assert_eq!(st.plain_issues().len(), expected_plain, "{target:?}");
            assert_eq!(st.prs().len(), usize::from(target == Target::Pr) * 2);
            // Each object carries one incident's global id and only that one.
            for i in &st.issues {
                let a_mark = i.body.contains(&format!("uid={uid_a} "));
                let b_mark = i.body.contains(&format!("uid={uid_b} "));
                assert!(a_mark != b_mark, "{target:?}: #{}: {}", i.number, i.body);
            }
            if target == Target::Pr {
                let heads: Vec<&str> = st
                    .prs()
                    .iter()
                    .filter_map(|p| p.pr_head.as_deref())
                    .collect();
                assert_ne!(heads[0], heads[1], "one branch each");
            }
        }

        // Publishing A again finds its own objects and leaves B's alone.
        let again = queue_and_deliver(&store_a, &id_a, &gh, &repo(), target, None)
            .await
            .unwrap();
        let again = again[0].result.as_ref().unwrap();
        assert_eq!(again.created, 0, "{target:?}: {again:?}");
        assert_eq!(again.items, a.items);
        let after_again = bodies(&mock);
        for (n, obj) in b
            .items
            .values()
            .map(|o| (o.number, o))
            .chain([(pb.number, &pb)])
        {
            assert_eq!(
                after_again[&n], after_b[&n],
                "{target:?}: B's #{n} ({}) changed",
                obj.url
            );
        }
        println!(
            "{target:?}: incidents {id_a} (uid {uid_a}) and {id_b} (uid {uid_b}): {} and {} \
             objects created, none shared",
            a.created, b.created
        );
    }
}

#[tokio::test]
async fn a_console_holding_an_old_journal_keeps_the_new_id_in_the_outbox_until_it_can_be_recorded()
{
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident_fixture(dir.path());
    let clock = clock();
    let mock = GithubMock::start(Some(clock.clone())).await;
    let gh = client(&mock.url, &clock, "t0ken");
    let uid = {
        // A console holds the incident: the journal takes no other writer.
        let (incident, _) = store
            .open_incident(&id, warroom::incident::store::Role::Console)
            .unwrap();
        let _console = warroom::incident::JournalWriter::spawn(incident).unwrap();
        let d = queue_and_deliver(&store, &id, &gh, &repo(), Target::Issue, None)
            .await
            .unwrap();
        assert!(d[0].result.is_ok(), "{:?}", d[0].result);
        assert!(summarize(&store.read(&id).unwrap().records).uid.is_none());
        let kept = warroom::github::identity::kept(&store.dir(&id))
            .unwrap()
            .expect("kept in the outbox");
        assert_eq!(
            Publication::load(&store, &id).unwrap().uid.as_deref(),
            Some(kept.as_str())
        );
        kept
    };
    // Once the console has gone, the next publication writes that same id into the journal
    // and finds its own issues.
    let d = queue_and_deliver(&store, &id, &gh, &repo(), Target::Issue, None)
        .await
        .unwrap();
    let outcome = d[0].result.as_ref().unwrap();
    assert_eq!(outcome.created, 0, "{outcome:?}");
    assert_eq!(
        summarize(&store.read(&id).unwrap().records).uid.as_deref(),
        Some(uid.as_str())
    );
}
