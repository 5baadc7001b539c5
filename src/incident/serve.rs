//! The holder serves its incident (issue 18): whoever holds the lock (a console, the headless
//! recorder, a headless game day) listens on a unix socket in the incident directory, so the
//! rest of the team records *through* the one writer and follows the journal live.
//!
//! ```text
//!  warroom incident note ─┐                     ┌──────────── holder ─────────────┐
//!  a follower console ────┼── incident.sock ──► │ serve: one task per connection   │
//!  ssh -L laptop:… ───────┘   (0600, owner)     │   ──► JournalWriter (one thread) │
//!                                               │   ◄── its feed of synced records │
//!                                               └──────────────────────────────────┘
//! ```
//!
//! The socket is the holder's only listener; nothing listens on TCP. A client's records pass the
//! same checks and sanitizing as local input and are appended through the holder's one
//! [`JournalWriter`], so the journal keeps a single writer while everyone writes. Every
//! connection runs in its own task with bounded reads and writes ([`Limits`]): garbage, a cut or
//! huge frame, or a client that hangs is answered or dropped without touching anyone else, and
//! the holder's own loop never waits on a client.
//!
//! Writers never starve: a follower leaves the connection slots for a follower slot of its own
//! (at most [`Limits::max_followers`]), and one that does not read what it is sent (its unread
//! bytes not going down for [`Limits::write`], or past [`MAX_UNREAD`]) is dropped, so followers,
//! reading or not, never take the slots a note needs.

pub mod client;
pub mod protocol;
mod socket;

pub use client::{Client, ClientError, Closer, Following};
pub use protocol::{Answer, ErrorCode, MAX_FRAME, Op, Request, SOCKET_FILE, VERSION};
pub use socket::{SocketError, check_socket};

use super::event::Event;
use super::record::Record;
use super::writer::JournalWriter;
use protocol::{answer_frame, error_frame, parse_request};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{Semaphore, broadcast, mpsc, watch};

/// What the server tells the process that holds the incident.
#[derive(Debug, Clone, PartialEq)]
pub enum HolderNews {
    /// A responder asks for a runbook run with these variables (cleaned, as recorded);
    /// `record` is the proposal's note on the timeline.
    Proposal {
        runbook: String,
        variables: std::collections::BTreeMap<String, String>,
        record: Box<Record>,
    },
    /// A responder (an assistant, through `warroom mcp`) asks the operator to record `text`
    /// as its note; `record` is the proposal's note on the timeline.
    NoteProposal { text: String, record: Box<Record> },
    /// The number of followers changed.
    Followers(usize),
}

/// The bounds every connection lives within.
#[derive(Debug, Clone)]
pub struct Limits {
    /// A request must arrive whole within this, and an idle connection is closed after it.
    pub idle: Duration,
    /// An answer (or a followed record) must be taken within this, or the client is dropped.
    pub write: Duration,
    /// Connections served at once, followers not counted; one more is told the holder is busy.
    pub max_clients: usize,
    /// Followers at once; one more is told the holder is busy (writers are still served).
    pub max_followers: usize,
}

/// The most a follower may leave unread on its connection before it is dropped.
pub const MAX_UNREAD: usize = 1024 * 1024;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            idle: Duration::from_secs(5),
            write: Duration::from_secs(5),
            max_clients: 64,
            max_followers: 32,
        }
    }
}

/// The socket being served; dropping it stops serving and removes the socket file (if it is
/// still this one: a later holder's socket is left alone).
#[derive(Debug)]
pub struct Serving {
    path: PathBuf,
    identity: (u64, u64),
    task: tokio::task::AbortHandle,
    followers: watch::Receiver<usize>,
}

