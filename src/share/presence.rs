//! Who works a shared incident now (issue 36): a timeline entry when a responder joins or
//! leaves.
//!
//! A responder records its own joining (local first, like every record) and, when it closes
//! cleanly, its leaving ([`Handle::leave`]). While it works it puts a beat, the key
//! `beat.<writer>` of the incident's presence bucket, every [`Timing::beat`], and watches
//! everyone's. One whose beat stops for [`Timing::away`] (its laptop slept, crashed or lost
//! the network) is recorded silent by exactly one of those who noticed: the first to create the
//! key `gone.<writer>.<session>.<epoch>` (a compare-and-set on "no entry"). A responder that
//! beats again after such a claim records that it is back and beats with the next epoch.
//!
//! An observer judges the others only when its own beat comes back through its watch (the
//! watch delivers in order, so all put before it has arrived): a watch that stalled (its
//! consumer lost with a node) or a responder starved of CPU never reads as everyone gone.

use super::engine::ShareError;
use super::wire::WriterId;
use crate::incident::event::Presence as Change;
use crate::incident::{Event, IncidentId, JournalWriter, Record, Source};
use async_nats::jetstream::{self, kv};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

/// How often a responder says it is here, and how long a silence makes it gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    pub beat: Duration,
    pub away: Duration,
}

impl Default for Timing {
    /// A beat every 10 s; gone after the executor lease's timeout (30 s).
    fn default() -> Timing {
        Timing {
            beat: Duration::from_secs(10),
            away: super::lease::TIMEOUT,
        }
    }
}

/// The longest beat read: a beat is a name and two numbers; anything longer is hostile.
const MAX_BEAT: usize = 1024;
/// How long one question to the engine may take.
const ANSWER_WAIT: Duration = Duration::from_secs(5);
/// The pause before watching again after the engine failed us.
const RETRY: Duration = Duration::from_secs(3);

/// A responder's beat: who, and which run of it (a restart is a new session; coming back after
/// being recorded silent is a new epoch of the same one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Beat {
    who: String,
    session: String,
    epoch: u32,
}

/// This responder, as its presence records name it.
#[derive(Debug, Clone)]
pub struct Me {
    pub journal: JournalWriter,
    pub writer: WriterId,
    /// "ana on laptop-3" ([`super::lease::holder_name`]).
    pub who: String,
    /// The records' actor.
    pub actor: String,
    pub timing: Timing,
}

impl Me {
    /// Records a presence change of `writer` (this responder's or one it noticed) in this
    /// responder's journal, which the sync then shares.
    pub(super) async fn record(&self, writer: &str, who: &str, change: Change) -> Option<Record> {
        let event = Event::Responder {
            writer: writer.to_owned(),
            who: who.to_owned(),
            change,
        };
        match self
            .journal
            .append(Source::System, &self.actor, event)
            .await
        {
            Ok(r) => Some(r),
            Err(e) => {
                tracing::warn!(%e, "a responder's presence was not recorded");
                None
            }
        }
    }
}

/// The session's side of presence: who this responder is, where the sync says how far the
/// engine took its records, and the leave asked for.
pub struct Part {
    pub(super) me: Me,
    pub(super) acked: watch::Sender<u64>,
    pub(super) leave: Leave,
}

/// Where a leave asked for arrives.
pub struct Leave(mpsc::Receiver<oneshot::Sender<()>>);

/// The caller's side: leave the incident cleanly.
pub struct Handle {
    me: Me,
    acked: watch::Receiver<u64>,
    leave: mpsc::Sender<oneshot::Sender<()>>,
}

/// A session's presence part and the handle to leave with.
pub fn pair(me: Me) -> (Part, Handle) {
    let (acked, seen) = watch::channel(0);
    let (ask, leave) = mpsc::channel(1);
    let handle = Handle {
        me: me.clone(),
        acked: seen,
        leave: ask,
    };
    (
        Part {
            me,
            acked,
            leave: Leave(leave),
        },
        handle,
    )
}

impl Handle {
    /// Leaves the shared incident: records it (local first), waits up to `within` for the
    /// engine to take that record, and takes this responder's beat away so nobody records it
    /// silent. True when the engine took the record in time (else it is shared next time).
    pub async fn leave(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        let me = &self.me;
        let Some(left) = me.record(me.writer.as_str(), &me.who, Change::Left).await else {
            return false;
        };
        let mut acked = self.acked.clone();
        let taken = acked.wait_for(|a| *a >= left.seq);
        let shared = matches!(tokio::time::timeout_at(deadline, taken).await, Ok(Ok(_)));
        let (done, gone) = oneshot::channel();
        if self.leave.send(done).await.is_ok() {
            let _ = tokio::time::timeout_at(deadline, gone).await;
        }
        shared
    }
}

fn beat_key(writer: &str) -> String {
    format!("beat.{writer}")
}

