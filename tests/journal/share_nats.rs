//! One incident on several machines through a real `nats-server` with JetStream (issue 36):
//! two writers' records reach both views once each in the same order, a record published twice
//! is stored once, a writer cut off from the engine shares its notes when the engine returns,
//! hostile messages are refused and reported, and exactly one of two responders gets the
//! executor lease, which passes to the other once its holder stops renewing it.

use crate::support::nats::Nats;
use async_nats::jetstream;
use futures::StreamExt;
use std::time::Duration;
use warroom::incident::{Event, IncidentId, Record, Source};
use warroom::share::lease::{self, Taken};
use warroom::share::sync::{ensure_stream, follow, incidents, publish_backlog};
use warroom::share::view::Merged;
use warroom::share::{Engine, Refused, Shared, View, WriterId};

fn incident() -> IncidentId {
    IncidentId::parse("2026-12-04-7").unwrap()
}

fn notes(writer: &str, n: u64, from_ms: i64) -> Vec<Record> {
    (1..=n)
        .map(|seq| Record {
            seq,
            time: chrono::DateTime::from_timestamp_millis(from_ms + seq as i64 * 3).unwrap(),
            source: Source::Operator,
            actor: writer.into(),
            host: "laptop".into(),
            kind: Event::note(format!("{writer} note {seq}")),
        })
        .collect()
}

async fn connect(nats: &Nats) -> jetstream::Context {
    Engine::new(nats.url()).connect().await.expect("connect")
}

/// Reads the stream from its start until `want` records are merged (bounded in time).
async fn view_of(js: &jetstream::Context, want: usize) -> View {
    let stream = ensure_stream(js, &incident(), 1).await.unwrap();
    let mut messages = Box::pin(follow(&stream, &incident(), 0).await.unwrap());
    let mut view = View::default();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while view.len() + view.refused().len() < want {
        match tokio::time::timeout_at(deadline, messages.next()).await {
            Ok(Some(m)) => {
                view.merge(m.expect("a message of the stream").shared);
            }
            _ => break,
        }
    }
    view
}

#[tokio::test]
async fn two_writers_share_every_record_once_in_one_order() {
    let Some(nats) = Nats::start() else { return };
    let (a, b) = (connect(&nats).await, connect(&nats).await);
    let stream = ensure_stream(&a, &incident(), 1).await.unwrap();
    let (wa, wb) = (
        WriterId::parse("ana-1").unwrap(),
        WriterId::parse("bo-2").unwrap(),
    );
    let (na, nb) = (notes("ana", 200, 0), notes("bo", 150, 1));
    assert_eq!(
        publish_backlog(&a, &stream, &incident(), &wa, &na)
            .await
            .unwrap(),
        200
    );
    assert_eq!(
        publish_backlog(&b, &stream, &incident(), &wb, &nb)
            .await
            .unwrap(),
        150
    );
    // A reconnect publishes nothing already there; a forced second send is dropped by the
    // server's de-duplication (same Nats-Msg-Id).
    assert_eq!(
        publish_backlog(&a, &stream, &incident(), &wa, &na)
            .await
            .unwrap(),
        0
    );
    let again = Shared {
        writer: wa.clone(),
        record: na[9].clone(),
    }
    .encode()
    .unwrap();
    let ack = a
        .send_publish(
            "warroom.2026-12-04-7.ana-1",
            jetstream::message::PublishMessage::build()
                .payload(again.into())
                .message_id(warroom::share::wire::message_id(&wa, 10)),
        )
        .await
        .unwrap()
        .await
        .unwrap();
    assert!(ack.duplicate, "the server took a record twice");
    let info = a
        .get_stream("warroom-2026-12-04-7")
        .await
        .unwrap()
        .info()
        .await
        .unwrap()
        .clone();
    assert_eq!(info.state.messages, 350);

    let (va, vb) = (view_of(&a, 350).await, view_of(&b, 350).await);
    let keys = |v: &View| {
        v.records()
            .map(|r| (r.actor.clone(), r.seq))
            .collect::<Vec<_>>()
    };
    assert_eq!(va.len(), 350);
    assert_eq!(keys(&va), keys(&vb), "two views of the same records differ");
    assert!(va.refused().is_empty());
    assert_eq!(incidents(&b).await.unwrap(), vec![incident()]);
}

