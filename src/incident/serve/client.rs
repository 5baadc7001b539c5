//! A client of the holder's socket (blocking: the `incident` commands are one request each,
//! and the console runs it on its own threads, never on its loop).
//!
//! What a failure means for the record is part of the error: [`ClientError::NoHolder`] and
//! [`ClientError::NotSent`] mean nothing was recorded (the caller may write directly or try
//! again); [`ClientError::Unanswered`] means the request reached the holder and its fate is
//! unknown, so it is reported and never re-sent blindly.

use super::protocol::{self, Answer, ErrorCode, MAX_FRAME, Op, Request};
use super::socket::{SocketError, check_socket};
use crate::incident::event::Event;
use crate::incident::record::Record;
use crate::incident::store::Holder;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a client waits for the holder's answer (an append is one fsync; a holder that
/// takes longer than this is in trouble and says so by not answering).
pub const ANSWER_WAIT: Duration = Duration::from_secs(10);
/// How long an append keeps trying a holder that turns it away as busy (every connection slot
/// taken): nothing was recorded, so trying again is safe; backoff with jitter between tries.
pub const BUSY_WAIT: Duration = Duration::from_secs(10);

/// Why a request through the holder did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("nothing serves \"{path}\" (no holder is listening); nothing was sent")]
    NoHolder { path: PathBuf },
    #[error(transparent)]
    Socket(#[from] SocketError),
    #[error("the request could not be sent to \"{path}\" ({source}); nothing was recorded")]
    NotSent {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the holder at \"{path}\" took the request but gave no answer ({reason}); it may or may \
         not have been recorded: look at the timeline before sending it again"
    )]
    Unanswered { path: PathBuf, reason: String },
    #[error("the holder refused: {message}")]
    Refused { code: ErrorCode, message: String },
    #[error("the holder's answer at \"{path}\" is not what was asked for: {detail}")]
    Protocol { path: PathBuf, detail: String },
}

impl ClientError {
    /// True when the request certainly did not reach the journal.
    pub fn nothing_recorded(&self) -> bool {
        !matches!(self, ClientError::Unanswered { .. })
    }

    /// The holder turned the connection away for want of a slot (it answers busy and closes,
    /// which the client may also see as its request failing to send): nothing was recorded.
    fn busy(&self) -> bool {
        match self {
            ClientError::Refused { code, .. } => *code == ErrorCode::Busy,
            ClientError::NotSent { source, .. } => matches!(
                source.kind(),
                std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
            ),
            _ => false,
        }
    }
}

/// Who holds an incident, as its holder says.
#[derive(Debug, Clone, PartialEq)]
pub struct Welcome {
    pub incident: String,
    pub holder: Holder,
    pub followers: usize,
}

/// A client of one socket, speaking for one author.
#[derive(Debug, Clone)]
pub struct Client {
    path: PathBuf,
    actor: String,
    host: String,
    wait: Duration,
}

impl Client {
    /// A client of the socket at `path` writing as `actor` from this host.
    pub fn new(path: &Path, actor: &str) -> Client {
        Client {
            path: path.to_path_buf(),
            actor: actor.to_string(),
            host: crate::incident::store::this_host(),
            wait: ANSWER_WAIT,
        }
    }

    /// Waits at most `wait` for each answer.
    pub fn with_wait(mut self, wait: Duration) -> Client {
        self.wait = wait;
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn connect(&self) -> Result<UnixStream, ClientError> {
        let no_holder = || ClientError::NoHolder {
            path: self.path.clone(),
        };
        if !check_socket(&self.path)? {
            return Err(no_holder());
        }
        let at = super::socket::kernel_path(&self.path)?;
        let stream = UnixStream::connect(&at.path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => no_holder(),
            _ => ClientError::NotSent {
                path: self.path.clone(),
                source: e,
            },
        })?;
        let timeouts = stream
            .set_read_timeout(Some(self.wait))
            .and_then(|()| stream.set_write_timeout(Some(self.wait)));
        timeouts.map_err(|source| ClientError::NotSent {
            path: self.path.clone(),
            source,
        })?;
        Ok(stream)
    }

    /// Sends `op` on a new connection; returns the connection for what follows.
    fn send(&self, incident: Option<&str>, op: Op) -> Result<BufReader<UnixStream>, ClientError> {
        let mut stream = self.connect()?;
        let line = protocol::frame(&Request::new(incident, &self.actor, &self.host, op));
        // `write_all` fails only before the frame's last byte (its newline) is written, and the
        // holder acts on whole lines only: a failed send recorded nothing.
        stream
            .write_all(&line)
            .map_err(|source| ClientError::NotSent {
                path: self.path.clone(),
                source,
            })?;
        Ok(BufReader::new(stream))
    }

    /// Sends `op` and reads its one answer.
    fn call(&self, incident: Option<&str>, op: Op) -> Result<Answer, ClientError> {
        let mut conn = self.send(incident, op)?;
        match read_answer(&mut conn, &self.path)? {
            Some(answer) => Ok(answer),
            None => Err(ClientError::Unanswered {
                path: self.path.clone(),
                reason: "the holder closed the connection".into(),
            }),
        }
    }

