//! `haproxy` steps: HAProxy's runtime API over its stats socket (a unix path, or TCP
//! `host:port` for `stats socket ipv4@…`), one command per connection.
//!
//! - Only the moves a runbook needs: `set server B/S state ready|drain|maint`, `set server B/S
//!   weight N`, `show servers state [B]`, `show stat`; and a bounded wait for a drained server's
//!   current sessions (`scur` in `show stat`) to reach zero.
//! - Names that reach the command line are checked first (HAProxy's CLI splits commands on `;`
//!   and words on spaces): a server is `backend/server` of letters, digits, `_ . : -`.
//! - A reply that is an error ("No such server.", "Unknown command…", "Permission denied")
//!   is a failure with its first line; a `show` reply is read into [`Rows`].
//! - Every connection, write and read has a timeout; a reply is read to at most [`MAX_REPLY`],
//!   and a longer one is an error: a reply cut short is never judged as if it were whole.

use super::rows::{MAX_KEPT_ROWS, RowCondition, Rows};
use super::template::{Context, RenderError, Template, Values};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Default time one command may take (connect, send, read the reply).
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(5);
/// Time between readings of `show stat` while waiting for a drained server's sessions.
pub const DRAIN_POLL: Duration = Duration::from_millis(250);
/// Largest reply read; a longer one fails the command (it is not judged on a part).
pub const MAX_REPLY: usize = 4 * 1024 * 1024;

/// A server's administrative state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerState {
    Ready,
    Drain,
    Maint,
}

impl ServerState {
    pub fn parse(s: &str) -> Option<ServerState> {
        Some(match s {
            "ready" => ServerState::Ready,
            "drain" => ServerState::Drain,
            "maint" => ServerState::Maint,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ServerState::Ready => "ready",
            ServerState::Drain => "drain",
            ServerState::Maint => "maint",
        }
    }
}

/// What an `haproxy` step does.
#[derive(Debug, Clone, PartialEq)]
pub enum HaproxyOp {
    /// `set server B/S state …`
    SetState {
        server: Template,
        state: ServerState,
    },
    /// `set server B/S weight N`
    SetWeight { server: Template, weight: Template },
    /// `show servers state [B]`
    ShowServersState { backend: Option<Template> },
    /// `show stat`
    ShowStat,
    /// Only wait for the server's current sessions to reach zero.
    WaitSessions { server: Template },
}

impl HaproxyOp {
    /// Whether the command changes HAProxy.
    pub fn mutates(&self) -> bool {
        match self {
            HaproxyOp::SetState { .. } | HaproxyOp::SetWeight { .. } => true,
            HaproxyOp::ShowServersState { .. }
            | HaproxyOp::ShowStat
            | HaproxyOp::WaitSessions { .. } => false,
        }
    }

