//! Finding what warroom made before (by what the outbox knows, then by marker) and updating it
//! only where it differs.

use super::{PublishError, Publisher, in_doubt, object};
use crate::github::client::{GithubError, Method, refused};
use crate::github::marker::Marker;
use crate::github::outbox::Object;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Issues scanned for markers, newest first: 10 pages of 100.
const MARKER_PAGES: u32 = 10;
const PER_PAGE: usize = 100;

impl Publisher<'_> {
    /// Closes the issues of action items retracted since they were filed (a correction without
    /// a replacement): closed as not planned, never deleted, so their history stays.
    pub(super) async fn close_retracted(
        &mut self,
        p: &crate::github::publication::Publication,
    ) -> Result<(), PublishError> {
        let live: Vec<String> = p
            .actions
            .iter()
            .map(|a| format!("action:{}", a.id))
            .collect();
        let gone: Vec<(String, Object)> = self
            .known
            .iter()
            .filter(|(k, _)| k.starts_with("action:") && !live.contains(k))
            .map(|(k, o)| (k.clone(), o.clone()))
            .collect();
        for (key, o) in gone {
            let path = format!("{}/issues/{}", self.r(), o.number);
            let Some(issue) = self.gh.get(&path).await? else {
                continue;
            };
            let marker = Marker {
                key,
                ..p.postmortem_marker()
            };
            // Known from this incident's own outbox: its marker, or the one it had before
            // incidents had a global id.
            let ours = issue["body"]
                .as_str()
                .is_some_and(|b| marker.is_in(b) || marker.legacy().is_in(b));
            if issue["state"] != "open" || !ours {
                continue;
            }
            let close = json!({"state": "closed", "state_reason": "not_planned"});
            self.gh.write(Method::Patch, &path, &close).await?;
            self.outcome.updated += 1;
        }
        Ok(())
    }

    /// An issue that is known, found by its marker, or created (once).
    pub(super) async fn ensure_issue(
        &mut self,
        key: &str,
        marker: &Marker,
        create: Value,
    ) -> Result<Object, PublishError> {
        if let Some(o) = self.known.get(key).cloned() {
            let path = format!("{}/issues/{}", self.r(), o.number);
            // What this incident's own outbox recorded is ours even with the marker it had
            // before incidents had a global id (publishing now rewrites it). A legacy marker
            // found by searching could be any incident's with the same local id: never trusted.
            if let Some(issue) = self.gh.get(&path).await?
                && issue["body"]
                    .as_str()
                    .is_some_and(|b| marker.is_in(b) || marker.legacy().is_in(b))
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
    pub(super) async fn find_marker(
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
    pub(super) async fn update_if_changed(
        &mut self,
        path: &str,
        fields: Value,
    ) -> Result<(), PublishError> {
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
