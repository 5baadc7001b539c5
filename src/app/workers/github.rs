//! GitHub in the console: the process's one client, shared by the changes intake and the
//! publish task.

use crate::app::workers::publish::{PublishSetup, RETRY};
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

#[cfg(test)]
mod tests {
    use super::*;

    // Octocrab's client is built on the tokio runtime.
    #[tokio::test]
    async fn one_client_for_the_feed_and_publishing_and_a_missing_token_is_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let id = IncidentId::parse("2026-11-29-1").unwrap();
        let config = Config::parse(
            "w.toml",
            "[github]\napi_url = \"http://127.0.0.1:1\"\nwatch = [\"acme/api\"]\npostmortems = \"acme/pm\"\ntoken_env = \"WARROOM_TEST_NO_SUCH_TOKEN\"\n",
        )
        .unwrap();
        let (setup, warning) = setup(&config, &store, Some(&id)).unwrap();
        let setup = setup.unwrap();
        let changes = setup.changes.unwrap();
        assert_eq!(changes.repos()[0].to_string(), "acme/api");
        assert_eq!(setup.publish.unwrap().repo.to_string(), "acme/pm");
        let warning = warning.unwrap();
        assert!(warning.contains("WARROOM_TEST_NO_SUCH_TOKEN"), "{warning}");

        let none = Config::parse("w.toml", "").unwrap();
        assert!(setup_is_none(&none, &store));
        // Watching without an incident: the feed, but nothing to publish.
        let (setup, _) = super::setup(&config, &store, None).unwrap();
        assert!(setup.unwrap().publish.is_none());
    }

    fn setup_is_none(config: &Config, store: &Store) -> bool {
        matches!(super::setup(config, store, None), Ok((None, None)))
    }
}