    /// The server the command is about, if any.
    pub fn server(&self) -> Option<&Template> {
        match self {
            HaproxyOp::SetState { server, .. }
            | HaproxyOp::SetWeight { server, .. }
            | HaproxyOp::WaitSessions { server } => Some(server),
            HaproxyOp::ShowServersState { .. } | HaproxyOp::ShowStat => None,
        }
    }
}

/// A command of HAProxy's runtime API.
#[derive(Debug, Clone, PartialEq)]
pub struct HaproxySpec {
    pub socket: Template,
    pub op: HaproxyOp,
    /// After the command, wait at most this long for the server's current sessions to be 0.
    pub drain_wait: Option<Duration>,
    /// Per command.
    pub timeout: Duration,
    /// A condition on a `show` result.
    pub expect: Option<RowCondition>,
    /// Read again until the condition holds, at most this long.
    pub wait: Option<Duration>,
    pub interval: Duration,
}

/// Why a command failed. Each message is one line that says where and what.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HaproxyError {
    #[error(
        "\"{0}\" is not a stats socket address; expected a unix socket path such as \"/run/haproxy/admin.sock\" or \"127.0.0.1:9999\""
    )]
    BadSocket(String),
    #[error(
        "\"{0}\" is not a server name; expected \"backend/server\" of letters, digits, '_', '.', ':' or '-'"
    )]
    BadServer(String),
    #[error("\"{0}\" is not a backend name; expected letters, digits, '_', '.', ':' or '-'")]
    BadBackend(String),
    #[error("weight \"{0}\" is not a whole number from 0 to 256 (or a percentage such as \"50%\")")]
    BadWeight(String),
    #[error(
        "{socket}: the reply to \"{command}\" is longer than {limit} bytes, more than warroom reads; nothing was judged on a part of it"
    )]
    TooLong {
        socket: String,
        command: String,
        limit: usize,
    },
    #[error("cannot reach HAProxy's stats socket {socket}: {reason}")]
    Connect { socket: String, reason: String },
    #[error("{socket}: \"{command}\" got no reply within {after}; is this HAProxy's stats socket?")]
    Timeout {
        socket: String,
        command: String,
        after: String,
    },
    #[error("{socket}: HAProxy refused \"{command}\": {reply}{hint}")]
    Refused {
        socket: String,
        command: String,
        reply: String,
        hint: &'static str,
    },
    #[error(
        "{socket}: the reply to \"{command}\" is not HAProxy's: \"{reply}\"; is this HAProxy's stats socket?"
    )]
    NotHaproxy {
        socket: String,
        command: String,
        reply: String,
    },
    #[error("{socket}: server \"{server}\" is not in \"show stat\"")]
    NoServer { socket: String, server: String },
    #[error("{socket}: server \"{server}\" still has {sessions} current session(s) after {after}")]
    NotDrained {
        socket: String,
        server: String,
        sessions: u64,
        after: String,
    },
    #[error(transparent)]
    Missing(#[from] RenderError),
}

impl HaproxyError {
    /// Whether asking again later may succeed (HAProxy was not reachable).
    pub fn transient(&self) -> bool {
        matches!(
            self,
            HaproxyError::Connect { .. } | HaproxyError::Timeout { .. }
        )
    }
}

/// Where the runtime API listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Socket {
    Unix(std::path::PathBuf),
    Tcp(String),
}

impl Socket {
    /// A unix path (`/…`, `./…`, `unix@…`) or a TCP address (`host:port`, `ipv4@host:port`,
    /// `tcp://host:port`).
    pub fn parse(text: &str) -> Result<Socket, HaproxyError> {
        let t = text.trim();
        let bad = || HaproxyError::BadSocket(crate::sanitize::line(text).into_owned());
        if let Some(p) = t.strip_prefix("unix@") {
            return Ok(Socket::Unix(p.into()));
        }
        if t.starts_with('/') || t.starts_with("./") {
            return Ok(Socket::Unix(t.into()));
        }
        let addr = t
            .strip_prefix("ipv4@")
            .or_else(|| t.strip_prefix("ipv6@"))
            .or_else(|| t.strip_prefix("tcp://"))
            .unwrap_or(t);
        match addr.rsplit_once(':') {
            Some((host, port))
                if !host.is_empty()
                    && port.parse::<u16>().is_ok_and(|p| p > 0)
                    && !host.contains(char::is_whitespace) =>
            {
                Ok(Socket::Tcp(addr.to_string()))
            }
            _ => Err(bad()),
        }
    }

    /// How messages name it.
    pub fn shown(&self) -> String {
        match self {
            Socket::Unix(p) => crate::sanitize::line(&p.display().to_string()).into_owned(),
            Socket::Tcp(a) => crate::sanitize::line(a).into_owned(),
        }
    }
}

fn name_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
}

/// Check a `backend/server` name before it reaches the command line.
pub fn server_name(s: &str) -> Result<String, HaproxyError> {
    match s.split_once('/') {
        Some((b, srv)) if name_ok(b) && name_ok(srv) => Ok(s.to_string()),
        _ => Err(HaproxyError::BadServer(
            crate::sanitize::line(s).into_owned(),
        )),
    }
}

