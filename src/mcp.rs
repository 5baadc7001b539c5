//! `warroom mcp`: the incident served to an AI assistant over the Model Context Protocol
//! (stdio, through the official Rust SDK, `rmcp`).
//!
//! ```text
//!  assistant ──stdio── warroom mcp ──reads── journal, runbooks, Prometheus
//!                                  ──proposes── incident.sock ──► holder's console
//! ```
//!
//! A front end beside the console: it reads what the console and the commands read, through
//! the same functions ([`read`]), and writes nothing but proposals, which go through the
//! holder's socket like a follower's and reach the person holding the incident, who accepts
//! or declines them. No tool runs a step, changes a status or publishes. Every answer is
//! bounded and cleaned ([`bounded`]); a line longer than [`MAX_LINE`] is dropped unread, and
//! at most [`tools::MAX_CALLS`] calls run at once.

pub mod attach;
pub mod bounded;
pub mod read;
pub mod tools;

use crate::config::Config;
use crate::incident::store::Store;
use attach::{AttachError, Attached};
use rmcp::ServiceExt;
use std::path::PathBuf;

/// The longest JSON-RPC line read; a longer one is dropped (and answered by nothing).
pub const MAX_LINE: usize = 1024 * 1024;

/// Which incident to serve.
#[derive(Debug, Clone)]
pub enum Which {
    /// One in this data directory.
    Local(Store, String),
    /// The one held behind a socket.
    Socket(PathBuf),
}

/// Why the server stopped.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error(transparent)]
    Attach(#[from] AttachError),
    #[error(transparent)]
    Source(#[from] crate::metrics::from_config::SourceConfigError),
    #[error("the MCP session failed: {0}")]
    Session(String),
}

/// Serve `which` on stdin and stdout until the client closes.
pub async fn serve(config: Config, which: Which) -> Result<(), McpError> {
    let user = crate::incident::actor::current();
    let attached = match which {
        Which::Local(store, id) => Attached::local(&store, &id)?,
        Which::Socket(path) => Attached::follow(path, &user)?,
    };
    let source = crate::metrics::from_config::optional(&config)?;
    let server = tools::Warroom::new(config, attached, user, source);
    let (stdin, stdout) = rmcp::transport::io::stdio();
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new_server(stdin, stdout)
        .with_max_line_length(MAX_LINE);
    let running = server
        .serve(transport)
        .await
        .map_err(|e| McpError::Session(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| McpError::Session(e.to_string()))?;
    Ok(())
}

/// The author of an agent's proposals: `agent (CLIENT) via mcp, for USER`, the client's name
/// as its MCP handshake gave it (cleaned, at most 60 characters).
pub fn author(client: &str, user: &str) -> String {
    let client: String = crate::sanitize::line(client.trim())
        .chars()
        .take(60)
        .collect();
    let client = if client.is_empty() {
        "unnamed".into()
    } else {
        client
    };
    format!("agent ({client}) via mcp, for {user}")
}

/// The client's name from the MCP handshake.
fn client_name(context: &rmcp::service::RequestContext<rmcp::RoleServer>) -> String {
    (context.peer.peer_info())
        .map(|i| i.client_info.name.clone())
        .unwrap_or_default()
}

/// Whether runbook `name` may be proposed with `variables`: it exists, and each variable is
/// one it declares and not a secret (whose value comes from the holder's environment only).
fn proposable(
    catalog: &crate::runbook::catalog::Catalog,
    name: &str,
    variables: &std::collections::BTreeMap<String, String>,
) -> Result<(), String> {
    let Some(rb) = catalog.find(name) else {
        return Err(format!(
            "no runbook named \"{name}\" (see the runbooks tool)"
        ));
    };
    for key in variables.keys() {
        match rb.variables.iter().find(|v| v.name == *key) {
            None => return Err(format!("runbook \"{name}\" has no variable \"{key}\"")),
            Some(v) if v.secret => {
                return Err(format!(
                    "\"{key}\" is a secret: its value comes from the holder's environment, \
                     never from a proposal"
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The postmortem draft of the incident now, in memory, with its lint (nothing is written).
async fn draft(inner: &tools::Inner) -> Result<String, String> {
    use crate::postmortem::{Format, draft_with};
    let records = inner.attached.records().map_err(|e| e.to_string())?;
    let opts = crate::commands::export::options(&inner.config, Format::Markdown, None).await;
    let (snaps, facts) = match &inner.attached.local {
        Some((store, id)) => {
            let dir = store.snapshots_dir(id);
            let read = crate::incident::snapshot::read_all;
            let facts = crate::incident::snapshot::facts_dir(&dir);
            (
                read(&dir).unwrap_or_default(),
                read(&facts).unwrap_or_default(),
            )
        }
        None => (Vec::new(), Vec::new()),
    };
    let id = inner.attached.id.clone();
    let d = tokio::task::spawn_blocking(move || draft_with(&id, &records, &snaps, &facts, &opts))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    let mut text = (d.files.first())
        .map(|(_, bytes)| String::from_utf8_lossy(bytes).into_owned())
        .unwrap_or_default();
    text.push_str("\n\n<!-- lint -->\n");
    for f in &d.lint {
        text.push_str(&format!("- {f}\n"));
    }
    Ok(text)
}
