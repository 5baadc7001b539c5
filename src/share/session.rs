//! A long-lived responder on the engine (the console, the recorder): its own records published
//! as they are written (the backlog again on every reconnect), everyone's followed and merged,
//! and what that looks like reported as [`News`]. It never blocks writing: the journal's feed
//! is only read, and an engine out of reach only makes the backlog grow.

use super::engine::{Engine, ShareError};
use super::presence;
use super::sync::{Followed, ensure_stream, follow, publish_backlog};
use super::view::{Merged, View};
use super::wire::{Refused, Shared, WriterId};
use crate::incident::{IncidentId, Record};
use futures::StreamExt;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, watch};

/// How long one publish or stream question may take before the engine counts as out of reach.
const ANSWER_WAIT: Duration = Duration::from_secs(5);
/// The pause before asking an engine out of reach again.
const RETRY: Duration = Duration::from_secs(3);
/// How long a follow may stay silent while the stream holds records past the last one it
/// delivered before it is taken as lost (its consumer gone with a node) and started again.
const STALLED: Duration = Duration::from_secs(6);

/// What the sync reports.
#[derive(Debug, Clone, PartialEq)]
pub enum News {
    /// The engine answers: how many responders wrote to the incident (this one included), and
    /// how many of this responder's records it has not acknowledged yet.
    Shared { responders: usize, unsent: usize },
    /// The engine is out of reach: why, and how many records wait to be shared.
    Unreachable { reason: String, unsent: usize },
    /// Another responder's record, merged once.
    Record(Box<Shared>),
    /// Another responder joined, left or went silent (its record, in words), after this one
    /// caught up with the incident's history.
    Presence(String),
    /// A message on the stream that was refused (never merged).
    Refused(Refused),
}

/// One responder's place on the engine.
pub struct Session {
    pub engine: Engine,
    pub incident: IncidentId,
    pub writer: WriterId,
    /// This responder's records so far (its journal as read at the start).
    pub records: Vec<Record>,
    /// The journal's file, read again when the feed falls behind.
    pub journal: std::path::PathBuf,
    /// Who this responder is, to record its joining and leaving and to beat in the
    /// incident's presence bucket (none: it only shares and follows records).
    pub presence: Option<presence::Part>,
}

/// The sync's state between two steps.
struct Run {
    session: Session,
    view: View,
    /// The highest sequence of ours the engine acknowledged.
    acked: u64,
    /// The stream's sequence of the last message followed: a new follow starts past it.
    followed: u64,
    /// When the follow last delivered a message (or started).
    heard: tokio::time::Instant,
    /// When the last bounded question to the engine was asked: a pause after it waits only
    /// what is left of [`RETRY`] (a question that timed out has waited long enough).
    asked: std::sync::Mutex<tokio::time::Instant>,
    /// Whether the first follow reached the stream's end: presence records merged after it
    /// are news.
    caught_up: bool,
    /// How far the engine took this responder's records, for a leave to wait on.
    acked_to: Option<watch::Sender<u64>>,
    /// How many responders beat now (`None`: presence is not live; the writers seen count).
    present: watch::Receiver<Option<usize>>,
    /// The last status said (said again only when it changes).
    last: Option<News>,
    news: mpsc::UnboundedSender<News>,
}

impl Run {
    fn unsent(&self) -> usize {
        let records = &self.session.records;
        records.len() - records.partition_point(|r| r.seq <= self.acked)
    }

    fn say(&self, n: News) -> bool {
        self.news.send(n).is_ok()
    }

    /// Says a status when it differs from the last one said.
    fn once(&mut self, n: News) -> bool {
        if self.last.as_ref() == Some(&n) {
            return true;
        }
        self.last = Some(n.clone());
        self.say(n)
    }

    fn status(&mut self) -> bool {
        // Those beating now; else every writer seen, and this one, which may not have written
        // yet.
        let writers = self.view.writers();
        let seen = writers.len() + usize::from(!writers.contains(&self.session.writer));
        let responders = self.present.borrow().unwrap_or(seen);
        self.once(News::Shared {
            responders,
            unsent: self.unsent(),
        })
    }

    fn out_of_reach(&mut self, e: &ShareError) -> bool {
        self.once(News::Unreachable {
            reason: crate::sanitize::line(&e.to_string()).into_owned(),
            unsent: self.unsent(),
        })
    }

    /// Says the engine is out of reach and waits before the next try, [`RETRY`] after the last
    /// question asked; false when nobody listens any more.
    async fn pause(&mut self, e: &ShareError) -> bool {
        if !self.out_of_reach(e) {
            return false;
        }
        let since = self.asked.lock().map_or(Duration::ZERO, |a| a.elapsed());
        tokio::time::sleep(RETRY.saturating_sub(since)).await;
        true
    }

