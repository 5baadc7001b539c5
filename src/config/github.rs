//! The `[github]` section of `warroom.toml`: which repositories to watch for changes, which one
//! receives postmortems, and how to reach the API. The token is never written here: it comes
//! from `GITHUB_TOKEN` (or another variable named by `token_env`) or from an owner-only file
//! named by `token_file`.
//!
//! ```toml
//! [github]
//! api_url = "https://api.github.com"      # GitHub Enterprise: "https://ghe.example/api/v3"
//! watch = ["acme/journey-planner", "acme/infra"]
//! postmortems = "acme/postmortems"
//! lookback = "24h"                         # changes before the incident window also shown
//! poll = "1m"                              # the changes feed's pace (default 1m)
//! timeout = "30s"                          # every call ends within this
//! token_file = "~/.config/warroom/github-token"
//! ```

use super::{SecretRef, parse_duration};
use serde::Deserialize;
use serde_spanned::Spanned;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// The public GitHub API.
pub const DEFAULT_API_URL: &str = "https://api.github.com";
/// Where the token is read from when the config names nothing.
pub const DEFAULT_TOKEN_ENV: &str = "GITHUB_TOKEN";

/// `[github]` as warroom uses it, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct GithubConfig {
    /// API base URL without a trailing slash (path prefix kept, as GitHub Enterprise needs).
    pub api_url: String,
    /// Repositories whose deployments, releases and merged pull requests feed the timeline.
    pub watch: Vec<RepoName>,
    /// The repository that receives postmortems and action items (`--repo` overrides it).
    pub postmortems: Option<RepoName>,
    /// How far before the incident window the changes feed looks.
    pub lookback: Duration,
    /// How often the changes feed polls.
    pub poll: Duration,
    /// The longest any one call may take, connecting included.
    pub timeout: Duration,
    /// Where the token comes from; never the token itself.
    pub token: SecretRef,
    /// The branch postmortem pull requests target (default: the repository's default branch).
    pub base_branch: Option<String>,
}

impl Default for GithubConfig {
    fn default() -> Self {
        GithubConfig {
            api_url: DEFAULT_API_URL.into(),
            watch: Vec::new(),
            postmortems: None,
            lookback: Duration::from_secs(24 * 3600),
            poll: Duration::from_secs(60),
            timeout: Duration::from_secs(30),
            token: SecretRef::Env(DEFAULT_TOKEN_ENV.into()),
            base_branch: None,
        }
    }
}

/// A repository as `owner/name`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RepoName {
    pub owner: String,
    pub name: String,
}

impl fmt::Display for RepoName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

fn repo_part_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 100
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

impl FromStr for RepoName {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || {
            format!(
                "\"{}\" is not a repository: expected \"owner/name\", e.g. \"acme/postmortems\"",
                crate::sanitize::line(s)
            )
        };
        let (owner, name) = s.trim().split_once('/').ok_or_else(bad)?;
        if !repo_part_ok(owner) || !repo_part_ok(name) {
            return Err(bad());
        }
        Ok(RepoName {
            owner: owner.to_string(),
            name: name.to_string(),
        })
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGithub {
    api_url: Option<Spanned<String>>,
    #[serde(default)]
    watch: Vec<Spanned<String>>,
    postmortems: Option<Spanned<String>>,
    lookback: Option<Spanned<String>>,
    poll: Option<Spanned<String>>,
    timeout: Option<Spanned<String>>,
    token_env: Option<Spanned<String>>,
    token_file: Option<Spanned<PathBuf>>,
    base_branch: Option<String>,
}

type SpannedError = (std::ops::Range<usize>, String);

impl RawGithub {
    /// Validates the section; an error carries the byte span it is about.
    pub(super) fn validate(self) -> Result<GithubConfig, SpannedError> {
        let mut cfg = GithubConfig::default();
        if let Some(url) = self.api_url {
            cfg.api_url = super::check_url(&url).map_err(|m| (url.span(), m))?;
        }
        for repo in self.watch {
            let parsed = repo.get_ref().parse().map_err(|m| (repo.span(), m))?;
            if !cfg.watch.contains(&parsed) {
                cfg.watch.push(parsed);
            }
        }
        if let Some(repo) = self.postmortems {
            cfg.postmortems = Some(repo.get_ref().parse().map_err(|m| (repo.span(), m))?);
        }
        if let Some(d) = self.lookback {
            cfg.lookback =
                parse_duration(&d, "lookback", 0..=30 * 86_400).map_err(|m| (d.span(), m))?;
        }
        if let Some(d) = self.poll {
            cfg.poll = parse_duration(&d, "poll", 30..=3600).map_err(|m| (d.span(), m))?;
        }
        if let Some(d) = self.timeout {
            // RELIABILITY.md: every GitHub call ends within 35 s.
            cfg.timeout = parse_duration(&d, "timeout", 1..=35).map_err(|m| (d.span(), m))?;
        }
        match (self.token_env, self.token_file) {
            (Some(e), Some(f)) => {
                let span = e.span().start.min(f.span().start)..e.span().end.max(f.span().end);
                return Err((
                    span,
                    "[github] names both token_env and token_file; keep one".into(),
                ));
            }
            (Some(e), None) => {
                if e.get_ref().trim().is_empty() {
                    return Err((
                        e.span(),
                        "token_env is empty: name an environment variable such as \"GITHUB_TOKEN\""
                            .into(),
                    ));
                }
                cfg.token = SecretRef::Env(e.into_inner());
            }
            (None, Some(f)) => cfg.token = SecretRef::File(expand_home(f.into_inner())),
            (None, None) => {}
        }
        cfg.base_branch = self.base_branch.filter(|b| !b.trim().is_empty());
        Ok(cfg)
    }
}

/// `~/x` means the home directory's `x`, as people write it in config files.
pub(crate) fn expand_home(path: PathBuf) -> PathBuf {
    match (path.strip_prefix("~"), dirs::home_dir()) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path,
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, ConfigError, SecretRef};
    use std::time::Duration;

