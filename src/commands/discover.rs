//! `warroom discover [--prometheus URL] [--toml]`: which exporters the Prometheus holds, and
//! for every signal its query, how many series it has and its value now; `--toml` writes the
//! `[[panel]]` entries for the user to edit (they load back as a config).

use super::Context;
use crate::cli::DiscoverArgs;
use crate::metrics::discover::{DiscoverOptions, Report, discover, read_values};
use std::process::ExitCode;

/// Run `warroom discover`.
pub async fn run(ctx: &Context, args: DiscoverArgs) -> color_eyre::Result<ExitCode> {
    let config = ctx.config()?;
    let client = crate::metrics::from_config::client(config)?;
    let url = config.prometheus.url.clone().unwrap_or_default();
    let (presets, warning) = crate::metrics::from_config::presets();
    if let Some(w) = warning {
        eprintln!("warning: your presets are not used: {w}");
    }
    let now = chrono::Utc::now().timestamp_millis() as f64 / 1000.0;
    let found = discover(&client, &presets, &DiscoverOptions::default(), now).await?;
    if args.toml {
        print!("{}", found.to_toml(&url));
        eprintln!("warroom discover: {}", found.status_line());
        return Ok(ExitCode::SUCCESS);
    }
    let readings = read_values(client.as_ref(), &found, None).await;
    print!("{}", Report::new(&url, found, readings));
    Ok(ExitCode::SUCCESS)
}
