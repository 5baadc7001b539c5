//! `warroom runbook list | check | plan | run`: the headless face of the runbook domain. Every
//! subcommand finds runbooks where the console does ([`crate::runbook::catalog`]): the
//! shipped ones, then the XDG config dir's, the config's `[runbooks] dir`, `./runbooks/` and
//! `--runbooks DIR`.

use super::{Context, EXIT_USAGE};
use crate::cli::{RunbookCmd, RunbookDirArgs, RunbookNamed};
use crate::config::Config;
use crate::incident::event::{RunRef, Source};
use crate::incident::writer::JournalWriter;
use crate::runbook::catalog::{self, Catalog, Origin};
use crate::runbook::executor::Control;
use crate::runbook::journal::{JournalIntents, JournalSink};
use crate::runbook::load::{self, Loaded};
use crate::runbook::model::Runbook;
use crate::runbook::operator::{AssumeYes, LineOperator, Operator};
use crate::runbook::plan;
use crate::runbook::progress::Progress;
use crate::runbook::report::{IntentStore, JsonlFile, JsonlIntents, RunOutcome, RunSink, Tee};
use crate::runbook::setup::RunbookSetup;
use crate::runbook::vars::{Purpose, Resolved};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

/// The plan of runbook `name` of `catalog` with `vars` (`KEY=VALUE`) over the config's: every
/// request and command as it would be sent, secrets masked; or why there is none.
pub fn plan_of(
    catalog: &Catalog,
    config: &Config,
    name: &str,
    vars: &[String],
) -> Result<String, String> {
    let rb = catalog.find(name).ok_or_else(|| not_found(catalog, name))?;
    let (rb, resolved) = RunbookSetup::from_config(config).bind_given(rb, vars, Purpose::Plan)?;
    let backoff = crate::backoff::Backoff::default();
    Ok(plan::render(&rb, &resolved, &BTreeMap::new(), &backoff))
}

/// Every runbook this command line can see: shipped, then the directories in search order.
pub fn catalog_of(d: &RunbookDirArgs, config: &Config) -> Catalog {
    let dirs = catalog::search_dirs(config.runbook_dir.as_deref(), d.runbooks.as_deref());
    catalog::load_catalog(&dirs)
}

/// What `check` checks without files: `--runbooks DIR` alone, else every searched directory
/// (the shipped runbooks are checked when warroom is built).
fn check_dirs(d: &RunbookDirArgs, config: &Config) -> Result<Loaded, String> {
    let dirs = match &d.runbooks {
        Some(dir) => vec![dir.clone()],
        None => catalog::search_dirs(config.runbook_dir.as_deref(), None),
    };
    let mut all = Loaded::default();
    for dir in dirs {
        let loaded = load::load_dir(&dir).map_err(|e| {
            format!(
                "cannot read the runbook directory \"{}\": {e}; pass --runbooks DIR or set [runbooks] dir in warroom.toml",
                dir.display()
            )
        })?;
        all.runbooks.extend(loaded.runbooks);
        all.broken.extend(loaded.broken);
    }
    Ok(all)
}