fn gone_key(writer: &str, beat: &Beat) -> String {
    format!("gone.{writer}.{}.{}", beat.session, beat.epoch)
}

/// The incident's presence bucket, made by whoever comes first. Entries never age out: a claim
/// must outlive the silence it records, and a beat left by a crash is claimed once.
async fn bucket(
    js: &jetstream::Context,
    incident: &IncidentId,
    replicas: usize,
) -> Result<kv::Store, ShareError> {
    let name = format!("warroom-presence-{incident}");
    super::lease::kv_bucket(js, &name, Duration::ZERO, replicas).await
}

/// Runs this responder's presence on `js` until its handle leaves or is dropped. `present`
/// carries how many responders are here now (`None` while the watch is not live).
pub async fn run(
    js: jetstream::Context,
    incident: IncidentId,
    replicas: usize,
    me: Me,
    Leave(mut leave): Leave,
    present: watch::Sender<Option<usize>>,
) {
    let mut here = Here {
        beat: Beat {
            who: me.who.clone(),
            session: format!("{:016x}", rand::random::<u64>()),
            epoch: 0,
        },
        last_word: None,
        check_next: false,
    };
    loop {
        let watched = tokio::time::timeout(ANSWER_WAIT, async {
            let store = bucket(&js, &incident, replicas).await?;
            let watch = store.watch("beat.*").await.map_err(ShareError::engine)?;
            Ok::<_, ShareError>((store, watch))
        })
        .await;
        let ended = match watched {
            Ok(Ok((store, watch))) => {
                let ended = live(&me, &store, watch, &mut here, &mut leave, &present).await;
                let _ = present.send(None);
                ended
            }
            Ok(Err(e)) => {
                tracing::debug!(%e, "presence: the bucket is out of reach");
                false
            }
            Err(_) => false,
        };
        if ended {
            return;
        }
        tokio::select! {
            () = tokio::time::sleep(RETRY) => {}
            asked = leave.recv() => {
                if let Some(done) = asked {
                    let _ = done.send(());
                }
                return;
            }
        }
    }
}

/// This responder's own beat between two watches.
struct Here {
    beat: Beat,
    /// When a beat was last taken (the wall clock: a laptop's sleep stops the monotonic one).
    last_word: Option<SystemTime>,
    /// Ask once more whether this responder was recorded silent (a claim may land just after
    /// the first question).
    check_next: bool,
}

/// Beats, watches and judges until the watch or a beat fails (false) or the handle leaves or
/// is dropped (true).
async fn live(
    me: &Me,
    store: &kv::Store,
    mut watch: kv::Watch,
    here: &mut Here,
    leave: &mut mpsc::Receiver<oneshot::Sender<()>>,
    present: &watch::Sender<Option<usize>>,
) -> bool {
    let mut peers = Peers::new(me.writer.as_str(), &here.beat.session);
    let mut every = tokio::time::interval(me.timing.beat);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = every.tick() => {
                if !beat(me, store, here).await || !peers.watching(me.timing) {
                    return false;
                }
                let _ = present.send(Some(peers.present(me.timing)));
            }
            entry = watch.next() => match entry {
                // Our own beat is back: the watch has delivered all that was put before it,
                // so whoever is still unheard of is silent, not late in the watch.
                Some(Ok(entry)) => {
                    if peers.heard(&entry, &here.beat) {
                        for (writer, peer, silent) in peers.silent(me.timing) {
                            if claim(me, store, &writer, &peer, silent).await {
                                peers.claimed(&writer);
                            }
                        }
                    }
                }
                Some(Err(e)) => {
                    tracing::warn!(%e, "presence: the watch failed");
                    return false;
                }
                None => return false,
            },
            asked = leave.recv() => {
                let key = beat_key(me.writer.as_str());
                let _ = tokio::time::timeout(ANSWER_WAIT, store.delete(key)).await;
                if let Some(done) = asked {
                    let _ = done.send(());
                }
                return true;
            }
        }
    }
}

/// Puts this responder's beat; after a long silence of its own, records that it is back when
/// someone recorded it silent meanwhile. False when the engine failed us.
async fn beat(me: &Me, store: &kv::Store, here: &mut Here) -> bool {
    let now = SystemTime::now();
    let gap = (here.last_word)
        .and_then(|w| now.duration_since(w).ok())
        .unwrap_or_default();
    if !put(me, store, &here.beat).await {
        return false;
    }
    here.last_word = Some(now);
    let long = gap >= me.timing.away / 2;
    if !(long || here.check_next) {
        return true;
    }
    here.check_next = long;
    let key = gone_key(me.writer.as_str(), &here.beat);
    let asked = tokio::time::timeout(ANSWER_WAIT, store.entry(key)).await;
    let Ok(Ok(Some(claim))) = asked else {
        return true;
    };
    if claim.operation != kv::Operation::Put {
        return true;
    }
    // Recorded silent: say it is back (how long since its last word), with the next epoch.
    let seconds = gap.max(me.timing.away).as_secs();
    let writer = me.writer.as_str();
    me.record(writer, &me.who, Change::Back { seconds }).await;
    here.beat.epoch += 1;
    here.check_next = false;
    put(me, store, &here.beat).await
}

