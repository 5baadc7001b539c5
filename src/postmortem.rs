//! The postmortem draft (issue 7): the house format filled in from the journal and the panel
//! snapshots, with charts, the status-page updates and the facts as JSON.
//!
//! [`facts::compute_from`] turns records and snapshots into [`facts::Facts`] (pure: the same
//! journal, snapshots, rules and timezone give the same facts): [`timeline`] keeps one row per
//! event that matters, [`steps`] and [`effects`] tell each step by its title and what it did,
//! [`window`] reads a signal over windows on each side of a step, with its noise floor;
//! [`customer`] counts the users' failed requests, [`detection`] and [`rules`] say what was
//! noticed when and what no alert watched, [`suggest`] proposes the lessons the data shows,
//! [`status`] writes the public page; [`prose`] writes the judgement sections' opening
//! sentences from the facts; [`template`] renders the facts through the built-in
//! house format or another house's `minijinja` template; [`chart`] draws each panel that moved
//! as SVG; [`lint`] says what the author must still do. [`draft`] does all of that without I/O
//! and [`export`] reads the incident and writes the files (sync: the console calls it from
//! `spawn_blocking`).
//!
//! ```text
//! <incident>/exports/postmortem.md        --format markdown (default)
//! <incident>/exports/charts/<slug>.svg    linked from postmortem.md
//! <incident>/exports/status.md            --format status
//! <incident>/exports/facts.json           --format json
//! <incident>/fact-snapshots/<slug>.json   the fact queries taken with the panels' snapshots
//! ```

pub mod board;
pub mod chart;
pub mod customer;
pub mod detection;
pub mod effects;
pub mod facts;
pub mod figures;
pub mod impact;
pub mod lint;
pub mod phrases;
pub mod prose;
pub mod rules;
pub mod signals;
pub mod status;
pub mod steps;
pub mod suggest;
pub mod template;
pub mod timeline;
pub mod window;
pub mod words;

use crate::incident::record::Record;
use crate::incident::snapshot::{self, PanelSnapshot, SnapshotError, SnapshotWindow};
use crate::incident::{IncidentId, Store, StoreError};
use facts::Facts;
use lint::Finding;
use std::path::{Path, PathBuf};

/// The draft's file name.
pub const MARKDOWN_FILE: &str = "postmortem.md";
/// The status-page updates' file name.
pub const STATUS_FILE: &str = "status.md";
/// The facts' file name.
pub const JSON_FILE: &str = "facts.json";
/// The charts' directory, beside the draft.
pub const CHARTS_DIR: &str = "charts";
/// How long the timeline may stay quiet before the lint says so, unless told otherwise.
pub const DEFAULT_GAP_LIMIT: chrono::Duration = chrono::Duration::minutes(30);
/// How much time around the journal's first and last records snapshots cover.
pub const SNAPSHOT_MARGIN: chrono::Duration = chrono::Duration::minutes(15);

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The postmortem draft and its charts.
    Markdown,
    /// The status-page updates.
    Status,
    /// The facts as data.
    Json,
}

/// How to export.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    pub format: Format,
    /// Where to write; the incident's `exports/` directory when `None`.
    pub out: Option<PathBuf>,
    /// Another house's template (Markdown and status formats).
    pub template: Option<PathBuf>,
    /// The timezone the draft is written in.
    pub timezone: chrono_tz::Tz,
    /// The longest quiet stretch of the timeline the lint accepts.
    pub gap_limit: chrono::Duration,
    /// One row per event that matters (the default), or every record (`--timeline full`).
    pub timeline: timeline::Mode,
    /// The alerting rules (from Prometheus's `/api/v1/rules`, see [`rules::from_api`]), when
    /// they were read: Detection then names the signals no rule watches.
    pub alert_rules: Option<Vec<rules::AlertRule>>,
    /// The status page's name for each service id (`[export.public_names]`).
    pub public_names: std::collections::BTreeMap<String, String>,
}

impl ExportOptions {
    /// The house draft in `timezone`, written to the incident's `exports/`.
    pub fn new(format: Format, timezone: chrono_tz::Tz) -> ExportOptions {
        ExportOptions {
            format,
            out: None,
            template: None,
            timezone,
            gap_limit: DEFAULT_GAP_LIMIT,
            timeline: timeline::Mode::Folded,
            alert_rules: None,
            public_names: std::collections::BTreeMap::new(),
        }
    }
}

