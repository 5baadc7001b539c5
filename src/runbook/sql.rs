//! `sql` steps: one statement on PostgreSQL or on PgBouncer's admin console, over the
//! PostgreSQL protocol in simple-query mode (the only mode the console speaks).
//!
//! - The connection comes from a DSN (`host=… port=… user=… dbname=…` or a `postgresql://`
//!   URL), usually a variable. A password never comes from the DSN or the runbook text: only from
//!   a secret variable, an environment variable or a file only its owner may read.
//! - Connecting and the statement each have a timeout within the step's deadline. A statement
//!   still running at its timeout is cancelled on the server (a CancelRequest, as psql's Ctrl-C),
//!   so nothing keeps running after the step says it stopped.
//! - A step runs exactly one statement: a second command is refused when the runbook loads and
//!   again once its variables are in (each value quoted for its place, [`super::quoting`]).
//! - `read_only = true` is enforced by the server: on PostgreSQL the statement runs alone in a
//!   `BEGIN READ ONLY` transaction that is rolled back, after the server has parsed it as one
//!   prepared statement; on PgBouncer's console (`dbname=pgbouncer`) only `SHOW` commands are
//!   accepted.
//! - The result is kept as [`Rows`] (bounded) for the run pane, the journal and a condition.

use super::rows::{MAX_KEPT_ROWS, RowCondition, Rows};
use super::template::Template;
use crate::secret::{Secret, SecretError};
use futures::StreamExt;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_postgres::{AsyncMessage, NoTls, SimpleQueryMessage};

/// Default time one statement may run.
pub const DEFAULT_STATEMENT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time the whole step may take (connecting, the statement, a cancel).
pub const DEFAULT_SQL_DEADLINE: Duration = Duration::from_secs(30);
/// Default time between the readings of a `sql` step that waits for its condition.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(2);
/// Longest a connection attempt may take.
pub const MAX_CONNECT: Duration = Duration::from_secs(10);
/// Notices kept from one statement.
const MAX_NOTICES: usize = 20;

/// Where a `sql` step's password comes from (never the DSN, never the runbook text).
#[derive(Debug, Clone, PartialEq)]
pub enum PasswordSource {
    /// No password (trust or peer authentication).
    None,
    /// A secret variable of the runbook, by name.
    Variable(String),
    /// An environment variable, by name.
    Env(String),
    /// A file readable by its owner only (mode 0600 or 0400).
    File(Template),
}

/// A statement on PostgreSQL or PgBouncer's admin console.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlSpec {
    pub dsn: Template,
    pub password: PasswordSource,
    pub statement: Template,
    /// Declared not to change anything: no confirmation, and enforced where the server can.
    pub read_only: bool,
    pub statement_timeout: Duration,
    pub deadline: Duration,
    /// A condition on the result; without one, a statement that runs is a success.
    pub expect: Option<RowCondition>,
    /// Read again until the condition holds, at most this long (read-only statements only).
    pub wait: Option<Duration>,
    pub interval: Duration,
}

/// Why a statement did not give a result. Each message is one line that says where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SqlError {
    #[error(
        "the DSN \"{dsn}\" does not parse: {reason}; expected e.g. \"host=127.0.0.1 port=6432 user=app dbname=app\""
    )]
    BadDsn { dsn: String, reason: String },
    #[error(
        "the DSN \"{dsn}\" holds a password; take it out and give the password with password = \"{{{{secret_variable}}}}\", password_env or password_file"
    )]
    PasswordInDsn { dsn: String },
    #[error("the password of {at}: {source}")]
    Password {
        at: String,
        #[source]
        source: SecretError,
    },
    #[error("cannot connect to {at}: {reason}")]
    Connect { at: String, reason: String },
    #[error("{at}: {message}")]
    Server { at: String, message: String },
    #[error(
        "{at}: the statement did not finish within {after}; a cancel request was sent to the server"
    )]
    Timeout { at: String, after: String },
    #[error(
        "{at}: read_only = true on PgBouncer's admin console allows only SHOW commands, not \"{statement}\"; drop read_only to run it (it then needs confirmation)"
    )]
    NotReadOnly { at: String, statement: String },
    #[error(
        "{at}: the statement holds more than one command (a second one starts near \"{near}\"); a sql step runs exactly one statement"
    )]
    SeveralCommands { at: String, near: String },
}

/// The byte offset of the `;` that ends a statement's first command when a second one follows
/// (quotes, dollar quotes and comments lexed as PostgreSQL does).
pub fn second_command(statement: &str) -> Option<usize> {
    let mut lexer = super::quoting::Lexer::new(super::quoting::Lang::Sql);
    lexer.feed(statement);
    lexer.second_command()
}

impl SqlError {
    /// Whether reading again later may succeed (the server was not reachable), as opposed
    /// to an answer that will not change (a wrong password, an error in the statement).
    pub fn transient(&self) -> bool {
        matches!(self, SqlError::Connect { .. } | SqlError::Timeout { .. })
    }
}

