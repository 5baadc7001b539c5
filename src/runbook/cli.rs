//! `warroom runbook list | check | plan | run`: the headless face of the runbook domain.

use super::executor::Control;
use super::journal::{JournalIntents, JournalSink};
use super::load::{self, Loaded};
use super::model::{Runbook, StepKind};
use super::operator::{AssumeYes, LineOperator, Operator};
use super::progress::Progress;
use super::record::{IntentStore, JsonlFile, JsonlIntents, RunOutcome, RunSink, Tee};
use super::{plan, vars};
use crate::cli::{RunbookCmd, RunbookDirArgs};
use crate::incident::event::{RunRef, Source};
use crate::incident::writer::JournalWriter;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Exit status when runbooks do not load or arguments are wrong.
pub const EXIT_USAGE: u8 = 2;

/// `--runbooks`, else `./runbooks` when it exists, else the config's `[runbooks] dir`.
fn dir_of(d: &RunbookDirArgs, config: Option<&Path>) -> PathBuf {
    let here = PathBuf::from("runbooks");
    if let Some(dir) = &d.runbooks {
        return dir.clone();
    }
    if here.is_dir() {
        return here;
    }
    crate::config::Config::load(config)
        .ok()
        .and_then(|c| c.runbook_dir)
        .unwrap_or(here)
}

fn load_dir(d: &RunbookDirArgs, config: Option<&Path>) -> Result<Loaded, String> {
    let dir = dir_of(d, config);
    load::load_dir(&dir).map_err(|e| {
        format!(
            "cannot read the runbook directory \"{}\": {e}; pass --runbooks DIR or set [runbooks] dir in warroom.toml",
            dir.display()
        )
    })
}

fn find<'a>(loaded: &'a Loaded, name: &str) -> Option<&'a Runbook> {
    loaded.runbooks.iter().find(|r| r.name == name).or_else(|| {
        loaded
            .runbooks
            .iter()
            .find(|r| r.file.file_stem().is_some_and(|s| s == name))
    })
}