    /// Reads this responder's records again from its journal (after the feed fell behind).
    async fn reread(&mut self) {
        let path = self.session.journal.clone();
        let read = tokio::task::spawn_blocking(move || crate::incident::journal::read(&path)).await;
        if let Ok(Ok(recovery)) = read {
            self.session.records = recovery.records;
        }
    }

    /// Merges one message of the stream; says what is new.
    fn merge(&mut self, m: Result<Shared, Refused>) -> bool {
        let copy = m.clone();
        match self.view.merge(m) {
            Merged::New => {
                let Ok(shared) = copy else { return true };
                if shared.writer == self.session.writer {
                    return true;
                }
                if let crate::incident::Event::Responder { who, change, .. } = &shared.record.kind
                    && self.caught_up
                {
                    let words = crate::incident::timeline::presence(who, *change);
                    if !self.say(News::Presence(words)) {
                        return false;
                    }
                }
                self.say(News::Record(Box::new(shared))) && self.status()
            }
            Merged::Twice => true,
            Merged::Refused => match copy {
                Err(why) => self.say(News::Refused(why)),
                Ok(_) => true,
            },
        }
    }
}

/// Runs the sync until the receiver of `news` is gone. `feed` carries this responder's
/// records as its journal syncs them.
pub async fn run(
    session: Session,
    mut feed: broadcast::Receiver<Record>,
    news: mpsc::UnboundedSender<News>,
) {
    let mut session = session;
    let part = session.presence.take();
    let (present_tx, present) = watch::channel(None);
    let mut run = Run {
        view: View::default(),
        acked: 0,
        followed: 0,
        heard: tokio::time::Instant::now(),
        asked: std::sync::Mutex::new(tokio::time::Instant::now()),
        caught_up: false,
        acked_to: None,
        present,
        last: None,
        news,
        session,
    };
    let mut beating = None;
    if let Some(part) = part {
        let me = &part.me;
        me.record(
            me.writer.as_str(),
            &me.who,
            crate::incident::event::Presence::Joined,
        )
        .await;
        run.acked_to = Some(part.acked);
        beating = Some((part.me, part.leave));
    }
    for r in &run.session.records {
        run.view.merge(Ok(Shared {
            writer: run.session.writer.clone(),
            record: r.clone(),
        }));
    }
    let js = match run.session.engine.connect().await {
        Ok(js) => js,
        Err(e) => {
            run.out_of_reach(&e);
            return;
        }
    };
    let (id, replicas) = (run.session.incident.clone(), run.session.engine.replicas);
    // Presence lives as long as the sync: until its handle leaves, or the sync ends.
    let _beating = beating.map(|(me, leave)| {
        let task = presence::run(js.clone(), id.clone(), replicas, me, leave, present_tx);
        AbortOnDrop(tokio::spawn(task))
    });
    loop {
        let reached = bounded(&run, ensure_stream(&js, &id, replicas)).await;
        let mut stream = match reached {
            Ok(s) => s,
            Err(e) if run.pause(&e).await => continue,
            Err(_) => return,
        };
        let mut messages = match bounded(&run, follow(&stream, &id, run.followed)).await {
            Ok(m) => Box::pin(m),
            Err(e) if run.pause(&e).await => continue,
            Err(_) => return,
        };
        let held = stream.cached_info().state.last_sequence;
        run.caught_up = run.caught_up || run.followed >= held;
        run.heard = tokio::time::Instant::now();
        match steps(&mut run, &js, &mut stream, &mut messages, &mut feed, held).await {
            Step::Again => {}
            Step::Stop => return,
        }
    }
}

/// A task that ends with its owner.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What ends one follow.
enum Step {
    /// The engine failed us (or the follow stalled): connect and follow again.
    Again,
    /// Nobody listens any more, or the journal's feed closed.
    Stop,
}

