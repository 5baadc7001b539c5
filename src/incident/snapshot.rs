//! Panel snapshots: each dashboard panel's range series over the incident window, kept beside
//! the journal (`<incident dir>/snapshots/<panel-slug>.json`) so the postmortem's charts and
//! peaks, and replay, never need the metrics backend again.
//!
//! Snapshots are taken when an incident is resolved (the console and the headless recorder call
//! [`capture`] then [`write_all`]); `warroom export` can take them itself when they are missing.

use crate::config::{BadWhen, PanelConfig, Unit};
use crate::metrics::{RangeQuery, Source, SourceError};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// The range a snapshot covers: `from`..`to` every `step` seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SnapshotWindow {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub step_s: f64,
}

impl SnapshotWindow {
    /// A window over `from..to` with a step that keeps charts under about 720 points (never
    /// finer than `min_step_s`), starting on a multiple of the step (as dashboards align their
    /// range queries), so every reading falls on the same instants as the scrapes that a
    /// step of the scrape interval lines up with, and two captures of one incident agree.
    pub fn covering(from: DateTime<Utc>, to: DateTime<Utc>, min_step_s: f64) -> SnapshotWindow {
        let span = (to - from).num_milliseconds().max(0) as f64 / 1000.0;
        let step_s = (span / 720.0).ceil().max(min_step_s).max(1.0);
        let step_ms = (step_s * 1000.0) as i64;
        let aligned = from.timestamp_millis().div_euclid(step_ms) * step_ms;
        let from = DateTime::from_timestamp_millis(aligned).unwrap_or(from);
        SnapshotWindow { from, to, step_s }
    }
}

/// One series of a snapshot: its labels and `[unix seconds, value]` points. Points whose value
/// is not finite (0/0 ratios while nothing is served) are left out: JSON cannot carry them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotSeries {
    pub labels: BTreeMap<String, String>,
    pub points: Vec<[f64; 2]>,
}

/// One panel over the incident window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PanelSnapshot {
    /// The panel's place on the dashboard (snapshots are read back in this order).
    pub order: usize,
    /// The file name without `.json`, from the title.
    pub slug: String,
    pub title: String,
    pub query: String,
    /// `percent`, `seconds`, `ratio`, `count`, `bytes`, `per-second`.
    pub unit: String,
    pub warn: Option<f64>,
    pub crit: Option<f64>,
    /// `above` or `below`: which side of the thresholds is bad.
    pub bad_when: String,
    /// Legend template (`{{pod}}`), if the panel has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legend: Option<String>,
    /// The signal the panel answers, as the presets name it (`error-ratio`...), if it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    pub window: SnapshotWindow,
    pub series: Vec<SnapshotSeries>,
    /// Why the query failed, when it did (the snapshot then has no series).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl PanelSnapshot {
    /// The panel's unit (`count` if the file names one this build does not know).
    pub fn unit(&self) -> Unit {
        serde_json::from_value(serde_json::Value::String(self.unit.clone())).unwrap_or_default()
    }

    /// Whether lower values are the bad ones.
    pub fn bad_below(&self) -> bool {
        self.bad_when == "below"
    }

    /// The snapshot without its points after `end` (the end of the record: a rehearsal's data
    /// past its end are the store's echo of the last scrapes, not readings), its window cut
    /// there too. A series left with no points is dropped.
    pub fn until(&self, end: DateTime<Utc>) -> PanelSnapshot {
        let last = end.timestamp_millis() as f64 / 1000.0;
        let mut out = self.clone();
        for s in &mut out.series {
            s.points.retain(|p| p[0] <= last + 1e-6);
        }
        out.series.retain(|s| !s.points.is_empty());
        out.window.to = out.window.to.min(end).max(out.window.from);
        out
    }
}

/// The unit's name as the config file spells it.
pub fn unit_name(u: Unit) -> &'static str {
    match u {
        Unit::Percent => "percent",
        Unit::Seconds => "seconds",
        Unit::Ratio => "ratio",
        Unit::Count => "count",
        Unit::Bytes => "bytes",
        Unit::PerSecond => "per-second",
    }
}

/// A file-name-safe form of a panel title: lowercase ASCII letters and digits, runs of anything
/// else as one `-` (`Query latency p50/p99` → `query-latency-p50-p99`).
pub fn slug(title: &str) -> String {
    crate::sanitize::slug(title, "panel")
}

/// Slugs for `titles`, made unique by `-2`, `-3`, … in order.
fn unique_slugs<'a>(titles: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    titles
        .map(|t| {
            let base = slug(t);
            let n = seen.entry(base.clone()).or_insert(0);
            *n += 1;
            if *n == 1 { base } else { format!("{base}-{n}") }
        })
        .collect()
}

