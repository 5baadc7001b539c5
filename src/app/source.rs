//! Build the metrics source the config asks for.

use crate::config::{AuthConfig, Config, SecretRef};
use crate::metrics::Source;
use crate::metrics::prometheus::{Auth, ClientOptions, PrometheusClient};
use crate::secret::{Secret, SecretError};
use std::sync::Arc;

fn secret(r: &SecretRef) -> Result<Secret, SecretError> {
    match r {
        SecretRef::Env(var) => Secret::from_env(var),
        SecretRef::File(path) => Secret::from_file(path),
    }
}

/// The client options for `config`: URL, auth with its secret loaded, headers, deadline.
pub fn client_options(config: &Config) -> color_eyre::Result<ClientOptions> {
    let Some(url) = &config.prometheus.url else {
        color_eyre::eyre::bail!(
            "no Prometheus URL: pass --prometheus http://HOST:9090 or set [prometheus] url in warroom.toml"
        );
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
pub fn from_config(config: &Config) -> color_eyre::Result<Arc<dyn Source>> {
    Ok(Arc::new(PrometheusClient::new(client_options(config)?)?))
}
