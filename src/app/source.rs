//! Build the metrics source the config asks for.

use crate::config::Config;
use crate::metrics::Source;
use std::sync::Arc;

/// The Prometheus source for `config`, or a clear error when no URL is known.
pub fn from_config(config: &Config) -> color_eyre::Result<Arc<dyn Source>> {
    let Some(url) = &config.prometheus.url else {
        color_eyre::eyre::bail!(
            "no Prometheus URL: pass --prometheus http://HOST:9090 or set [prometheus] url in warroom.toml"
        );
    };
    color_eyre::eyre::bail!("the Prometheus client is not part of this build yet ({url})")
}