async fn put(me: &Me, store: &kv::Store, beat: &Beat) -> bool {
    let Ok(value) = serde_json::to_vec(beat) else {
        return false;
    };
    let key = beat_key(me.writer.as_str());
    let put = tokio::time::timeout(ANSWER_WAIT, store.put(key, value.into())).await;
    matches!(put, Ok(Ok(_)))
}

/// Records `writer` silent for `seconds` when this responder is the first to claim it. True
/// when the silence is claimed (by this one or another): it is not asked again.
async fn claim(me: &Me, store: &kv::Store, writer: &str, peer: &Beat, seconds: u64) -> bool {
    let key = gone_key(writer, peer);
    let made = tokio::time::timeout(ANSWER_WAIT, store.create(key, me.who.clone().into())).await;
    match made {
        Ok(Ok(_)) => me
            .record(writer, &peer.who, Change::Silent { seconds })
            .await
            .is_some(),
        Ok(Err(e)) if e.kind() == kv::CreateErrorKind::AlreadyExists => true,
        _ => false,
    }
}

/// One other responder as the watch last heard it.
#[derive(Debug)]
struct Peer {
    beat: Beat,
    heard: Instant,
    /// Its silence (this session and epoch) is recorded: never asked again.
    claimed: bool,
}

/// Everyone's beats as this responder's watch delivers them.
#[derive(Debug)]
struct Peers {
    me: String,
    session: String,
    /// When this responder's own beat last came back through the watch.
    echo: Option<Instant>,
    started: Instant,
    others: BTreeMap<String, Peer>,
}

impl Peers {
    fn new(me: &str, session: &str) -> Peers {
        Peers {
            me: me.to_owned(),
            session: session.to_owned(),
            echo: None,
            started: Instant::now(),
            others: BTreeMap::new(),
        }
    }

    /// Takes one entry of the watch; a key or beat that does not parse is refused (logged).
    /// True when it is this responder's own beat come back (the time to judge the others).
    fn heard(&mut self, entry: &kv::Entry, ours: &Beat) -> bool {
        let writer = entry.key.strip_prefix("beat.").unwrap_or_default();
        if WriterId::parse(writer).is_err() {
            tracing::warn!(key = %crate::sanitize::line(&entry.key), "presence: a key that names no writer");
            return false;
        }
        if entry.operation != kv::Operation::Put {
            // Left cleanly: its own record says so.
            self.others.remove(writer);
            return false;
        }
        let beat = (entry.value.len() <= MAX_BEAT)
            .then(|| serde_json::from_slice::<Beat>(&entry.value).ok())
            .flatten();
        let Some(mut beat) = beat else {
            tracing::warn!(writer, "presence: a beat that does not parse was refused");
            return false;
        };
        if writer == self.me {
            let echo = beat.session == self.session && beat.epoch <= ours.epoch;
            if echo {
                self.echo = Some(Instant::now());
            }
            return echo;
        }
        beat.who = crate::sanitize::line(&beat.who).into_owned();
        let now = Instant::now();
        match self.others.get_mut(writer) {
            Some(p) if p.beat.session == beat.session && p.beat.epoch == beat.epoch => {
                p.heard = now;
            }
            _ => {
                let peer = Peer {
                    beat,
                    heard: now,
                    claimed: false,
                };
                self.others.insert(writer.to_owned(), peer);
            }
        }
        false
    }

    /// Whether the watch is live: this responder's own beats come back through it. A watch
    /// that has not echoed for the whole silence is given up (and made again).
    fn watching(&self, timing: Timing) -> bool {
        let since = self.echo.unwrap_or(self.started).elapsed();
        since < timing.away
    }

    /// The others silent for `timing.away` and not claimed yet. Asked only when this
    /// responder's own beat has just come back (else it could be this one's watch that is
    /// silent, not them).
    fn silent(&self, timing: Timing) -> Vec<(String, Beat, u64)> {
        (self.others.iter())
            .filter(|(_, p)| !p.claimed && p.heard.elapsed() >= timing.away)
            .map(|(w, p)| (w.clone(), p.beat.clone(), p.heard.elapsed().as_secs()))
            .collect()
    }

    fn claimed(&mut self, writer: &str) {
        if let Some(p) = self.others.get_mut(writer) {
            p.claimed = true;
        }
    }

    /// Responders heard within `timing.away`, this one included.
    fn present(&self, timing: Timing) -> usize {
        1 + (self.others.values())
            .filter(|p| p.heard.elapsed() < timing.away)
            .count()
    }
}