/// A connection ready to open: the parsed DSN with its password, and how it is named in
/// messages (`user@host:port/dbname`, never the password).
pub struct Target {
    config: tokio_postgres::Config,
    /// How messages name it.
    pub at: String,
    /// PgBouncer's admin console (`dbname=pgbouncer`).
    pub console: bool,
    password: Option<Secret>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Target({})", self.at)
    }
}

impl Target {
    /// Parse `dsn` (which must not hold a password) and attach `password`.
    pub fn new(dsn: &str, password: Option<Secret>) -> Result<Target, SqlError> {
        // A DSN that does not parse may still hold a password: never quote it back.
        let masker = super::mask::Masker::new();
        let mut config = tokio_postgres::Config::from_str(dsn).map_err(|e| SqlError::BadDsn {
            dsn: masker.mask(&crate::sanitize::line(dsn)),
            reason: masker.mask(&crate::sanitize::line(&e.to_string())),
        })?;
        if config.get_password().is_some() {
            return Err(SqlError::PasswordInDsn {
                dsn: "<holds a password>".into(),
            });
        }
        let host = config
            .get_hosts()
            .first()
            .map(|h| match h {
                tokio_postgres::config::Host::Tcp(s) => s.clone(),
                tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
            })
            .unwrap_or_else(|| "localhost".into());
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let user = config.get_user().unwrap_or("").to_string();
        let db = config.get_dbname().unwrap_or(&user).to_string();
        let at = crate::sanitize::line(&format!("{user}@{host}:{port}/{db}")).into_owned();
        if let Some(p) = &password {
            config.password(p.expose());
        }
        config.connect_timeout(MAX_CONNECT);
        if config.get_application_name().is_none() {
            config.application_name("warroom");
        }
        Ok(Target {
            console: db == "pgbouncer",
            config,
            at,
            password,
        })
    }

    /// The password, to mask it in what the step shows.
    pub fn password(&self) -> Option<&Secret> {
        self.password.as_ref()
    }
}

/// A statement's result.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Answer {
    /// The rows of the last statement that returned rows (or the last statement's count).
    pub rows: Rows,
    /// Notices the server sent (sanitized).
    pub notices: Vec<String>,
}

/// Run `statement` on `target`: connect within `connect` (at most [`MAX_CONNECT`]), run it
/// within `timeout` (then cancel it on the server), read the rows.
pub async fn run(
    target: &Target,
    statement: &str,
    read_only: bool,
    connect: Duration,
    timeout: Duration,
) -> Result<Answer, SqlError> {
    let at = target.at.clone();
    let text = statement.trim().trim_end_matches(';').trim_end();
    if let Some(offset) = second_command(text) {
        return Err(SqlError::SeveralCommands {
            at,
            near: crate::sanitize::line(&text[offset..])
                .chars()
                .take(40)
                .collect(),
        });
    }
    if read_only && target.console {
        let first = text.split_whitespace().next().unwrap_or("");
        if !first.eq_ignore_ascii_case("show") {
            return Err(SqlError::NotReadOnly {
                at,
                statement: crate::sanitize::line(text).chars().take(80).collect(),
            });
        }
    }
    // PgBouncer's console speaks only simple queries and has no transactions; PostgreSQL runs
    // a read-only statement in a read-only transaction of its own.
    let in_transaction = read_only && !target.console;
    let connect = connect.min(MAX_CONNECT);
    let (client, mut connection) =
        match tokio::time::timeout(connect, target.config.connect(NoTls)).await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => return Err(connect_error(&at, &e)),
            Err(_) => {
                return Err(SqlError::Connect {
                    at,
                    reason: format!("no answer within {}", humantime::format_duration(connect)),
                });
            }
        };
    let notices: Arc<Mutex<Vec<String>>> = Arc::default();
    let driver = {
        let notices = notices.clone();
        tokio::spawn(async move {
            let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
            while let Some(m) = messages.next().await {
                match m {
                    Ok(AsyncMessage::Notice(n)) => {
                        if let Ok(mut v) = notices.lock()
                            && v.len() < MAX_NOTICES
                        {
                            v.push(crate::sanitize::line(n.message()).into_owned());
                        }
                    }
                    Ok(_) => {}
                    Err(_) => return,
                }
            }
        })
    };
    let exchange = async {
        if !in_transaction {
            return client.simple_query(text).await;
        }
        client.simple_query("BEGIN READ ONLY").await?;
        // The server parses the statement first: a prepared statement holds one command only,
        // whatever the text looked like to us.
        client.prepare(text).await?;
        let rows = client.simple_query(text).await?;
        // Nothing to keep: a read-only transaction is rolled back, never committed.
        client.simple_query("ROLLBACK").await?;
        Ok(rows)
    };
    let result = tokio::time::timeout(timeout, exchange).await;
    let outcome = match result {
        Ok(Ok(messages)) => Ok(collect(messages)),
        Ok(Err(e)) => Err(server_error(&at, &e)),
        Err(_) => {
            // Stop it on the server too: the step must not leave it running.
            let token = client.cancel_token();
            let _ = tokio::time::timeout(Duration::from_secs(2), token.cancel_query(NoTls)).await;
            Err(SqlError::Timeout {
                at,
                after: humantime::format_duration(timeout).to_string(),
            })
        }
    };
    drop(client);
    let _ = tokio::time::timeout(Duration::from_millis(500), driver).await;
    let notices = notices.lock().map(|v| v.clone()).unwrap_or_default();
    outcome.map(|rows| Answer { rows, notices })
}

