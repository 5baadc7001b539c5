//! The postmortem's files on their branch: the branch made once from the base, each file
//! committed only when it is missing or different.

use super::{PublishError, Publisher, in_doubt};
use crate::github::client::{GithubError, Method, refused};
use crate::github::publication::Publication;
use base64::Engine;
use serde_json::{Value, json};

impl Publisher<'_> {
    pub(super) async fn ensure_branch(
        &mut self,
        branch: &str,
        base: &str,
    ) -> Result<(), PublishError> {
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
    pub(super) async fn ensure_file(
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
}

fn decode(content: &Value) -> Option<Vec<u8>> {
    let text: String = content
        .as_str()?
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}