/// Queries every panel over `window`, one query at a time. A panel whose query fails gets a
/// snapshot that says why; once the backend has timed out or cannot be reached, the remaining
/// panels are not asked (each would wait out its own timeout on a backend that is down).
pub async fn capture(
    source: &dyn Source,
    panels: &[PanelConfig],
    window: SnapshotWindow,
) -> Vec<PanelSnapshot> {
    let slugs = unique_slugs(panels.iter().map(|p| p.title.as_str()));
    let mut out = Vec::with_capacity(panels.len());
    let mut down: Option<String> = None;
    for (order, (panel, slug)) in panels.iter().zip(slugs).enumerate() {
        let q = RangeQuery {
            query: panel.query.clone(),
            start: window.from.timestamp_millis() as f64 / 1000.0,
            end: window.to.timestamp_millis() as f64 / 1000.0,
            step: window.step_s,
        };
        let answer = match &down {
            Some(e) => Err(format!("not asked: {e}")),
            None => source.query_range(q).await.map_err(|e| {
                let text = crate::sanitize::line(&e.to_string()).into_owned();
                if matches!(e, SourceError::Timeout(_) | SourceError::Unreachable(_)) {
                    down = Some(text.clone());
                }
                text
            }),
        };
        out.push(panel_snapshot(order, slug, panel, window, answer));
    }
    out
}

/// One panel's snapshot from its answer (or why there is none).
fn panel_snapshot(
    order: usize,
    slug: String,
    panel: &PanelConfig,
    window: SnapshotWindow,
    answer: Result<crate::metrics::QueryAnswer, String>,
) -> PanelSnapshot {
    let (series, error) = match answer {
        Ok(answer) => {
            let series = answer
                .series
                .into_iter()
                .map(|s| SnapshotSeries {
                    labels: s.labels,
                    points: s
                        .points
                        .iter()
                        .filter(|p| p.v.is_finite() && p.t.is_finite())
                        .map(|p| [p.t, p.v])
                        .collect(),
                })
                .collect();
            (series, None)
        }
        Err(e) => (Vec::new(), Some(e)),
    };
    PanelSnapshot {
        order,
        slug,
        title: panel.title.clone(),
        query: panel.query.clone(),
        unit: unit_name(panel.unit).to_string(),
        warn: panel.warn,
        crit: panel.crit,
        bad_when: match panel.bad_when {
            BadWhen::Above => "above",
            BadWhen::Below => "below",
        }
        .to_string(),
        legend: panel.legend.clone(),
        signal: panel.signal.clone(),
        window,
        series,
        error,
    }
}

/// Queries every panel over `window`, a few at a time, until `deadline`: the panels that
/// answered by then, in dashboard order (a stopping recorder takes what it can in its second
/// rather than waiting out a hung backend).
pub async fn capture_until(
    source: &dyn Source,
    panels: &[PanelConfig],
    window: SnapshotWindow,
    deadline: tokio::time::Instant,
) -> Vec<PanelSnapshot> {
    use futures::StreamExt;
    let slugs = unique_slugs(panels.iter().map(|p| p.title.as_str()));
    let asks = panels
        .iter()
        .zip(slugs)
        .enumerate()
        .map(|(order, (panel, slug))| {
            let q = RangeQuery {
                query: panel.query.clone(),
                start: window.from.timestamp_millis() as f64 / 1000.0,
                end: window.to.timestamp_millis() as f64 / 1000.0,
                step: window.step_s,
            };
            async move {
                match tokio::time::timeout_at(deadline, source.query_range(q)).await {
                    Ok(Ok(answer)) => Some(panel_snapshot(order, slug, panel, window, Ok(answer))),
                    _ => None,
                }
            }
        });
    let mut out: Vec<PanelSnapshot> = futures::stream::iter(asks)
        .buffer_unordered(4)
        .filter_map(|s| async move { s })
        .collect()
        .await;
    out.sort_by_key(|s| s.order);
    out
}

/// The directory the draft's fact queries are kept in, beside the panels' snapshots
/// (`<incident dir>/fact-snapshots/`, for the snapshots directory `snapshots_dir`): they are
/// not dashboard panels, so replay and everything that lists the panels never sees them.
pub fn facts_dir(snapshots_dir: &Path) -> PathBuf {
    snapshots_dir.with_file_name("fact-snapshots")
}