/// Check a backend name before it reaches the command line.
pub fn backend_name(s: &str) -> Result<String, HaproxyError> {
    if name_ok(s) {
        Ok(s.to_string())
    } else {
        Err(HaproxyError::BadBackend(
            crate::sanitize::line(s).into_owned(),
        ))
    }
}

fn weight(s: &str) -> Result<String, HaproxyError> {
    let t = s.trim();
    let (n, pct) = match t.strip_suffix('%') {
        Some(n) => (n, true),
        None => (t, false),
    };
    match n.parse::<u16>() {
        Ok(w) if (pct && w <= 100) || (!pct && w <= 256) => Ok(t.to_string()),
        _ => Err(HaproxyError::BadWeight(
            crate::sanitize::line(s).into_owned(),
        )),
    }
}

/// The command line as written, rendered but not checked: for a plan that shows a
/// placeholder such as `<target>` in place of a server name.
pub fn command_unchecked(op: &HaproxyOp, values: &Values, target: Option<&str>) -> String {
    let r = |t: &Template| {
        t.render(values, target, Context::Literal)
            .unwrap_or_else(|e| format!("<{e}>"))
    };
    match op {
        HaproxyOp::SetState { server, state } => {
            format!("set server {} state {}", r(server), state.as_str())
        }
        HaproxyOp::SetWeight { server, weight } => {
            format!("set server {} weight {}", r(server), r(weight))
        }
        HaproxyOp::ShowServersState { backend: None } => "show servers state".into(),
        HaproxyOp::ShowServersState { backend: Some(b) } => format!("show servers state {}", r(b)),
        HaproxyOp::ShowStat | HaproxyOp::WaitSessions { .. } => "show stat".into(),
    }
}

/// The command line the step sends, rendered and checked.
pub fn command(
    op: &HaproxyOp,
    values: &Values,
    target: Option<&str>,
) -> Result<String, HaproxyError> {
    let render = |t: &Template| t.render(values, target, Context::Literal);
    Ok(match op {
        HaproxyOp::SetState { server, state } => {
            format!(
                "set server {} state {}",
                server_name(&render(server)?)?,
                state.as_str()
            )
        }
        HaproxyOp::SetWeight { server, weight: w } => format!(
            "set server {} weight {}",
            server_name(&render(server)?)?,
            weight(&render(w)?)?
        ),
        HaproxyOp::ShowServersState { backend: None } => "show servers state".into(),
        HaproxyOp::ShowServersState { backend: Some(b) } => {
            format!("show servers state {}", backend_name(&render(b)?)?)
        }
        HaproxyOp::ShowStat | HaproxyOp::WaitSessions { .. } => "show stat".into(),
    })
}

/// Send `line` and read the reply to its end; `None` when it runs past [`MAX_REPLY`].
async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    mut s: S,
    line: &str,
) -> std::io::Result<Option<Vec<u8>>> {
    s.write_all(format!("{line}\n").as_bytes()).await?;
    s.flush().await?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = s.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        if out.len() + n > MAX_REPLY {
            return Ok(None);
        }
        out.extend_from_slice(&buf[..n]);
    }
    Ok(Some(out))
}

/// Send one command and read the whole reply (HAProxy closes the connection after it).
pub async fn send(socket: &Socket, line: &str, timeout: Duration) -> Result<String, HaproxyError> {
    let shown = socket.shown();
    let connect_err = |e: std::io::Error| HaproxyError::Connect {
        socket: shown.clone(),
        reason: crate::sanitize::line(&e.to_string()).into_owned(),
    };
    let work = async {
        match socket {
            Socket::Unix(p) => {
                let s = tokio::net::UnixStream::connect(p)
                    .await
                    .map_err(connect_err)?;
                exchange(s, line).await.map_err(connect_err)
            }
            Socket::Tcp(a) => {
                let s = tokio::net::TcpStream::connect(a.as_str())
                    .await
                    .map_err(connect_err)?;
                exchange(s, line).await.map_err(connect_err)
            }
        }
    };
    match tokio::time::timeout(timeout, work).await {
        Ok(Ok(Some(b))) => Ok(String::from_utf8_lossy(&b).into_owned()),
        Ok(Ok(None)) => Err(HaproxyError::TooLong {
            socket: shown,
            command: line.to_string(),
            limit: MAX_REPLY,
        }),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(HaproxyError::Timeout {
            socket: shown,
            command: line.to_string(),
            after: humantime::format_duration(timeout).to_string(),
        }),
    }
}

