//! `warroom.toml`: where metrics come from, how to reach them, what the dashboard shows, and how
//! it looks and answers keys. Unknown keys and bad values are errors with `file:line:col`.
//!
//! Secrets are never written in this file: it names an environment variable or an owner-only
//! file that holds them.

pub mod alerts;
pub mod github;
pub mod panels;
pub mod runbooks;
pub mod variables;

use crate::diagnostic::Diagnostic;
use serde::{Deserialize, Serialize};
use serde_spanned::Spanned;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use github::{GithubConfig, RepoName};
pub use panels::{BadWhen, PanelConfig, Unit};

/// The configuration as warroom uses it, validated.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where it came from (for messages), or `None` for built-in defaults.
    pub file: Option<PathBuf>,
    pub prometheus: PrometheusConfig,
    pub alertmanager: Option<String>,
    /// The alert intake: what it polls and how often.
    pub alerts: alerts::AlertsConfig,
    pub refresh: Duration,
    /// The dashboard's initial range.
    pub range: Duration,
    pub timezone: chrono_tz::Tz,
    pub theme: String,
    /// `mouse = true`: clicks select panels and the wheel scrolls (off by default).
    pub mouse: bool,
    /// `[keys.MODE]` as written: the console's key map (a front end's) is built from them, and
    /// checked when the config is loaded for a command (`Keymap::from_config`).
    pub keys: KeyOverrides,
    /// The `[[panel]]` entries. Empty means "discover": a console or recorder on a real
    /// Prometheus builds its dashboard from what the Prometheus exports, and a rehearsal shows
    /// the simulator's panels (each asks for them; the config knows no preset).
    pub panels: Vec<PanelConfig>,
    /// `[[variable]]`: the template variables the panels' queries use (`$name`), resolved
    /// against the Prometheus when a console or recorder starts.
    pub variables: Vec<crate::variables::Variable>,
    /// `[runbooks] dir` (or the older top-level `runbook_dir`).
    pub runbook_dir: Option<PathBuf>,
    /// `[runbooks.vars]`: values for every runbook that declares the variable.
    pub runbook_vars: Vec<(String, String)>,
    /// `[github]`: the changes feed and publishing; `None` when the section is absent.
    pub github: Option<GithubConfig>,
    /// `[export] gap_limit`: the longest quiet stretch of a timeline the postmortem lint
    /// accepts.
    pub gap_limit: Duration,
    /// `[export.public_names]`: the name the public status page gives each service id
    /// (`calls-api = "Calls"`); a service without one is "our service" there.
    pub public_names: BTreeMap<String, String>,
    /// `[share]`: the NATS JetStream engine an incident is shared through (issue 36), unless
    /// `--share` or `$WARROOM_SHARE` names another.
    pub share: Option<ShareConfig>,
}

/// `[share]`: the engine's URL, the files that reach it (never secrets), and how many of its
/// servers keep each incident.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShareConfig {
    pub url: String,
    pub ca_file: Option<PathBuf>,
    pub creds_file: Option<PathBuf>,
    pub nkey_file: Option<PathBuf>,
    pub replicas: usize,
}

/// Checks a NATS URL as written: one server or several separated by commas, each `nats://`,
/// `tls://`, `ws://` or `wss://` with a host. The trimmed URL, or what is wrong.
pub fn check_nats_url(url: &str) -> Result<String, String> {
    let bad = || {
        format!(
            "\"{}\" is not a NATS URL: expected nats://HOST:PORT (or tls://HOST:PORT), several \
             separated by commas",
            crate::sanitize::line(url)
        )
    };
    let url = url.trim();
    for server in url.split(',') {
        let parsed = url::Url::parse(server.trim()).map_err(|_| bad())?;
        let scheme_ok = matches!(parsed.scheme(), "nats" | "tls" | "ws" | "wss");
        if !scheme_ok || parsed.host_str().is_none_or(str::is_empty) {
            return Err(bad());
        }
    }
    Ok(url.to_owned())
}

/// The theme name that asks the terminal for its background and picks a theme for it.
pub const THEME_AUTO: &str = "auto";

/// A commented example of every section (`warroom config example`); a test parses it, with
/// its settings commented out and with them all in use.
pub const EXAMPLE: &str = include_str!("config/example.toml");

/// `[keys.MODE]` overrides as written: mode, then action, then its keys.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeyOverrides {
    pub modes: BTreeMap<String, BTreeMap<String, Vec<String>>>,
    /// Where `[keys]` is written, for an error about them (its message left empty).
    pub place: Option<Diagnostic>,
}

