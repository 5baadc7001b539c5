//! The executor: drives a runbook's steps in order, checking pause and abort between every
//! action, asking for typed confirmation before destructive steps, recording every transition,
//! and pausing for the operator on any failure. A dry run records the plan and does nothing:
//! no process, no request.

use super::batch::Decision;
use super::gate::{self, Condition, Expect, GateRun, GateSpec, Reading, Verdict};
use super::http::Sender;
use super::model::{Runbook, Step};
use super::operator::{Confirmation, Consent, Operator};
use super::report::{IntentStore, RunEvent, RunOutcome, RunRecord, RunSink, StepOutcome};
use super::template::Context;
use super::vars::Resolved;
use crate::clock::SharedClock;
use crate::metrics::{InstantQuery, QueryAnswer, Source, SourceError};
use chrono::{DateTime, Utc};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

mod acting;
mod batch_run;
mod steps;

/// What the console (or a signal handler) asks of a running executor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Run,
    /// No new action until `Run` again.
    Pause,
    /// No new action; the run ends. Resuming needs a new run and a new confirmation.
    Abort,
}

/// Most output lines of one step sent to the sink (the tail is kept regardless).
pub const MAX_OUTPUT_EVENTS: usize = 500;

/// A skippable step the operator chose to go on without.
pub(crate) const SKIPPED_BY_OPERATOR: &str = "not confirmed; skipped, as the runbook allows";

/// Everything a run needs.
pub struct Executor {
    pub runbook: Runbook,
    pub vars: Resolved,
    /// Prometheus (or the embedded store) for gates and target queries.
    pub source: Option<Arc<dyn Source>>,
    pub sender: Sender,
    pub sink: Arc<dyn RunSink>,
    pub intents: Arc<dyn IntentStore>,
    pub operator: Arc<dyn Operator>,
    pub control: watch::Receiver<Control>,
    pub clock: SharedClock,
    pub run_id: String,
    pub dry_run: bool,
}

/// Why a run stops early.
#[derive(Debug)]
pub(crate) enum Stop {
    Aborted,
    /// The sink refused a record: nothing more may happen unrecorded.
    NotRecorded(String),
}

impl Executor {
    /// Pauses on `step` for the operator's decision, both recorded.
    pub(crate) async fn decide(&self, step: &str, reason: String) -> Result<Decision, Stop> {
        self.emit(RunEvent::Paused {
            step: step.to_string(),
            reason: reason.clone(),
        })?;
        let decision = self.operator.decide(step, &reason).await;
        self.emit(RunEvent::Decided {
            step: step.to_string(),
            decision,
        })?;
        Ok(decision)
    }

    pub(crate) fn emit(&self, event: RunEvent) -> Result<(), Stop> {
        let record = RunRecord {
            at: self.clock.now(),
            run_id: self.run_id.clone(),
            event,
        };
        self.sink
            .record(&record)
            .map_err(|e| Stop::NotRecorded(e.to_string()))
    }

    /// Wait while paused; `Err` when aborted. Called before every action.
    pub(crate) async fn checkpoint(&self) -> Result<(), Stop> {
        let mut rx = self.control.clone();
        loop {
            let c = *rx.borrow_and_update();
            match c {
                Control::Run => return Ok(()),
                Control::Abort => return Err(Stop::Aborted),
                Control::Pause => {
                    if rx.changed().await.is_err() {
                        // Nobody can resume: treat as abort rather than act unattended.
                        return Err(Stop::Aborted);
                    }
                }
            }
        }
    }

