//! The console's workers: each [`Effect`] becomes a task, and each task answers with the
//! [`Msg`] its effect names. This is the console's whole I/O surface; `update` only describes
//! the work.
//!
//! - [`runbooks`]: plans and runs in their own tasks, with the console as operator
//!   ([`operator`]) and sink ([`run_sink`]);
//! - [`export`], [`publish`] and [`github`]: the postmortem and GitHub;
//! - [`advice`]: runbook suggestions evaluated against live data, read-only;
//! - queries and journal appends are spawned here directly.
//!
//! [`Services`] is what the tasks talk to: the source, the journal, the intakes, the setups.

pub mod advice;
pub mod export;
pub mod github;
pub mod operator;
pub mod publish;
pub mod rehearsal;
pub mod run_sink;
pub mod runbooks;
pub mod share;
pub mod silence;

use super::effect::Effect;
use super::msg::Msg;
use crate::clock::Clock;
use crate::metrics::Source;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// No query task outlives this, whatever the source's own timeout says.
pub const HARD_DEADLINE: Duration = Duration::from_secs(35);

/// What the loop's tasks talk to.
#[derive(Clone)]
pub struct Services {
    pub source: Arc<dyn Source>,
    /// The incident's journal, when the console records one.
    pub journal: Option<crate::incident::JournalWriter>,
    /// How to create the incident when it is declared (`None`: one is open, or none can be).
    pub declare: Option<super::runtime::DeclareSetup>,
    /// The alert intake, spawned next to the loop when an incident is recorded.
    pub alerts: Option<crate::alerts::AlertIntake>,
    /// Runbook directories, variables and the controls of running runs.
    pub runbooks: crate::runbook::setup::RunbookSetup,
    /// Where and how the open incident is exported (`E`), when one is open.
    pub export: Option<export::ExportSetup>,
    /// The stage of a rehearsal: its faults go on the timeline as they land, its pace follows
    /// the console's, and its end is announced.
    pub rehearsal: Option<crate::rehearsal::stage::Live>,
    /// GitHub: the changes feed and publishing, on one client (`None` without `[github]`).
    pub github: Option<github::GithubSetup>,
    /// Serve the incident this console holds on its socket, so the team records through it.
    pub serve: bool,
    /// The holder this console follows, when another process holds the incident.
    pub follow: Option<super::sharing::FollowSetup>,
    /// The Prometheus client discovery asks, when the dashboard is built by discovery.
    pub discovery: Option<Arc<crate::metrics::prometheus::PrometheusClient>>,
    /// What the dashboard's `[[variable]]`s are resolved against.
    pub variables: Option<Arc<dyn crate::variables::VariableResolver>>,
    /// The Alertmanager the console's silences go to (`None`: none is configured).
    pub silences: Option<crate::alerts::silence::SilenceClient>,
    /// The engine the incident is shared through across machines, and the store it is in.
    pub engine: Option<(crate::share::Engine, crate::incident::Store)>,
    /// Leaves the shared incident when the console closes (set once the sync starts).
    pub leaving: Arc<std::sync::OnceLock<crate::share::presence::Handle>>,
}

impl Services {
    /// Only a metrics source: nothing is recorded.
    pub fn metrics_only(source: Arc<dyn Source>) -> Self {
        Services {
            source,
            journal: None,
            declare: None,
            alerts: None,
            runbooks: Default::default(),
            export: None,
            rehearsal: None,
            github: None,
            serve: false,
            follow: None,
            discovery: None,
            variables: None,
            silences: None,
            engine: None,
            leaving: Arc::default(),
        }
    }
}

/// Start the work `effects` describe, each in its own task; answers come back on `tx`. (The
/// editor is the loop's own business: see [`super::runtime`].)
pub fn spawn_all(
    effects: Vec<Effect>,
    services: &Services,
    tx: &mpsc::UnboundedSender<Msg>,
    clock: &Arc<dyn Clock>,
) {
    // A batch's records are appended in one task, in the order `update` gave them (the
    // crossings a declaration carries before the note that declared it).
    let mut records = Vec::new();
    for effect in effects {
        match effect {
            Effect::Record {
                source,
                actor,
                event,
            } => records.push((source, actor, event)),
            query @ (Effect::Fetch { .. }
            | Effect::FetchLatest { .. }
            | Effect::FetchGroup { .. }) => spawn_fetch(query, services, tx, clock),
            other => spawn_one(other, services, tx, clock),
        }
    }
    record_in_order(records, services, tx);
}

