//! Publishing from the console (`P`, then enter) with GitHub down: the UI loop keeps answering
//! (a note typed while the publication hangs is recorded before the publication ends), and
//! once the mock is back where the client points the outbox completes with exactly one pull
//! request and one issue per action item, and the result goes on the timeline once. A console
//! closed while GitHub is down completes the outbox when it opens the incident again.

use crate::support::console;
use console::{Keys, Silent, run_console};

use crate::support::github_mock;

use crossterm::event::{Event as Input, KeyCode, KeyEvent, KeyModifiers};
use github_mock::{GithubMock, clock, incident_fixture, never_answers};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use warroom::app::Model;
use warroom::app::model::IncidentHeader;
use warroom::app::workers::Services;
use warroom::app::workers::github::GithubSetup;
use warroom::app::workers::publish::PublishSetup;
use warroom::backoff::Backoff;
use warroom::clock::ManualClock;
use warroom::config::Config;
use warroom::github::outbox::Outbox;
use warroom::github::{Github, VirtualTimer};
use warroom::incident::{Event, IncidentId, JournalWriter, Record, Store};
use warroom::theme::Theme;

fn press(tx: &Keys, code: KeyCode) {
    tx.unbounded_send(Ok(Input::Key(KeyEvent::new(code, KeyModifiers::NONE))))
        .unwrap();
}

fn type_text(tx: &Keys, text: &str) {
    for c in text.chars() {
        press(tx, KeyCode::Char(c));
    }
}

fn quit(tx: &Keys) {
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    tx.unbounded_send(Ok(Input::Key(ctrl_c))).unwrap();
}

/// Waits (bounded) until `cond` holds.
async fn until(what: &str, secs: u64, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn records(store: &Store, id: &IncidentId) -> Vec<Record> {
    store.read(id).unwrap().records
}

fn published_notes(records: &[Record]) -> usize {
    records
        .iter()
        .filter(|r| matches!(&r.kind, Event::Note { text, .. } if text.starts_with("Published to acme/pm")))
        .count()
}

fn pending(store: &Store, id: &IncidentId) -> usize {
    Outbox::new(&store.dir(id)).pending().unwrap().len()
}

/// Runs the console on `id` publishing to `acme/pm` at `url` while `drive` sends keys.
async fn console<F: Future<Output = Keys> + Send + 'static>(
    store: &Store,
    id: &IncidentId,
    url: &str,
    clock: &ManualClock,
    drive: impl FnOnce(Keys) -> F,
) -> Model {
    let (incident, recovery) = store
        .open_incident(id, warroom::incident::store::Role::Console)
        .unwrap();
    let journal = JournalWriter::spawn(incident).unwrap();
    let config = Config::parse("warroom.toml", "[github]\npostmortems = \"acme/pm\"\n")
        .unwrap()
        .with_panels(warroom::metrics::presets::sim_panels());
    let mut model = Model::new(
        &config,
        Theme::fallback(),
        "silent".into(),
        chrono::Utc::now(),
    );
    model.incident = Some(IncidentHeader {
        id: id.to_string(),
        title: "Journey planner outage".into(),
    });
    model.timeline = recovery.records;
    // Pacing waits move a virtual clock; call timeouts are real (2 s).
    let gh = Github::new(
        url,
        Some(&warroom::secret::Secret::new("t0ken")),
        Duration::from_secs(2),
        Arc::new(VirtualTimer::new(clock.clone())),
    )
    .unwrap();
    let publish = PublishSetup::new(
        Arc::new(gh),
        store.clone(),
        id.clone(),
        "acme/pm".parse().unwrap(),
        None,
        Backoff {
            base: Duration::from_millis(200),
            cap: Duration::from_millis(400),
            max_attempts: 60,
        },
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
            changes: None,
            publish: Some(publish),
        }),
        serve: false,
        follow: None,
        discovery: None,
        variables: None,
        silences: None,
        engine: None,
        leaving: Default::default(),
    };
    run_console(model, services, 120, Duration::from_secs(40), drive).await
}

