//! Reaching the engine: a NATS URL, and files (never secrets on the command line) for the TLS
//! CA and the NATS credentials or nkey seed.

use async_nats::jetstream;
use std::path::PathBuf;
use std::time::Duration;

/// Where the engine is and how to prove who we are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Engine {
    /// `nats://host:4222` (or `tls://…`); several servers separated by commas.
    pub url: String,
    pub files: Files,
    /// How many servers keep each incident's stream (3 on a three-node cluster).
    pub replicas: usize,
}

/// Files, never secrets on the command line: the CA's PEM that signed the servers'
/// certificates (TLS is then required), a NATS `.creds` file (JWT and nkey seed), a file
/// holding an nkey seed (`SU…`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Files {
    pub ca: Option<PathBuf>,
    pub creds: Option<PathBuf>,
    pub nkey: Option<PathBuf>,
}

/// Why sharing could not be done; local writing never waits on any of these.
#[derive(Debug, thiserror::Error)]
pub enum ShareError {
    #[error("the engine at {url} is unreachable: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("reading {path}: {source}")]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the engine refused: {0}")]
    Engine(String),
    /// A URL that is not a NATS URL: what is wrong.
    #[error("{0}")]
    BadUrl(String),
}

impl ShareError {
    /// Any error of the client, as the engine's answer.
    pub fn engine(e: impl std::fmt::Display) -> ShareError {
        ShareError::Engine(crate::sanitize::line(&e.to_string()).into_owned())
    }
}

/// The environment variable naming the engine when no `--share` is given.
pub const ENV: &str = "WARROOM_SHARE";

impl From<&crate::config::ShareConfig> for Engine {
    fn from(c: &crate::config::ShareConfig) -> Engine {
        Engine {
            url: c.url.clone(),
            files: Files {
                ca: c.ca_file.clone(),
                creds: c.creds_file.clone(),
                nkey: c.nkey_file.clone(),
            },
            replicas: c.replicas.max(1),
        }
    }
}

impl From<&Engine> for crate::config::ShareConfig {
    fn from(e: &Engine) -> crate::config::ShareConfig {
        crate::config::ShareConfig {
            url: e.url.clone(),
            ca_file: e.files.ca.clone(),
            creds_file: e.files.creds.clone(),
            nkey_file: e.files.nkey.clone(),
            replicas: e.replicas,
        }
    }
}

impl Engine {
    pub fn new(url: impl Into<String>) -> Engine {
        Engine {
            url: url.into(),
            replicas: 1,
            ..Engine::default()
        }
    }

    /// Checks a URL as written (by a flag, the environment or the config).
    pub fn check_url(url: &str) -> Result<String, ShareError> {
        crate::config::check_nats_url(url).map_err(ShareError::BadUrl)
    }

    /// The engine to share through, if any: the flag's URL, else the environment's
    /// ([`ENV`]), else the config's `[share]`. A file given on the command line replaces the
    /// config's of the same kind; the config's replicas are kept.
    pub fn choose(
        flag: Option<&str>,
        env: Option<&str>,
        config: Option<&crate::config::ShareConfig>,
        files: &Files,
    ) -> Result<Option<Engine>, ShareError> {
        let config = config.map(Engine::from);
        let config = config.as_ref();
        let url = match (flag, env.filter(|e| !e.trim().is_empty()), config) {
            (Some(url), _, _) | (None, Some(url), _) => Engine::check_url(url)?,
            (None, None, Some(c)) => c.url.clone(),
            (None, None, None) => return Ok(None),
        };
        let mut engine = config.cloned().unwrap_or_else(|| Engine::new(""));
        engine.url = url;
        let or = |flag: &Option<PathBuf>, config: &mut Option<PathBuf>| {
            if flag.is_some() {
                config.clone_from(flag);
            }
        };
        or(&files.ca, &mut engine.files.ca);
        or(&files.creds, &mut engine.files.creds);
        or(&files.nkey, &mut engine.files.nkey);
        Ok(Some(engine))
    }