/// A query for panels: a chart's range, a panel's latest value, or hidden panels' values
/// read together; each answers as the message its effect names.
fn spawn_fetch(
    effect: Effect,
    services: &Services,
    tx: &mpsc::UnboundedSender<Msg>,
    clock: &Arc<dyn Clock>,
) {
    match effect {
        Effect::Fetch {
            panel,
            ticket,
            pass,
            query,
            keep,
        } => {
            let fut = keeping_worst(services.source.query_range(query.clone()), keep);
            spawn_query(fut, tx, clock, move |result, at| Msg::Answer {
                panel,
                ticket,
                pass,
                query,
                result,
                at,
            });
        }
        Effect::FetchLatest {
            panel,
            pass,
            query,
            keep,
        } => {
            let fut = keeping_worst(services.source.query(query), keep);
            spawn_query(fut, tx, clock, move |result, at| Msg::Latest {
                panel,
                pass,
                result,
                at,
            });
        }
        Effect::FetchGroup {
            pass,
            members,
            query,
        } => {
            let panels = members.iter().map(|m| m.panel).collect();
            let fut = services.source.query(query);
            let fut = async move {
                // Split (and each panel's worst kept) in the blocking pool, off the loop.
                let answer = fut.await?;
                tokio::task::spawn_blocking(move || crate::metrics::group::split(answer, &members))
                    .await
                    .map_err(|e| {
                        crate::metrics::SourceError::Malformed(format!(
                            "splitting the answer failed: {e}"
                        ))
                    })
            };
            spawn_query(fut, tx, clock, move |result, at| Msg::Group {
                pass,
                panels,
                result,
                at,
            });
        }
        other => unreachable!("not a query: {other:?}"),
    }
}

/// Every effect but a record or a query: runbooks, runs, the operator's answers, discovery,
/// the rehearsal's pace, sharing, advice, silences, export and publishing.
fn spawn_one(
    effect: Effect,
    services: &Services,
    tx: &mpsc::UnboundedSender<Msg>,
    clock: &Arc<dyn Clock>,
) {
    match effect {
        Effect::Record { .. }
        | Effect::Fetch { .. }
        | Effect::FetchLatest { .. }
        | Effect::FetchGroup { .. } => unreachable!("spawned by spawn_all"),
        Effect::LoadRunbooks => {
            let (tx, setup) = (tx.clone(), services.runbooks.clone());
            tokio::task::spawn_blocking(move || {
                let entries = crate::runbook::catalog::load(&setup.dirs);
                let unresolved = crate::runbook::catalog::unresolved(&entries, &setup);
                let _ = tx.send(Msg::RunbooksUnresolved(unresolved));
                let _ = tx.send(Msg::RunbooksLoaded(entries));
            });
        }
        Effect::PlanRunbook { runbook, vars } => plan_runbook(*runbook, vars, services, tx, clock),
        start @ Effect::StartRun { .. } => start_run(start, services, tx, clock),
        Effect::ControlRun { run_id, control } => {
            services.runbooks.control(&run_id, control);
        }
        Effect::Answer { reply, answer } => reply.send(answer),
        // Handled by the loop, which owns the terminal.
        Effect::EditNote | Effect::Copy(_) => {}
        // Handled by the loop, which owns the services it changes.
        Effect::Declare { .. } => {
            let _ = tx.send(Msg::Declared(Err(
                "only the console's loop declares an incident".into(),
            )));
        }
        Effect::ResolveVariables(vars) => resolve_variables(vars, services, tx),
        Effect::Discover => {
            let Some(client) = services.discovery.clone() else {
                return;
            };
            let tx = tx.clone();
            let now = clock.now().timestamp_millis() as f64 / 1000.0;
            tokio::spawn(async move {
                let _ = tx.send(Msg::Discovered(discover(&client, now).await));
            });
        }
        Effect::Pace { running } => {
            if let Some(live) = &services.rehearsal {
                if running {
                    live.pacer.resume();
                } else {
                    live.pacer.pause();
                }
            }
        }
        Effect::Publish(target) => match services.github.as_ref().and_then(|g| g.publish.clone()) {
            Some(setup) => {
                publish::spawn(setup, Some(target), services.journal.clone(), tx.clone());
            }
            None => {
                let _ = tx.send(Msg::Published(publish::PublishReport::Failed {
                    error: "publishing is not configured here".into(),
                    retry_in: None,
                }));
            }
        },
        Effect::Propose { runbook } => match &services.follow {
            Some(setup) => share::propose(setup, runbook, tx),
            None => {
                let _ = tx.send(Msg::Share(crate::app::sharing::ShareMsg::Proposed(Err(
                    "this console holds the incident: run it here".into(),
                ))));
            }
        },
        Effect::TakeOver => match &services.follow {
            Some(setup) => share::take_over(setup, tx),
            None => {
                let _ = tx.send(Msg::Share(crate::app::sharing::ShareMsg::TookOver(Err(
                    "this console follows no holder".into(),
                ))));
            }
        },
        Effect::Advise(runbooks) => {
            let evaluator = advice::Evaluator {
                setup: services.runbooks.clone(),
                source: services.source.clone(),
                clock: clock.clone(),
                sim: services.rehearsal.as_ref().map(|r| r.service.clone()),
            };
            advice::spawn(runbooks, evaluator, tx);
        }
        Effect::Silence(order) => silence::spawn(order, services.silences.clone(), tx),
        Effect::Export(panels) => export_draft(panels, services, tx),
    }
}

