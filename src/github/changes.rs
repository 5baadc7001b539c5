//! The changes feed: what changed in the watched repositories around the incident.
//!
//! Deployments (with their latest status), releases and merged pull requests inside the
//! incident window and a look-back before it become one `Event::Change` each, in time order.
//! A feed remembers what it has returned, so polling again yields only what is new: a
//! deployment whose status moved on (in progress → success) is new again, with its new state.
//! What it remembers is computed from the event itself ([`key_of`]), so a feed started again
//! after a restart learns it back from the journal ([`ChangesFeed::remember`]).
//! Polls are slow and go through the one [`Github`] client, so one request is in flight.

use super::client::{Github, GithubError};
use crate::config::RepoName;
use crate::incident::Record;
use crate::incident::event::Event;
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

/// The incident's window: from its start to its end, or to now while it is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start: DateTime<Utc>,
    pub end: Option<DateTime<Utc>>,
}

/// What kind of change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    Deployment,
    Release,
    PullRequest,
}

/// One change, ready for the Changes pane and the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// When it happened (deployment created, release published, pull request merged).
    pub at: DateTime<Utc>,
    pub kind: ChangeKind,
    /// What makes it this change, for de-duplication across polls ([`key_of`] its event).
    pub key: String,
    /// Who made it (the deployment's creator, the release's author, the pull request's
    /// author), sanitized: the actor of its timeline record.
    pub who: Option<String>,
    /// The timeline event (sanitized).
    pub event: Event,
}

impl ChangeKind {
    /// The kind of a change event, from the form of the reference this feed gives it:
    /// `#42` for a pull request, `deploy ENV REF@SHA` for a deployment, the tag for a release.
    pub fn of(event: &Event) -> Option<ChangeKind> {
        let Event::Change { reference, .. } = event else {
            return None;
        };
        Some(match reference.strip_prefix('#') {
            Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                ChangeKind::PullRequest
            }
            _ if reference.starts_with("deploy ") => ChangeKind::Deployment,
            _ => ChangeKind::Release,
        })
    }

    /// A short word for the pane.
    pub fn word(self) -> &'static str {
        match self {
            ChangeKind::Deployment => "deploy",
            ChangeKind::Release => "release",
            ChangeKind::PullRequest => "merged",
        }
    }
}

/// What makes a change event this change: the repository and pull request number, the
/// repository and tag, or for a deployment everything the event says (a deployment's status
/// moving on is a new change; two deployments of one commit differ in their time).
pub fn key_of(event: &Event) -> Option<String> {
    let kind = ChangeKind::of(event)?;
    let Event::Change {
        repo,
        reference,
        title,
        at,
        ..
    } = event
    else {
        return None;
    };
    Some(match kind {
        ChangeKind::PullRequest => format!("{repo}#pr:{reference}"),
        ChangeKind::Release => format!("{repo}#release:{reference}"),
        ChangeKind::Deployment => format!(
            "{repo}#{reference}@{}:{title}",
            at.map(|t| t.timestamp()).unwrap_or_default()
        ),
    })
}

/// The deployments, releases and merged pull requests of a few repositories.
#[derive(Debug)]
pub struct ChangesFeed {
    gh: Arc<Github>,
    repos: Vec<RepoName>,
    lookback: Duration,
    seen: HashSet<String>,
}

/// One page of each list per repository and poll: the feed is polled every minute or two, and
/// the newest hundred of each kind covers far more than that.
const PER_PAGE: u32 = 100;

impl ChangesFeed {
    pub fn new(gh: Arc<Github>, repos: Vec<RepoName>, lookback: Duration) -> Self {
        ChangesFeed {
            gh,
            repos,
            lookback,
            seen: HashSet::new(),
        }
    }

    /// The repositories watched.
    pub fn repos(&self) -> &[RepoName] {
        &self.repos
    }

    /// Marks the changes already on the timeline as seen, so a feed started after a restart
    /// does not record them again.
    pub fn remember(&mut self, records: &[Record]) {
        self.seen
            .extend(records.iter().filter_map(|r| key_of(&r.kind)));
    }

    /// Forgets a change returned by the last poll (it could not be recorded), so the next poll
    /// returns it again.
    pub fn forget(&mut self, key: &str) {
        self.seen.remove(key);
    }