async fn released(store: &Store, id: &IncidentId) {
    until("the console let go of the incident", 5, || {
        store.holder(id).unwrap().is_none()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publishing_while_github_hangs_keeps_the_console_answering_and_completes_later() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident_fixture(dir.path());
    let clock = clock();
    let (url, hang) = never_answers().await;
    let port: u16 = url.rsplit(':').next().unwrap().parse().unwrap();
    let mock_slot: Arc<std::sync::Mutex<Option<GithubMock>>> = Arc::default();

    let (s, i, c, slot) = (store.clone(), id.clone(), clock.clone(), mock_slot.clone());
    let model = console(&store, &id, &url, &clock, move |tx| async move {
        press(&tx, KeyCode::Char('P'));
        press(&tx, KeyCode::Enter);
        until("the publication is queued", 10, || pending(&s, &i) == 1).await;
        // A whole call timed out: GitHub hangs, and is asked again.
        until("an attempt timed out", 15, || {
            Outbox::new(&s.dir(&i)).pending().unwrap().first().is_some_and(|j| {
                j.last_error
                    .as_deref()
                    .is_some_and(|e| e.contains("did not answer within"))
            })
        })
        .await;
        // GitHub still hangs; the console takes a note meanwhile.
        press(&tx, KeyCode::Char('n'));
        type_text(&tx, "typed while GitHub hangs");
        press(&tx, KeyCode::Enter);
        until("the note is recorded", 10, || {
            records(&s, &i).iter().any(
                |r| matches!(&r.kind, Event::Note { text, .. } if text == "typed while GitHub hangs"),
            )
        })
        .await;
        assert_eq!(pending(&s, &i), 1, "the note was taken while the publication hung");
        assert_eq!(published_notes(&records(&s, &i)), 0);
        // GitHub comes back where the client points.
        hang.abort();
        let _ = hang.await;
        *slot.lock().unwrap() = Some(GithubMock::start_on(port, Some(c)).await);
        until("the outbox completes", 30, || pending(&s, &i) == 0).await;
        until("the result is on the timeline", 10, || {
            published_notes(&records(&s, &i)) == 1
        })
        .await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        quit(&tx);
        tx
    })
    .await;

    let mock = mock_slot.lock().unwrap().take().unwrap();
    let st = mock.state.lock().unwrap();
    assert_eq!(st.prs().len(), 1, "exactly one pull request");
    assert_eq!(st.plain_issues().len(), 3, "one issue per action item");
    assert!(st.max_in_flight <= 1);
    drop(st);
    let all = records(&store, &id);
    assert_eq!(
        published_notes(&all),
        1,
        "the result goes on the timeline once"
    );
    assert_eq!(
        published_notes(&model.timeline),
        1,
        "and on the console's timeline"
    );
    assert!(!model.publish.in_flight);
    let notice = model
        .notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default();
    assert!(notice.starts_with("published: acme/pm"), "{notice}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publication_left_in_the_outbox_completes_when_the_console_opens_again() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident_fixture(dir.path());
    let clock = clock();
    // Nothing listens: GitHub is down.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}");

    let (s, i) = (store.clone(), id.clone());
    let model = console(&store, &id, &url, &clock, move |tx| async move {
        press(&tx, KeyCode::Char('P'));
        press(&tx, KeyCode::Down);
        press(&tx, KeyCode::Enter);
        until("the publication is queued", 10, || pending(&s, &i) == 1).await;
        until("an attempt failed", 10, || {
            Outbox::new(&s.dir(&i))
                .pending()
                .unwrap()
                .first()
                .is_some_and(|j| j.failures > 0)
        })
        .await;
        quit(&tx);
        tx
    })
    .await;
    assert!(
        model.publish.in_flight,
        "still under way when the console closed"
    );
    assert_eq!(pending(&store, &id), 1, "kept in the outbox");
    released(&store, &id).await;

    let mock = GithubMock::start_on(port, Some(clock.clone())).await;
    let (s, i) = (store.clone(), id.clone());
    let model = console(&store, &id, &url, &clock, move |tx| async move {
        until("the outbox completes", 30, || pending(&s, &i) == 0).await;
        until("the result is on the timeline", 10, || {
            published_notes(&records(&s, &i)) == 1
        })
        .await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        quit(&tx);
        tx
    })
    .await;
    let st = mock.state.lock().unwrap();
    assert_eq!(st.prs().len(), 0, "published as an issue, as chosen");
    assert_eq!(
        st.plain_issues().len(),
        4,
        "the postmortem and one per action item"
    );
    drop(st);
    assert_eq!(published_notes(&records(&store, &id)), 1);
    assert_eq!(published_notes(&model.timeline), 1);
}