fn first_line(reply: &str) -> String {
    let l = reply
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    crate::sanitize::line(l).chars().take(200).collect()
}

fn refused(socket: &Socket, command: &str, reply: &str) -> HaproxyError {
    let line = first_line(reply);
    if reply.is_empty() {
        return HaproxyError::NotHaproxy {
            socket: socket.shown(),
            command: command.into(),
            reply: "(the connection closed without a reply)".into(),
        };
    }
    if line.starts_with("HTTP/") || line.starts_with("SSH-") || line.contains('\u{fffd}') {
        return HaproxyError::NotHaproxy {
            socket: socket.shown(),
            command: command.into(),
            reply: line,
        };
    }
    let hint = if line.contains("Permission denied") {
        "; the stats socket needs \"level admin\" for this command"
    } else {
        ""
    };
    HaproxyError::Refused {
        socket: socket.shown(),
        command: command.into(),
        reply: line,
        hint,
    }
}

/// Send a `set …` command: HAProxy answers an empty line when it did it, else why not.
pub async fn set(socket: &Socket, command: &str, timeout: Duration) -> Result<(), HaproxyError> {
    let reply = send(socket, command, timeout).await?;
    if !reply.is_empty() && reply.trim().is_empty() {
        Ok(())
    } else {
        Err(refused(socket, command, &reply))
    }
}

/// Send a `show …` command and read its table: `show stat` is CSV with a `# ` header line;
/// `show servers state` is a version line, a `# ` header and space-separated fields.
pub async fn show(socket: &Socket, command: &str, timeout: Duration) -> Result<Rows, HaproxyError> {
    let reply = send(socket, command, timeout).await?;
    parse_show(&reply).ok_or_else(|| refused(socket, command, &reply))
}

/// The table of a `show stat` or `show servers state` reply; `None` when it is not one.
pub fn parse_show(reply: &str) -> Option<Rows> {
    let mut lines = reply.lines().skip_while(|l| l.trim().is_empty()).peekable();
    // `show servers state` starts with its format version.
    if lines
        .peek()
        .is_some_and(|l| l.trim().parse::<u32>().is_ok())
    {
        lines.next();
    }
    let header = lines.next()?.strip_prefix("# ")?;
    let csv = header.contains(',');
    let split = |l: &str| -> Vec<String> {
        if csv {
            l.split(',').map(str::to_string).collect()
        } else {
            l.split_whitespace().map(str::to_string).collect()
        }
    };
    let mut columns = split(header);
    if columns.last().is_some_and(std::string::String::is_empty) {
        columns.pop();
    }
    let mut rows = Rows {
        columns,
        ..Rows::default()
    };
    for l in lines {
        if l.trim().is_empty() || l.starts_with('#') {
            continue;
        }
        if rows.rows.len() >= MAX_KEPT_ROWS {
            rows.dropped += 1;
            continue;
        }
        let mut cells: Vec<Option<String>> = split(l).into_iter().map(Some).collect();
        cells.truncate(rows.columns.len());
        rows.rows.push(cells);
    }
    Some(rows)
}

/// The names of `backend`'s servers, in HAProxy's order (`show servers state BACKEND`).
pub async fn servers(
    socket: &Socket,
    backend: &str,
    timeout: Duration,
) -> Result<Vec<String>, HaproxyError> {
    let b = backend_name(backend)?;
    let rows = show(socket, &format!("show servers state {b}"), timeout).await?;
    let i = rows
        .columns
        .iter()
        .position(|c| c == "srv_name")
        .ok_or_else(|| refused(socket, "show servers state", "no srv_name column"))?;
    Ok(rows
        .rows
        .iter()
        .filter_map(|r| r.get(i).cloned().flatten())
        .collect())
}