fn not_found(loaded: &Loaded, name: &str) -> String {
    let mut msg = format!(
        "no runbook named \"{}\"; available: {}",
        crate::sanitize::line(name),
        loaded
            .runbooks
            .iter()
            .map(|r| r.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some((f, d)) = loaded
        .broken
        .iter()
        .find(|(f, _)| f.file_stem().is_some_and(|s| s == name))
    {
        msg = format!("runbook \"{}\" does not load:\n{d}", f.display());
    }
    msg
}

/// Run a `runbook` subcommand.
pub async fn run(
    cmd: RunbookCmd,
    config: Option<&Path>,
    data_dir: &Path,
) -> color_eyre::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match cmd {
        RunbookCmd::List(d) => {
            let loaded = match load_dir(&d, config) {
                Ok(l) => l,
                Err(e) => return usage(&e),
            };
            for r in &loaded.runbooks {
                let first = r.description.lines().next().unwrap_or("");
                let mutating = r.steps.iter().filter(|s| s.mutating).count();
                writeln!(
                    out,
                    "{:<20} {} steps ({mutating} mutating)  {}",
                    r.name,
                    r.steps.len(),
                    crate::sanitize::line(first)
                )?;
            }
            for (f, d) in &loaded.broken {
                let head = d.0.first().map(|x| x.headline()).unwrap_or_default();
                writeln!(out, "BROKEN {}  {head}", f.display())?;
            }
            Ok(ExitCode::SUCCESS)
        }
        RunbookCmd::Check { files, dir } => {
            let loaded = if files.is_empty() {
                match load_dir(&dir, config) {
                    Ok(l) => l,
                    Err(e) => return usage(&e),
                }
            } else {
                load::load_files(&files)
            };
            for (_, d) in &loaded.broken {
                writeln!(out, "{d}")?;
            }
            // A config variable no runbook declares is likely a typo: said, not fatal.
            if let Ok(cfg) = crate::config::Config::load(config) {
                for name in crate::config::runbooks::undeclared(&cfg.runbook_vars, &loaded.runbooks)
                {
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
        RunbookCmd::Plan { name, dir, vars } => {
            let loaded = match load_dir(&dir, config) {
                Ok(l) => l,
                Err(e) => return usage(&e),
            };
            let Some(rb) = find(&loaded, &name) else {
                return usage(&not_found(&loaded, &name));
            };
            let resolved = match resolve_with_config(rb, &vars, config) {
                Ok(v) => v,
                Err(e) => return usage(&e),
            };
            let rb = &match load::bind(rb, &resolved.values) {
                Ok(b) => b,
                Err(d) => return usage(&d.to_string()),
            };
            let backoff = crate::backoff::Backoff::default();
            write!(
                out,
                "{}",
                plan::render(rb, &resolved, &BTreeMap::new(), &backoff)
            )?;
            Ok(ExitCode::SUCCESS)
        }
        RunbookCmd::Run {
            name,
            dir,
            vars,
            dry_run,
            yes,
            incident,
            prometheus,
            resume,
        } => {
            drop(out);
            let opts = RunOpts {
                dry_run,
                yes,
                incident,
                prometheus,
                resume,
            };
            run_one(name, dir, vars, opts, config, data_dir).await
        }
    }
}

/// `rb`'s variables with the config's `[runbooks.vars]` under `--var`.
fn resolve_with_config(
    rb: &Runbook,
    cli: &[String],
    config: Option<&Path>,
) -> Result<vars::Resolved, String> {
    let cfg = crate::config::Config::load(config).map_err(|e| e.to_string())?;
    crate::config::runbooks::resolve(&cfg, rb, cli)
}

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
}

async fn run_one(
    name: String,
    dir: RunbookDirArgs,
    overrides: Vec<String>,
    opts: RunOpts,
    config: Option<&Path>,
    data_dir: &Path,
) -> color_eyre::Result<ExitCode> {
    let RunOpts {
        dry_run,
        yes,
        incident,
        prometheus,
        resume,
    } = opts;
    let loaded = match load_dir(&dir, config) {
        Ok(l) => l,
        Err(e) => return usage(&e),
    };
    let Some(rb) = find(&loaded, &name) else {
        return usage(&not_found(&loaded, &name));
    };
    let resolved = match resolve_with_config(rb, &overrides, config) {
        Ok(v) => v,
        Err(e) => return usage(&e),
    };
    // Durations that name a variable take the run's value.
    let bound = match load::bind(rb, &resolved.values) {
        Ok(b) => b,
        Err(d) => return usage(&d.to_string()),
    };
    let rb = &bound;
    let source = match metrics_source(config, prometheus) {
        Ok(s) => s,
        Err(e) => return usage(&e),
    };
    let needs_source = rb.steps.iter().any(|s| {
        matches!(
            s.kind,
            StepKind::Check(_) | StepKind::Wait { .. } | StepKind::Batch(_)
        )
    });
    if needs_source && source.is_none() && !dry_run {
        return usage("this runbook has gates: pass --prometheus URL (e.g. http://127.0.0.1:9090)");
    }
    let started = chrono::Utc::now();
    let runs = data_dir.join("runs");
    // With an incident, the run is recorded on its timeline (and takes its lock: one writer).
    let journal = match &incident {
        Some(id) if !dry_run => match open_journal(data_dir, id) {
            Ok(j) => Some(j),
            Err(e) => return usage(&e),
        },
        _ => None,
    };
    let operator: Arc<dyn Operator> = if yes {
        Arc::new(AssumeYes)
    } else {
        Arc::new(LineOperator::stdio())
    };
    let resume = match resume {
        Some(id) if id.is_empty() => {
            let last = journal.as_ref().and_then(|(_, records)| {
                super::journal::unfinished_runs(records)
                    .into_iter()
                    .rev()
                    .find(|r| r.runbook == rb.name)
            });
            match last {
                Some(r) => Some(r.run_id),
                None => {
                    return usage(&format!(
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
    let (run_id, from) = match &resume {
        None => (
            format!("{}-{}", rb.name, started.format("%Y%m%dT%H%M%S%.3fZ")),
            None,
        ),
        Some(id) => match resume_at(rb, &runs, journal.as_ref(), id, operator.as_ref()).await {
            Ok(Some(at)) => (id.clone(), Some(at)),
            Ok(None) => return Ok(ExitCode::from(RunOutcome::Aborted.exit_code())),
            Err(e) => return usage(&e),
        },
    };
    let backoff = crate::backoff::Backoff::default();
    // The plan first, always: the operator sees every request and command before anything runs.
    let mut targets = BTreeMap::new();
    if let Some(src) = &source {
        let probe = super::launch::executor(
            rb,
            resolved.clone(),
            Some(src.clone()),
            &run_id,
            Arc::new(crate::clock::WallClock),
        )?;
        targets = super::launch::probe_targets(&probe).await;
    }
    print!("{}", plan::render(rb, &resolved, &targets, &backoff));
    println!();
    // The durable record first: a line on screen says a transition is recorded, so it is
    // printed only once the journal (or the run's file) holds it.
    let mut sinks: Vec<Box<dyn RunSink>> = Vec::new();
    let intents: Arc<dyn IntentStore> = match &journal {
        Some((writer, records)) => {
            sinks.push(Box::new(JournalSink::new(
                writer.clone(),
                RunRef {
                    run_id: run_id.clone(),
                    runbook: rb.name.clone(),
                    hash: rb.hash.clone(),
                },
            )));
            Arc::new(JournalIntents::new(writer.clone(), &run_id, records))
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
    let writer = journal.map(|(w, _)| w);
    let (control_tx, control) = tokio::sync::watch::channel(Control::Run);
    // SIGINT or SIGTERM: no new action; the run records the interruption and ends.
    let interrupted = writer.clone();
    let mut signals = crate::signals::Signals::new();
    tokio::spawn(async move {
        let signal = signals.next().await;
        // Recorded first (bounded), so the timeline shows the signal before the run's end.
        if let Some(w) = interrupted {
            let event = crate::incident::event::Event::Interrupted {
                signal: signal.into(),
            };
            let append = w.append(Source::System, "warroom", event);
            match tokio::time::timeout(std::time::Duration::from_secs(2), append).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    eprintln!("warroom runbook: the interruption could not be recorded: {e}")
                }
                Err(_) => eprintln!("warroom runbook: recording the interruption timed out"),
            }
        }
        let _ = control_tx.send(Control::Abort);
    });
    let mut exec = super::launch::executor(
        rb,
        resolved,
        source,
        &run_id,
        Arc::new(crate::clock::WallClock),
    )?;
    exec.sink = Arc::new(Tee(sinks.into_iter().chain([progress]).collect()));
    exec.intents = intents;
    exec.operator = operator;
    exec.control = control;
    exec.dry_run = dry_run;
    let outcome = exec.run_from(from).await;
    if outcome == RunOutcome::DryRun {
        println!("dry run: nothing was sent and nothing was started");
    }
    Ok(ExitCode::from(outcome.exit_code()))
}

/// The dashboard's Prometheus client, with the config's auth, headers and deadline: gates and
/// target queries go through the same client (and the same response-size limits) as panels.
/// `--prometheus` overrides the config's URL; with neither there is no source.
fn metrics_source(
    config: Option<&Path>,
    prometheus: Option<String>,
) -> Result<Option<Arc<dyn crate::metrics::Source>>, String> {
    let mut cfg = crate::config::Config::load(config).map_err(|e| e.to_string())?;
    if let Some(url) = prometheus {
        cfg.prometheus.url = Some(url.trim_end_matches('/').to_string());
    }
    if cfg.prometheus.url.is_none() {
        return Ok(None);
    }
    crate::metrics::from_config::from_config(&cfg)
        .map(Some)
        .map_err(|e| e.to_string())
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
        Some((_, records)) => super::journal::run_records(records, id),
        None => {
            let path = runs.join(format!("{id}.jsonl"));
            super::resume::read_records(&path)
                .map_err(|e| format!("cannot read run \"{}\": {e}", path.display()))?
        }
    };
    let p = super::resume::resume_point(rb, &records).map_err(|e| e.to_string())?;
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
        super::batch::Decision::Retry => Some(at),
        super::batch::Decision::Continue => Some(at + 1),
        super::batch::Decision::Abort => None,
    })
}