/// Prepare `rb`'s plan with `vars` over every other source; answers as `Msg::Planned`.
fn plan_runbook(
    rb: crate::runbook::model::Runbook,
    vars: Vec<(String, String)>,
    services: &Services,
    tx: &mpsc::UnboundedSender<Msg>,
    clock: &Arc<dyn Clock>,
) {
    let (tx, mut setup, source, clock) = (
        tx.clone(),
        services.runbooks.clone(),
        services.source.clone(),
        clock.clone(),
    );
    setup.vars.extend(vars);
    tokio::spawn(async move {
        let result = crate::runbook::setup::prepare_plan(&rb, &setup, source, clock).await;
        let _ = tx.send(Msg::Planned {
            name: rb.name.clone(),
            result,
        });
    });
}

/// Start a run (under the incident's executor lease when it is shared and the runbook changes
/// something). A rehearsal's runs take every duration from its simulated clock, whatever
/// clock the console shows (a real Prometheus's rehearsal shows the wall clock).
fn start_run(
    effect: Effect,
    services: &Services,
    tx: &mpsc::UnboundedSender<Msg>,
    clock: &Arc<dyn Clock>,
) {
    let Effect::StartRun {
        runbook,
        run_id,
        vars,
        secrets,
        resume,
    } = effect
    else {
        unreachable!("start_run takes Effect::StartRun");
    };
    let mut setup = services.runbooks.clone();
    // The dialog's values win over every other source (later ones win); its
    // secrets stand for their environment variables, for this run only.
    setup.vars.extend(vars);
    let typed = secrets
        .iter()
        .map(|(k, v)| (k.clone(), v.expose().to_string()));
    setup.env.splice(0..0, typed);
    let (source, journal) = (services.source.clone(), services.journal.clone());
    let clock = match &services.rehearsal {
        Some(live) => Arc::new(live.clock()),
        None => clock.clone(),
    };
    let lease = lease_for(services, &runbook);
    let name = runbook.name.clone();
    let (id, runner, tx2) = (run_id.clone(), setup.clone(), tx.clone());
    let launch = move || {
        runbooks::start(&runbook, id, &runner, source, journal, clock, &tx2, resume);
    };
    match lease {
        Some((engine, incident)) => {
            let run = runbooks::LeasedRun {
                engine,
                incident,
                run_id,
                runbook: name,
            };
            runbooks::with_lease(run, setup, tx.clone(), launch);
        }
        None => launch(),
    }
}

/// Resolve the dashboard's variables; answers as `Msg::VariablesResolved`.
fn resolve_variables(
    vars: Vec<crate::variables::Variable>,
    services: &Services,
    tx: &mpsc::UnboundedSender<Msg>,
) {
    let tx = tx.clone();
    let resolver = services.variables.clone();
    tokio::spawn(async move {
        let opts = crate::app::panes::variables::Variables::options();
        let without = "this console has no Prometheus to look it up in";
        let (bindings, _) =
            crate::variables::resolve_dashboard(&vars, &opts, resolver.as_deref(), without).await;
        let _ = tx.send(Msg::VariablesResolved(Box::new(bindings)));
    });
}

/// Export the postmortem draft of the open incident; answers as `Msg::Exported`.
fn export_draft(
    panels: Vec<crate::config::PanelConfig>,
    services: &Services,
    tx: &mpsc::UnboundedSender<Msg>,
) {
    let tx = tx.clone();
    let Some(setup) = services.export.clone() else {
        let _ = tx.send(Msg::Exported(Err("no incident is open".into())));
        return;
    };
    let source = services.source.clone();
    tokio::spawn(async move {
        let _ = tx.send(Msg::Exported(export::run(setup, panels, source).await));
    });
}