#[tokio::test]
async fn a_writer_cut_off_shares_its_notes_when_the_engine_returns() {
    let Some(mut nats) = Nats::start() else {
        return;
    };
    let js = connect(&nats).await;
    let stream = ensure_stream(&js, &incident(), 1).await.unwrap();
    let w = WriterId::parse("cy-3").unwrap();
    let all = notes("cy", 60, 0);
    publish_backlog(&js, &stream, &incident(), &w, &all[..20])
        .await
        .unwrap();
    nats.stop();
    // Cut off: the local journal goes on (here: the records), the publish fails, nothing waits.
    let cut = tokio::time::timeout(
        Duration::from_secs(15),
        publish_backlog(&js, &stream, &incident(), &w, &all[..40]),
    )
    .await;
    assert!(
        !matches!(cut, Ok(Ok(_))),
        "published with the engine down: {cut:?}"
    );
    nats.restart();
    let mut sent = None;
    for _ in 0..40 {
        if let Ok(n) = publish_backlog(&js, &stream, &incident(), &w, &all).await {
            sent = Some(n);
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(sent, Some(40), "the backlog after the return");
    let view = view_of(&js, 60).await;
    assert_eq!(view.len(), 60);
    let seqs: Vec<u64> = view.records().map(|r| r.seq).collect();
    assert_eq!(seqs, (1..=60).collect::<Vec<_>>());
}

/// A backlog past the 5,000 publishes async-nats lets wait for their acknowledgement (a
/// responder that wrote offline for a long incident) is shared whole, and at once: sent in one
/// go, the 5,001st send would wait for good.
#[tokio::test]
async fn a_backlog_past_the_clients_pending_limit_is_shared_whole() {
    let Some(nats) = Nats::start() else { return };
    let js = connect(&nats).await;
    let stream = ensure_stream(&js, &incident(), 1).await.unwrap();
    let w = WriterId::parse("dee-4").unwrap();
    let all = notes("dee", 12_007, 0);
    let sent = tokio::time::timeout(
        Duration::from_secs(60),
        publish_backlog(&js, &stream, &incident(), &w, &all),
    )
    .await;
    assert!(
        matches!(sent, Ok(Ok(12_007))),
        "the backlog of 12,007: {sent:?}"
    );
    let view = view_of(&js, 12_007).await;
    assert_eq!(view.len(), 12_007);
    // Past what the stream holds nothing is sent again.
    let again = publish_backlog(&js, &stream, &incident(), &w, &all).await;
    assert!(matches!(again, Ok(0)), "{again:?}");
}

#[tokio::test]
async fn hostile_messages_are_refused_and_reported_never_merged() {
    let Some(nats) = Nats::start() else { return };
    let js = connect(&nats).await;
    ensure_stream(&js, &incident(), 1).await.unwrap();
    let good = Shared {
        writer: WriterId::parse("ana-1").unwrap(),
        record: notes("ana", 1, 0)[0].clone(),
    };
    let impostor = good.encode().unwrap();
    let big = vec![b'x'; warroom::share::wire::MAX_MESSAGE + 10];
    for (subject, payload) in [
        ("warroom.2026-12-04-7.ana-1", good.encode().unwrap()),
        ("warroom.2026-12-04-7.mallory", impostor),
        ("warroom.2026-12-04-7.mallory", b"{\"writer\":".to_vec()),
        ("warroom.2026-12-04-7.mallory", big),
    ] {
        js.publish(subject, payload.into())
            .await
            .unwrap()
            .await
            .unwrap();
    }
    let view = view_of(&js, 4).await;
    assert_eq!(view.len(), 1, "only the honest record is merged");
    let refused = view.refused();
    assert!(
        matches!(refused[0], Refused::Impostor { .. }),
        "{refused:?}"
    );
    assert!(matches!(refused[1], Refused::Unparsable(_)), "{refused:?}");
    assert!(matches!(refused[2], Refused::TooLarge(_)), "{refused:?}");
    let mut again = View::default();
    assert_eq!(again.merge(Ok(good.clone())), Merged::New);
    assert_eq!(again.merge(Ok(good)), Merged::Twice);
}

#[tokio::test]
async fn one_of_two_gets_the_lease_and_it_passes_on_after_the_timeout() {
    let Some(nats) = Nats::start() else { return };
    let (a, b) = (connect(&nats).await, connect(&nats).await);
    let timeout = Duration::from_secs(2);
    let (ka, kb) = (
        lease::bucket(&a, &incident(), timeout, 1).await.unwrap(),
        lease::bucket(&b, &incident(), timeout, 1).await.unwrap(),
    );
    let (ta, tb) = tokio::join!(lease::take(&ka, "ana"), lease::take(&kb, "bo"));
    let (ta, tb) = (ta.unwrap(), tb.unwrap());
    let (mut held, other, by) = match (ta, tb) {
        (Taken::Ours(l), Taken::Held { by }) => (l, kb.clone(), by),
        (Taken::Held { by }, Taken::Ours(l)) => (l, ka.clone(), by),
        both => panic!("not exactly one holder: {both:?}"),
    };
    assert_eq!(by, held.holder(), "the second is told who holds the lease");
    held.renew().await.unwrap();
    let loser = if held.holder() == "ana" { "bo" } else { "ana" };
    assert!(matches!(
        lease::take(&other, loser).await.unwrap(),
        Taken::Held { .. }
    ));
    // The holder disappears (stops renewing): the lease passes on after the timeout.
    drop(held);
    let mut got = None;
    for _ in 0..40 {
        if let Taken::Ours(l) = lease::take(&other, loser).await.unwrap() {
            got = Some(l);
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(got.expect("the lease never passed on").holder(), loser);
}

/// Collects news (bounded in time) until what came satisfies `enough`; returns all of it.
async fn news_until(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<warroom::share::session::News>,
    enough: impl Fn(&[warroom::share::session::News]) -> bool,
) -> Vec<warroom::share::session::News> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    while !enough(&seen) {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(n)) => seen.push(n),
            other => panic!("the news never came: {other:?}; came: {seen:?}"),
        }
    }
    seen
}

#[tokio::test]
async fn a_session_shares_records_as_they_are_written_and_merges_the_others() {
    use warroom::share::session::{self, News, Session};
    let Some(nats) = Nats::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let start = |writer: &str, records: Vec<Record>| {
        let (feed, rx) = tokio::sync::broadcast::channel(64);
        let (tx, news) = tokio::sync::mpsc::unbounded_channel();
        let s = Session {
            engine: Engine::new(nats.url()),
            incident: incident(),
            writer: WriterId::parse(writer).unwrap(),
            records,
            journal: dir.path().join(format!("{writer}.jsonl")),
            presence: None,
        };
        tokio::spawn(session::run(s, rx, tx));
        (feed, news)
    };
    // A starts with a backlog of 3 records; B with none. A's last record proposes a run to the
    // lease's holder (issue 36): it reaches B as it was written.
    let mut all = notes("ana", 5, 0);
    let proposal = Event::RunProposed {
        runbook: "pool-exhaustion".into(),
        variables: [("service".to_string(), "planner-worker".to_string())].into(),
        to: "bo on laptop".into(),
    };
    all[4].kind = proposal.clone();
    // B follows before A starts.
    let any = |f: fn(&News) -> bool| move |seen: &[News]| seen.iter().any(f);
    let (_feed_b, mut news_b) = start("bo-2", Vec::new());
    news_until(&mut news_b, any(|n| matches!(n, News::Shared { .. }))).await;
    let (feed_a, mut news_a) = start("ana-1", all[..3].to_vec());
    news_until(
        &mut news_a,
        any(|n| matches!(n, News::Shared { unsent: 0, .. })),
    )
    .await;
    // B merges A's backlog, and then what A writes afterwards, each once.
    for r in &all[3..] {
        feed_a.send(r.clone()).unwrap();
    }
    let seqs = |seen: &[News]| -> Vec<u64> {
        (seen.iter())
            .filter_map(|n| match n {
                News::Record(s) if s.writer.as_str() == "ana-1" => Some(s.record.seq),
                _ => None,
            })
            .collect()
    };
    let seen = news_until(&mut news_b, |seen| seqs(seen).len() >= 5).await;
    assert_eq!(seqs(&seen), [1, 2, 3, 4, 5]);
    assert!(
        (seen.iter()).any(|n| matches!(n, News::Record(s) if s.record.kind == proposal)),
        "{seen:?}"
    );
    assert!(
        (seen.iter()).any(|n| matches!(
            n,
            News::Shared {
                responders: 2,
                unsent: 0
            }
        )),
        "{seen:?}"
    );
}

#[tokio::test]
async fn a_session_without_its_engine_says_so_and_counts_what_waits() {
    use warroom::share::session::{self, News, Session};
    let Some(mut nats) = Nats::start() else {
        return;
    };
    nats.stop();
    let dir = tempfile::tempdir().unwrap();
    let (_feed, rx) = tokio::sync::broadcast::channel(8);
    let (tx, mut news) = tokio::sync::mpsc::unbounded_channel();
    let s = Session {
        engine: Engine::new(nats.url()),
        incident: incident(),
        writer: WriterId::parse("cy-3").unwrap(),
        records: notes("cy", 4, 0),
        journal: dir.path().join("journal.jsonl"),
        presence: None,
    };
    tokio::spawn(session::run(s, rx, tx));
    let seen = news_until(&mut news, |s| !s.is_empty()).await;
    assert!(
        matches!(&seen[0], News::Unreachable { unsent: 4, reason } if reason.contains(&nats.url())),
        "{seen:?}"
    );
    // Back: the backlog goes, and the engine holds it once.
    nats.restart();
    news_until(&mut news, |s| {
        (s.iter()).any(|n| matches!(n, News::Shared { unsent: 0, .. }))
    })
    .await;
    let js = connect(&nats).await;
    assert_eq!(view_of(&js, 4).await.len(), 4);
}

/// The console's side of the lease (`app::workers::runbooks::with_lease`): while bo holds it,
/// a run asked for in ana's console never starts, ends "aborted" and says who holds it (so it
/// can be proposed to them); once
/// bo gives it back, the run starts, and the lease is given back when the run is over.
#[tokio::test]
async fn the_console_starts_a_run_only_with_the_lease_and_gives_it_back_after() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use warroom::app::Msg;
    use warroom::app::workers::runbooks::{LeasedRun, with_lease};
    use warroom::share::lease::{ForRun, for_run};
    let Some(nats) = Nats::start() else { return };
    let engine = Engine::new(nats.url());
    let ForRun::Held(bo) = for_run(&engine, &incident(), "bo on laptop").await.unwrap() else {
        panic!("nobody held the lease yet")
    };
    let started = Arc::new(AtomicUsize::new(0));
    let ask = |tx| {
        let started = started.clone();
        let run = LeasedRun {
            engine: engine.clone(),
            incident: incident(),
            run_id: "run-1".into(),
            runbook: "hold".into(),
        };
        with_lease(run, Default::default(), tx, move || {
            started.fetch_add(1, Ordering::SeqCst);
        });
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    ask(tx);
    let mut said = Vec::new();
    while said.len() < 2 {
        let msg = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("the console is told")
            .expect("a message");
        said.push(msg);
    }
    assert!(
        matches!(&said[0], Msg::RunEnded { run_id, outcome }
            if run_id == "run-1" && outcome.word() == "aborted"),
        "{said:?}"
    );
    assert!(
        matches!(&said[1], Msg::LeaseBusy { by, runbook, lapses_s: 30 }
            if by == "bo on laptop" && runbook == "hold"),
        "{said:?}"
    );
    assert_eq!(
        started.load(Ordering::SeqCst),
        0,
        "started without the lease"
    );

    bo.release().await.unwrap();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    ask(tx);
    // Started once the lease is ours; given back when the run is over (this one registers no
    // control: it is over at once), so bo can take it again (bounded: 10 s).
    let mut again = None;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        if started.load(Ordering::SeqCst) == 1
            && let ForRun::Held(h) = for_run(&engine, &incident(), "bo on laptop").await.unwrap()
        {
            again = Some(h);
            break;
        }
    }
    assert!(again.is_some(), "the run never started or kept the lease");
    assert_eq!(started.load(Ordering::SeqCst), 1);
}