/// The result sets of a simple query; the last one with columns is the answer (or the last
/// one, for a statement without rows).
fn collect(messages: Vec<SimpleQueryMessage>) -> Rows {
    let mut sets: Vec<Rows> = Vec::new();
    let mut current: Option<Rows> = None;
    for m in messages {
        match m {
            SimpleQueryMessage::RowDescription(cols) => {
                current = Some(Rows {
                    columns: cols.iter().map(|c| c.name().to_string()).collect(),
                    ..Rows::default()
                });
            }
            SimpleQueryMessage::Row(r) => {
                let set = current.get_or_insert_with(|| Rows {
                    columns: r.columns().iter().map(|c| c.name().to_string()).collect(),
                    ..Rows::default()
                });
                if set.rows.len() < MAX_KEPT_ROWS {
                    set.rows
                        .push((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect());
                } else {
                    set.dropped += 1;
                }
            }
            SimpleQueryMessage::CommandComplete(n) => {
                let mut set = current.take().unwrap_or_default();
                if set.columns.is_empty() {
                    set.affected = Some(n);
                }
                sets.push(set);
            }
            _ => {}
        }
    }
    if let Some(c) = current.take() {
        sets.push(c);
    }
    match sets.iter().rposition(|s| !s.columns.is_empty()) {
        Some(i) => sets.swap_remove(i),
        None => sets.pop().unwrap_or_default(),
    }
}

fn innermost(e: &dyn std::error::Error) -> String {
    let mut inner = e;
    while let Some(c) = inner.source() {
        inner = c;
    }
    inner.to_string()
}

fn db_message(e: &tokio_postgres::Error) -> Option<String> {
    let d = e.as_db_error()?;
    let mut m = format!("{} {}: {}", d.severity(), d.code().code(), d.message());
    if let Some(detail) = d.detail() {
        m.push_str(&format!(" ({detail})"));
    }
    Some(crate::sanitize::line(&m).into_owned())
}

/// What to do about a refused login, when the server's answer says it was one: PostgreSQL
/// says 28P01 or 28000; PgBouncer says 08P01 with "SASL authentication failed" or "password
/// authentication failed" and no SQLSTATE of its own.
fn login_hint(e: &tokio_postgres::Error) -> Option<&'static str> {
    let d = e.as_db_error()?;
    let code = d.code().code();
    let msg = d.message().to_ascii_lowercase();
    (code == "28P01" || code == "28000" || msg.contains("authentication failed"))
        .then_some("; the login was refused: check the user in the DSN and the password's variable or environment variable")
}

fn connect_error(at: &str, e: &tokio_postgres::Error) -> SqlError {
    match db_message(e) {
        // The server answered: a refused login is not a network problem.
        Some(message) => SqlError::Server {
            at: at.to_string(),
            message: format!("{message}{}", login_hint(e).unwrap_or("")),
        },
        None => SqlError::Connect {
            at: at.to_string(),
            reason: crate::sanitize::line(&innermost(e)).into_owned(),
        },
    }
}

fn server_error(at: &str, e: &tokio_postgres::Error) -> SqlError {
    match db_message(e) {
        Some(message) => SqlError::Server {
            at: at.to_string(),
            message,
        },
        None => SqlError::Connect {
            at: at.to_string(),
            reason: crate::sanitize::line(&format!("the connection failed: {}", innermost(e)))
                .into_owned(),
        },
    }
}

/// Read a password from its source; `variables` holds the run's values (secrets among them).
pub fn password(
    source: &PasswordSource,
    variables: &super::template::Values,
    target: Option<&str>,
) -> Result<Option<Secret>, SecretError> {
    Ok(match source {
        PasswordSource::None => None,
        PasswordSource::Variable(name) => variables.get(name).map(|v| Secret::new(v.clone())),
        PasswordSource::Env(var) => Some(Secret::from_env(var)?),
        PasswordSource::File(path) => {
            let p = path
                .render(variables, target, super::template::Context::Literal)
                .map_err(|e| SecretError::FileUnreadable {
                    path: path.source().into(),
                    reason: e.to_string(),
                })?;
            Some(Secret::from_file(std::path::Path::new(&p))?)
        }
    })
}
