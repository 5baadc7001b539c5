//! The incident's socket, off the loop: a holder console serves it and follows its own
//! writer's feed (so what the team records through it reaches its timeline); a follower
//! console follows the holder's stream on a thread of its own, records and proposes through
//! the holder on blocking tasks, and takes over when the holder has gone.

use crate::app::msg::Msg;
use crate::app::sharing::{FollowSetup, ShareMsg, TookOver};
use crate::incident::event::Event;
use crate::incident::serve::{self, Answer, Closer, Serving};
use crate::incident::store::{Role, StoreError};
use crate::incident::{JournalWriter, Source};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, mpsc};

/// How long a takeover waits for the old holder's lock to go.
const TAKE_OVER_WAIT: Duration = Duration::from_secs(5);

fn share(tx: &mpsc::UnboundedSender<Msg>, m: ShareMsg) -> bool {
    tx.send(Msg::Share(m)).is_ok()
}

/// Serve the incident `writer` holds, and feed every record it syncs (the team's included) to
/// the loop. `None` (with a notice) when the socket cannot be served: recording goes on.
pub fn hold(writer: &JournalWriter, tx: &mpsc::UnboundedSender<Msg>) -> Option<Serving> {
    let mut feed = writer.subscribe();
    let journal = writer.info().journal.clone();
    let records = tx.clone();
    tokio::spawn(async move {
        loop {
            match feed.recv().await {
                Ok(r) => {
                    if !share(&records, ShareMsg::Record(Box::new(r))) {
                        return;
                    }
                }
                // Fell behind (thousands at once): read what was missed from the file.
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let path = journal.clone();
                    let read =
                        tokio::task::spawn_blocking(move || crate::incident::journal::read(&path))
                            .await;
                    for r in read.into_iter().flatten().flat_map(|rec| rec.records) {
                        if !share(&records, ShareMsg::Record(Box::new(r))) {
                            return;
                        }
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    });
    let (news_tx, mut news) = mpsc::unbounded_channel();
    let forward = tx.clone();
    tokio::spawn(async move {
        while let Some(n) = news.recv().await {
            let m = match n {
                serve::HolderNews::Followers(n) => ShareMsg::Followers(n),
                serve::HolderNews::Proposal {
                    runbook,
                    variables,
                    record,
                } => ShareMsg::Proposal {
                    run: crate::app::sharing::RunProposal { runbook, variables },
                    record,
                },
                serve::HolderNews::NoteProposal { text, record } => {
                    ShareMsg::NoteProposal { text, record }
                }
            };
            if !share(&forward, m) {
                return;
            }
        }
    });
    match serve::serve(writer.clone(), Some(news_tx), Default::default()) {
        Ok(s) => {
            share(tx, ShareMsg::Followers(0));
            Some(s)
        }
        Err(e) => {
            let _ = tx.send(Msg::Recorded(Err(format!(
                "the incident is recorded, but not shared: {e}"
            ))));
            None
        }
    }
}

/// Follow the holder from after record `after` on a thread of its own; the returned handle
/// ends the stream when the console closes.
pub fn follow(
    setup: &FollowSetup,
    after: u64,
    tx: &mpsc::UnboundedSender<Msg>,
) -> Arc<Mutex<Option<Closer>>> {
    let closer = Arc::new(Mutex::new(None));
    let (client, incident, thread_tx, slot) = (
        setup.client.clone(),
        setup.incident.clone(),
        tx.clone(),
        closer.clone(),
    );
    let spawned = std::thread::Builder::new()
        .name("follow".into())
        .spawn(move || {
            let tx = thread_tx;
            let mut following = match client.follow(Some(&incident), after) {
                Ok(f) => f,
                Err(e) => {
                    share(&tx, ShareMsg::HolderGone(e.to_string()));
                    return;
                }
            };
            if let Ok(mut slot) = slot.lock() {
                *slot = following.closer();
            }
            let w = following.welcome.clone();
            share(
                &tx,
                ShareMsg::Welcome {
                    holder: w.holder,
                    followers: w.followers,
                },
            );
            let why = loop {
                let m = match following.next_answer() {
                    Some(Ok(Answer::Record { record })) => ShareMsg::Record(Box::new(record)),
                    Some(Ok(Answer::Presence { followers })) => ShareMsg::Followers(followers),
                    Some(Ok(Answer::Error { message, .. })) => break message,
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => break e.to_string(),
                    None => break "it closed the connection".to_string(),
                };
                if !share(&tx, m) {
                    return;
                }
            };
            share(&tx, ShareMsg::HolderGone(why));
        });
    if let Err(e) = spawned {
        let _ = share(
            tx,
            ShareMsg::HolderGone(format!("cannot start following: {e}")),
        );
    }
    closer
}

/// Record `event` through the holder (a blocking task); the answer comes as `Msg::Recorded`.
pub fn record(setup: &FollowSetup, event: Event, tx: &mpsc::UnboundedSender<Msg>) {
    let (client, incident, tx) = (setup.client.clone(), setup.incident.clone(), tx.clone());
    tokio::task::spawn_blocking(move || {
        let result = client.append(&incident, event).map_err(|e| e.to_string());
        let _ = tx.send(Msg::Recorded(result));
    });
}

/// Ask the holder to run `runbook`.
pub fn propose(setup: &FollowSetup, runbook: String, tx: &mpsc::UnboundedSender<Msg>) {
    let (client, incident, tx) = (setup.client.clone(), setup.incident.clone(), tx.clone());
    tokio::task::spawn_blocking(move || {
        let result = client
            .propose(&incident, &runbook)
            .map(Box::new)
            .map_err(|e| e.to_string());
        share(&tx, ShareMsg::Proposed(result));
    });
}

/// Take the incident over once its holder has gone: its lock (waiting a moment for the old
/// holder's to go), its journal, a notice of the takeover; answers `ShareMsg::TookOver`.
pub fn take_over(setup: &FollowSetup, tx: &mpsc::UnboundedSender<Msg>) {
    let (tx, actor) = (tx.clone(), setup.actor.clone());
    let Some((store, id)) = setup.local.clone() else {
        share(
            &tx,
            ShareMsg::TookOver(Err(
                "the incident is on another host (followed through a socket): take it over \
                 there, with `warroom open --incident ID`"
                    .into(),
            )),
        );
        return;
    };
    tokio::spawn(async move {
        let locked = tokio::task::spawn_blocking(move || {
            let deadline = Instant::now() + TAKE_OVER_WAIT;
            loop {
                match store.open_incident(&id, Role::Console) {
                    Ok((incident, recovery)) => {
                        return Ok(crate::incident::open::Locked {
                            incident,
                            recovery,
                            new: false,
                        });
                    }
                    Err(StoreError::Held { .. }) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    Err(StoreError::Held { holder, .. }) => {
                        return Err(format!(
                            "{holder} holds it now: reopen it (`warroom open --incident {id}`) \
                             to follow that holder"
                        ));
                    }
                    Err(e) => return Err(e.to_string()),
                }
            }
        })
        .await
        .unwrap_or_else(|e| Err(e.to_string()));
        let result = match locked {
            Ok(locked) => begin(locked, &actor).await,
            Err(e) => Err(e),
        };
        share(&tx, ShareMsg::TookOver(result));
    });
}

async fn begin(locked: crate::incident::open::Locked, actor: &str) -> Result<TookOver, String> {
    let header = crate::incident::open::Header::default();
    let opened = crate::incident::open::begin(locked, header, actor, None)
        .await
        .map_err(|e| e.to_string())?;
    let mut records = opened.records;
    let notice = Event::JournalNotice {
        message: format!(
            "the console of {actor} (pid {}) took the incident over after its holder went away",
            std::process::id()
        ),
    };
    if let Ok(r) = opened
        .writer
        .append(Source::System, "warroom", notice)
        .await
    {
        records.push(r);
    }
    Ok(TookOver {
        writer: opened.writer,
        records,
    })
}