    async fn options(&self) -> Result<async_nats::ConnectOptions, ShareError> {
        fn file(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> ShareError + '_ {
            move |source| ShareError::File {
                path: path.to_path_buf(),
                source,
            }
        }
        let mut options = async_nats::ConnectOptions::new()
            .name("warroom")
            .connection_timeout(Duration::from_secs(3))
            .retry_on_initial_connect();
        if let Some(path) = &self.files.creds {
            options = options.credentials_file(path).await.map_err(file(path))?;
        }
        if let Some(path) = &self.files.nkey {
            let seed = std::fs::read_to_string(path).map_err(file(path))?;
            options = options.nkey(seed.trim().to_owned());
        }
        if let Some(path) = &self.files.ca {
            options = options
                .add_root_certificates(path.clone())
                .require_tls(true);
        }
        Ok(options)
    }

    /// The servers of the URL: a cluster is several, separated by commas (the client takes
    /// them as a list; as one string it would read the commas as part of a port).
    pub fn servers(&self) -> Vec<&str> {
        (self.url.split(','))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect()
    }

    /// Connects, retrying in the background: the client reconnects by itself, and publishing
    /// waits for it (to any server of a cluster's list). Only bad files fail here.
    pub async fn connect(&self) -> Result<jetstream::Context, ShareError> {
        let client = self
            .options()
            .await?
            .connect(self.servers())
            .await
            .map_err(|e| ShareError::Unreachable {
                url: self.url.clone(),
                reason: e.to_string(),
            })?;
        Ok(jetstream::new(client))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_over_the_environment_which_wins_over_the_config() {
        let config = crate::config::ShareConfig {
            url: "nats://config:4222".into(),
            creds_file: Some("/c.creds".into()),
            replicas: 3,
            ..Default::default()
        };
        let none = Files::default();
        let url = |e: Option<Engine>| e.map(|e| e.url);
        let all = Engine::choose(
            Some("nats://flag:4222"),
            Some("nats://env:4222"),
            Some(&config),
            &none,
        );
        assert_eq!(url(all.unwrap()).as_deref(), Some("nats://flag:4222"));
        let env = Engine::choose(None, Some("nats://env:4222"), Some(&config), &none).unwrap();
        assert_eq!(url(env).as_deref(), Some("nats://env:4222"));
        let conf = Engine::choose(None, Some(""), Some(&config), &none)
            .unwrap()
            .unwrap();
        assert_eq!(
            (conf.url.as_str(), conf.replicas),
            ("nats://config:4222", 3)
        );
        assert_eq!(Engine::choose(None, None, None, &none).unwrap(), None);
        // A file on the command line replaces the config's of its kind only.
        let files = Files {
            nkey: Some("/n.seed".into()),
            ..Files::default()
        };
        let both = Engine::choose(Some("tls://a:4222"), None, Some(&config), &files)
            .unwrap()
            .unwrap();
        assert_eq!(
            both.files.creds.as_deref(),
            Some(std::path::Path::new("/c.creds"))
        );
        assert_eq!(
            both.files.nkey.as_deref(),
            Some(std::path::Path::new("/n.seed"))
        );
    }

    #[test]
    fn a_clusters_url_is_its_servers() {
        let e = Engine::new("nats://a:4222, nats://b:4222,nats://c:4222");
        assert_eq!(
            e.servers(),
            ["nats://a:4222", "nats://b:4222", "nats://c:4222"]
        );
        for s in e.servers() {
            s.parse::<async_nats::ServerAddr>().expect(s);
        }
    }

    #[test]
    fn a_url_that_is_not_a_nats_url_is_refused() {
        for bad in [
            "http://a:4222",
            "127.0.0.1:4222",
            "nats://",
            "nats://a:4222,bogus",
            "",
        ] {
            assert!(
                matches!(Engine::check_url(bad), Err(ShareError::BadUrl(_))),
                "{bad:?}"
            );
        }
        for good in ["nats://127.0.0.1:4222", "tls://a:1, nats://b:2", "nats://h"] {
            assert!(Engine::check_url(good).is_ok(), "{good:?}");
        }
    }
}