/// The current sessions (`scur`) of `backend/server`, from `show stat`.
pub async fn sessions(
    socket: &Socket,
    server: &str,
    timeout: Duration,
) -> Result<u64, HaproxyError> {
    let (b, s) = server.split_once('/').unwrap_or((server, ""));
    let rows = show(socket, "show stat", timeout).await?;
    let col = |n: &str| rows.columns.iter().position(|c| c == n);
    let (Some(px), Some(sv), Some(scur)) = (col("pxname"), col("svname"), col("scur")) else {
        return Err(refused(
            socket,
            "show stat",
            "no pxname, svname or scur column",
        ));
    };
    rows.rows
        .iter()
        .find(|r| {
            r.get(px).and_then(|c| c.as_deref()) == Some(b)
                && r.get(sv).and_then(|c| c.as_deref()) == Some(s)
        })
        .and_then(|r| {
            r.get(scur)
                .and_then(|c| c.as_deref())
                .and_then(|v| v.parse().ok())
        })
        .ok_or_else(|| HaproxyError::NoServer {
            socket: socket.shown(),
            server: server.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_addresses() {
        assert_eq!(
            Socket::parse("/run/h.sock").unwrap(),
            Socket::Unix("/run/h.sock".into())
        );
        assert_eq!(Socket::parse("unix@/x").unwrap(), Socket::Unix("/x".into()));
        assert_eq!(
            Socket::parse("ipv4@127.0.0.1:9999").unwrap(),
            Socket::Tcp("127.0.0.1:9999".into())
        );
        assert_eq!(
            Socket::parse("127.0.0.1:1").unwrap(),
            Socket::Tcp("127.0.0.1:1".into())
        );
        for bad in ["", "nohost", "h:0", "h:99999", ":80", "a b:80"] {
            assert!(Socket::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_cannot_smuggle_commands() {
        let v = Values::new();
        let op = |s: &str| HaproxyOp::SetState {
            server: Template::parse(s).unwrap(),
            state: ServerState::Drain,
        };
        assert_eq!(
            command(&op("be/web1"), &v, None).unwrap(),
            "set server be/web1 state drain"
        );
        for bad in [
            "be/web1; shutdown sessions",
            "be/a b",
            "web1",
            "be/",
            "/x",
            "be/x\nshow",
        ] {
            assert!(command(&op(bad), &v, None).is_err(), "{bad:?}");
        }
        let w = |s: &str| HaproxyOp::SetWeight {
            server: Template::parse("be/w").unwrap(),
            weight: Template::parse(s).unwrap(),
        };
        assert!(command(&w("50"), &v, None).is_ok());
        assert!(command(&w("50%"), &v, None).is_ok());
        for bad in ["257", "-1", "abc", "101%", "5 ; x"] {
            assert!(command(&w(bad), &v, None).is_err(), "{bad}");
        }
    }

    #[test]
    fn show_replies_become_rows() {
        let stat = "# pxname,svname,scur,status,\nbe,web1,3,UP,\nbe,BACKEND,3,UP,\n\n";
        let r = parse_show(stat).unwrap();
        assert_eq!(r.columns, ["pxname", "svname", "scur", "status"]);
        assert_eq!(r.rows.len(), 2);
        assert_eq!(r.rows[0][2].as_deref(), Some("3"));
        let state = "1\n# be_id be_name srv_id srv_name\n4 be 1 web1\n4 be 2 web2\n\n";
        let r = parse_show(state).unwrap();
        assert_eq!(r.columns, ["be_id", "be_name", "srv_id", "srv_name"]);
        assert_eq!(r.rows[1][3].as_deref(), Some("web2"));
        assert!(parse_show("Unknown command.\n").is_none());
        assert!(parse_show("HTTP/1.1 400 Bad Request\r\n").is_none());
    }
}
