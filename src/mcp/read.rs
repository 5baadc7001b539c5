//! What the read-only tools answer, from the functions the console and the commands use: the
//! panels' values judged by the console's thresholds, the advice round the headline shows,
//! the runbook catalog and plans, the journal's alerts and the postmortem draft.

use crate::app::panes::panel::{Level, Panel};
use crate::app::workers::advice::Evaluator;
use crate::app::workers::advice::judge::{Advice, Verdict};
use crate::config::{BadWhen, Config, PanelConfig, Unit};
use crate::incident::Record;
use crate::incident::event::Event;
use crate::metrics::{InstantQuery, Source};
use crate::runbook::catalog::{self, Catalog};
use crate::runbook::setup::RunbookSetup;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// No query of a tool outlives this.
pub const QUERY_LIMIT: Duration = Duration::from_secs(10);

/// One signal now.
#[derive(Debug, Serialize)]
pub struct Signal {
    panel: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    signal: Option<String>,
    /// The worst series' value (as the console's panel shows it), `None` without data.
    value: Option<f64>,
    /// The value in its unit, as the console writes it.
    shown: Option<String>,
    unit: Unit,
    /// `ok`, `warn`, `crit`, `no data` or `failing`.
    state: &'static str,
    warn: Option<f64>,
    crit: Option<f64>,
    bad_when: BadWhen,
    /// Seconds since the sample was taken.
    age_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// Every panel's value now, each query within [`QUERY_LIMIT`].
pub async fn signals(panels: &[PanelConfig], source: Arc<dyn Source>) -> Vec<Signal> {
    let now = chrono::Utc::now().timestamp_millis() as f64 / 1000.0;
    futures::future::join_all(panels.iter().map(|p| {
        let source = source.clone();
        async move {
            let q = InstantQuery {
                query: p.query.clone(),
                time: None,
            };
            let answer = tokio::time::timeout(QUERY_LIMIT, source.query(q)).await;
            let mut s = Signal {
                panel: p.title.clone(),
                signal: p.signal.clone(),
                value: None,
                shown: None,
                unit: p.unit,
                state: "no data",
                warn: p.warn,
                crit: p.crit,
                bad_when: p.bad_when,
                age_s: None,
                error: None,
            };
            match answer {
                Ok(Ok(a)) => {
                    let newest = (a.series.iter().filter_map(crate::metrics::Series::last))
                        .map(|pt| pt.t)
                        .reduce(f64::max);
                    if let Some(v) = crate::recorder::panel_watch::worst(&a, p.bad_when) {
                        s.value = Some(v);
                        s.shown = Some(p.unit.format(v));
                        s.state = match Panel::new(p.clone()).level(v) {
                            Level::Ok => "ok",
                            Level::Warn => "warn",
                            Level::Crit => "crit",
                        };
                        s.age_s = newest.map(|t| (now - t).max(0.0));
                    }
                }
                Ok(Err(e)) => (s.state, s.error) = ("failing", Some(e.to_string())),
                Err(_) => (s.state, s.error) = ("failing", Some("no answer within 10s".into())),
            }
            s
        }
    }))
    .await
}

/// The incident's headline: what the console's header says, and the advice it shows.
#[derive(Debug, Serialize)]
pub struct Headline {
    incident: String,
    title: String,
    status: Option<String>,
    severity: Option<String>,
    services: Vec<String>,
    opened_at: Option<String>,
    records: usize,
    /// The evaluated suggestion: `→ try NAME: reasons`, or a runbook held back and why.
    suggestion: Option<String>,
    /// Every runbook judged, with its verdict and the readings behind it.
    findings: Vec<Judged>,
}

/// One runbook's verdict in an advice round.
#[derive(Debug, Serialize)]
pub struct Judged {
    runbook: String,
    /// `suggested`, `held back` or `not suggested`.
    verdict: &'static str,
    why: String,
}

/// The headline of `records`, with `advice` (when a round was made).
pub fn headline(id: &str, records: &[Record], advice: Option<&Advice>) -> Headline {
    let s = crate::incident::summary::summarize(records);
    let now = chrono::Utc::now();
    Headline {
        incident: id.to_string(),
        title: s.title,
        status: s.status.map(|x| x.to_string()),
        severity: s.severity.map(|x| x.to_string()),
        services: s.services,
        opened_at: s.opened_at.map(|t| t.to_rfc3339()),
        records: s.records,
        suggestion: advice.and_then(|a| a.headline(now)).map(|h| h.full),
        findings: advice.map(judged).unwrap_or_default(),
    }
}

fn judged(advice: &Advice) -> Vec<Judged> {
    (advice.findings.iter())
        .map(|f| {
            let (verdict, why) = match &f.verdict {
                Verdict::Suggest(w) => ("suggested", w),
                Verdict::HeldBack(w) => ("held back", w),
                Verdict::Not(w) => ("not suggested", w),
            };
            Judged {
                runbook: f.runbook.clone(),
                verdict,
                why: why.clone(),
            }
        })
        .collect()
}

/// One advice round over the runbooks that can act on a real system, as the console makes it.
pub async fn advice(catalog: &Catalog, config: &Config, source: Arc<dyn Source>) -> Advice {
    let runbooks = crate::app::update::advisable(&catalog.entries, false);
    let evaluator = Evaluator {
        setup: RunbookSetup::from_config(config),
        source,
        clock: Arc::new(crate::clock::WallClock),
        sim: None,
    };
    evaluator.round(&runbooks).await
}

/// A runbook as the list shows it.
#[derive(Debug, Serialize)]
pub struct RunbookItem {
    name: String,
    description: String,
    steps: usize,
    mutating: usize,
    preconditions: Vec<String>,
    variables: Vec<String>,
    origin: String,
    /// Why it does not load (the name is then its file).
    #[serde(skip_serializing_if = "Option::is_none")]
    broken: Option<String>,
}

/// Every runbook of `catalog`, the broken ones with why.
pub fn runbooks(catalog: &Catalog) -> Vec<RunbookItem> {
    (catalog.entries.iter())
        .map(|e| match e {
            catalog::Entry::Ready(r) => RunbookItem {
                name: r.name.clone(),
                description: r.description.clone(),
                steps: r.steps.len(),
                mutating: r.steps.iter().filter(|s| s.mutating).count(),
                preconditions: r.preconditions().map(|s| s.title.clone()).collect(),
                variables: r.variables.iter().map(|v| v.name.clone()).collect(),
                origin: catalog::origin(r).to_string(),
                broken: None,
            },
            catalog::Entry::Broken { file, error } => RunbookItem {
                name: file.clone(),
                description: String::new(),
                steps: 0,
                mutating: 0,
                preconditions: Vec::new(),
                variables: Vec::new(),
                origin: String::new(),
                broken: Some(error.clone()),
            },
        })
        .collect()
}

/// The alerts firing now, as the journal's alert records leave them.
#[derive(Debug, Serialize)]
pub struct Firing {
    name: String,
    labels: BTreeMap<String, String>,
    /// When it was recorded as firing.
    since: String,
}

/// Every alert the journal holds as firing.
pub fn alerts(records: &[Record]) -> Vec<Firing> {
    use crate::alerts::board::{AlertBoard, AlertKey};
    use crate::incident::event::AlertSource;
    let board = AlertBoard::from_records(
        records,
        &[AlertSource::Prometheus, AlertSource::Alertmanager],
    );
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for r in records.iter().rev() {
        if let Event::AlertFiring { .. } = &r.kind
            && let Some(key) = AlertKey::of(&r.kind)
            && board.is_firing(&key)
            && seen.insert(key.clone())
        {
            out.push(Firing {
                name: key.name,
                labels: key.labels,
                since: r.time.to_rfc3339(),
            });
        }
    }
    out
}