impl Serving {
    /// Where the socket is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many follow the incident now.
    pub fn followers(&self) -> usize {
        *self.followers.borrow()
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.task.abort();
        if socket::identity(&self.path) == Some(self.identity) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// What every connection task shares.
struct Shared {
    writer: JournalWriter,
    news: Option<mpsc::UnboundedSender<HolderNews>>,
    limits: Limits,
    uid: u32,
    followers: watch::Sender<usize>,
    follower_slots: Arc<Semaphore>,
}

/// Serve `writer`'s incident on `<incident dir>/incident.sock` (see [`serve_at`]).
pub fn serve(
    writer: JournalWriter,
    news: Option<mpsc::UnboundedSender<HolderNews>>,
    limits: Limits,
) -> Result<Serving, SocketError> {
    let path = writer.info().dir.join(SOCKET_FILE);
    serve_at(&path, writer, news, limits)
}

/// Serve `writer`'s incident on the socket `path` (replacing a stale one: only the lock's
/// holder binds it). `news` is where proposals and the follower count go; without it (a
/// headless holder) proposals are refused. Must be called inside a tokio runtime.
pub fn serve_at(
    path: &Path,
    writer: JournalWriter,
    news: Option<mpsc::UnboundedSender<HolderNews>>,
    limits: Limits,
) -> Result<Serving, SocketError> {
    let (listener, identity) = socket::bind(path)?;
    let limits_followers = limits.max_followers;
    let (followers, watching) = watch::channel(0usize);
    let shared = Arc::new(Shared {
        writer,
        news,
        limits,
        uid: nix::unistd::geteuid().as_raw(),
        followers,
        follower_slots: Arc::new(Semaphore::new(limits_followers)),
    });
    let task = tokio::spawn(accept_loop(listener, shared)).abort_handle();
    tracing::info!(path = %path.display(), "serving the incident");
    Ok(Serving {
        path: path.to_path_buf(),
        identity,
        task,
        followers: watching,
    })
}

async fn accept_loop(listener: tokio::net::UnixListener, shared: Arc<Shared>) {
    let permits = Arc::new(Semaphore::new(shared.limits.max_clients));
    // Dropping the set (when serving stops) aborts every connection, so none keeps the writer.
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors, most likely: wait a moment rather than spin.
                tracing::warn!(error = %e, "accepting a client failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        while connections.try_join_next().is_some() {}
        match permits.clone().try_acquire_owned() {
            Ok(permit) => {
                let shared = shared.clone();
                connections.spawn(async move {
                    connection(stream, &shared, permit).await;
                });
            }
            Err(_) => {
                let busy = error_frame(
                    ErrorCode::Busy,
                    "the holder is serving as many clients as it takes; try again in a moment",
                );
                // Never wait on a client we are turning away.
                let _ = stream.try_write(&busy);
            }
        }
    }
}

/// Why a frame could not be read.
enum FrameError {
    TooLarge,
    /// The client closed in the middle of a frame.
    Cut,
    Io,
}

/// Reads one line of at most [`MAX_FRAME`] bytes; `None` when the client closed between frames.
async fn read_frame(rd: &mut BufReader<OwnedReadHalf>) -> Result<Option<Vec<u8>>, FrameError> {
    let mut line = Vec::new();
    let n = (&mut *rd)
        .take(MAX_FRAME as u64 + 1)
        .read_until(b'\n', &mut line)
        .await
        .map_err(|_| FrameError::Io)?;
    if n == 0 {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        return Err(if line.len() > MAX_FRAME {
            FrameError::TooLarge
        } else {
            FrameError::Cut
        });
    }
    line.pop();
    Ok(Some(line))
}

async fn send(wr: &mut OwnedWriteHalf, frame: &[u8], limits: &Limits) -> bool {
    matches!(
        tokio::time::timeout(limits.write, wr.write_all(frame)).await,
        Ok(Ok(()))
    )
}

/// One client: requests answered in turn until it closes, errs or idles; a follow request
/// turns the connection into a stream.
async fn connection(stream: UnixStream, shared: &Shared, slot: tokio::sync::OwnedSemaphorePermit) {
    // The socket is 0600 already; this also holds where it was reached through another path.
    if stream.peer_cred().map(|c| c.uid()).ok() != Some(shared.uid) {
        return;
    }
    let limits = &shared.limits;
    let (rd, mut wr) = stream.into_split();
    let mut rd = BufReader::new(rd);
    loop {
        let line = match tokio::time::timeout(limits.idle, read_frame(&mut rd)).await {
            Ok(Ok(Some(line))) => line,
            Ok(Ok(None)) | Ok(Err(FrameError::Cut | FrameError::Io)) => return,
            Ok(Err(FrameError::TooLarge)) => {
                let msg = format!("the request is longer than {MAX_FRAME} bytes");
                send(&mut wr, &error_frame(ErrorCode::TooLarge, msg), limits).await;
                return;
            }
            // A request that does not arrive whole in time, or nothing at all: dropped.
            Err(_) => return,
        };
        let request = match parse_request(&line) {
            Ok(r) => r,
            Err((code, message)) => {
                send(&mut wr, &error_frame(code, message), limits).await;
                return;
            }
        };
        let held = shared.writer.info().id.to_string();
        if let Some(asked) = request.incident.as_deref().filter(|a| *a != held) {
            let message = format!(
                "this socket serves incident \"{held}\", not \"{}\"",
                crate::sanitize::line(asked)
            );
            if !send(
                &mut wr,
                &error_frame(ErrorCode::WrongIncident, message),
                limits,
            )
            .await
            {
                return;
            }
            continue;
        }
        let answer = match request.op {
            Op::Follow { after } => {
                // A follower gives its connection slot back for a follower slot: followers,
                // however many and however slow, never take the slots a writer needs.
                let Ok(_following) = shared.follower_slots.clone().try_acquire_owned() else {
                    let busy = error_frame(
                        ErrorCode::Busy,
                        "the holder has as many followers as it takes; try again in a moment",
                    );
                    send(&mut wr, &busy, limits).await;
                    return;
                };
                drop(slot);
                follow(rd, wr, after, shared).await;
                return;
            }
            Op::Hello => welcome(shared),
            Op::Append { event } => append(shared, &request.actor, &request.host, event).await,
            Op::Propose {
                runbook,
                variables,
                reason,
            } => {
                let run = Run {
                    runbook: &runbook,
                    variables: &variables,
                    reason: &reason,
                };
                propose(shared, &request.actor, &request.host, run).await
            }
            Op::ProposeNote { text } => {
                propose_note(shared, &request.actor, &request.host, &text).await
            }
        };
        if !send(&mut wr, &answer_frame(answer), limits).await {
            return;
        }
    }
}

fn welcome(shared: &Shared) -> Answer {
    let info = shared.writer.info();
    Answer::Welcome {
        incident: info.id.to_string(),
        holder: info.holder.clone(),
        followers: *shared.followers.borrow(),
    }
}

fn refused(message: impl Into<String>) -> Answer {
    Answer::Error {
        code: ErrorCode::Refused,
        message: message.into(),
    }
}

/// The author's name, or why it cannot be recorded.
fn author(actor: &str) -> Result<&str, &'static str> {
    match actor.trim() {
        "" => Err("say who you are: the request's actor is empty (set $WARROOM_ACTOR or $USER)"),
        a if a.chars().count() > 200 => Err("the actor is longer than 200 characters"),
        a => Ok(a),
    }
}

async fn append(shared: &Shared, actor: &str, host: &str, event: Event) -> Answer {
    let actor = match author(actor) {
        Ok(a) => a,
        Err(why) => return refused(why),
    };
    if let Err(why) = protocol::check_client_event(&event, chrono::Utc::now()) {
        return refused(format!("{why}; nothing was recorded"));
    }
    match shared.writer.append_from(actor, host.trim(), event).await {
        Ok(record) => Answer::Appended { record },
        Err(e) => Answer::Error {
            code: ErrorCode::NotRecorded,
            message: e.to_string(),
        },
    }
}

/// A runbook run proposed.
struct Run<'a> {
    runbook: &'a str,
    variables: &'a std::collections::BTreeMap<String, String>,
    reason: &'a str,
}

