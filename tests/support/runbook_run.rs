//! Running a runbook from its TOML text in a test: variables from `--var`-style overrides and
//! a given environment, every event kept, `--yes` semantics (confirms; aborts at a failure).

#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;
use warroom::incident::JournalWriter;
use warroom::incident::event::RunRef;
use warroom::metrics::Source;
use warroom::runbook::executor::{Control, Executor};
use warroom::runbook::journal::{JournalIntents, JournalSink};
use warroom::runbook::model::Runbook;
use warroom::runbook::operator::AssumeYes;
use warroom::runbook::report::{
    IntentStore, MemoryIntents, MemorySink, RecordError, RunEvent, RunOutcome, RunRecord, RunSink,
    StepOutcome, Tee,
};
use warroom::runbook::{http, load, vars};

/// The test's memory sink beside the journal's (a `Tee` owns its sinks).
struct Shared(Arc<MemorySink>);

impl RunSink for Shared {
    fn record(&self, record: &RunRecord) -> Result<(), RecordError> {
        self.0.record(record)
    }
}

/// A finished run.
pub struct Ran {
    pub outcome: RunOutcome,
    pub events: Vec<RunEvent>,
    /// Every record with its time.
    pub records: Vec<warroom::runbook::report::RunRecord>,
}

impl Ran {
    /// How step `id` finished, with its detail.
    pub fn step(&self, id: &str) -> Option<(StepOutcome, String)> {
        self.events.iter().find_map(|e| match e {
            RunEvent::StepFinished {
                step,
                outcome,
                detail,
            } if step == id => Some((*outcome, detail.clone())),
            _ => None,
        })
    }

    /// The output lines of step `id` (the run pane's table and readings).
    pub fn output(&self, id: &str) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e {
                RunEvent::Output { step, line } if step == id => Some(line.clone()),
                _ => None,
            })
            .collect()
    }

    /// Whether step `id` started at all.
    pub fn started(&self, id: &str) -> bool {
        self.events
            .iter()
            .any(|e| matches!(e, RunEvent::StepStarted { step, .. } if step == id))
    }

    /// Every event as JSON, for searching for secrets.
    pub fn json(&self) -> String {
        serde_json::to_string(&self.events).unwrap()
    }
}

/// Parse `src` (panics with the diagnostics when it does not load).
pub fn parse(src: &str) -> Runbook {
    match load::parse("t.toml", Path::new("t.toml"), src) {
        Ok(r) => r,
        Err(d) => panic!("the runbook does not load:\n{d}"),
    }
}

/// Run the runbook `src` with `overrides` (`k=v`) and `env` for variables that read the
/// environment.
pub async fn run(
    src: &str,
    overrides: &[String],
    env: &[(&str, &str)],
    source: Option<Arc<dyn Source>>,
) -> Ran {
    run_recorded(src, overrides, env, source, None).await
}

/// [`run`], recorded on an incident's timeline too when `journal` is given (its writer and the
/// records it holds), as the console records a run: the journal's sink and intents.
pub async fn run_recorded(
    src: &str,
    overrides: &[String],
    env: &[(&str, &str)],
    source: Option<Arc<dyn Source>>,
    journal: Option<(&JournalWriter, &[warroom::incident::Record])>,
) -> Ran {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let rb = parse(src);
    let vars = vars::resolve(&rb, overrides, |k| {
        env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    })
    .unwrap();
    let rb = load::bind_text(&rb, src, &vars.values).unwrap();
    let sink = Arc::new(MemorySink::default());
    let (_control, rx) = tokio::sync::watch::channel(Control::Run);
    let (run_id, sinks, intents): (String, Arc<dyn RunSink>, Arc<dyn IntentStore>) = match journal {
        None => (
            "run-1".into(),
            sink.clone(),
            Arc::new(MemoryIntents::default()),
        ),
        Some((writer, records)) => {
            let run_id = rb.run_id(chrono::Utc::now());
            let run = RunRef {
                run_id: run_id.clone(),
                runbook: rb.name.clone(),
                hash: rb.hash.clone(),
            };
            let tee = Tee(vec![
                Box::new(JournalSink::new(writer.clone(), run)),
                Box::new(Shared(sink.clone())),
            ]);
            let intents = JournalIntents::new(writer.clone(), &run_id, records);
            (run_id, Arc::new(tee), Arc::new(intents))
        }
    };
    let exec = Executor {
        runbook: rb,
        vars,
        source,
        sender: http::Sender::new(
            warroom::backoff::Backoff::default(),
            http::run_retry_budget(),
        )
        .unwrap(),
        sink: sinks,
        intents,
        operator: Arc::new(AssumeYes),
        control: rx,
        clock: Arc::new(warroom::clock::WallClock),
        run_id,
        dry_run: false,
    };
    let outcome = exec.run().await;
    Ran {
        outcome,
        events: sink.events(),
        records: sink.0.lock().unwrap().clone(),
    }
}