/// The title of each fact query, as the draft finds it.
pub mod fact {
    /// Distinct user requests (first attempts), a counter per series.
    pub const USER_REQUESTS: &str = "User requests";
    /// Attempts answered with a 2xx, a counter per instance: one per user request served.
    pub const SERVED: &str = "Attempts served";
    /// Writes that duplicated an earlier one, a counter.
    pub const DUPLICATES: &str = "Duplicate submissions";
    /// Requests that gave up waiting for a database connection, a counter per instance.
    pub const ACQUIRE_TIMEOUTS: &str = "Connection acquire timeouts";
    /// Resident memory per instance.
    pub const MEMORY: &str = "Memory per instance";
}

/// The queries the draft needs beyond the dashboard, in the simulator's metric names
/// (DESIGN.md): raw counters (the draft takes their increase over the impact window itself,
/// counter resets included) and memory per instance (charted for a restart loop). A backend
/// without these metrics answers with no series, and the draft leaves the figures out.
pub fn fact_panels() -> Vec<PanelConfig> {
    let panel = |title: &str, query: &str, unit: Unit| PanelConfig {
        title: title.into(),
        query: query.into(),
        unit,
        warn: None,
        crit: None,
        bad_when: BadWhen::Above,
        legend: Some("{{pod}}".into()),
        signal: None,
        shape: Default::default(),
    };
    vec![
        panel(
            fact::USER_REQUESTS,
            "app_logical_requests_total",
            Unit::Count,
        ),
        panel(
            fact::SERVED,
            "sum by (service, pod) (app_requests_total{code=~\"2..\"})",
            Unit::Count,
        ),
        panel(
            fact::DUPLICATES,
            "app_duplicate_submissions_total",
            Unit::Count,
        ),
        panel(
            fact::ACQUIRE_TIMEOUTS,
            "sum by (service, pod) (db_pool_acquire_timeouts_total)",
            Unit::Count,
        ),
        panel(
            fact::MEMORY,
            "max by (pod) (process_resident_memory_bytes)",
            Unit::Bytes,
        ),
    ]
}

/// Problems reading or writing snapshots.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("cannot use snapshot \"{path}\": {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error(
        "snapshot \"{path}\" is not a panel snapshot ({reason}); delete it and capture again \
         (`warroom export ID --prometheus URL`)"
    )]
    Invalid { path: PathBuf, reason: String },
}