/// What an export did.
#[derive(Debug, Clone)]
pub struct ExportReport {
    /// Every file written, the main one first.
    pub written: Vec<PathBuf>,
    pub lint: Vec<Finding>,
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    #[error(transparent)]
    Template(#[from] template::TemplateError),
    #[error(transparent)]
    Chart(#[from] chart::ChartError),
    #[error("cannot read template \"{path}\": {source}")]
    TemplateRead {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--template applies to the markdown and status formats, not to json")]
    TemplateForJson,
    #[error("cannot write \"{path}\": {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no panel could be queried from {backend}: {error}")]
    Capture { backend: String, error: String },
    #[error("cannot encode the facts as JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// The files of an export, by path relative to the output directory, before anything is
/// written.
#[derive(Debug, Clone)]
pub struct Draft {
    pub files: Vec<(String, Vec<u8>)>,
    pub facts: Facts,
    pub lint: Vec<Finding>,
}

fn secs(t: &str) -> Option<f64> {
    chrono::DateTime::parse_from_rfc3339(t)
        .ok()
        .map(|t| t.timestamp_millis() as f64 / 1000.0)
}

/// Renders an export in memory (no I/O except reading `--template`): a pure function of the
/// records, the panel snapshots and the options.
pub fn draft(
    id: &str,
    records: &[Record],
    snaps: &[PanelSnapshot],
    opts: &ExportOptions,
) -> Result<Draft, ExportError> {
    draft_with(id, records, snaps, &[], opts)
}

/// The records the draft reads: the journal without its identity record, which a first
/// publication may append long after the incident (the draft of a journal is the same before
/// and after it gets its global id).
pub fn drafted_records(records: &[Record]) -> Vec<Record> {
    records
        .iter()
        .filter(|r| !matches!(r.kind, crate::incident::event::Event::IncidentUid { .. }))
        .cloned()
        .collect()
}

/// [`draft`] with the fact queries' snapshots (`fact-snapshots/`) too.
pub fn draft_with(
    id: &str,
    records: &[Record],
    snaps: &[PanelSnapshot],
    fact_snaps: &[PanelSnapshot],
    opts: &ExportOptions,
) -> Result<Draft, ExportError> {
    let tz = opts.timezone;
    let records = drafted_records(records);
    // Every figure and chart stops where the record does.
    let clipped = |all: &[PanelSnapshot]| -> Vec<PanelSnapshot> {
        match crate::incident::open::rehearsal_end(&records) {
            Some(end) => all.iter().map(|s| s.until(end)).collect(),
            None => all.to_vec(),
        }
    };
    let (snaps, fact_snaps) = (clipped(snaps), clipped(fact_snaps));
    let (snaps, fact_snaps) = (snaps.as_slice(), fact_snaps.as_slice());
    let evidence = facts::Evidence {
        records: &records,
        panels: snaps,
        facts: fact_snaps,
        rules: opts.alert_rules.as_deref(),
        public_names: &opts.public_names,
    };
    let facts = facts::compute_from(id, &evidence, tz, opts.timeline);
    let lint = lint::check(&facts, opts.gap_limit, id);
    let custom = match &opts.template {
        None => None,
        Some(_) if opts.format == Format::Json => return Err(ExportError::TemplateForJson),
        Some(path) => Some((
            path.display().to_string(),
            std::fs::read_to_string(path).map_err(|source| ExportError::TemplateRead {
                path: path.clone(),
                source,
            })?,
        )),
    };
    let render = |name: &str, builtin: &str| match &custom {
        Some((file, text)) => template::render(file, text, &facts),
        None => template::render(name, builtin, &facts),
    };
    let mut files = Vec::new();
    match opts.format {
        Format::Markdown => {
            files.push((
                MARKDOWN_FILE.to_string(),
                render("house.md.j2", template::HOUSE)?.into_bytes(),
            ));
            let marks = chart_marks(&facts, &records);
            for c in &facts.charts {
                if let Some(s) = snaps
                    .iter()
                    .chain(fact_snaps)
                    .find(|s| s.slug == c.slug && s.title == c.title)
                {
                    files.push((c.path.clone(), chart::render(s, &marks, tz)?.into_bytes()));
                }
            }
        }
        Format::Status => files.push((
            STATUS_FILE.to_string(),
            render("status.md.j2", template::STATUS)?.into_bytes(),
        )),
        Format::Json => {
            let mut value = serde_json::to_value(&facts)?;
            if let serde_json::Value::Object(map) = &mut value {
                map.insert("lint".into(), serde_json::to_value(&lint)?);
            }
            let mut text = serde_json::to_string_pretty(&value)?;
            text.push('\n');
            files.push((JSON_FILE.to_string(), text.into_bytes()));
        }
    }
    Ok(Draft { files, facts, lint })
}

/// What the charts mark: the impact window, each step taken (by its title) and each fault or
/// change (by what it was).
fn chart_marks(facts: &facts::Facts, records: &[Record]) -> chart::Marks {
    let faults = timeline::causes(&timeline::effective(records))
        .into_iter()
        .map(|c| (c.at.timestamp_millis() as f64 / 1000.0, c.mark))
        .collect();
    chart::Marks {
        impact: facts.impact.as_ref().and_then(|i| {
            Some((
                secs(&i.start.utc)?,
                i.end.as_ref().and_then(|e| secs(&e.utc)),
            ))
        }),
        actions: facts
            .resolution
            .iter()
            .filter(|m| !m.manual)
            .map(|m| {
                (
                    m.at.timestamp_millis() as f64 / 1000.0,
                    m.title.clone(),
                    m.response,
                )
            })
            .collect(),
        faults,
    }
}

/// Reads incident `id` (journal and snapshots) and writes its export. Each file is replaced
/// atomically.
pub fn export(
    store: &Store,
    id: &IncidentId,
    opts: &ExportOptions,
) -> Result<ExportReport, ExportError> {
    let recovery = store.read(id)?;
    let dir = store.snapshots_dir(id);
    let snaps = snapshot::read_all(&dir)?;
    let fact_snaps = snapshot::read_all(&snapshot::facts_dir(&dir))?;
    let out = opts.out.clone().unwrap_or_else(|| store.exports_dir(id));
    let d = draft_with(
        &id.to_string(),
        &recovery.records,
        &snaps,
        &fact_snaps,
        opts,
    )?;
    let mut lint = d.lint;
    if let Some(torn) = &recovery.torn {
        lint.push(Finding {
            kind: "journal",
            message: format!(
                "the journal's last line ({}) is torn and was left out: {}",
                torn.line, torn.reason
            ),
        });
    }
    let written = write(&out, &d.files)?;
    Ok(ExportReport { written, lint })
}

fn write(out: &Path, files: &[(String, Vec<u8>)]) -> Result<Vec<PathBuf>, ExportError> {
    let mut written = Vec::with_capacity(files.len());
    for (rel, bytes) in files {
        let path = out.join(rel);
        let dir = path.parent().unwrap_or(out);
        std::fs::create_dir_all(dir).map_err(|source| ExportError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
        crate::incident::storage::replace_file(&path, bytes).map_err(|source| {
            ExportError::Write {
                path: path.clone(),
                source,
            }
        })?;
        written.push(path);
    }
    Ok(written)
}

/// The window snapshots of incident `records` should cover: from a margin before the first
/// record to a margin after the last.
pub fn snapshot_window(records: &[Record], min_step_s: f64) -> Option<SnapshotWindow> {
    let first = records.first()?.time - SNAPSHOT_MARGIN;
    let last = records.last()?.time + SNAPSHOT_MARGIN;
    Some(SnapshotWindow::covering(first, last, min_step_s))
}

/// Takes the panel snapshots over the incident so far (from `source`, one query at a time) and
/// writes them beside the journal, replacing older ones, unless every panel failed: snapshots
/// holding only errors would replace good ones taken earlier. Returns how many were written.
/// The console's export and `warroom record`'s stop call it.
pub async fn take_snapshots(
    store: &Store,
    id: &IncidentId,
    source: &dyn crate::metrics::Source,
    panels: &[crate::config::PanelConfig],
    step_s: f64,
) -> Result<usize, ExportError> {
    let records = read_off_the_loop(store, id, source).await?;
    let Some(window) = snapshot_window(&drafted_records(&records), step_s) else {
        return Ok(0);
    };
    let snaps = snapshot::capture(source, panels, window).await;
    all_failed(&snaps, source)?;
    let dir = store.snapshots_dir(id);
    let written = snapshot::write_all(&dir, &snaps)?.len();
    capture_facts(&dir, source, window).await?;
    Ok(written)
}

/// The incident's records, read on a blocking thread (a long journal is not read on the loop).
async fn read_off_the_loop(
    store: &Store,
    id: &IncidentId,
    source: &dyn crate::metrics::Source,
) -> Result<Vec<Record>, ExportError> {
    let (s, i) = (store.clone(), id.clone());
    Ok(tokio::task::spawn_blocking(move || s.read(&i))
        .await
        .map_err(|e| ExportError::Capture {
            backend: source.describe(),
            error: e.to_string(),
        })??
        .records)
}

/// Snapshots that hold nothing but errors would only stop the next export from trying: the
/// first error, when every panel failed.
fn all_failed(
    snaps: &[PanelSnapshot],
    source: &dyn crate::metrics::Source,
) -> Result<(), ExportError> {
    match snaps.iter().find_map(|s| s.error.as_ref()) {
        Some(e) if snaps.iter().all(|s| s.error.is_some()) => Err(ExportError::Capture {
            backend: source.describe(),
            error: e.clone(),
        }),
        _ => Ok(()),
    }
}

/// Takes the fact queries' snapshots (user requests, duplicates, memory, …) beside the
/// panels', in `fact-snapshots/`, unless every query failed (the backend is down, or has
/// none of these metrics: the draft then leaves those figures out).
async fn capture_facts(
    dir: &Path,
    source: &dyn crate::metrics::Source,
    window: SnapshotWindow,
) -> Result<usize, ExportError> {
    let facts = snapshot::capture(source, &snapshot::fact_panels(), window).await;
    if facts.iter().all(|s| s.error.is_some()) {
        return Ok(0);
    }
    Ok(snapshot::write_all(&snapshot::facts_dir(dir), &facts)?.len())
}

/// [`take_snapshots`] against a deadline: the panels asked a few at a time, and those that
/// answered by `deadline` written (the others keep whatever snapshot they had). Returns how
/// many were written and of how many panels.
pub async fn take_snapshots_until(
    store: &Store,
    id: &IncidentId,
    source: &dyn crate::metrics::Source,
    panels: &[crate::config::PanelConfig],
    step_s: f64,
    deadline: tokio::time::Instant,
) -> Result<(usize, usize), ExportError> {
    let records = read_off_the_loop(store, id, source).await?;
    let Some(window) = snapshot_window(&records, step_s) else {
        return Ok((0, panels.len()));
    };
    let snaps = snapshot::capture_until(source, panels, window, deadline).await;
    let dir = store.snapshots_dir(id);
    Ok((snapshot::write_all(&dir, &snaps)?.len(), panels.len()))
}

/// Takes and writes the incident's panel snapshots when it has none (for `warroom export
/// --prometheus`); returns how many were written.
pub async fn capture_missing(
    store: &Store,
    id: &IncidentId,
    source: &dyn crate::metrics::Source,
    panels: &[crate::config::PanelConfig],
) -> Result<usize, ExportError> {
    let dir = store.snapshots_dir(id);
    let have_panels = !snapshot::read_all(&dir)?.is_empty();
    let have_facts = !snapshot::read_all(&snapshot::facts_dir(&dir))?.is_empty();
    if have_panels && have_facts {
        return Ok(0);
    }
    let records = store.read(id)?.records;
    let Some(window) = snapshot_window(&drafted_records(&records), 15.0) else {
        return Ok(0);
    };
    if have_panels {
        capture_facts(&dir, source, window).await?;
        return Ok(0);
    }
    let snaps = snapshot::capture(source, panels, window).await;
    all_failed(&snaps, source)?;
    let written = snapshot::write_all(&dir, &snaps)?.len();
    capture_facts(&dir, source, window).await?;
    Ok(written)
}
