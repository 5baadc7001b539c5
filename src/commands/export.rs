//! `warroom export ID [--format markdown|status|json] [--out DIR] [--template FILE]
//! [--prometheus URL]`: takes the panel snapshots first if the incident has none and a
//! Prometheus is known, then writes the export and prints the files and the lint.

use super::Context;
use crate::cli::{ExportArgs, ExportFormat, TimelineMode};
use crate::postmortem::{ExportOptions, Format, capture_missing, export};
use std::process::ExitCode;

/// Run `warroom export`.
pub async fn run(ctx: &Context, args: ExportArgs) -> color_eyre::Result<ExitCode> {
    // `--prometheus` is already in the config (the context applied it).
    let config = ctx.config()?;
    let store = ctx.store.clone();
    let id = store.find(&args.id)?;
    if config.prometheus.url.is_some() {
        // A backend that cannot answer must not stop the draft: it is written without the
        // figures, and the lint says which are missing.
        let captured = match crate::metrics::from_config::client(config) {
            Ok(client) => match panels(config, &client, &store, &id).await {
                Ok(panels) => capture_missing(&store, &id, client.as_ref(), &panels)
                    .await
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e),
            },
            Err(e) => Err(e.to_string()),
        };
        match captured {
            Ok(0) => {}
            Ok(n) => eprintln!("warroom export: captured {n} panel snapshot(s)"),
            Err(e) => eprintln!(
                "warroom export: could not capture panel snapshots: {}",
                crate::sanitize::line(&e)
            ),
        }
    }
    let format = match args.format {
        ExportFormat::Markdown => Format::Markdown,
        ExportFormat::Status => Format::Status,
        ExportFormat::Json => Format::Json,
    };
    let mut opts = options(config, format, args.gap_limit).await;
    opts.out = args.out;
    opts.template = args.template;
    opts.timeline = match args.timeline {
        TimelineMode::Folded => crate::postmortem::timeline::Mode::Folded,
        TimelineMode::Full => crate::postmortem::timeline::Mode::Full,
    };
    let report = tokio::task::spawn_blocking(move || export(&store, &id, &opts)).await??;
    for path in &report.written {
        println!("wrote {}", path.display());
    }
    if report.lint.is_empty() {
        println!("lint: nothing to do");
    } else {
        println!("lint: {} finding(s)", report.lint.len());
        for f in &report.lint {
            println!("  {}", crate::sanitize::line(&f.to_string()));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// How `config` exports in `format`: its timezone, public names and gap limit (`gap_limit`
/// over the config's), and the alerting rules, so Detection can name the signals no rule
/// watches (a Prometheus that cannot say leaves that sentence out).
pub async fn options(
    config: &crate::config::Config,
    format: Format,
    gap_limit: Option<std::time::Duration>,
) -> ExportOptions {
    let mut opts = ExportOptions::new(format, config.timezone);
    opts.public_names = config.public_names.clone();
    opts.gap_limit = chrono::Duration::from_std(gap_limit.unwrap_or(config.gap_limit))
        .unwrap_or(crate::postmortem::DEFAULT_GAP_LIMIT);
    if config.prometheus.url.is_some()
        && let Ok(client) = crate::metrics::from_config::client(config)
    {
        match tokio::time::timeout(std::time::Duration::from_secs(10), client.alerting_rules())
            .await
        {
            Ok(Ok(body)) => opts.alert_rules = Some(crate::postmortem::rules::from_api(&body)),
            Ok(Err(e)) => eprintln!(
                "warroom export: the alerting rules could not be read: {}",
                crate::sanitize::line(&e.to_string())
            ),
            Err(_) => eprintln!("warroom export: the alerting rules did not come within 10s"),
        }
    }
    opts
}

/// The panels to capture: the config's `[[panel]]`, or, when it has none and the incident has
/// no snapshots yet, what discovery finds on the Prometheus (one discovery, bounded).
async fn panels(
    config: &crate::config::Config,
    client: &crate::metrics::prometheus::PrometheusClient,
    store: &crate::incident::Store,
    id: &crate::incident::IncidentId,
) -> Result<Vec<crate::config::PanelConfig>, String> {
    let have =
        crate::incident::snapshot::read_all(&store.snapshots_dir(id)).map_err(|e| e.to_string())?;
    if !config.panels.is_empty() || !have.is_empty() {
        // `[[variable]]`s filled in as the console fills them; a panel without a value is
        // not captured rather than sent with `$name` in it.
        let vars = &config.variables;
        let filled = crate::config::variables::fill_panels(config.panels.clone(), vars, client);
        let filled = filled.await;
        for (title, why) in &filled.refused {
            eprintln!(
                "warroom export: panel \"{}\" is not captured: {}",
                crate::sanitize::line(title),
                crate::sanitize::line(why)
            );
        }
        return Ok(filled.panels);
    }
    let (presets, _) = crate::metrics::from_config::presets();
    let now = chrono::Utc::now().timestamp_millis() as f64 / 1000.0;
    let opts = crate::metrics::discover::DiscoverOptions::default();
    let d = crate::metrics::discover::discover(client, &presets, &opts, now)
        .await
        .map_err(|e| format!("discovery failed: {e}"))?;
    eprintln!("warroom export: {}", d.status_line());
    Ok(d.dashboard.panel_configs())
}