/// Writes each snapshot as `<dir>/<slug>.json`, each atomically (temporary file, sync, rename,
/// directory sync): a crash leaves the old snapshot or the new one, never half of one.
pub fn write_all(dir: &Path, snapshots: &[PanelSnapshot]) -> Result<Vec<PathBuf>, SnapshotError> {
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SnapshotError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let mut written = Vec::with_capacity(snapshots.len());
    for s in snapshots {
        let path = dir.join(format!("{}.json", slug(&s.slug)));
        let bytes = serde_json::to_vec_pretty(s).map_err(|e| SnapshotError::Invalid {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        super::storage::replace_file(&path, &bytes).map_err(io_err(&path))?;
        written.push(path);
    }
    Ok(written)
}

/// Reads every `*.json` snapshot in `dir`, in dashboard order. A missing directory holds none.
pub fn read_all(dir: &Path) -> Result<Vec<PanelSnapshot>, SnapshotError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(SnapshotError::Io {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(std::result::Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    paths.sort();
    let mut out = Vec::with_capacity(paths.len());
    for path in paths {
        let bytes = std::fs::read(&path).map_err(|source| SnapshotError::Io {
            path: path.clone(),
            source,
        })?;
        let mut snap: PanelSnapshot =
            serde_json::from_slice(&bytes).map_err(|e| SnapshotError::Invalid {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        // What came from the file is text from outside: sanitize it once, here.
        snap.title = crate::sanitize::line(&snap.title).into_owned();
        snap.slug = slug(&snap.slug);
        for s in &mut snap.series {
            let labels = std::mem::take(&mut s.labels);
            s.labels = labels
                .into_iter()
                .map(|(k, v)| {
                    (
                        crate::sanitize::line(&k).into_owned(),
                        crate::sanitize::line(&v).into_owned(),
                    )
                })
                .collect();
            s.points.retain(|p| p[0].is_finite() && p[1].is_finite());
        }
        out.push(snap);
    }
    out.sort_by(|a, b| a.order.cmp(&b.order).then_with(|| a.slug.cmp(&b.slug)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::embedded::EmbeddedSource;

    #[test]
    fn slugs_are_file_safe_and_unique() {
        assert_eq!(slug("Query latency p50/p99"), "query-latency-p50-p99");
        assert_eq!(slug("../../etc/passwd"), "etc-passwd");
        assert_eq!(slug("%%%"), "panel");
        assert_eq!(
            unique_slugs(["A b", "a-b", "c"].into_iter()),
            vec!["a-b", "a-b-2", "c"]
        );
    }

    #[test]
    fn a_snapshot_until_the_end_keeps_nothing_after_it() {
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let series = |labels: &[(&str, &str)], ts: &[i64]| SnapshotSeries {
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            points: ts
                .iter()
                .map(|t| [(1_800_000_000 + t) as f64, 1.0])
                .collect(),
        };
        let snap = PanelSnapshot {
            order: 0,
            slug: "a".into(),
            title: "A".into(),
            query: "a".into(),
            unit: "count".into(),
            warn: None,
            crit: None,
            bad_when: "above".into(),
            legend: None,
            signal: None,
            window: SnapshotWindow::covering(at, at + chrono::Duration::minutes(30), 60.0),
            series: vec![
                series(&[("pod", "a")], &[0, 60, 600, 660]),
                series(&[("pod", "b")], &[900, 960]),
            ],
            error: None,
        };
        let cut = snap.until(at + chrono::Duration::seconds(600));
        assert_eq!(
            cut.series.len(),
            1,
            "a series only after the end is dropped"
        );
        assert_eq!(cut.series[0].points.len(), 3, "the point at the end stays");
        assert_eq!(cut.window.to, at + chrono::Duration::seconds(600));
        assert_eq!(snap.until(at + chrono::Duration::hours(2)), snap);
    }

    /// A backend that is down, counting how often it is asked.
    struct Down(std::sync::atomic::AtomicUsize);

    impl Source for Down {
        fn describe(&self) -> String {
            "down".into()
        }
        fn query_range(
            &self,
            _: RangeQuery,
        ) -> futures::future::BoxFuture<'static, Result<crate::metrics::QueryAnswer, SourceError>>
        {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Box::pin(async { Err(SourceError::Unreachable("connection refused".into())) })
        }
        fn query(
            &self,
            _: crate::metrics::InstantQuery,
        ) -> futures::future::BoxFuture<'static, Result<crate::metrics::QueryAnswer, SourceError>>
        {
            Box::pin(async { Err(SourceError::Unreachable("connection refused".into())) })
        }
        fn ready(&self) -> futures::future::BoxFuture<'static, Result<(), SourceError>> {
            Box::pin(async { Err(SourceError::Unreachable("connection refused".into())) })
        }
    }

    #[tokio::test]
    async fn a_backend_that_is_down_is_asked_once() {
        let down = Down(Default::default());
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let snaps = capture(
            &down,
            &crate::metrics::presets::sim_panels(),
            SnapshotWindow::covering(at, at + chrono::Duration::hours(1), 15.0),
        )
        .await;
        assert_eq!(down.0.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(snaps.len(), 8);
        assert!(snaps.iter().all(|s| {
            s.series.is_empty()
                && s.error
                    .as_deref()
                    .is_some_and(|e| e.contains("connection refused"))
        }));
    }

    #[tokio::test]
    async fn capture_write_and_read_back() {
        let store = EmbeddedSource::new(std::time::Duration::from_secs(3600));
        let t0 = 1_800_000_000.0;
        for i in 0..20 {
            let v = i as f64 / 20.0;
            let labels: crate::metrics::Labels = [
                ("__name__".to_string(), "queue_depth".to_string()),
                ("queue".to_string(), "jobs".to_string()),
            ]
            .into();
            store.ingest_series(t0 + i as f64 * 5.0, [(labels, v)]);
        }
        let mut panels = crate::metrics::presets::sim_panels();
        panels.truncate(6);
        let from = DateTime::from_timestamp(t0 as i64, 0).unwrap();
        let to = from + chrono::Duration::seconds(95);
        let snaps = capture(&store, &panels, SnapshotWindow::covering(from, to, 5.0)).await;
        assert_eq!(snaps.len(), 6);
        let queue = snaps.iter().find(|s| s.slug == "queue-depth").unwrap();
        assert_eq!(queue.series.len(), 1);
        assert!(queue.series[0].points.len() >= 19, "{queue:?}");
        assert_eq!(queue.unit(), Unit::Count);
        let dir = tempfile::tempdir().unwrap();
        let paths = write_all(dir.path(), &snaps).unwrap();
        assert_eq!(paths.len(), 6);
        assert_eq!(read_all(dir.path()).unwrap(), snaps);
        assert!(read_all(&dir.path().join("none")).unwrap().is_empty());
        std::fs::write(dir.path().join("bad.json"), "{").unwrap();
        let err = read_all(dir.path()).unwrap_err().to_string();
        assert!(err.contains("bad.json"), "{err}");
    }
}
