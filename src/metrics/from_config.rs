//! The metrics source the config asks for: the Prometheus client with the config's URL, auth
//! (its secret loaded), extra headers and deadline. Every command and the console build their
//! source here, so panels, gates, the recorder, alerts and export all talk to Prometheus
//! through the same client and the same limits.

use crate::config::{AuthConfig, Config, SecretRef};
use crate::metrics::Source;
use crate::metrics::prometheus::{Auth, ClientError, ClientOptions, PrometheusClient};
use crate::secret::{Secret, SecretError};
use std::sync::Arc;

/// Why no source could be built from the config.
#[derive(Debug, thiserror::Error)]
pub enum SourceConfigError {
    #[error(
        "no Prometheus URL: pass --prometheus http://HOST:9090 or set [prometheus] url in warroom.toml"
    )]
    NoUrl,
    #[error("the Prometheus credentials cannot be read: {0}")]
    Secret(#[from] SecretError),
    #[error("the Prometheus client cannot be built: {0}")]
    Client(#[from] ClientError),
}

fn secret(r: &SecretRef) -> Result<Secret, SecretError> {
    match r {
        SecretRef::Env(var) => Secret::from_env(var),
        SecretRef::File(path) => Secret::from_file(path),
    }
}

/// The client options for `config`: URL, auth with its secret loaded, headers, deadline.
pub fn client_options(config: &Config) -> Result<ClientOptions, SourceConfigError> {
    let Some(url) = &config.prometheus.url else {
        return Err(SourceConfigError::NoUrl);
    };
    let mut opts = ClientOptions::new(url.clone());
    opts.timeout = config.prometheus.timeout;
    opts.headers = config.prometheus.headers.clone();
    opts.auth = match &config.prometheus.auth {
        AuthConfig::None => Auth::None,
        AuthConfig::Basic { username, password } => Auth::Basic {
            user: username.clone(),
            password: secret(password)?,
        },
        AuthConfig::Bearer { token } => Auth::Bearer(secret(token)?),
    };
    Ok(opts)
}

/// The Prometheus source for `config`, or a clear error when no URL is known or a secret
/// cannot be read.
pub fn from_config(config: &Config) -> Result<Arc<dyn Source>, SourceConfigError> {
    Ok(client(config)?)
}

/// The Prometheus client itself (discovery needs its label endpoints, which a `Source` does
/// not have); share it as the source too, so both go through one set of limits.
pub fn client(config: &Config) -> Result<Arc<PrometheusClient>, SourceConfigError> {
    Ok(Arc::new(PrometheusClient::new(client_options(config)?)?))
}

/// The presets discovery uses: the built-in ones, and any of the user's in the XDG config
/// dir's `warroom/presets/` (a file of the same stack replaces the built-in one). A broken
/// user file is said, and the built-in presets are used.
pub fn presets() -> (crate::metrics::presets::Presets, Option<String>) {
    use crate::metrics::presets::Presets;
    match crate::paths::default_presets_dir().filter(|d| d.is_dir()) {
        Some(dir) => match Presets::with_dir(&dir) {
            Ok(p) => (p, None),
            Err(e) => (Presets::builtin().clone(), Some(e.to_string())),
        },
        None => (Presets::builtin().clone(), None),
    }
}

/// The source for `config` when it names a Prometheus, `None` when it names none.
pub fn optional(config: &Config) -> Result<Option<Arc<dyn Source>>, SourceConfigError> {
    match config.prometheus.url {
        Some(_) => from_config(config).map(Some),
        None => Ok(None),
    }
}
