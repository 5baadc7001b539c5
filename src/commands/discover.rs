//! `warroom discover [--prometheus URL] [--toml]`: which exporters the Prometheus holds, and
//! for every signal its query, how many series it has and its value now; `--toml` writes the
//! `[[panel]]` entries for the user to edit (they load back as a config).

use super::Context;
use crate::cli::DiscoverArgs;
use crate::config::Config;
use crate::metrics::discover::{DiscoverOptions, Discovery, Report, discover, read_values};
use crate::metrics::prometheus::PrometheusClient;
use std::process::ExitCode;
use std::sync::Arc;

/// Run `warroom discover`.
pub async fn run(ctx: &Context, args: DiscoverArgs) -> color_eyre::Result<ExitCode> {
    let config = ctx.config()?;
    let (client, found) = discovered(config).await?;
    let url = config.prometheus.url.clone().unwrap_or_default();
    if args.toml {
        print!("{}", found.to_toml(&url));
        eprintln!("warroom discover: {}", found.status_line());
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", report(config, client, found).await);
    Ok(ExitCode::SUCCESS)
}

/// What discovery finds on `config`'s Prometheus, with the client that asked (a warning on
/// stderr when the user's presets are not used).
pub async fn discovered(config: &Config) -> color_eyre::Result<(Arc<PrometheusClient>, Discovery)> {
    let client = crate::metrics::from_config::client(config)?;
    let (presets, warning) = crate::metrics::from_config::presets();
    if let Some(w) = warning {
        eprintln!("warning: your presets are not used: {w}");
    }
    let now = chrono::Utc::now().timestamp_millis() as f64 / 1000.0;
    let found = discover(&client, &presets, &DiscoverOptions::default(), now).await?;
    Ok((client, found))
}

/// The report `warroom discover` prints: every signal found with its value now.
pub async fn report(config: &Config, client: Arc<PrometheusClient>, found: Discovery) -> Report {
    let url = config.prometheus.url.clone().unwrap_or_default();
    let readings = read_values(client.as_ref(), &found, None).await;
    Report::new(&url, found, readings)
}
