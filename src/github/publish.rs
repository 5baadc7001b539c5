//! Publishing a [`Publication`]: the postmortem as a pull request (a branch adding
//! `postmortems/<date>-<slug>.md` and its charts) or as an issue (charts on the branch, linked),
//! and every action item as an issue with a priority label, its owner assigned when the owner
//! is a GitHub login, its due date in the body, and links both ways.
//!
//! Publishing again updates what exists instead of creating duplicates: objects are found from
//! what the outbox knows, then by their [`crate::github::marker::Marker`] (or, for the pull request, its branch). A
//! create is never sent twice blindly: after an ambiguous failure the marker is searched for
//! first, and only an unambiguous "not there" allows another create, in a later run.

use super::body;
use super::client::{Github, GithubError, Method, refused};
use super::outbox::Object;
use super::publication::Publication;
use crate::config::RepoName;
use crate::incident::summary::ActionItem;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

mod files;
mod find;
use std::collections::BTreeMap;

/// The form of the postmortem on GitHub.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    Pr,
    Issue,
}

/// The outbox keys of the postmortem as a pull request and as an issue.
pub const PR_KEY: &str = "postmortem-pr";
pub const ISSUE_KEY: &str = "postmortem";

/// What one publication did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    pub postmortem: Option<Object>,
    /// Action item id → its issue.
    pub items: BTreeMap<String, Object>,
    pub created: u32,
    pub updated: u32,
    pub unchanged: u32,
}

impl Outcome {
    /// One line for people and the timeline.
    pub fn summary(&self) -> String {
        format!(
            "postmortem {}; {} action item issue(s); {} created, {} updated, {} unchanged",
            self.postmortem
                .as_ref()
                .map_or("-".into(), |o| o.url.clone()),
            self.items.len(),
            self.created,
            self.updated,
            self.unchanged
        )
    }
}

/// Why publishing stopped. The job stays in the outbox unless the error says otherwise.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error(transparent)]
    Github(#[from] GithubError),
    #[error(
        "{what} may have been created although GitHub did not confirm it ({cause}), and its \
         marker could not be found yet; nothing was posted again. Run the command again later: \
         it searches again before creating anything"
    )]
    InDoubt { what: String, cause: String },
    #[error("{0}")]
    Record(String),
}

/// Publishes `publication` to `repo`. `known` is what the outbox knows already; `record` is
/// called for every object as soon as GitHub confirms it (the outbox syncs it).
pub struct Publisher<'a> {
    pub gh: &'a Github,
    pub repo: &'a RepoName,
    pub base_branch: Option<String>,
    pub known: BTreeMap<String, Object>,
    pub record: &'a mut (dyn FnMut(&str, &Object) -> Result<(), String> + Send),
    /// Markers found by scanning the repository's issues (filled on first need).
    found: Option<BTreeMap<String, Object>>,
    outcome: Outcome,
}

impl<'a> Publisher<'a> {
    pub fn new(
        gh: &'a Github,
        repo: &'a RepoName,
        known: BTreeMap<String, Object>,
        record: &'a mut (dyn FnMut(&str, &Object) -> Result<(), String> + Send),
    ) -> Self {
        Publisher {
            gh,
            repo,
            base_branch: None,
            known,
            record,
            found: None,
            outcome: Outcome::default(),
        }
    }

    fn r(&self) -> String {
        format!("/repos/{}/{}", self.repo.owner, self.repo.name)
    }

    fn remember(&mut self, key: &str, obj: Object) -> Result<Object, PublishError> {
        if self.known.get(key) != Some(&obj) {
            (self.record)(key, &obj).map_err(PublishError::Record)?;
            self.known.insert(key.to_string(), obj.clone());
        }
        Ok(obj)
    }