/// Publishes, follows and takes new records until the engine fails us.
async fn steps(
    run: &mut Run,
    js: &async_nats::jetstream::Context,
    stream: &mut async_nats::jetstream::stream::Stream,
    messages: &mut (impl futures::Stream<Item = Result<Followed, ShareError>> + Unpin),
    feed: &mut broadcast::Receiver<Record>,
    held: u64,
) -> Step {
    let id = run.session.incident.clone();
    let mut tick = tokio::time::interval(RETRY);
    loop {
        if run.unsent() > 0 {
            let (w, records) = (&run.session.writer, &run.session.records);
            match bounded(run, publish_backlog(js, stream, &id, w, records)).await {
                Ok(_) => {
                    run.acked = records.last().map_or(0, |r| r.seq);
                    if let Some(to) = &run.acked_to {
                        to.send_replace(run.acked);
                    }
                }
                Err(e) if run.pause(&e).await => return Step::Again,
                Err(_) => return Step::Stop,
            }
        }
        let connected = js.client().connection_state() == async_nats::connection::State::Connected;
        let said = if connected {
            run.status()
        } else {
            run.out_of_reach(&ShareError::Unreachable {
                url: run.session.engine.url.clone(),
                reason: "not connected".into(),
            })
        };
        if !said {
            return Step::Stop;
        }
        tokio::select! {
            r = feed.recv() => match r {
                Ok(record) => run.session.records.push(record),
                // Fell behind (thousands at once): the journal has them all.
                Err(broadcast::error::RecvError::Lagged(_)) => run.reread().await,
                Err(broadcast::error::RecvError::Closed) => return Step::Stop,
            },
            m = messages.next() => match m {
                Some(Ok(m)) => {
                    run.followed = m.seq;
                    run.heard = tokio::time::Instant::now();
                    run.caught_up = run.caught_up || m.seq >= held;
                    if !run.merge(m.shared) {
                        return Step::Stop;
                    }
                }
                Some(Err(e)) => {
                    return if run.pause(&e).await { Step::Again } else { Step::Stop };
                }
                None => return Step::Again,
            },
            _ = tick.tick() => {
                if connected && run.heard.elapsed() >= STALLED && stalled(run, stream).await {
                    return Step::Again;
                }
            }
            () = run.news.closed() => return Step::Stop,
        }
    }
}

/// Whether the stream holds records past the last one the follow delivered, though it has been
/// silent for [`STALLED`]: its consumer was lost (with the node it lived on) and nothing made
/// it again. An engine that does not answer the question counts as a stall too. Asked on
/// every tick while the follow stays silent: one small request every [`RETRY`].
async fn stalled(run: &Run, stream: &mut async_nats::jetstream::stream::Stream) -> bool {
    let asked = tokio::time::timeout(ANSWER_WAIT, stream.info()).await;
    match asked {
        Ok(Ok(info)) => {
            let stalled = info.state.last_sequence > run.followed;
            if stalled {
                tracing::warn!(
                    followed = run.followed,
                    last = info.state.last_sequence,
                    "the follow stalled: following again"
                );
            }
            stalled
        }
        _ => true,
    }
}

/// `what` within [`ANSWER_WAIT`], else out of reach.
async fn bounded<T>(
    run: &Run,
    what: impl Future<Output = Result<T, ShareError>>,
) -> Result<T, ShareError> {
    if let Ok(mut asked) = run.asked.lock() {
        *asked = tokio::time::Instant::now();
    }
    tokio::time::timeout(ANSWER_WAIT, what)
        .await
        .unwrap_or_else(|_| {
            Err(ShareError::Unreachable {
                url: run.session.engine.url.clone(),
                reason: format!("no answer in {} s", ANSWER_WAIT.as_secs()),
            })
        })
}

/// Starts the sync of the incident `journal` writes (its `records` so far) on `engine`, as
/// this machine's writer of it, and its presence (joining is recorded at once); its news arrive
/// on the receiver returned, and the handle leaves the incident cleanly.
pub fn start(
    engine: Engine,
    store: &crate::incident::Store,
    incident: &IncidentId,
    journal: &crate::incident::JournalWriter,
    records: Vec<Record>,
) -> Result<(mpsc::UnboundedReceiver<News>, presence::Handle), ShareError> {
    let dir = store.dir(incident);
    let writer = WriterId::for_incident(&dir).map_err(|source| ShareError::File {
        path: dir.join("writer-id"),
        source,
    })?;
    let (part, handle) = presence::pair(presence::Me {
        journal: journal.clone(),
        writer: writer.clone(),
        who: super::lease::holder_name(),
        actor: crate::incident::actor::current(),
        timing: presence::Timing::default(),
    });
    let session = Session {
        engine,
        incident: incident.clone(),
        writer,
        records,
        journal: store.journal_path(incident),
        presence: Some(part),
    };
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(run(session, journal.subscribe(), tx));
    Ok((rx, handle))
}

impl std::fmt::Display for News {
    /// The news as one line (the recorder's status lines).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            News::Shared { responders, unsent } => {
                write!(f, "shared: {responders} responder(s), {unsent} unsent")
            }
            News::Unreachable { reason, unsent } => write!(
                f,
                "not shared: {reason}; {unsent} record(s) kept here, shared when it is back"
            ),
            News::Record(s) => write!(f, "record #{} of {}", s.record.seq, s.writer),
            News::Presence(words) => f.write_str(words),
            News::Refused(why) => write!(f, "refused a record on the engine: {why}"),
        }
    }
}