    /// Records `event` in `incident` through the holder; `Ok` only once it is synced. A holder
    /// that is busy is tried again for up to [`BUSY_WAIT`].
    pub fn append(&self, incident: &str, event: Event) -> Result<Record, ClientError> {
        let backoff = crate::backoff::Backoff {
            base: Duration::from_millis(20),
            cap: Duration::from_millis(500),
            max_attempts: u32::MAX,
        };
        let deadline = std::time::Instant::now() + BUSY_WAIT;
        let mut rng = rand::rng();
        let mut tries = 0;
        loop {
            let op = Op::Append {
                event: event.clone(),
            };
            let answered = self
                .call(Some(incident), op)
                .and_then(|answer| match answer {
                    Answer::Appended { record } => Ok(record),
                    other => Err(unexpected(other, &self.path)),
                });
            match answered {
                Ok(record) => return Ok(record),
                Err(e) if e.busy() && std::time::Instant::now() < deadline => {
                    std::thread::sleep(backoff.delay(tries, &mut rng));
                    tries += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Asks the holder's operator to run `runbook`; `Ok` with the proposal's note.
    pub fn propose(&self, incident: &str, runbook: &str) -> Result<Record, ClientError> {
        let op = Op::Propose {
            runbook: runbook.to_string(),
            variables: Default::default(),
            reason: String::new(),
        };
        self.proposal(incident, op)
    }

    /// Sends a proposal (`Op::Propose` or `Op::ProposeNote`); `Ok` with its note.
    pub fn proposal(&self, incident: &str, op: Op) -> Result<Record, ClientError> {
        match self.call(Some(incident), op)? {
            Answer::Proposed { record } => Ok(record),
            other => Err(unexpected(other, &self.path)),
        }
    }

    /// Who holds the incident behind this socket.
    pub fn hello(&self) -> Result<Welcome, ClientError> {
        welcome_of(self.call(None, Op::Hello)?, &self.path)
    }

    /// Follow the journal from after record `after`: the holder's welcome, then the stream.
    pub fn follow(&self, incident: Option<&str>, after: u64) -> Result<Following, ClientError> {
        let mut conn = self.send(incident, Op::Follow { after })?;
        let welcome = match read_answer(&mut conn, &self.path)? {
            Some(answer) => welcome_of(answer, &self.path)?,
            None => {
                return Err(ClientError::Unanswered {
                    path: self.path.clone(),
                    reason: "the holder closed the connection".into(),
                });
            }
        };
        // Records come when they are written: a quiet incident is not a dead holder.
        let _ = conn.get_ref().set_read_timeout(None);
        Ok(Following {
            conn,
            path: self.path.clone(),
            welcome,
        })
    }
}

/// The welcome in `answer`, or the error of whatever else it is.
fn welcome_of(answer: Answer, path: &Path) -> Result<Welcome, ClientError> {
    match answer {
        Answer::Welcome {
            incident,
            holder,
            followers,
        } => Ok(Welcome {
            incident,
            holder,
            followers,
        }),
        other => Err(unexpected(other, path)),
    }
}

fn unexpected(answer: Answer, path: &Path) -> ClientError {
    match answer {
        Answer::Error { code, message } => ClientError::Refused {
            code,
            message: crate::sanitize::line(&message).into_owned(),
        },
        other => ClientError::Protocol {
            path: path.to_path_buf(),
            detail: format!("{other:?}"),
        },
    }
}

/// Reads one answer line; `None` when the holder closed first.
fn read_answer(
    conn: &mut BufReader<UnixStream>,
    path: &Path,
) -> Result<Option<Answer>, ClientError> {
    let mut line = Vec::new();
    let read = conn
        .by_ref()
        .take(MAX_FRAME as u64 + 1)
        .read_until(b'\n', &mut line);
    let unanswered = |reason: String| ClientError::Unanswered {
        path: path.to_path_buf(),
        reason,
    };
    match read {
        Ok(0) => return Ok(None),
        Ok(_) if line.last() != Some(&b'\n') => {
            return Err(unanswered("the answer was cut off".into()));
        }
        Ok(_) => {}
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            return Err(unanswered("no answer in time".into()));
        }
        Err(e) => return Err(unanswered(e.to_string())),
    }
    let reply =
        protocol::parse_reply(line.trim_ascii_end()).map_err(|detail| ClientError::Protocol {
            path: path.to_path_buf(),
            detail,
        })?;
    Ok(Some(reply.answer))
}

/// A followed journal: records and follower counts as the holder sends them.
#[derive(Debug)]
pub struct Following {
    conn: BufReader<UnixStream>,
    path: PathBuf,
    /// Who holds the incident, as it said when following began.
    pub welcome: Welcome,
}

impl Following {
    /// The next record or presence change; `None` when the holder went away (it closed the
    /// stream: it quit, was killed, or stopped serving).
    pub fn next_answer(&mut self) -> Option<Result<Answer, ClientError>> {
        match read_answer(&mut self.conn, &self.path) {
            Ok(Some(answer)) => Some(Ok(answer)),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }

    /// A handle that ends the stream from another thread (the reader then sees `None`).
    pub fn closer(&self) -> Option<Closer> {
        self.conn.get_ref().try_clone().ok().map(Closer)
    }
}

/// Ends a [`Following`] from elsewhere.
#[derive(Debug)]
pub struct Closer(UnixStream);

impl Closer {
    pub fn close(&self) {
        let _ = self.0.shutdown(std::net::Shutdown::Both);
    }
}