    /// Publishes everything; see the module doc.
    pub async fn run(mut self, p: &Publication, target: Target) -> Result<Outcome, PublishError> {
        let branch = match target {
            Target::Pr => self.pr_branch(p).await?,
            Target::Issue => p.branch(),
        };
        let files = match target {
            Target::Pr => {
                let mut f = vec![(p.file_path(), body::postmortem_file(p).into_bytes())];
                f.extend(p.charts.iter().map(|c| (p.chart_path(c), c.bytes.clone())));
                f
            }
            Target::Issue => p
                .charts
                .iter()
                .map(|c| (p.chart_path(c), c.bytes.clone()))
                .collect(),
        };
        let mut file_urls = BTreeMap::new();
        let mut base = None;
        if !files.is_empty() {
            let b = self.base().await?;
            self.ensure_branch(&branch, &b).await?;
            for (path, bytes) in &files {
                let url = self.ensure_file(&branch, path, bytes, p).await?;
                file_urls.insert(path.clone(), url);
            }
            base = Some(b);
        }
        let postmortem = match target {
            Target::Pr => {
                let base = match base {
                    Some(b) => b,
                    None => self.base().await?,
                };
                self.ensure_pr(p, &branch, &base).await?
            }
            Target::Issue => self.ensure_postmortem_issue(p, &file_urls).await?,
        };
        for item in &p.actions {
            let obj = self.ensure_item(p, item, &postmortem.url).await?;
            self.outcome.items.insert(item.id.clone(), obj);
        }
        self.close_retracted(p).await?;
        // Now that every item has its issue, the postmortem links them.
        let numbers: BTreeMap<String, u64> = self
            .outcome
            .items
            .iter()
            .map(|(k, o)| (k.clone(), o.number))
            .collect();
        let issues = |id: &str| numbers.get(id).copied();
        let (path, title, text) = match target {
            Target::Pr => (
                format!("{}/pulls/{}", self.r(), postmortem.number),
                body::postmortem_title(p),
                body::pr_body(p, &issues),
            ),
            Target::Issue => {
                let urls = |name: &str| {
                    let c = p.charts.iter().find(|c| c.name == name)?;
                    file_urls.get(&p.chart_path(c)).cloned()
                };
                (
                    format!("{}/issues/{}", self.r(), postmortem.number),
                    body::postmortem_title(p),
                    body::issue_body(p, &urls, &issues),
                )
            }
        };
        self.update_if_changed(&path, json!({"title": title, "body": text}))
            .await?;
        self.outcome.postmortem = Some(postmortem);
        Ok(self.outcome)
    }

    /// The branch pull requests target.
    async fn base(&mut self) -> Result<String, PublishError> {
        if let Some(b) = &self.base_branch {
            return Ok(b.clone());
        }
        let repo = self.gh.get(&self.r()).await?.unwrap_or(Value::Null);
        let b = repo["default_branch"]
            .as_str()
            .unwrap_or("main")
            .to_string();
        self.base_branch = Some(b.clone());
        Ok(b)
    }

    /// The branch of the pull request this incident's outbox knows (a pull request opened
    /// before incidents had a global id keeps its branch), else the publication's.
    async fn pr_branch(&mut self, p: &Publication) -> Result<String, PublishError> {
        if let Some(o) = self.known.get(PR_KEY).cloned()
            && let Some(pr) = self
                .gh
                .get(&format!("{}/pulls/{}", self.r(), o.number))
                .await?
            && let Some(head) = pr["head"]["ref"].as_str()
        {
            return Ok(head.to_string());
        }
        Ok(p.branch())
    }