    #[test]
    fn a_full_section_parses() {
        let c = Config::parse(
            "w.toml",
            "[github]\napi_url = \"http://127.0.0.1:1/api/v3/\"\nwatch = [\"acme/api\", \"acme/infra\", \"acme/api\"]\npostmortems = \"acme/pm\"\nlookback = \"6h\"\npoll = \"1m\"\ntimeout = \"5s\"\ntoken_file = \"/secrets/gh\"\n",
        )
        .unwrap();
        let g = c.github.unwrap();
        assert_eq!(g.api_url, "http://127.0.0.1:1/api/v3");
        assert_eq!(
            g.watch
                .iter()
                .map(std::string::ToString::to_string)
                .collect::<Vec<_>>(),
            ["acme/api", "acme/infra"]
        );
        assert_eq!(g.postmortems.unwrap().to_string(), "acme/pm");
        assert_eq!(g.lookback, Duration::from_secs(6 * 3600));
        assert_eq!(g.poll, Duration::from_secs(60));
        assert_eq!(g.timeout, Duration::from_secs(5));
        assert_eq!(g.token, SecretRef::File("/secrets/gh".into()));
        let none = Config::parse("w.toml", "").unwrap();
        assert!(none.github.is_none());
        let dflt = Config::parse("w.toml", "[github]\n")
            .unwrap()
            .github
            .unwrap();
        assert_eq!(dflt.token, SecretRef::Env("GITHUB_TOKEN".into()));
    }

    fn err(text: &str) -> (usize, usize, String) {
        match Config::parse("w.toml", text) {
            Err(ConfigError::Invalid(d)) => (d.line, d.col, d.message),
            other => panic!("expected an error for {text:?}, got {other:?}"),
        }
    }

    #[test]
    fn mistakes_name_their_place() {
        let (line, col, msg) = err("[github]\nwatch = [\"acme/api\", \"no-slash\"]\n");
        assert_eq!((line, col), (2, 22), "{msg}");
        assert!(msg.contains("owner/name"), "{msg}");
        let (line, _, msg) = err("[github]\n\ntimeout = \"2m\"\n");
        assert_eq!(line, 3);
        assert!(msg.contains("out of range"), "{msg}");
        let (line, _, msg) = err("[github]\ntoken = \"ghp_abc\"\n");
        assert_eq!(line, 2);
        assert!(msg.contains("unknown field `token`"), "{msg}");
        // The error quotes the line back, but never the token on it.
        let canary = "ghp_C4n4ryT0k3nV4lu3x";
        let text = format!("[github]\ntoken = \"{canary}\"\n");
        let shown = match Config::parse("w.toml", &text) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("a token in the config was taken"),
        };
        assert!(shown.contains("token = \"***\""), "{shown}");
        assert!(!shown.contains("C4n4ry"), "{shown}");
        let (_, _, msg) = err("[github]\ntoken_env = \"A\"\ntoken_file = \"/x\"\n");
        assert!(msg.contains("keep one"), "{msg}");
        let (line, _, _) = err("[github]\npostmortems = \"../x\"\n");
        assert_eq!(line, 2);
    }
}