async fn propose(shared: &Shared, actor: &str, host: &str, run: Run<'_>) -> Answer {
    let runbook = crate::sanitize::line(run.runbook.trim()).into_owned();
    if runbook.is_empty() || runbook.chars().count() > 200 {
        return refused("name the runbook to run (at most 200 characters)");
    }
    let mut said = format!("proposes running runbook \"{runbook}\"");
    let variables: std::collections::BTreeMap<String, String> = (run.variables.iter())
        .map(|(k, v)| {
            let clean = |s: &str| crate::sanitize::line(s.trim()).into_owned();
            (clean(k), clean(v))
        })
        .collect();
    let vars: Vec<String> = (variables.iter())
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if !vars.is_empty() {
        said.push_str(&format!(" with {}", vars.join(", ")));
    }
    if !run.reason.trim().is_empty() {
        said.push_str(&format!(
            ", because: {}",
            crate::sanitize::line(run.reason.trim())
        ));
    }
    said.push_str(" (the holder runs it after its own confirmation)");
    if said.chars().count() > MAX_PROPOSAL {
        return refused(format!(
            "the proposal is longer than {MAX_PROPOSAL} characters"
        ));
    }
    to_operator(shared, actor, host, said, |record| HolderNews::Proposal {
        runbook,
        variables,
        record,
    })
    .await
}