    /// The pull request of the branch: known, found by its branch, or created.
    async fn ensure_pr(
        &mut self,
        p: &Publication,
        branch: &str,
        base: &str,
    ) -> Result<Object, PublishError> {
        let key = PR_KEY;
        if let Some(o) = self.known.get(key).cloned()
            && self
                .gh
                .get(&format!("{}/pulls/{}", self.r(), o.number))
                .await?
                .is_some()
        {
            return Ok(o);
        }
        if let Some(o) = self.find_pr(branch).await? {
            return self.remember(key, o);
        }
        let create = json!({
            "title": body::postmortem_title(p),
            "head": branch,
            "base": base,
            "body": body::pr_body(p, &|_| None),
        });
        match self
            .gh
            .request(Method::Post, &format!("{}/pulls", self.r()), Some(&create))
            .await
        {
            Ok(a) if (200..300).contains(&a.status) => {
                self.outcome.created += 1;
                let o = object(&a.body);
                self.remember(key, o)
            }
            // "A pull request already exists": someone (or a lost answer) made it.
            Ok(a) if a.status == 422 => match self.find_pr(branch).await? {
                Some(o) => self.remember(key, o),
                None => Err(refused(Method::Post, "pulls", a).into()),
            },
            Ok(a) if a.status >= 500 => {
                let e = refused(Method::Post, &format!("{}/pulls", self.r()), a);
                self.after_ambiguous_pr(branch, &e).await
            }
            Ok(a) => Err(refused(Method::Post, "pulls", a).into()),
            Err(e) if e.is_ambiguous() => self.after_ambiguous_pr(branch, &e).await,
            Err(e) => Err(e.into()),
        }
    }

    async fn after_ambiguous_pr(
        &mut self,
        branch: &str,
        e: &GithubError,
    ) -> Result<Object, PublishError> {
        match self.find_pr(branch).await? {
            Some(o) => {
                self.outcome.created += 1;
                self.remember(PR_KEY, o)
            }
            None => Err(in_doubt("the postmortem pull request".into(), e)),
        }
    }

    async fn find_pr(&mut self, branch: &str) -> Result<Option<Object>, PublishError> {
        let list = self
            .gh
            .get(&format!(
                "{}/pulls?state=all&head={}:{branch}",
                self.r(),
                self.repo.owner
            ))
            .await?
            .unwrap_or(Value::Null);
        Ok(list.as_array().and_then(|a| a.first()).map(object))
    }

    async fn ensure_postmortem_issue(
        &mut self,
        p: &Publication,
        file_urls: &BTreeMap<String, String>,
    ) -> Result<Object, PublishError> {
        let urls = |name: &str| {
            let c = p.charts.iter().find(|c| c.name == name)?;
            file_urls.get(&p.chart_path(c)).cloned()
        };
        let create = json!({
            "title": body::postmortem_title(p),
            "body": body::issue_body(p, &urls, &|_| None),
            "labels": ["warroom", "postmortem"],
        });
        self.ensure_issue(ISSUE_KEY, &p.postmortem_marker(), create)
            .await
    }

    async fn ensure_item(
        &mut self,
        p: &Publication,
        item: &ActionItem,
        postmortem_url: &str,
    ) -> Result<Object, PublishError> {
        let mut fields = json!({
            "title": body::item_title(item),
            "body": body::item_body(p, item, Some(postmortem_url)),
            "labels": body::item_labels(item),
        });
        if let Some(login) = item.owner.as_deref().and_then(body::github_login) {
            // Assign only someone GitHub accepts as an assignee (204), never guess.
            let check = format!("{}/assignees/{login}", self.r());
            if self.gh.get(&check).await?.is_some() {
                fields["assignees"] = json!([login]);
            }
        }
        let key = format!("action:{}", item.id);
        let marker = p.action_marker(&item.id);
        let created_before = self.outcome.created;
        let obj = self.ensure_issue(&key, &marker, fields.clone()).await?;
        if self.outcome.created == created_before {
            // Known or found from before: bring it up to date.
            self.update_if_changed(&format!("{}/issues/{}", self.r(), obj.number), fields)
                .await?;
        }
        Ok(obj)
    }
}

pub(super) fn object(v: &Value) -> Object {
    Object {
        number: v["number"].as_u64().unwrap_or_default(),
        url: v["html_url"].as_str().unwrap_or_default().to_string(),
    }
}

pub(super) fn in_doubt(what: String, e: &GithubError) -> PublishError {
    PublishError::InDoubt {
        what,
        cause: e.to_string(),
    }
}
