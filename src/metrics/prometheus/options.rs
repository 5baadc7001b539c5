//! How to reach a Prometheus: URL with its path prefix, auth, extra headers, deadline; checked
//! before anything is sent.

use crate::sanitize;
use crate::secret::Secret;
use std::fmt;
use std::time::Duration;
use url::Url;

/// The default deadline of one request.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How to authenticate.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Auth {
    #[default]
    None,
    Basic {
        user: String,
        password: Secret,
    },
    Bearer(Secret),
}

impl Auth {
    /// `req` with these credentials.
    pub fn apply(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self {
            Auth::None => req,
            Auth::Basic { user, password } => req.basic_auth(user, Some(password.expose())),
            Auth::Bearer(token) => req.bearer_auth(token.expose()),
        }
    }
}

/// Where the server is and how to talk to it. `Debug` shows header names, never their values.
#[derive(Clone)]
pub struct ClientOptions {
    /// `http(s)://host:port` with an optional path prefix (`http://host/prom`).
    pub base_url: String,
    pub auth: Auth,
    /// Extra headers sent with every request, e.g. `X-Scope-OrgID` for Mimir and Cortex.
    pub headers: Vec<(String, String)>,
    /// The deadline of one request, from asking for a slot to the last byte of the body.
    pub timeout: Duration,
    /// Send queries as POST forms (long PromQL fits); false sends GET with a query string, for
    /// proxies that refuse POST.
    pub post: bool,
}

impl fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("ClientOptions")
            .field("base_url", &self.base_url)
            .field("auth", &self.auth)
            .field("headers", &names)
            .field("timeout", &self.timeout)
            .field("post", &self.post)
            .finish()
    }
}

impl ClientOptions {
    /// Options for `base_url` with no auth, no extra headers, a 10 s deadline and POST queries.
    pub fn new(base_url: impl Into<String>) -> Self {
        ClientOptions {
            base_url: base_url.into(),
            auth: Auth::None,
            headers: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            post: true,
        }
    }
}

/// Why a client could not be built from its options (a configuration mistake).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClientError {
    #[error("Prometheus URL \"{url}\" is not valid: {reason}")]
    BadUrl { url: String, reason: String },
    #[error(
        "Prometheus URL \"{url}\" contains a user name or password; put credentials in the auth \
         settings (password or token from the environment or an owner-only file) instead"
    )]
    CredentialsInUrl { url: String },
    #[error("header \"{name}\" is not a valid HTTP header: {reason}")]
    BadHeader { name: String, reason: String },
    #[error("the request timeout must be more than zero")]
    ZeroTimeout,
}

/// Parse and check the base URL; make sure it ends with `/` so endpoints join under its prefix.
pub(super) fn base_url(raw: &str) -> Result<Url, ClientError> {
    let shown = sanitize::line(raw).into_owned();
    let mut url = Url::parse(raw.trim()).map_err(|e| ClientError::BadUrl {
        url: shown.clone(),
        reason: e.to_string(),
    })?;
    if !url.username().is_empty() || url.password().is_some() {
        // Do not echo the password back.
        let _ = url.set_password(None);
        return Err(ClientError::CredentialsInUrl {
            url: url.to_string(),
        });
    }
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ClientError::BadUrl {
            url: shown,
            reason: "the scheme must be http or https".into(),
        });
    }
    url.set_query(None);
    url.set_fragment(None);
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_keep_their_prefix_and_refuse_credentials() {
        assert_eq!(
            base_url("http://h:9090").unwrap().as_str(),
            "http://h:9090/"
        );
        let b = base_url("https://h/prom?x=1").unwrap();
        assert_eq!(
            b.join("api/v1/query").unwrap().as_str(),
            "https://h/prom/api/v1/query"
        );
        let e = base_url("http://u:hunter2@h/").unwrap_err();
        assert!(matches!(e, ClientError::CredentialsInUrl { .. }));
        assert!(!e.to_string().contains("hunter2"), "{e}");
        assert!(matches!(
            base_url("ftp://h/"),
            Err(ClientError::BadUrl { .. })
        ));
        assert!(matches!(
            base_url("not a url"),
            Err(ClientError::BadUrl { .. })
        ));
    }
}