async fn propose_note(shared: &Shared, actor: &str, host: &str, text: &str) -> Answer {
    let text = crate::sanitize::multiline(text.trim()).into_owned();
    if text.is_empty() || text.chars().count() > MAX_PROPOSAL {
        return refused(format!(
            "write the note to propose (at most {MAX_PROPOSAL} characters)"
        ));
    }
    let said = format!("proposes the note (the holder records it or declines): {text}");
    to_operator(shared, actor, host, said, |record| {
        HolderNews::NoteProposal { text, record }
    })
    .await
}

/// The longest proposal, in characters.
const MAX_PROPOSAL: usize = 4000;

/// Records the proposal `said` as the proposer's note and hands it to the holder's operator
/// (refused when there is none: a headless holder).
async fn to_operator(
    shared: &Shared,
    actor: &str,
    host: &str,
    said: String,
    news_of: impl FnOnce(Box<Record>) -> HolderNews,
) -> Answer {
    let actor = match author(actor) {
        Ok(a) => a,
        Err(why) => return refused(why),
    };
    let Some(news) = shared.news.as_ref() else {
        let holder = &shared.writer.info().holder;
        return Answer::Error {
            code: ErrorCode::NoOperator,
            message: format!(
                "{holder} has no operator to confirm a proposal; take the incident over \
                 with `warroom open --incident {} --take-over` and decide there",
                shared.writer.info().id
            ),
        };
    };
    match shared
        .writer
        .append_from(actor, host.trim(), Event::note(said))
        .await
    {
        Ok(record) => {
            let _ = news.send(news_of(Box::new(record.clone())));
            Answer::Proposed { record }
        }
        Err(e) => Answer::Error {
            code: ErrorCode::NotRecorded,
            message: e.to_string(),
        },
    }
}

/// Counts a follower in for as long as it lives.
struct Follower<'a>(&'a Shared);

impl<'a> Follower<'a> {
    fn join(shared: &'a Shared) -> Follower<'a> {
        Follower::change(shared, 1);
        Follower(shared)
    }

    fn change(shared: &Shared, up: isize) {
        let mut now = 0;
        shared.followers.send_modify(|n| {
            *n = n.saturating_add_signed(up);
            now = *n;
        });
        if let Some(news) = &shared.news {
            let _ = news.send(HolderNews::Followers(now));
        }
    }
}

impl Drop for Follower<'_> {
    fn drop(&mut self) {
        Follower::change(self.0, -1);
    }
}

