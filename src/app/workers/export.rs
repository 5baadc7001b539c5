//! The console's export (`E`): the panel snapshots over the incident so far are taken from the
//! console's own source and written beside the journal, then the postmortem draft is exported
//! exactly as `warroom export ID` would, all off the UI loop.

use crate::config::PanelConfig;
use crate::incident::{IncidentId, Store};
use crate::metrics::Source;
use crate::postmortem::{self, ExportOptions, Format};
use std::sync::Arc;

/// What the console needs to export its incident.
#[derive(Debug, Clone)]
pub struct ExportSetup {
    pub store: Store,
    pub id: IncidentId,
    pub timezone: chrono_tz::Tz,
    /// The finest step of the snapshots, in seconds (the refresh interval).
    pub step_s: f64,
    /// The longest quiet stretch of the timeline the lint accepts.
    pub gap_limit: std::time::Duration,
    /// `[export.public_names]`, for the status page.
    pub public_names: std::collections::BTreeMap<String, String>,
}

/// Take the snapshots of `panels` (the dashboard on screen) and export; `Ok((path of the
/// draft, lint findings in words))`.
pub async fn run(
    setup: ExportSetup,
    panels: Vec<PanelConfig>,
    source: Arc<dyn Source>,
) -> Result<(String, Vec<String>), String> {
    // A failed capture still exports: the lint says which facts are missing.
    let taken = postmortem::take_snapshots(
        &setup.store,
        &setup.id,
        source.as_ref(),
        &panels,
        setup.step_s,
    )
    .await;
    if let Err(e) = &taken {
        tracing::warn!(error = %e, "export: snapshots not taken");
    }
    let report = tokio::task::spawn_blocking(move || {
        let mut opts = ExportOptions::new(Format::Markdown, setup.timezone);
        opts.gap_limit =
            chrono::Duration::from_std(setup.gap_limit).unwrap_or(postmortem::DEFAULT_GAP_LIMIT);
        opts.public_names = setup.public_names;
        postmortem::export(&setup.store, &setup.id, &opts)
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| e.to_string())?;
    let path = report
        .written
        .first()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let findings = (report.lint.iter())
        .map(|f| crate::sanitize::line(&f.to_string()).into_owned())
        .collect();
    Ok((path, findings))
}
