//! The one way to assemble an [`Executor`]: every front end (the console, `warroom runbook
//! run`, a game day's plays, a plan's dry probe) starts from [`executor`] and replaces only
//! what it plugs in (its sink, intents, operator and control), so a new executor field or a
//! new default reaches all of them at once.

use super::executor::{Control, Executor};
use super::model::{Runbook, StepKind};
use super::operator::AssumeYes;
use super::report::{MemoryIntents, MemorySink};
use super::{http, vars};
use crate::clock::SharedClock;
use crate::metrics::Source;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The longest a plan waits for one batch step's targets (a hung Prometheus must not hold the
/// plan, or the console's runbook pane, forever).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why an executor could not be assembled.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("cannot build the HTTP client for the runbook's requests: {0}")]
    Http(#[from] reqwest::Error),
}

/// An executor for `rb` with its resolved variables: the shared HTTP sender with the run's
/// retry budget, an in-memory sink and intent store, every step confirmed, never paused, and a
/// dry run. A real run sets `dry_run = false` and plugs in its own sink, intents, operator and
/// control.
pub fn executor(
    rb: &Runbook,
    vars: vars::Resolved,
    source: Option<Arc<dyn Source>>,
    run_id: &str,
    clock: SharedClock,
) -> Result<Executor, LaunchError> {
    Ok(Executor {
        runbook: rb.clone(),
        vars,
        source,
        sender: http::Sender::new(crate::backoff::Backoff::default(), http::run_retry_budget())?,
        sink: Arc::new(MemorySink::default()),
        intents: Arc::new(MemoryIntents::default()),
        operator: Arc::new(AssumeYes),
        control: watch::channel(Control::Run).1,
        clock,
        run_id: run_id.to_string(),
        dry_run: true,
    })
}

/// The targets of every batch step as they are now, for the plan: asked of the source without
/// changing anything, each within [`PROBE_TIMEOUT`]. A step whose targets cannot be had is
/// left out (the plan then shows its query instead).
pub async fn probe_targets(probe: &Executor) -> BTreeMap<String, Vec<String>> {
    let mut targets = BTreeMap::new();
    for s in &probe.runbook.steps {
        if let StepKind::Batch(b) = &s.kind
            && let Ok(Ok(t)) = tokio::time::timeout(PROBE_TIMEOUT, probe.resolve_targets(b)).await
        {
            targets.insert(s.id.clone(), t);
        }
    }
    targets
}