    /// The changes in `window` (and the look-back before it) not returned before, oldest
    /// first. On an error nothing is marked as seen, so the next poll returns it all again.
    pub async fn poll_once(&mut self, window: Window) -> Result<Vec<Change>, GithubError> {
        let from = window.start - chrono::Duration::from_std(self.lookback).unwrap_or_default();
        let to = window.end.unwrap_or_else(|| self.gh.timer().now());
        let mut all = Vec::new();
        for repo in &self.repos {
            let span = Span { repo, from, to };
            self.deployments(&span, &mut all).await?;
            self.releases(&span, &mut all).await?;
            self.merged(&span, &mut all).await?;
        }
        all.retain(|c| !self.seen.contains(&c.key));
        all.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.key.cmp(&b.key)));
        all.dedup_by(|a, b| a.key == b.key);
        self.seen.extend(all.iter().map(|c| c.key.clone()));
        Ok(all)
    }

    async fn list(&self, path: String) -> Result<Vec<Value>, GithubError> {
        Ok(self
            .gh
            .get(&path)
            .await?
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default())
    }

    async fn deployments(&self, span: &Span<'_>, out: &mut Vec<Change>) -> Result<(), GithubError> {
        let repo = span.repo;
        for d in self.list(span.path("deployments?")).await? {
            let Some(at) = span.within(&d["created_at"]) else {
                continue;
            };
            let id = d["id"].as_u64().unwrap_or_default();
            let statuses = self
                .list(format!(
                    "{}/deployments/{id}/statuses?per_page=1",
                    span.repo_path()
                ))
                .await?;
            let status = statuses.first();
            let state = status
                .and_then(|s| s["state"].as_str())
                .unwrap_or("pending");
            let url = status.and_then(|s| {
                ["target_url", "log_url", "environment_url"]
                    .iter()
                    .find_map(|f| s[*f].as_str().filter(|u| !u.is_empty()))
                    .map(String::from)
            });
            let sha = d["sha"].as_str().unwrap_or_default();
            let reference = format!(
                "deploy {} {}@{}",
                d["environment"].as_str().unwrap_or("production"),
                d["ref"].as_str().unwrap_or("?"),
                sha.get(..7).unwrap_or(sha)
            );
            let what = d["description"]
                .as_str()
                .filter(|s| !s.trim().is_empty())
                .unwrap_or("deployment");
            out.push(change(
                at,
                ChangeKind::Deployment,
                repo,
                reference,
                format!("{what} ({state})"),
                url,
                login(&d["creator"]),
            ));
        }
        Ok(())
    }

    async fn releases(&self, span: &Span<'_>, out: &mut Vec<Change>) -> Result<(), GithubError> {
        let repo = span.repo;
        for rel in self.list(span.path("releases?")).await? {
            if rel["draft"].as_bool() == Some(true) {
                continue;
            }
            let Some(at) = span.within(&rel["published_at"]) else {
                continue;
            };
            let tag = rel["tag_name"].as_str().unwrap_or("?");
            let name = rel["name"]
                .as_str()
                .filter(|s| !s.trim().is_empty())
                .unwrap_or(tag);
            out.push(change(
                at,
                ChangeKind::Release,
                repo,
                tag.to_string(),
                format!("release {name}"),
                rel["html_url"].as_str().map(String::from),
                login(&rel["author"]),
            ));
        }
        Ok(())
    }

    async fn merged(&self, span: &Span<'_>, out: &mut Vec<Change>) -> Result<(), GithubError> {
        let repo = span.repo;
        let path = span.path("pulls?state=closed&sort=updated&direction=desc&");
        for pr in self.list(path).await? {
            let Some(at) = span.within(&pr["merged_at"]) else {
                continue;
            };
            let n = pr["number"].as_u64().unwrap_or_default();
            out.push(change(
                at,
                ChangeKind::PullRequest,
                repo,
                format!("#{n}"),
                format!("merged: {}", pr["title"].as_str().unwrap_or("")),
                pr["html_url"].as_str().map(String::from),
                login(&pr["merged_by"]).or_else(|| login(&pr["user"])),
            ));
        }
        Ok(())
    }
}

/// One repository's changes between two instants.
struct Span<'a> {
    repo: &'a RepoName,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
}

impl Span<'_> {
    fn repo_path(&self) -> String {
        format!("/repos/{}/{}", self.repo.owner, self.repo.name)
    }

    /// A list's path: `query` is the list and its parameters up to the page size.
    fn path(&self, query: &str) -> String {
        format!("{}/{query}per_page={PER_PAGE}", self.repo_path())
    }

    /// The instant in `v` when it falls inside the span.
    fn within(&self, v: &Value) -> Option<DateTime<Utc>> {
        time(v).filter(|t| *t >= self.from && *t <= self.to)
    }
}

fn change(
    at: DateTime<Utc>,
    kind: ChangeKind,
    repo: &RepoName,
    reference: String,
    title: String,
    url: Option<String>,
    who: Option<String>,
) -> Change {
    let event = Event::Change {
        repo: repo.to_string(),
        reference,
        title,
        url,
        at: Some(at),
    }
    .sanitized();
    Change {
        at,
        kind,
        key: key_of(&event).unwrap_or_default(),
        who: who.map(|w| crate::sanitize::line(&w).into_owned()),
        event,
    }
}

/// A user's login from a GitHub user object.
fn login(user: &Value) -> Option<String> {
    user["login"]
        .as_str()
        .filter(|l| !l.trim().is_empty())
        .map(String::from)
}

fn time(v: &Value) -> Option<DateTime<Utc>> {
    v.as_str()?.parse().ok()
}