/// Stream the journal to a follower: what it lacks from the file, then each record as it is
/// synced, and the follower count as it changes, until it leaves or stops reading.
async fn follow(
    mut rd: BufReader<OwnedReadHalf>,
    mut wr: OwnedWriteHalf,
    after: u64,
    shared: &Shared,
) {
    let limits = &shared.limits;
    // Subscribe before reading the file, so nothing falls between the two.
    let mut feed = shared.writer.subscribe();
    let _follower = Follower::join(shared);
    let mut presence = shared.followers.subscribe();
    presence.mark_unchanged();
    if !send(&mut wr, &answer_frame(welcome(shared)), limits).await {
        return;
    }
    let mut last = after;
    if !catch_up(&mut wr, &mut last, shared).await {
        return;
    }
    let mut scratch = [0u8; 256];
    let mut reading = Reading::default();
    let mut check = tokio::time::interval(limits.write.min(Duration::from_secs(1)) / 2);
    loop {
        tokio::select! {
            _ = check.tick() => {
                if reading.stalled(unread(&wr), limits) {
                    tracing::info!("a follower that does not read was dropped");
                    return;
                }
            }
            r = feed.recv() => match r {
                Ok(record) if record.seq > last => {
                    last = record.seq;
                    if !send(&mut wr, &answer_frame(Answer::Record { record }), limits).await {
                        return;
                    }
                }
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    if !catch_up(&mut wr, &mut last, shared).await {
                        return;
                    }
                }
                // The writer stopped: the holder is going away.
                Err(broadcast::error::RecvError::Closed) => return,
            },
            changed = presence.changed() => {
                if changed.is_err() {
                    return;
                }
                let followers = *presence.borrow_and_update();
                let frame = answer_frame(Answer::Presence { followers });
                if !send(&mut wr, &frame, limits).await {
                    return;
                }
            }
            // A follower sends nothing more; end of stream (or anything else) ends it.
            _ = rd.read(&mut scratch) => return,
        }
    }
}

/// The bytes sent to a follower that it has not read yet (`SIOCOUTQ`), or 0 when unknown.
fn unread(wr: &OwnedWriteHalf) -> usize {
    use std::os::fd::AsRawFd;
    let fd = AsRef::<UnixStream>::as_ref(wr).as_raw_fd();
    let mut n: nix::libc::c_int = 0;
    // SAFETY: TIOCOUTQ (SIOCOUTQ) writes one int through the pointer, which is valid; the fd
    // belongs to the stream, which outlives the call.
    #[allow(unsafe_code)]
    let r = unsafe { nix::libc::ioctl(fd, nix::libc::TIOCOUTQ, &mut n) };
    if r == 0 { n.max(0) as usize } else { 0 }
}

/// Whether a follower reads what it is sent.
#[derive(Debug, Default)]
struct Reading {
    last: usize,
    /// Since when its unread bytes have not gone down.
    since: Option<tokio::time::Instant>,
}

impl Reading {
    /// True when the follower is to be dropped: `unread` past [`MAX_UNREAD`], or above zero
    /// and not going down for [`Limits::write`].
    fn stalled(&mut self, unread: usize, limits: &Limits) -> bool {
        let now = tokio::time::Instant::now();
        let progress = unread < self.last;
        self.last = unread;
        if unread == 0 || progress {
            self.since = None;
            return false;
        }
        let since = *self.since.get_or_insert(now);
        unread > MAX_UNREAD || now.duration_since(since) >= limits.write
    }
}

/// Send every record in the journal file after `last` (reading it off the runtime's threads).
async fn catch_up(wr: &mut OwnedWriteHalf, last: &mut u64, shared: &Shared) -> bool {
    let path = shared.writer.info().journal.clone();
    let read = tokio::task::spawn_blocking(move || super::journal::read(&path)).await;
    let records = match read {
        Ok(Ok(recovery)) => recovery.records,
        Ok(Err(e)) => {
            let frame = error_frame(
                ErrorCode::NotRecorded,
                format!("cannot read the journal: {e}"),
            );
            send(wr, &frame, &shared.limits).await;
            return false;
        }
        Err(_) => return false,
    };
    let from = *last;
    for record in records.into_iter().filter(|r| r.seq > from) {
        *last = record.seq;
        if !send(wr, &answer_frame(Answer::Record { record }), &shared.limits).await {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests;
