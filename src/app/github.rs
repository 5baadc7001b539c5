//! GitHub in the console: the process's one client, shared by the changes intake and the
//! publish task.

use super::publish::{PublishSetup, RETRY};
use crate::config::Config;
use crate::github::{ChangesIntake, Github, WallTimer};
use crate::incident::{IncidentId, Store};
use std::sync::Arc;

/// What the console does with GitHub.
#[derive(Debug, Clone, Default)]
pub struct GithubSetup {
    /// The changes feed, when `[github] watch` names repositories.
    pub changes: Option<ChangesIntake>,
    /// Publishing, when `[github] postmortems` names a repository and an incident is open.
    pub publish: Option<PublishSetup>,
}

/// The setup `[github]` asks for, with one client for all of it; `None` without `[github]`.
/// A token that cannot be read is a warning: public repositories are still watched.
pub fn setup(
    config: &Config,
    store: &Store,
    id: Option<&IncidentId>,
) -> Result<(Option<GithubSetup>, Option<String>), crate::github::GithubError> {
    let Some(cfg) = &config.github else {
        return Ok((None, None));
    };
    let (token, warning) = match crate::github::client::load_token(&cfg.token) {
        Ok(t) => (Some(t), None),
        Err(e) => (
            None,
            Some(format!(
                "GitHub token not available ({e}); only public repositories can be read"
            )),
        ),
    };
    let gh = Arc::new(Github::new(
        &cfg.api_url,
        token.as_ref(),
        cfg.timeout,
        Arc::new(WallTimer),
    )?);
    let publish = match (&cfg.postmortems, id) {
        (Some(repo), Some(id)) => Some(PublishSetup::new(
            gh.clone(),
            store.clone(),
            id.clone(),
            repo.clone(),
            cfg.base_branch.clone(),
            RETRY,
        )),
        _ => None,
    };
    Ok((
        Some(GithubSetup {
            changes: ChangesIntake::from_config(cfg, gh),
            publish,
        }),
        warning,
    ))
}
