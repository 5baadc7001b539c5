//! The console's export (`E`): the panel snapshots over the incident so far are taken from the
//! console's own source and written beside the journal, then the postmortem draft is exported
//! exactly as `warroom export ID` would, all off the UI loop.

use crate::config::PanelConfig;
use crate::incident::snapshot;
use crate::incident::{IncidentId, Store};
use crate::metrics::Source;
use crate::postmortem::{self, ExportOptions, Format};
use std::sync::Arc;

/// What the console needs to export its incident.
#[derive(Debug, Clone)]
pub struct ExportSetup {
    pub store: Store,
    pub id: IncidentId,
    pub panels: Vec<PanelConfig>,
    pub timezone: chrono_tz::Tz,
    /// The finest step of the snapshots, in seconds (the refresh interval).
    pub step_s: f64,
}

/// Take the snapshots and export; `Ok((path of the draft, lint findings))`.
pub async fn run(setup: ExportSetup, source: Arc<dyn Source>) -> Result<(String, usize), String> {
    let (store, id) = (setup.store.clone(), setup.id.clone());
    let records = tokio::task::spawn_blocking(move || store.read(&id))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?
        .records;
    if let Some(window) = postmortem::snapshot_window(&records, setup.step_s) {
        let snaps = snapshot::capture(source.as_ref(), &setup.panels, window).await;
        // Snapshots holding only errors would replace good ones taken earlier: keep those.
        if snaps.iter().any(|s| s.error.is_none()) {
            let dir = setup.store.snapshots_dir(&setup.id);
            tokio::task::spawn_blocking(move || snapshot::write_all(&dir, &snaps))
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?;
        }
    }
    let report = tokio::task::spawn_blocking(move || {
        let opts = ExportOptions::new(Format::Markdown, setup.timezone);
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
    Ok((path, report.lint.len()))
}