/// Append `records` to the journal one after the other in one task; each answers as
/// `Msg::Recorded`.
fn record_in_order(
    records: Vec<(crate::incident::Source, String, crate::incident::Event)>,
    services: &Services,
    tx: &mpsc::UnboundedSender<Msg>,
) {
    if records.is_empty() {
        return;
    }
    let Some(journal) = services.journal.clone() else {
        for (_, _, event) in records {
            match &services.follow {
                // A follower records through the holder.
                Some(setup) => share::record(setup, event, tx),
                None => {
                    let _ = tx.send(Msg::Recorded(Err("no incident is open".into())));
                }
            }
        }
        return;
    };
    let tx = tx.clone();
    tokio::spawn(async move {
        for (source, actor, event) in records {
            let msg = match journal.append(source, &actor, event).await {
                Err(e) if e.is_refusal() => Msg::Refused(e.to_string()),
                result => Msg::Recorded(result.map_err(|e| e.to_string())),
            };
            let _ = tx.send(msg);
        }
    });
}

/// The answer of `fut` with only the series `keep` says, chosen in the blocking pool when
/// there are more: an answer of 100,000 series is reduced (and the rest dropped) off the
/// console's loop, which then only ever holds and draws a panel's worth.
fn keeping_worst(
    fut: futures::future::BoxFuture<
        'static,
        Result<crate::metrics::QueryAnswer, crate::metrics::SourceError>,
    >,
    keep: crate::metrics::series::KeepWorst,
) -> futures::future::BoxFuture<
    'static,
    Result<crate::metrics::QueryAnswer, crate::metrics::SourceError>,
> {
    use futures::FutureExt;
    async move {
        let mut answer = fut.await?;
        if answer.series.len() <= keep.cap {
            return Ok(answer);
        }
        tokio::task::spawn_blocking(move || {
            answer.omitted += crate::metrics::series::keep_worst(&mut answer.series, keep);
            answer
        })
        .await
        .map_err(|e| {
            crate::metrics::SourceError::Malformed(format!("reducing the answer failed: {e}"))
        })
    }
    .boxed()
}

/// Run one query in a task, never longer than [`HARD_DEADLINE`], and send its answer back.
fn spawn_query<T: Send + 'static>(
    fut: impl std::future::Future<Output = Result<T, crate::metrics::SourceError>> + Send + 'static,
    tx: &mpsc::UnboundedSender<Msg>,
    clock: &Arc<dyn Clock>,
    answer: impl FnOnce(Result<T, crate::metrics::SourceError>, chrono::DateTime<chrono::Utc>) -> Msg
    + Send
    + 'static,
) {
    let (tx, clock) = (tx.clone(), clock.clone());
    tokio::spawn(async move {
        let result = match tokio::time::timeout(HARD_DEADLINE, fut).await {
            Ok(r) => r,
            Err(_) => Err(crate::metrics::SourceError::Timeout(HARD_DEADLINE)),
        };
        // The loop may have ended; nothing to do then.
        let _ = tx.send(answer(result, clock.now()));
    });
}

/// One discovery for the console: the dashboard it builds, as the model takes it.
async fn discover(
    client: &crate::metrics::prometheus::PrometheusClient,
    now: f64,
) -> Result<super::msg::Discovered, super::msg::DiscoverFailure> {
    use crate::metrics::discover::{DiscoverOptions, discover};
    let (presets, warning) = crate::metrics::from_config::presets();
    if let Some(w) = warning {
        tracing::warn!("your presets are not used: {w}");
    }
    match discover(client, &presets, &DiscoverOptions::default(), now).await {
        Ok(d) => Ok(super::msg::Discovered::from_discovery(&d)),
        Err(e) => Err(super::msg::DiscoverFailure {
            error: e.to_string(),
            retry_after: e.retry_after(),
            transient: e.is_transient(),
        }),
    }
}

/// The engine and incident whose executor lease a run of `rb` needs: an incident shared across
/// machines and a runbook that changes something (never a rehearsal: its runs act on the
/// simulator of this console).
fn lease_for(
    services: &Services,
    rb: &crate::runbook::model::Runbook,
) -> Option<(crate::share::Engine, crate::incident::IncidentId)> {
    let (engine, _) = services.engine.as_ref()?;
    let journal = services.journal.as_ref()?;
    let mutates = rb.steps.iter().any(|s| s.mutating);
    (mutates && services.rehearsal.is_none()).then(|| (engine.clone(), journal.info().id.clone()))
}
