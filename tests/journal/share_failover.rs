//! A follower through a node's death (issue 36): on a 3-node cluster with the incident's
//! stream replicated 3 times, a responder's sync follows through an ordered consumer, which
//! lives on one node only. That node is killed; another responder's next note must still
//! reach the follower, within 30 s of the kill (the stream's new leader, the publish's retry,
//! and the follow noticing it stalled and starting again past the last record it took).

use crate::support::nats::Cluster;
use futures::StreamExt;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};
use tokio::time::{Instant, timeout, timeout_at};
use warroom::incident::{Event, IncidentId, Record, Source};
use warroom::share::session::{self, News, Session};
use warroom::share::sync::{ensure_stream, publish_backlog};
use warroom::share::{Engine, WriterId, wire};

fn incident() -> IncidentId {
    IncidentId::parse("2026-12-06-3").unwrap()
}

fn note(seq: u64) -> Record {
    Record {
        seq,
        time: chrono::Utc::now(),
        source: Source::Operator,
        actor: "ana".into(),
        host: String::new(),
        kind: Event::note(format!("ana-{seq}")),
    }
}

/// Waits until the follower's news carry A's record `seq` (by `deadline`); the news said.
async fn until_seen(
    news: &mut mpsc::UnboundedReceiver<News>,
    seq: u64,
    deadline: Instant,
) -> Vec<String> {
    let mut said = Vec::new();
    loop {
        match timeout_at(deadline, news.recv()).await {
            Ok(Some(News::Record(s))) if s.writer.as_str() == "ana-1" && s.record.seq == seq => {
                return said;
            }
            Ok(Some(n)) => said.push(n.to_string()),
            other => {
                panic!("A's record {seq} never reached the follower ({other:?}); it said {said:#?}")
            }
        }
    }
}

/// A's records up to `upto` published, retried (bounded) while the cluster elects leaders.
async fn publish_until_acknowledged(url: &str, records: &[Record]) {
    let mut engine = Engine::new(url);
    engine.replicas = 3;
    let writer = WriterId::parse("ana-1").unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut tried = Vec::new();
    loop {
        let sent = timeout(Duration::from_secs(5), async {
            let js = engine.connect().await?;
            let stream = ensure_stream(&js, &incident(), 3).await?;
            publish_backlog(&js, &stream, &incident(), &writer, records).await
        })
        .await;
        match sent {
            Ok(Ok(_)) => return,
            other => tried.push(format!("{other:?}")),
        }
        assert!(
            Instant::now() < deadline,
            "A's records were never acknowledged: {tried:#?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_sees_notes_again_after_the_node_of_its_consumer_dies() {
    let Some(mut cluster) = tokio::task::spawn_blocking(|| Cluster::start(3))
        .await
        .unwrap()
    else {
        return;
    };
    cluster.until_replicated_streams_are_taken().await;
    let url = cluster.url();
    let dir = tempfile::tempdir().unwrap();

    // B follows the incident.
    let mut engine = Engine::new(url.clone());
    engine.replicas = 3;
    let (_feed_b, feed) = broadcast::channel(8);
    let (tx, mut news_b) = mpsc::unbounded_channel();
    let b = Session {
        engine,
        incident: incident(),
        writer: WriterId::parse("bo-2").unwrap(),
        records: Vec::new(),
        journal: dir.path().join("bo.jsonl"),
        presence: None,
    };
    tokio::spawn(session::run(b, feed, tx));
    let notes: Vec<Record> = (1..=2).map(note).collect();
    publish_until_acknowledged(&url, &notes[..1]).await;
    until_seen(&mut news_b, 1, Instant::now() + Duration::from_secs(30)).await;

    // B's consumer is the stream's only one (A only publishes): the node it lives on dies.
    let js = async_nats::jetstream::new(
        async_nats::connect(url.split(',').collect::<Vec<_>>())
            .await
            .unwrap(),
    );
    let stream = js.get_stream(wire::stream_name(&incident())).await.unwrap();
    let consumers: Vec<_> = stream.consumers().collect().await;
    let leaders: Vec<String> = (consumers.into_iter())
        .filter_map(|c| c.ok()?.cluster?.leader)
        .collect();
    assert_eq!(leaders.len(), 1, "B's consumer: {leaders:?}");
    drop(js);
    let killed = Instant::now();
    cluster.node(&leaders[0]).stop();

    // A's next note reaches B within 30 s of the kill.
    publish_until_acknowledged(&url, &notes).await;
    let said = until_seen(&mut news_b, 2, killed + Duration::from_secs(30)).await;
    eprintln!(
        "A's note after {} died reached B {:.1} s after the kill; B said {said:#?}",
        leaders[0],
        killed.elapsed().as_secs_f64()
    );
}
