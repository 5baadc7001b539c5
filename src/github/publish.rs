//! Publishing a [`Publication`]: the postmortem as a pull request (a branch adding
//! `postmortems/<date>-<slug>.md` and its charts) or as an issue (charts on the branch, linked),
//! and every action item as an issue with a priority label, its owner assigned when the owner
//! is a GitHub login, its due date in the body, and links both ways.
//!
//! Publishing again updates what exists instead of creating duplicates: objects are found from
//! what the outbox knows, then by their [`Marker`] (or, for the pull request, its branch). A
//! create is never sent twice blindly: after an ambiguous failure the marker is searched for
//! first, and only an unambiguous "not there" allows another create, in a later run.

use super::body;
use super::client::{Github, GithubError, Method, refused};
use super::marker::Marker;
use super::outbox::Object;
use super::publication::Publication;
use crate::config::RepoName;
use crate::incident::summary::ActionItem;
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The form of the postmortem on GitHub.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    Pr,
    Issue,
}

impl From<crate::cli::PublishAs> for Target {
    fn from(p: crate::cli::PublishAs) -> Self {
        match p {
            crate::cli::PublishAs::Pr => Target::Pr,
            crate::cli::PublishAs::Issue => Target::Issue,
        }
    }
}

/// Issues scanned for markers, newest first: 10 pages of 100.
const MARKER_PAGES: u32 = 10;
const PER_PAGE: usize = 100;

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
            self.ensure_branch(&p.branch(), &b).await?;
            for (path, bytes) in &files {
                let url = self.ensure_file(&p.branch(), path, bytes, p).await?;
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
                self.ensure_pr(p, &base).await?
            }
            Target::Issue => self.ensure_postmortem_issue(p, &file_urls).await?,
        };
        for item in &p.actions {
            let obj = self.ensure_item(p, item, &postmortem.url).await?;
            self.outcome.items.insert(item.id.clone(), obj);
        }
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

    async fn ensure_branch(&mut self, branch: &str, base: &str) -> Result<(), PublishError> {
        let ref_path = format!("{}/git/ref/heads/{branch}", self.r());
        if self.gh.get(&ref_path).await?.is_some() {
            return Ok(());
        }
        let base_ref = self
            .gh
            .get(&format!("{}/git/ref/heads/{base}", self.r()))
            .await?
            .ok_or_else(|| GithubError::Status {
                what: format!("GET {}/git/ref/heads/{base}", self.r()),
                status: 404,
                message: format!("the base branch \"{base}\" does not exist"),
            })?;
        let sha = base_ref["object"]["sha"].as_str().unwrap_or_default();
        let create = json!({"ref": format!("refs/heads/{branch}"), "sha": sha});
        match self
            .gh
            .request(
                Method::Post,
                &format!("{}/git/refs", self.r()),
                Some(&create),
            )
            .await
        {
            Ok(a) if (200..300).contains(&a.status) || a.status == 422 => Ok(()),
            Ok(a) => Err(refused(Method::Post, "git/refs", a).into()),
            Err(e) if e.is_ambiguous() => {
                if self.gh.get(&ref_path).await?.is_some() {
                    Ok(())
                } else {
                    Err(in_doubt(format!("branch \"{branch}\""), &e))
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Puts one file on the branch unless it is there already with the same bytes; its web URL.
    async fn ensure_file(
        &mut self,
        branch: &str,
        path: &str,
        bytes: &[u8],
        p: &Publication,
    ) -> Result<String, PublishError> {
        let get_path = format!("{}/contents/{path}?ref={branch}", self.r());
        let existing = self.gh.get(&get_path).await?;
        if let Some(e) = &existing
            && decode(&e["content"]).as_deref() == Some(bytes)
        {
            self.outcome.unchanged += 1;
            return Ok(e["html_url"].as_str().unwrap_or_default().to_string());
        }
        let mut put = json!({
            "message": format!("Postmortem {}: {}", p.incident, path.rsplit('/').next().unwrap_or(path)),
            "content": base64::engine::general_purpose::STANDARD.encode(bytes),
            "branch": branch,
        });
        if let Some(sha) = existing.as_ref().and_then(|e| e["sha"].as_str()) {
            put["sha"] = json!(sha);
        }
        match self
            .gh
            .write(Method::Put, &format!("{}/contents/{path}", self.r()), &put)
            .await
        {
            Ok(v) => {
                if existing.is_some() {
                    self.outcome.updated += 1;
                } else {
                    self.outcome.created += 1;
                }
                Ok(v["content"]["html_url"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string())
            }
            Err(e) if e.is_ambiguous() => match self.gh.get(&get_path).await? {
                Some(now) if decode(&now["content"]).as_deref() == Some(bytes) => {
                    Ok(now["html_url"].as_str().unwrap_or_default().to_string())
                }
                _ => Err(in_doubt(format!("file \"{path}\""), &e)),
            },
            Err(e) => Err(e.into()),
        }
    }

    /// The pull request of the branch: known, found by its branch, or created.
    async fn ensure_pr(&mut self, p: &Publication, base: &str) -> Result<Object, PublishError> {
        let key = "postmortem";
        if let Some(o) = self.known.get(key).cloned()
            && self
                .gh
                .get(&format!("{}/pulls/{}", self.r(), o.number))
                .await?
                .is_some()
        {
            return Ok(o);
        }
        if let Some(o) = self.find_pr(&p.branch()).await? {
            return self.remember(key, o);
        }
        let create = json!({
            "title": body::postmortem_title(p),
            "head": p.branch(),
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
            Ok(a) if a.status == 422 => match self.find_pr(&p.branch()).await? {
                Some(o) => self.remember(key, o),
                None => Err(refused(Method::Post, "pulls", a).into()),
            },
            Ok(a) if a.status >= 500 => {
                let e = refused(Method::Post, &format!("{}/pulls", self.r()), a);
                self.after_ambiguous_pr(p, &e).await
            }
            Ok(a) => Err(refused(Method::Post, "pulls", a).into()),
            Err(e) if e.is_ambiguous() => self.after_ambiguous_pr(p, &e).await,
            Err(e) => Err(e.into()),
        }
    }

    async fn after_ambiguous_pr(
        &mut self,
        p: &Publication,
        e: &GithubError,
    ) -> Result<Object, PublishError> {
        match self.find_pr(&p.branch()).await? {
            Some(o) => {
                self.outcome.created += 1;
                self.remember("postmortem", o)
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
        self.ensure_issue("postmortem", &Marker::postmortem(&p.incident), create)
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
        let marker = Marker::action(&p.incident, &item.id);
        let created_before = self.outcome.created;
        let obj = self.ensure_issue(&key, &marker, fields.clone()).await?;
        if self.outcome.created == created_before {
            // Known or found from before: bring it up to date.
            self.update_if_changed(&format!("{}/issues/{}", self.r(), obj.number), fields)
                .await?;
        }
        Ok(obj)
    }

    /// An issue that is known, found by its marker, or created (once).
    async fn ensure_issue(
        &mut self,
        key: &str,
        marker: &Marker,
        create: Value,
    ) -> Result<Object, PublishError> {
        if let Some(o) = self.known.get(key).cloned() {
            let path = format!("{}/issues/{}", self.r(), o.number);
            if let Some(issue) = self.gh.get(&path).await?
                && issue["body"].as_str().is_some_and(|b| marker.is_in(b))
            {
                return Ok(o);
            }
        }
        if let Some(o) = self.find_marker(marker, false).await? {
            return self.remember(key, o);
        }
        let path = format!("{}/issues", self.r());
        let failure = match self.gh.request(Method::Post, &path, Some(&create)).await {
            Ok(a) if (200..300).contains(&a.status) => {
                self.outcome.created += 1;
                let o = object(&a.body);
                return self.remember(key, o);
            }
            Ok(a) if a.status >= 500 => refused(Method::Post, &path, a),
            Ok(a) => return Err(refused(Method::Post, &path, a).into()),
            Err(e) if e.is_ambiguous() => e,
            Err(e) => return Err(e.into()),
        };
        // The create may have happened: look before anything is posted again.
        tracing::warn!(error = %failure, "ambiguous create; searching for its marker");
        match self.find_marker(marker, true).await? {
            Some(o) => {
                self.outcome.created += 1;
                self.remember(key, o)
            }
            None => Err(in_doubt(format!("the issue for {}", marker.key), &failure)),
        }
    }

    /// Finds the issue carrying `marker` among the repository's newest issues. The list is
    /// read once per run, and again when `fresh` (after an ambiguous create). The search API
    /// is not used: its index lags behind by up to a minute, which is exactly the window in
    /// which an ambiguous create must be found.
    async fn find_marker(
        &mut self,
        marker: &Marker,
        fresh: bool,
    ) -> Result<Option<Object>, PublishError> {
        if fresh || self.found.is_none() {
            let mut found = BTreeMap::new();
            for page in 1..=MARKER_PAGES {
                let list = self
                    .gh
                    .get(&format!(
                        "{}/issues?state=all&sort=created&direction=desc&per_page={PER_PAGE}&page={page}",
                        self.r()
                    ))
                    .await?
                    .unwrap_or(Value::Null);
                let items = list.as_array().cloned().unwrap_or_default();
                for issue in &items {
                    let text = issue["body"].as_str().unwrap_or_default();
                    for line in text.lines().filter(|l| l.starts_with("<!-- warroom:v1 ")) {
                        found
                            .entry(line.trim().to_string())
                            .or_insert_with(|| object(issue));
                    }
                }
                if items.len() < PER_PAGE {
                    break;
                }
            }
            self.found = Some(found);
        }
        Ok(self
            .found
            .as_ref()
            .and_then(|f| f.get(&marker.render()).cloned()))
    }

    /// PATCHes `fields` onto the issue or pull request at `path` when any differs.
    async fn update_if_changed(&mut self, path: &str, fields: Value) -> Result<(), PublishError> {
        let Some(current) = self.gh.get(path).await? else {
            return Err(GithubError::Status {
                what: format!("GET {path}"),
                status: 404,
                message: "it was deleted or moved; publish again to recreate it".into(),
            }
            .into());
        };
        if same(&current, &fields) {
            self.outcome.unchanged += 1;
            return Ok(());
        }
        // A PATCH sets the same fields again if repeated, so it is safe to send once more later.
        self.gh.write(Method::Patch, path, &fields).await?;
        self.outcome.updated += 1;
        Ok(())
    }
}

/// True when `current` (GitHub's JSON of an issue or pull request) already has `fields`.
fn same(current: &Value, fields: &Value) -> bool {
    let Some(f) = fields.as_object() else {
        return true;
    };
    f.iter().all(|(k, want)| match k.as_str() {
        "labels" => names(&current["labels"], "name") == names(want, ""),
        "assignees" => names(&current["assignees"], "login") == names(want, ""),
        _ => current[k] == *want,
    })
}

fn names(v: &Value, field: &str) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| {
                    if field.is_empty() {
                        x.as_str()
                    } else {
                        x[field].as_str()
                    }
                })
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn object(v: &Value) -> Object {
    Object {
        number: v["number"].as_u64().unwrap_or_default(),
        url: v["html_url"].as_str().unwrap_or_default().to_string(),
    }
}

fn decode(content: &Value) -> Option<Vec<u8>> {
    let text: String = content
        .as_str()?
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

fn in_doubt(what: String, e: &GithubError) -> PublishError {
    PublishError::InDoubt {
        what,
        cause: e.to_string(),
    }
}