/// How to reach Prometheus.
#[derive(Debug, Clone, Default)]
pub struct PrometheusConfig {
    /// Base URL, path prefix included (`http://host:9090/prometheus`).
    pub url: Option<String>,
    pub timeout: Duration,
    /// Extra headers, such as `X-Scope-OrgID`.
    pub headers: Vec<(String, String)>,
    pub auth: AuthConfig,
}

/// Where credentials come from; never the credential itself.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum AuthConfig {
    #[default]
    None,
    Basic {
        username: String,
        password: SecretRef,
    },
    Bearer {
        token: SecretRef,
    },
}

/// A secret named by an environment variable or an owner-only file.
#[derive(Debug, Clone, PartialEq)]
pub enum SecretRef {
    Env(String),
    File(PathBuf),
}

/// One key or several.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum KeyList {
    One(String),
    Many(Vec<String>),
}

impl KeyList {
    pub fn keys(&self) -> Vec<&str> {
        match self {
            KeyList::One(k) => vec![k.as_str()],
            KeyList::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

impl Default for Config {
    /// The built-in defaults: no file, no panels (discovery), no sections.
    fn default() -> Self {
        Config {
            file: None,
            prometheus: PrometheusConfig {
                timeout: Duration::from_secs(10),
                ..Default::default()
            },
            alertmanager: None,
            alerts: alerts::AlertsConfig::default(),
            refresh: Duration::from_secs(5),
            range: Duration::from_secs(3600),
            timezone: chrono_tz::UTC,
            theme: THEME_AUTO.into(),
            mouse: false,
            keys: KeyOverrides::default(),
            panels: Vec::new(),
            variables: Vec::new(),
            runbook_dir: None,
            runbook_vars: Vec::new(),
            github: None,
            gap_limit: Duration::from_secs(30 * 60),
            public_names: BTreeMap::new(),
            share: None,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    prometheus: Option<RawPrometheus>,
    alertmanager: Option<RawAlertmanager>,
    alerts: Option<alerts::RawAlerts>,
    refresh: Option<Spanned<String>>,
    range: Option<Spanned<String>>,
    timezone: Option<Spanned<String>>,
    theme: Option<String>,
    /// Clicks and the wheel in the console (off: the terminal keeps its own selection).
    mouse: Option<bool>,
    runbook_dir: Option<Spanned<PathBuf>>,
    runbooks: Option<runbooks::RawRunbooks>,
    keys: Option<Spanned<BTreeMap<String, BTreeMap<String, KeyList>>>>,
    /// `[[panel]]` entries replace the default dashboard.
    #[serde(default)]
    panel: Vec<Spanned<panels::RawPanel>>,
    /// `[[variable]]` entries the panels' queries use.
    #[serde(default)]
    variable: Vec<Spanned<variables::RawVariable>>,
    github: Option<github::RawGithub>,
    export: Option<RawExport>,
    share: Option<RawShare>,
}

/// `[share]`: the engine's URL and files (never a secret in the text).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShare {
    url: Spanned<String>,
    ca_file: Option<PathBuf>,
    creds_file: Option<PathBuf>,
    nkey_file: Option<PathBuf>,
    replicas: Option<Spanned<usize>>,
}

impl RawShare {
    fn validate(self) -> Result<ShareConfig, (std::ops::Range<usize>, String)> {
        let url = check_nats_url(self.url.get_ref())
            .map_err(|e| (self.url.span(), format!("[share] url: {e}")))?;
        let mut replicas = 1;
        if let Some(r) = self.replicas {
            if !(1..=5).contains(r.get_ref()) {
                return Err((r.span(), "[share] replicas: expected 1 to 5".into()));
            }
            replicas = r.into_inner();
        }
        let home = |p: Option<PathBuf>| p.map(github::expand_home);
        Ok(ShareConfig {
            url,
            ca_file: home(self.ca_file),
            creds_file: home(self.creds_file),
            nkey_file: home(self.nkey_file),
            replicas,
        })
    }
}

/// `[export]`: how postmortem drafts are checked.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExport {
    gap_limit: Option<Spanned<String>>,
    #[serde(default)]
    public_names: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPrometheus {
    url: Option<Spanned<String>>,
    timeout: Option<Spanned<String>>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    auth: Option<Spanned<RawAuth>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAlertmanager {
    url: Spanned<String>,
    headers: Option<BTreeMap<String, String>>,
    silence_ceiling: Option<Spanned<String>>,
}

/// `[SECTION] headers`, each a valid HTTP header.
fn check_headers(
    section: &str,
    headers: BTreeMap<String, String>,
) -> Result<Vec<(String, String)>, String> {
    headers
        .into_iter()
        .map(|(name, value)| {
            if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err()
                || reqwest::header::HeaderValue::from_str(&value).is_err()
            {
                return Err(format!(
                    "[{section}.headers]: \"{name}\" is not a valid HTTP header"
                ));
            }
            Ok((name, value))
        })
        .collect()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "lowercase")]
enum RawAuth {
    Basic {
        username: String,
        password_env: Option<String>,
        password_file: Option<PathBuf>,
    },
    Bearer {
        token_env: Option<String>,
        token_file: Option<PathBuf>,
    },
}

/// Why the configuration could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file \"{path}\": {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(Diagnostic),
}

impl Config {
    /// The same config showing `panels` (the demo and the tests ask for the simulator's).
    pub fn with_panels(mut self, panels: Vec<PanelConfig>) -> Self {
        self.panels = panels;
        self
    }

    /// Load from `path`; `None` means: the default file if it exists, else built-in defaults.
    pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
        let (path, must_exist) = match path {
            Some(p) => (p.to_path_buf(), true),
            None => match crate::paths::default_config_file() {
                Some(p) => (p, false),
                None => return Ok(Config::default()),
            },
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => Config::parse(&path.display().to_string(), &text).map(|mut c| {
                c.file = Some(path);
                c
            }),
            Err(e) if !must_exist && e.kind() == std::io::ErrorKind::NotFound => {
                Ok(Config::default())
            }
            Err(source) => Err(ConfigError::Read {
                path: path.display().to_string(),
                source,
            }),
        }
    }

    /// Parse and validate configuration text; `file` names it in messages.
    pub fn parse(file: &str, text: &str) -> Result<Config, ConfigError> {
        let err = |span: std::ops::Range<usize>, msg: String| {
            ConfigError::Invalid(Diagnostic::at(file, text, Some(span), msg))
        };
        let raw: RawConfig = toml::from_str(text)
            .map_err(|e| ConfigError::Invalid(Diagnostic::from_toml(file, text, &e)))?;
        let mut cfg = Config::default();
        if let Some(p) = raw.prometheus {
            if let Some(url) = p.url {
                cfg.prometheus.url = Some(check_url(&url).map_err(|m| err(url.span(), m))?);
            }
            if let Some(t) = p.timeout {
                cfg.prometheus.timeout =
                    parse_duration(&t, "timeout", 1..=300).map_err(|m| err(t.span(), m))?;
            }
            cfg.prometheus.headers =
                check_headers("prometheus", p.headers).map_err(|m| err(0..0, m))?;
            if let Some(auth) = p.auth {
                let span = auth.span();
                cfg.prometheus.auth = auth_config(auth.into_inner()).map_err(|m| err(span, m))?;
            }
        }
        if let Some(a) = raw.alerts {
            cfg.alerts = a.validate().map_err(|(span, m)| err(span, m))?;
        }
        if let Some(am) = raw.alertmanager {
            cfg.alertmanager = Some(check_url(&am.url).map_err(|m| err(am.url.span(), m))?);
            if let Some(h) = am.headers {
                cfg.alerts.alertmanager_headers =
                    Some(check_headers("alertmanager", h).map_err(|m| err(0..0, m))?);
            }
            if let Some(c) = am.silence_ceiling {
                cfg.alerts.silence_ceiling =
                    parse_duration(&c, "[alertmanager] silence_ceiling", 60..=30 * 86_400)
                        .map_err(|m| err(c.span(), m))?;
            }
        }
        if let Some(r) = raw.refresh {
            cfg.refresh = parse_duration(&r, "refresh", 1..=3600).map_err(|m| err(r.span(), m))?;
        }
        if let Some(r) = raw.range {
            cfg.range = parse_duration(&r, "range", 300..=86_400).map_err(|m| err(r.span(), m))?;
        }
        if let Some(tz) = raw.timezone {
            cfg.timezone = tz.get_ref().parse().map_err(|_| {
                err(
                    tz.span(),
                    format!(
                        "unknown timezone \"{}\": expected an IANA name such as \"Europe/London\" or \"UTC\"",
                        tz.get_ref()
                    ),
                )
            })?;
        }
        if let Some(t) = raw.theme {
            cfg.theme = t;
        }
        cfg.mouse = raw.mouse.unwrap_or(false);
        if let Some(export) = raw.export {
            if let Some(g) = export.gap_limit {
                cfg.gap_limit = parse_duration(&g, "[export] gap_limit", 60..=7 * 86_400)
                    .map_err(|m| err(g.span(), m))?;
            }
            cfg.public_names = export.public_names;
        }
        if let Some(r) = raw.runbooks {
            let r = r
                .validate(raw.runbook_dir.as_ref())
                .map_err(|(span, m)| err(span, m))?;
            cfg.runbook_dir = r.dir;
            cfg.runbook_vars = r.vars;
        }
        if let Some(d) = raw.runbook_dir {
            cfg.runbook_dir = Some(d.into_inner());
        }
        if let Some(keys) = raw.keys {
            let span = keys.span();
            let plain = keys
                .into_inner()
                .into_iter()
                .map(|(mode, actions)| {
                    let actions = actions
                        .into_iter()
                        .map(|(a, k)| (a, k.keys().into_iter().map(String::from).collect()))
                        .collect();
                    (mode, actions)
                })
                .collect();
            cfg.keys = KeyOverrides {
                modes: plain,
                place: Some(Diagnostic::at(file, text, Some(span), String::new())),
            };
        }
        let mut spans = Vec::new();
        for v in raw.variable {
            let span = v.span();
            spans.push(span.clone());
            let v = v
                .into_inner()
                .validate()
                .map_err(|m| err(span.clone(), m))?;
            if cfg.variables.iter().any(|w| w.name == v.name) {
                return Err(err(
                    span,
                    format!("a second [[variable]] named ${}", v.name),
                ));
            }
            cfg.variables.push(v);
        }
        for (v, span) in cfg.variables.iter().zip(spans) {
            let query = v.query.as_deref().unwrap_or("");
            if let Some(n) = variables::undeclared(query, &cfg.variables) {
                return Err(err(
                    span,
                    format!(
                        "variable ${}'s query uses ${n}, which no [[variable]] declares",
                        v.name
                    ),
                ));
            }
        }
        for p in raw.panel {
            let span = p.span();
            let p = p
                .into_inner()
                .validate()
                .map_err(|m| err(span.clone(), m))?;
            if let Some(n) = variables::undeclared(&p.query, &cfg.variables) {
                return Err(err(
                    span,
                    format!(
                        "panel \"{}\" uses ${n}, which no [[variable]] declares: add one (as \
                         `warroom import grafana` writes them) or write the value in the query",
                        p.title
                    ),
                ));
            }
            cfg.panels.push(p);
        }
        if let Some(share) = raw.share {
            cfg.share = Some(share.validate().map_err(|(span, m)| err(span, m))?);
        }
        if let Some(gh) = raw.github {
            cfg.github = Some(gh.validate().map_err(|(span, m)| err(span, m))?);
        }
        Ok(cfg)
    }
}

fn check_url(url: &Spanned<String>) -> Result<String, String> {
    match url::Url::parse(url.get_ref()) {
        Ok(u) if u.scheme() == "http" || u.scheme() == "https" => {
            Ok(url.get_ref().trim_end_matches('/').to_string())
        }
        _ => Err(format!(
            "\"{}\" is not an http(s) URL: expected something like \"http://127.0.0.1:9090\"",
            url.get_ref()
        )),
    }
}

fn parse_duration(
    s: &Spanned<String>,
    what: &str,
    secs: std::ops::RangeInclusive<u64>,
) -> Result<Duration, String> {
    let d = humantime::parse_duration(s.get_ref()).map_err(|e| {
        format!(
            "{what} \"{}\" is not a duration ({e}): expected e.g. \"5s\", \"1m\", \"1h\"",
            s.get_ref()
        )
    })?;
    if d < Duration::from_secs(*secs.start()) || d > Duration::from_secs(*secs.end()) {
        return Err(format!(
            "{what} \"{}\" is out of range: expected between {} and {}",
            s.get_ref(),
            humantime::format_duration(Duration::from_secs(*secs.start())),
            humantime::format_duration(Duration::from_secs(*secs.end()))
        ));
    }
    Ok(d)
}

fn secret_ref(env: Option<String>, file: Option<PathBuf>, what: &str) -> Result<SecretRef, String> {
    match (env, file) {
        (Some(e), None) => Ok(SecretRef::Env(e)),
        (None, Some(f)) => Ok(SecretRef::File(f)),
        _ => Err(format!(
            "auth needs exactly one of {what}_env (an environment variable) or {what}_file (an owner-only file); secrets are never written in the config"
        )),
    }
}

fn auth_config(raw: RawAuth) -> Result<AuthConfig, String> {
    Ok(match raw {
        RawAuth::Basic {
            username,
            password_env,
            password_file,
        } => AuthConfig::Basic {
            username,
            password: secret_ref(password_env, password_file, "password")?,
        },
        RawAuth::Bearer {
            token_env,
            token_file,
        } => AuthConfig::Bearer {
            token: secret_ref(token_env, token_file, "token")?,
        },
    })
}

#[cfg(test)]
mod tests;
