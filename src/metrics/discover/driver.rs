//! The async side of discovery: one request for the metric names (a second, without `match[]`,
//! only if the server refuses the selector), then at most one label-names request per detected
//! stack that has something to choose, all under one deadline and byte bounds.

use super::{Dashboard, Detected, Found, build, detect, names_selector};
use crate::metrics::presets::Presets;
use crate::metrics::prometheus::PrometheusClient;
use crate::metrics::source::SourceError;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// Bounds of one discovery.
#[derive(Debug, Clone, PartialEq)]
pub struct DiscoverOptions {
    /// Names and labels seen in this window before now count (an exporter that stopped within
    /// it is still found, and its panels say what they miss).
    pub lookback: Duration,
    /// The whole discovery, every request included.
    pub deadline: Duration,
    /// The largest names answer accepted (about 40 bytes a name).
    pub max_names_bytes: usize,
    /// The largest label-names answer accepted.
    pub max_labels_bytes: usize,
    /// Panels on the dashboard at most.
    pub max_panels: usize,
}

impl Default for DiscoverOptions {
    fn default() -> Self {
        DiscoverOptions {
            lookback: Duration::from_secs(3600),
            deadline: Duration::from_secs(15),
            max_names_bytes: 8 * 1024 * 1024,
            max_labels_bytes: 256 * 1024,
            max_panels: super::MAX_PANELS,
        }
    }
}

/// What discovery found, and what it cost.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Discovery {
    pub dashboard: Dashboard,
    /// Every stack found, with all its signals (the dashboard may show fewer).
    pub found: Vec<Found>,
    /// Metric names the server listed.
    pub names_listed: usize,
    /// Whether the names had to be listed without `match[]` (the server refused it).
    pub without_match: bool,
    /// Requests sent and bytes received.
    pub requests: usize,
    pub bytes: usize,
    /// Server warnings, and probes that failed (their stacks use default groups).
    pub warnings: Vec<String>,
}

impl Discovery {
    /// One line for the status bar: `found postgres_exporter, HAProxy` or why nothing shows.
    pub fn status_line(&self) -> String {
        if self.dashboard.is_empty() {
            format!(
                "no known exporter among {} metric names · warroom discover",
                self.names_listed
            )
        } else {
            format!("found {}", self.dashboard.summary())
        }
    }

    /// `[[panel]]` entries for every signal found (not only those the dashboard shows), for
    /// `warroom discover --toml`; `source` names the server in the header comment.
    pub fn to_toml(&self, source: &str) -> String {
        build(&self.found, usize::MAX).to_toml(source)
    }
}

/// Why discovery gave no answer. The console shows the message and tries again later.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DiscoverError {
    #[error(
        "cannot list metric names from {url}: {error}; check the URL and that it is a Prometheus API"
    )]
    Names { url: String, error: SourceError },
    #[error(
        "{url} listed more than {limit} bytes of metric names; discovery gave up (write [[panel]] entries in warroom.toml instead)"
    )]
    TooManyNames { url: String, limit: usize },
    #[error("discovery on {url} took longer than {deadline:?}")]
    TimedOut { url: String, deadline: Duration },
}

impl DiscoverError {
    /// Whether trying again later may help (for `backoff.rs`).
    pub fn is_transient(&self) -> bool {
        match self {
            DiscoverError::Names { error, .. } => error.is_transient(),
            DiscoverError::TooManyNames { .. } => false,
            DiscoverError::TimedOut { .. } => true,
        }
    }

    /// The server's requested wait, if it gave one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            DiscoverError::Names { error, .. } => error.retry_after(),
            _ => None,
        }
    }
}

/// Whether an error means the server does not take our `match[]` (as opposed to being down).
fn refuses_selector(e: &SourceError) -> bool {
    match e {
        SourceError::Api { error_type, .. } => error_type == "bad_data",
        SourceError::Http { status, .. } => matches!(status, 400 | 414 | 422),
        _ => false,
    }
}

/// Discover the stacks `client` holds at `now` (Unix seconds) and build their dashboard.
pub async fn discover(
    client: &PrometheusClient,
    presets: &Presets,
    opts: &DiscoverOptions,
    now: f64,
) -> Result<Discovery, DiscoverError> {
    let url = crate::sanitize::line(client.base_url()).into_owned();
    let within = discover_within(client, presets, opts, now, &url);
    match tokio::time::timeout(opts.deadline, within).await {
        Ok(r) => r,
        Err(_) => Err(DiscoverError::TimedOut {
            url,
            deadline: opts.deadline,
        }),
    }
}

async fn discover_within(
    client: &PrometheusClient,
    presets: &Presets,
    opts: &DiscoverOptions,
    now: f64,
    url: &str,
) -> Result<Discovery, DiscoverError> {
    let range = Some((now - opts.lookback.as_secs_f64(), now));
    let mut d = Discovery::default();
    let started = Instant::now();
    let selector = vec![names_selector(presets)];
    d.requests += 1;
    let first = client
        .label_values("__name__", &selector, range, None, opts.max_names_bytes)
        .await;
    let names = match first {
        Ok(l) => l,
        Err(e) if refuses_selector(&e) => {
            d.requests += 1;
            d.without_match = true;
            d.warnings.push(format!(
                "the server refused the names selector ({e}); listed all names instead"
            ));
            client
                .label_values("__name__", &[], range, None, opts.max_names_bytes)
                .await
                .map_err(|error| names_error(url, error, opts))?
        }
        Err(error) => return Err(names_error(url, error, opts)),
    };
    d.bytes += names.bytes;
    d.names_listed = names.values.len();
    d.warnings.extend(names.warnings);
    let detected = detect(presets, &names.values);
    let probes: Vec<(usize, Vec<String>)> = detected
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.probe().map(|p| (i, p)))
        .collect();
    let answers = futures::future::join_all(probes.iter().map(|(_, selectors)| {
        client.label_names(selectors, range, Some(1000), opts.max_labels_bytes)
    }))
    .await;
    let mut labels: Vec<Option<BTreeSet<String>>> = vec![None; detected.len()];
    for ((i, _), answer) in probes.iter().zip(answers) {
        d.requests += 1;
        match answer {
            Ok(l) => {
                d.bytes += l.bytes;
                d.warnings.extend(l.warnings);
                labels[*i] = Some(l.values.into_iter().collect());
            }
            Err(e) => d.warnings.push(format!(
                "label names for {} failed ({e}); its panels use their first grouping label",
                detected[*i].stack.name
            )),
        }
    }
    d.found = detected
        .iter()
        .zip(&labels)
        .map(|(s, l): (&Detected, _)| s.resolve(l.as_ref()))
        .filter(|f| !f.signals.is_empty())
        .collect();
    d.dashboard = build(&d.found, opts.max_panels);
    tracing::debug!(
        requests = d.requests,
        bytes = d.bytes,
        elapsed_ms = started.elapsed().as_millis() as u64,
        found = %d.dashboard.summary(),
        "discovery"
    );
    Ok(d)
}

fn names_error(url: &str, error: SourceError, opts: &DiscoverOptions) -> DiscoverError {
    match error {
        SourceError::TooLarge(_) => DiscoverError::TooManyNames {
            url: url.to_string(),
            limit: opts.max_names_bytes,
        },
        error => DiscoverError::Names {
            url: url.to_string(),
            error,
        },
    }
}