    /// Sleep `d` on the run's clock, but wake at once when the operator pauses or aborts, then
    /// honour it: a pause or abort takes effect within one tick, not after a gate's interval.
    pub(crate) async fn idle(&self, d: Duration) -> Result<(), Stop> {
        let mut rx = self.control.clone();
        let changed = async {
            loop {
                if *rx.borrow_and_update() != Control::Run {
                    return;
                }
                if rx.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        };
        tokio::select! {
            _ = self.clock.sleep(d) => {}
            _ = changed => {}
        }
        self.checkpoint().await
    }

    /// Run the runbook to its end.
    pub async fn run(&self) -> RunOutcome {
        self.run_from(None).await
    }

    /// Run from step index `from` (a resume: the same run id, so the same idempotency keys),
    /// or from the start when `None`.
    pub async fn run_from(&self, from: Option<usize>) -> RunOutcome {
        let outcome = match self.run_inner(from).await {
            Ok(o) => o,
            Err(Stop::Aborted) => RunOutcome::Aborted,
            Err(Stop::NotRecorded(e)) => {
                tracing::error!("run stopped: {e}");
                return RunOutcome::Failed;
            }
        };
        let _ = self.emit(RunEvent::RunFinished { outcome });
        tracing::info!(run = %self.run_id, runbook = %self.runbook.name, ?outcome, "run finished");
        outcome
    }

    async fn run_inner(&self, from: Option<usize>) -> Result<RunOutcome, Stop> {
        tracing::info!(run = %self.run_id, runbook = %self.runbook.name, from, "run started");
        match from {
            None => self.emit(RunEvent::RunStarted {
                runbook: self.runbook.name.clone(),
                hash: self.runbook.hash.clone(),
                dry_run: self.dry_run,
                variables: self.vars.shown.clone(),
            })?,
            Some(i) => self.emit(RunEvent::RunResumed {
                from_step: self
                    .runbook
                    .steps
                    .get(i)
                    .map_or_else(|| "(end)".to_string(), |s| s.id.clone()),
            })?,
        }
        let mut i = from.unwrap_or(0);
        // When the last mutating step ended: the gates after it judge only samples taken
        // since. A resumed run does not know when an earlier one ended: from the resume on.
        let mut changed = None;
        if self.runbook.steps[..i.min(self.runbook.steps.len())]
            .iter()
            .any(|s| s.mutating)
        {
            changed = Some(self.source_now().await);
        }
        while i < self.runbook.steps.len() {
            let step = &self.runbook.steps[i];
            self.checkpoint().await?;
            let title = self
                .vars
                .masker
                .mask(&step.title_rendered(&self.vars.values));
            self.emit(RunEvent::StepStarted {
                step: step.id.clone(),
                kind: step.kind.name().into(),
                title: title.clone(),
            })?;
            if self.dry_run {
                self.finish(step, StepOutcome::Skipped, "dry run")?;
                i += 1;
                continue;
            }
            if step.mutating && !step.kind.confirms_itself() {
                let c = Confirmation {
                    step: step.id.clone(),
                    summary: format!("Step \"{}\": {title}", step.id),
                    word: step.id.clone(),
                    skippable: step.skippable,
                };
                match self.confirm(&c).await? {
                    Consent::Given => {}
                    Consent::Skipped => {
                        self.finish(step, StepOutcome::Skipped, SKIPPED_BY_OPERATOR)?;
                        i += 1;
                        continue;
                    }
                    Consent::Refused => {
                        self.finish(step, StepOutcome::Declined, "not confirmed")?;
                        return Ok(RunOutcome::Aborted);
                    }
                }
            }
            let (outcome, detail) = self.step(step, changed).await?;
            if step.mutating {
                changed = Some(self.source_now().await);
            }
            self.finish(step, outcome, &detail)?;
            match outcome {
                StepOutcome::Succeeded | StepOutcome::Skipped => i += 1,
                StepOutcome::Declined => return Ok(RunOutcome::Aborted),
                StepOutcome::Cancelled => return Err(Stop::Aborted),
                StepOutcome::Failed | StepOutcome::TimedOut => {
                    let reason = format!("{}: {detail}", outcome.word());
                    let d = self.decide(&step.id, reason).await?;
                    match d {
                        Decision::Continue => i += 1,
                        Decision::Retry => {}
                        Decision::Abort => return Ok(RunOutcome::Failed),
                    }
                }
            }
        }
        Ok(if self.dry_run {
            RunOutcome::DryRun
        } else {
            RunOutcome::Succeeded
        })
    }

    /// Asks the operator; a skip is honoured only where the step is skippable.
    pub(crate) async fn confirm(&self, c: &Confirmation) -> Result<Consent, Stop> {
        let consent = match self.operator.confirm(c).await {
            Consent::Skipped if !c.skippable => Consent::Refused,
            other => other,
        };
        let ev = if consent == Consent::Given {
            RunEvent::Confirmed {
                step: c.step.clone(),
                what: c.word.clone(),
                automatic: self.operator.automatic(),
            }
        } else {
            RunEvent::Declined {
                step: c.step.clone(),
                what: c.word.clone(),
            }
        };
        self.emit(ev)?;
        Ok(consent)
    }

    fn finish(&self, step: &Step, outcome: StepOutcome, detail: &str) -> Result<(), Stop> {
        self.emit(RunEvent::StepFinished {
            step: step.id.clone(),
            outcome,
            detail: self.vars.masker.mask(&crate::sanitize::line(detail)),
        })
    }

    /// Now on the metrics source's clock (PromQL `time()`), which its samples' times are on:
    /// a Prometheus on another host, or a rehearsal's store, whose clock is not the run's.
    /// The run's clock when the source does not say.
    pub(crate) async fn source_now(&self) -> DateTime<Utc> {
        let said = match &self.source {
            Some(source) => ask(source.as_ref(), "time()").await.ok(),
            None => None,
        };
        said.as_ref()
            .and_then(|a| a.series.first()?.last())
            .filter(|p| p.v.is_finite())
            .and_then(|p| DateTime::from_timestamp_millis((p.v * 1000.0).round() as i64))
            .unwrap_or_else(|| self.clock.now())
    }

    /// Evaluate a gate until it reaches a verdict, or `limit` passes (then inconclusive, with
    /// its last reading). With `changed`, the end of the mutating step the gate follows (see
    /// [`Executor::source_now`]), a reading of samples not taken after it is inconclusive (see
    /// [`super::gate`]).
    pub(crate) async fn gate(
        &self,
        step: &str,
        spec: &GateSpec,
        target: Option<&str>,
        limit: Option<Duration>,
        changed: Option<DateTime<Utc>>,
    ) -> Result<Verdict, Stop> {
        let Some(source) = &self.source else {
            return Ok(Verdict::Error(
                "no metrics source: pass --prometheus URL".into(),
            ));
        };
        let query = match spec
            .query
            .render(&self.vars.values, target, Context::PromQl)
        {
            Ok(q) => q,
            Err(e) => return Ok(Verdict::Error(e.to_string())),
        };
        let freshness = match changed.map(|_| gate::freshness_queries(&query)) {
            None => Vec::new(),
            Some(Ok(f)) => f,
            Some(Err(e)) => return Ok(Verdict::Error(format!("the query is not PromQL: {e}"))),
        };
        let start = self.clock.now();
        let mut run = GateRun::default();
        loop {
            self.checkpoint().await?;
            let reading = read(
                source.as_ref(),
                &query,
                &freshness,
                (spec.condition, spec.expect),
                changed,
            )
            .await;
            let verdict = run.feed(spec, &reading);
            self.emit(RunEvent::GateReading {
                step: step.to_string(),
                reading: reading.to_string(),
                verdict: verdict.to_string(),
            })?;
            if verdict.is_final() {
                return Ok(verdict);
            }
            let pause = match limit {
                None => spec.interval,
                Some(l) => {
                    let elapsed = self.clock.since(start);
                    if elapsed >= l {
                        return Ok(Verdict::Inconclusive(format!(
                            "no verdict within {} (last {reading})",
                            humantime::format_duration(l)
                        )));
                    }
                    // The last reading is taken at the limit, not after it.
                    spec.interval.min(l - elapsed)
                }
            };
            self.idle(pause).await?;
        }
    }
}

/// One reading of a gate's `query`, judged by `spec`; with `changed`, a reading of samples
/// older than it is inconclusive, told by the `freshness` queries (see
/// [`gate::freshness_queries`]).
pub(crate) async fn read(
    source: &dyn Source,
    query: &str,
    freshness: &[String],
    spec: (Condition, Expect),
    changed: Option<DateTime<Utc>>,
) -> Reading {
    // How old the samples are is asked first: the reading that follows is of samples at least
    // as new, so a scrape landing in between cannot pass a stale reading.
    let mut ages = Vec::with_capacity(freshness.len());
    for f in freshness {
        match ask(source, f).await {
            Ok(a) => ages.push(a),
            Err(e) => return Reading::Error(format!("the readings' age: {e}")),
        }
    }
    let answer = ask(source, query).await;
    gate::judge_fresh(spec.0, spec.1, &answer, gate::oldest_sample(&ages), changed)
}

/// One instant query at the server's now, within the query's own timeout (wall time: it
/// bounds a network call).
pub(crate) async fn ask(source: &dyn Source, query: &str) -> Result<QueryAnswer, SourceError> {
    const TIMEOUT: Duration = Duration::from_secs(15);
    let q = InstantQuery {
        query: query.to_string(),
        time: None,
    };
    tokio::time::timeout(TIMEOUT, source.query(q))
        .await
        .unwrap_or(Err(SourceError::Timeout(TIMEOUT)))
}