fn not_found(catalog: &Catalog, name: &str) -> String {
    if let Some((file, error)) = catalog.broken(name) {
        return format!("runbook \"{file}\" does not load:\n{error}");
    }
    format!(
        "no runbook named \"{}\"; available: {}",
        crate::sanitize::line(name),
        catalog
            .runbooks()
            .map(|r| r.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Run a `runbook` subcommand.
pub async fn run(ctx: &Context, cmd: RunbookCmd) -> color_eyre::Result<ExitCode> {
    let config = ctx.config_or_default();
    let mut out = std::io::stdout().lock();
    match cmd {
        RunbookCmd::List(d) => list(&mut out, &catalog_of(&d, &config)),
        RunbookCmd::Check { files, dir } => check(&mut out, ctx, &config, &files, &dir),
        RunbookCmd::Plan(RunbookNamed { name, dir, vars }) => {
            match plan_of(&catalog_of(&dir, &config), &config, &name, &vars) {
                Ok(text) => write!(out, "{text}")?,
                Err(e) => return usage(&e),
            }
            Ok(ExitCode::SUCCESS)
        }
        RunbookCmd::Run {
            runbook: RunbookNamed { name, dir, vars },
            dry_run,
            yes,
            incident,
            prometheus,
            resume,
            share,
        } => {
            drop(out);
            let engine = match ctx.engine(&share) {
                Ok(e) => e,
                Err(e) => return usage(&e.to_string()),
            };
            let opts = RunOpts {
                dry_run,
                yes,
                incident,
                prometheus,
                resume,
                engine,
            };
            let config = match ctx.config() {
                Ok(c) => c,
                Err(e) => return usage(&e.to_string()),
            };
            run_one(name, dir, vars, opts, config, &ctx.data_dir).await
        }
    }
}

/// `runbook list`: every runbook of `catalog`, one a line, broken ones said, then which of
/// them replace another.
fn list(out: &mut impl Write, catalog: &Catalog) -> color_eyre::Result<ExitCode> {
    for e in &catalog.entries {
        match e {
            catalog::Entry::Ready(r) => {
                let first = r.description.lines().next().unwrap_or("");
                let mutating = r.steps.iter().filter(|s| s.mutating).count();
                writeln!(
                    out,
                    "{:<28} {:>2} steps ({mutating} mutating)  {}  [{}]",
                    r.name,
                    r.steps.len(),
                    crate::sanitize::line(first),
                    catalog::origin(r)
                )?;
            }
            catalog::Entry::Broken { file, error } => {
                let head = error.lines().next().unwrap_or_default();
                writeln!(out, "BROKEN {}  {head}", crate::sanitize::line(file))?;
            }
        }
    }
    for (name, replaced) in &catalog.replaced {
        if *replaced == Origin::Shipped {
            writeln!(
                out,
                "note: {name} is your own; it replaces the built-in one"
            )?;
        } else {
            writeln!(out, "note: {name} replaces the one in {replaced}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `runbook check`: `files`, else the runbook directories, loaded and every broken one said;
/// exit status 1 when one is broken.
fn check(
    out: &mut impl Write,
    ctx: &Context,
    config: &Config,
    files: &[std::path::PathBuf],
    dir: &RunbookDirArgs,
) -> color_eyre::Result<ExitCode> {
    let loaded = if files.is_empty() {
        match check_dirs(dir, config) {
            Ok(l) => l,
            Err(e) => return usage(&e),
        }
    } else {
        load::load_files(files)
    };
    for (_, d) in &loaded.broken {
        writeln!(out, "{d}")?;
    }
    // A config variable no runbook declares is likely a typo: said, not fatal.
    if let Ok(cfg) = ctx.config() {
        let every: Vec<Runbook> = catalog_of(dir, cfg).runbooks().cloned().collect();
        for name in crate::runbook::setup::undeclared(&cfg.runbook_vars, &every) {
            writeln!(
                out,
                "note: [runbooks.vars] \"{name}\" is declared by none of these runbooks; it is ignored (a typo?)"
            )?;
        }
    }
    writeln!(
        out,
        "{} runbook(s) ok, {} broken",
        loaded.runbooks.len(),
        loaded.broken.len()
    )?;
    Ok(if loaded.broken.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A usage error: said on stderr, exit status 2.
fn usage(msg: &str) -> color_eyre::Result<ExitCode> {
    eprintln!("warroom runbook: {msg}");
    Ok(ExitCode::from(EXIT_USAGE))
}

struct RunOpts {
    dry_run: bool,
    yes: bool,
    incident: Option<String>,
    prometheus: Option<String>,
    resume: Option<String>,
    /// The engine the incident is shared through: the run holds its executor lease.
    engine: Option<crate::share::Engine>,
}

/// Runs runbook `name` as `warroom runbook run` was asked to: bound, planned, then run under
/// the executor lease when the incident is shared.
async fn run_one(
    name: String,
    dir: RunbookDirArgs,
    overrides: Vec<String>,
    opts: RunOpts,
    config: &Config,
    data_dir: &Path,
) -> color_eyre::Result<ExitCode> {
    let RunOpts {
        dry_run,
        yes,
        incident,
        prometheus,
        resume,
        engine,
    } = opts;
    let (bound, resolved, source) = match bind_run(config, &dir, &name, &overrides, dry_run) {
        Ok(b) => b,
        Err(e) => return usage(&e),
    };
    let rb = &bound;
    // `--prometheus` is already in the config (the context applied it).
    let _ = prometheus;
    let started = chrono::Utc::now();
    let runs = data_dir.join("runs");
    let (journal, _serving) = match open_for_run(data_dir, incident.as_deref(), dry_run) {
        Ok(j) => j,
        Err(e) => return usage(&e),
    };
    let operator = operator(yes);
    let at = start_point(rb, &runs, journal.as_ref(), resume, started, &*operator);
    let (run_id, from) = match at.await {
        Ok(Some(at)) => at,
        Ok(None) => return Ok(ExitCode::from(RunOutcome::Aborted.exit_code())),
        Err(e) => return usage(&e),
    };
    // The plan first, always: the operator sees every request and command before anything runs.
    print_plan(rb, &resolved, source.as_ref(), &run_id).await?;
    // Across machines, one responder runs at a time: the lease before the first action.
    let lease = match executor_lease(engine.as_ref(), incident.as_deref(), rb, dry_run).await {
        Ok(l) => l,
        Err(code) => return Ok(code),
    };
    let (sink, intents) = run_records(journal.as_ref(), rb, &run_id, &runs, dry_run)?;
    let writer = journal.map(|(w, _)| w);
    let (abort, control) = control_on_signal(writer.clone());
    let mut exec = crate::runbook::launch::executor(
        rb,
        resolved,
        source,
        &run_id,
        Arc::new(crate::clock::WallClock),
    )?;
    exec.sink = Arc::new(sink);
    exec.intents = intents;
    exec.operator = operator;
    exec.control = control;
    exec.dry_run = dry_run;
    let outcome = match lease {
        Some(held) => run_holding(exec, from, held, abort).await,
        None => exec.run_from(from).await,
    };
    if outcome == RunOutcome::DryRun {
        println!("dry run: nothing was sent and nothing was started");
    }
    if let (Some(engine), Some(id)) = (&engine, &incident) {
        share_run(engine, data_dir, id).await;
    }
    Ok(ExitCode::from(outcome.exit_code()))
}

/// The operator who confirms each step: with `--yes`, every step is confirmed; else the
/// terminal asks.
fn operator(yes: bool) -> Arc<dyn Operator> {
    if yes {
        Arc::new(AssumeYes)
    } else {
        Arc::new(LineOperator::stdio())
    }
}

/// A runbook bound for a run: its variables resolved, and the source its gates read.
type BoundRun = (Runbook, Resolved, Option<Arc<dyn crate::metrics::Source>>);

/// Runbook `name` of the catalog bound to `overrides` for a run, with the source its gates
/// read; or the usage error that stops it.
fn bind_run(
    config: &Config,
    dir: &RunbookDirArgs,
    name: &str,
    overrides: &[String],
    dry_run: bool,
) -> Result<BoundRun, String> {
    let catalog = catalog_of(dir, config);
    let rb = catalog
        .find(name)
        .ok_or_else(|| not_found(&catalog, name))?;
    // Durations that name a variable take the run's value.
    let (bound, resolved) =
        RunbookSetup::from_config(config).bind_given(rb, overrides, Purpose::Run)?;
    let source = crate::metrics::from_config::optional(config).map_err(|e| e.to_string())?;
    let needs_source = bound.steps.iter().any(|s| s.kind.uses_metrics());
    if needs_source && source.is_none() && !dry_run {
        return Err(
            "this runbook has gates: pass --prometheus URL (e.g. http://127.0.0.1:9090)".into(),
        );
    }
    Ok((bound, resolved, source))
}

/// The journal of `incident` for a run that is recorded (not a dry run), with the socket the
/// team records through while the run holds it; or why it cannot be opened.
fn open_for_run(
    data_dir: &Path,
    incident: Option<&str>,
    dry_run: bool,
) -> Result<(Option<OpenJournal>, Option<crate::incident::serve::Serving>), String> {
    // With an incident, the run is recorded on its timeline (and takes its lock: one writer).
    let journal = match incident {
        Some(id) if !dry_run => Some(open_journal(data_dir, id)?),
        _ => None,
    };
    // The team records through this run while it holds the incident: a note during a long
    // run goes through its socket instead of waiting for the lock.
    let serving = journal.as_ref().and_then(|(writer, _)| {
        crate::incident::serve::serve(writer.clone(), None, Default::default())
            .inspect_err(|e| {
                eprintln!("warning: {e}; other responders cannot record during this run");
            })
            .ok()
    });
    Ok((journal, serving))
}

/// The run's id and the step it starts at: a new run from its first step, or run `resume`
/// where it stopped (an empty id names the last unfinished run of `rb` in the journal);
/// `Ok(None)` when the operator aborts at an in-doubt step.
async fn start_point(
    rb: &Runbook,
    runs: &Path,
    journal: Option<&OpenJournal>,
    resume: Option<String>,
    started: chrono::DateTime<chrono::Utc>,
    operator: &dyn Operator,
) -> Result<Option<(String, Option<usize>)>, String> {
    let resume = match resume {
        Some(id) if id.is_empty() => {
            let last = journal.and_then(|(_, records)| {
                crate::runbook::journal::unfinished_runs(records)
                    .into_iter()
                    .rev()
                    .find(|r| r.runbook == rb.name)
            });
            match last {
                Some(r) => Some(r.run_id),
                None => {
                    return Err(format!(
                        "no unfinished run of \"{}\" to resume{}; pass --resume RUN_ID (the id is on the run's first line)",
                        rb.name,
                        if journal.is_some() {
                            " in this incident"
                        } else {
                            " (without --incident, name the run)"
                        }
                    ));
                }
            }
        }
        other => other,
    };
    Ok(match resume {
        None => Some((rb.run_id(started), None)),
        Some(id) => resume_at(rb, runs, journal, &id, operator)
            .await?
            .map(|at| (id, Some(at))),
    })
}

/// Prints the plan of `rb`: every request and command as it will be sent, with the batch
/// targets `source` gives now.
async fn print_plan(
    rb: &Runbook,
    resolved: &Resolved,
    source: Option<&Arc<dyn crate::metrics::Source>>,
    run_id: &str,
) -> color_eyre::Result<()> {
    let backoff = crate::backoff::Backoff::default();
    let mut targets = BTreeMap::new();
    if let Some(src) = source {
        let probe = crate::runbook::launch::executor(
            rb,
            resolved.clone(),
            Some(src.clone()),
            run_id,
            Arc::new(crate::clock::WallClock),
        )?;
        targets = crate::runbook::launch::probe_targets(&probe).await;
    }
    print!("{}", plan::render(rb, resolved, &targets, &backoff));
    println!();
    Ok(())
}

/// Where run `run_id` records its transitions and intents: the incident's journal when there
/// is one, else its own file under `runs` (none for a dry run) and the shared intents file;
/// the transitions then go to the screen.
fn run_records(
    journal: Option<&OpenJournal>,
    rb: &Runbook,
    run_id: &str,
    runs: &Path,
    dry_run: bool,
) -> color_eyre::Result<(Tee, Arc<dyn IntentStore>)> {
    // The durable record first: a line on screen says a transition is recorded, so it is
    // printed only once the journal (or the run's file) holds it.
    let mut sinks: Vec<Box<dyn RunSink>> = Vec::new();
    let intents: Arc<dyn IntentStore> = match journal {
        Some((writer, records)) => {
            sinks.push(Box::new(JournalSink::new(
                writer.clone(),
                RunRef {
                    run_id: run_id.to_string(),
                    runbook: rb.name.clone(),
                    hash: rb.hash.clone(),
                },
            )));
            Arc::new(JournalIntents::new(writer.clone(), run_id, records))
        }
        None => {
            if !dry_run {
                sinks.push(Box::new(JsonlFile::open(
                    &runs.join(format!("{run_id}.jsonl")),
                )?));
            }
            Arc::new(JsonlIntents::open(&runs.join("intents.jsonl"))?)
        }
    };
    let progress: Box<dyn RunSink> = Box::new(Progress);
    Ok((Tee(sinks.into_iter().chain([progress]).collect()), intents))
}

/// The run's control: the sender that aborts it and the receiver its executor watches. On
/// SIGINT or SIGTERM the run takes no new action; the interruption is recorded in `writer`'s
/// journal and the run ends.
fn control_on_signal(
    writer: Option<JournalWriter>,
) -> (
    Arc<tokio::sync::watch::Sender<Control>>,
    tokio::sync::watch::Receiver<Control>,
) {
    let (control_tx, control) = tokio::sync::watch::channel(Control::Run);
    let control_tx = Arc::new(control_tx);
    let abort = control_tx.clone();
    let mut signals = crate::signals::Signals::new();
    tokio::spawn(async move {
        let signal = signals.next().await;
        // Recorded first (bounded), so the timeline shows the signal before the run's end.
        if let Some(w) = writer {
            let event = crate::incident::event::Event::Interrupted {
                signal: signal.into(),
            };
            let append = w.append(Source::System, "warroom", event);
            match tokio::time::timeout(std::time::Duration::from_secs(2), append).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    eprintln!("warroom runbook: the interruption could not be recorded: {e}");
                }
                Err(_) => eprintln!("warroom runbook: recording the interruption timed out"),
            }
        }
        let _ = control_tx.send(Control::Abort);
    });
    (abort, control)
}

/// The executor lease of the shared incident, for a run that changes something: `None` when
/// the incident is not shared (or the run changes nothing, or only plans); the exit status
/// when another responder holds it or the engine cannot be asked (nothing has run).
async fn executor_lease(
    engine: Option<&crate::share::Engine>,
    incident: Option<&str>,
    rb: &crate::runbook::model::Runbook,
    dry_run: bool,
) -> Result<Option<crate::share::lease::Holding>, ExitCode> {
    use crate::share::lease::{ForRun, for_run};
    let Some(engine) = engine.filter(|_| !dry_run && rb.steps.iter().any(|s| s.mutating)) else {
        return Ok(None);
    };
    let Some(id) = incident else {
        eprintln!(
            "warroom runbook: --share needs --incident ID: the executor lease is the incident's"
        );
        return Err(ExitCode::from(EXIT_USAGE));
    };
    let parsed = crate::incident::IncidentId::parse(id).map_err(|e| {
        eprintln!("warroom runbook: {e}");
        ExitCode::from(EXIT_USAGE)
    })?;
    let holder = crate::share::lease::holder_name();
    let not_run = ExitCode::from(RunOutcome::Aborted.exit_code());
    match for_run(engine, &parsed, &holder).await {
        Ok(ForRun::Held(held)) => {
            println!("executor lease of {id} held by {holder} for this run");
            Ok(Some(held))
        }
        Ok(ForRun::Busy { by }) => {
            eprintln!(
                "warroom runbook: not run: {by} holds the executor lease of {id} (one responder \
                 runs at a time); propose the run to them, or run it after theirs ends (a lease \
                 lapses {} s after its holder stops renewing it)",
                crate::share::lease::TIMEOUT.as_secs()
            );
            Err(not_run)
        }
        Err(e) => {
            eprintln!(
                "warroom runbook: not run: the executor lease of {id} could not be asked for: {e}"
            );
            Err(not_run)
        }
    }
}

/// Runs `exec` while holding the lease: a lost lease aborts the run (no new action: another
/// responder may hold it now); the lease is given back at the end.
async fn run_holding(
    exec: crate::runbook::executor::Executor,
    from: Option<usize>,
    held: crate::share::lease::Holding,
    abort: Arc<tokio::sync::watch::Sender<Control>>,
) -> RunOutcome {
    let mut lost = held.lost.clone();
    let run = exec.run_from(from);
    tokio::pin!(run);
    let outcome = tokio::select! {
        outcome = &mut run => outcome,
        _ = lost.wait_for(Option::is_some) => {
            let why = held.lost.borrow().clone().unwrap_or_default();
            eprintln!("warroom runbook: {why}: no new action; the run stops");
            let _ = abort.send(Control::Abort);
            run.await
        }
    };
    if let Err(e) = held.release().await {
        eprintln!("warning: the executor lease was not given back ({e}); it lapses by itself");
    }
    outcome
}

/// Shares what the run recorded in `id` through `engine` (said, never fatal: the journal
/// keeps it and the next command or console on the engine shares it).
async fn share_run(engine: &crate::share::Engine, data_dir: &Path, id: &str) {
    let Ok(parsed) = crate::incident::IncidentId::parse(id) else {
        return;
    };
    let store = crate::incident::store::Store::new(data_dir);
    if let Err(e) = crate::share::local::share_journal(engine, &store, &parsed).await {
        eprintln!("warning: the run is recorded here but not shared yet: {e}");
    }
}

/// The incident's journal, locked for this run, with the records it already holds.
type OpenJournal = (JournalWriter, Vec<crate::incident::record::Record>);

fn open_journal(data_dir: &Path, id: &str) -> Result<OpenJournal, String> {
    let store = crate::incident::store::Store::new(data_dir);
    let id = store.find(id).map_err(|e| e.to_string())?;
    let (incident, recovery) = store
        .open_incident(&id, crate::incident::store::Role::Runbook)
        .map_err(|e| e.to_string())?;
    if let Some(t) = &recovery.torn {
        eprintln!(
            "warroom runbook: the journal's last line was torn ({}); it was set aside",
            t.reason
        );
    }
    let writer = JournalWriter::spawn(incident)
        .map_err(|e| format!("cannot start the journal writer of incident \"{id}\": {e}"))?;
    Ok((writer, recovery.records))
}

/// Where a resumed run continues: `Ok(None)` when the operator aborts at an in-doubt step.
/// The run is read from the incident's journal when there is one, else from its own file.
async fn resume_at(
    rb: &Runbook,
    runs: &Path,
    journal: Option<&OpenJournal>,
    id: &str,
    operator: &dyn Operator,
) -> Result<Option<usize>, String> {
    if id.contains('/') || id.contains("..") || id.is_empty() {
        return Err(format!("\"{}\" is not a run id", crate::sanitize::line(id)));
    }
    let records = match journal {
        Some((_, records)) => crate::runbook::journal::run_records(records, id),
        None => {
            let path = runs.join(format!("{id}.jsonl"));
            crate::runbook::resume::read_records(&path)
                .map_err(|e| format!("cannot read run \"{}\": {e}", path.display()))?
        }
    };
    let p = crate::runbook::resume::resume_point(rb, &records).map_err(|e| e.to_string())?;
    let Some(step) = &p.in_doubt else {
        return Ok(Some(p.next_step));
    };
    let at = rb
        .steps
        .iter()
        .position(|s| &s.id == step)
        .unwrap_or(p.next_step);
    let d = operator
        .decide(
            step,
            "it started but did not finish before the run stopped (in doubt): retry re-sends with the same idempotency key; continue treats it as done",
        )
        .await;
    Ok(match d {
        crate::runbook::batch::Decision::Retry => Some(at),
        crate::runbook::batch::Decision::Continue => Some(at + 1),
        crate::runbook::batch::Decision::Abort => None,
    })
}
