//! Driving a batch step: resolve targets, read their health, and follow the rollout's
//! decisions with real actions and real time.

use super::{Executor, Stop};
use crate::runbook::batch::{Finished, Next, Rollout, RolloutConfig};
use crate::runbook::gate::{self, Verdict};
use crate::runbook::model::{Action, BatchSpec, Step, Targets};
use crate::runbook::operator::{Confirmation, Consent};
use crate::runbook::report::{RunEvent, StepOutcome};
use crate::runbook::template::Context;
use chrono::{DateTime, Utc};
use std::time::Duration;

impl Executor {
    /// The batch's targets, in order.
    pub async fn resolve_targets(&self, b: &BatchSpec) -> Result<Vec<String>, String> {
        match &b.targets {
            Targets::List(l) => Ok(l.clone()),
            Targets::Query { query, label } => {
                let source = self
                    .source
                    .as_ref()
                    .ok_or("the targets come from a query: pass --prometheus URL")?;
                let q = query
                    .render(&self.vars.values, None, Context::PromQl)
                    .map_err(|e| e.to_string())?;
                let a = super::ask(source.as_ref(), &q)
                    .await
                    .map_err(|e| format!("target query \"{q}\": {e}"))?;
                let mut t: Vec<String> = a
                    .series
                    .iter()
                    .filter_map(|s| s.labels.get(label).cloned())
                    .collect();
                t.sort();
                t.dedup();
                if t.is_empty() {
                    return Err(format!(
                        "target query \"{q}\" returned no series with a \"{label}\" label"
                    ));
                }
                Ok(t)
            }
            Targets::Haproxy { socket, backend } => {
                let s = socket
                    .render(&self.vars.values, None, Context::Literal)
                    .map_err(|e| e.to_string())?;
                let socket =
                    crate::runbook::haproxy::Socket::parse(&s).map_err(|e| e.to_string())?;
                let backend = backend
                    .render(&self.vars.values, None, Context::Literal)
                    .map_err(|e| e.to_string())?;
                let t = crate::runbook::haproxy::servers(
                    &socket,
                    &backend,
                    crate::runbook::haproxy::DEFAULT_COMMAND_TIMEOUT,
                )
                .await
                .map_err(|e| format!("the targets: {e}"))?;
                if t.is_empty() {
                    return Err(format!(
                        "the targets: backend \"{backend}\" on {} has no server",
                        socket.shown()
                    ));
                }
                Ok(t)
            }
        }
    }

    /// One target's actions in order; the first that does not succeed ends the sequence.
    async fn act(
        &self,
        step: &Step,
        b: &BatchSpec,
        target: &str,
        batch: usize,
    ) -> Result<(StepOutcome, String), Stop> {
        let mut done = Vec::new();
        for (i, action) in b.actions.iter().enumerate() {
            self.checkpoint().await?;
            let (outcome, detail) = match action {
                Action::Http(h) => {
                    // The first action keeps the scope runs recorded before sequences existed.
                    let scope = match i {
                        0 => format!("{}/{}/{target}/{batch}", self.run_id, step.id),
                        _ => format!("{}/{}/{target}/{batch}/{i}", self.run_id, step.id),
                    };
                    self.http(&step.id, h, Some(target), &scope, true).await?
                }
                Action::Exec(e) => self.exec(&step.id, e, Some(target)).await?,
                Action::Sql(q) => self.sql_judged(&step.id, q, Some(target)).await?.reported(),
                Action::Haproxy(h) => {
                    (self.haproxy_judged(&step.id, h, Some(target)).await?).reported()
                }
            };
            if outcome != StepOutcome::Succeeded {
                let of = if b.actions.len() > 1 {
                    format!(
                        " (action {} of {}, {})",
                        i + 1,
                        b.actions.len(),
                        action.kind().name()
                    )
                } else {
                    String::new()
                };
                return Ok((outcome, format!("{detail}{of}")));
            }
            done.push(detail);
        }
        Ok((StepOutcome::Succeeded, done.join(" | ")))
    }

    /// One health reading of one target: healthy only on a success.
    async fn healthy(
        &self,
        b: &BatchSpec,
        target: &str,
        acted: Option<DateTime<Utc>>,
    ) -> Result<bool, Stop> {
        let Some(source) = &self.source else {
            return Ok(false);
        };
        let Ok(q) = b
            .instance
            .query
            .render(&self.vars.values, Some(target), Context::PromQl)
        else {
            return Ok(false);
        };
        // Right after its action, a target's last sample may be from before it: not healthy yet.
        let freshness = match acted.map(|_| gate::freshness_queries(&q)) {
            Some(Ok(f)) => f,
            Some(Err(_)) => return Ok(false),
            None => Vec::new(),
        };
        let spec = (b.instance.condition, b.instance.expect);
        Ok(super::read(source.as_ref(), &q, &freshness, spec, acted)
            .await
            .is_success())
    }

    fn flush(&self, step: &str, r: &mut Rollout) -> Result<(), Stop> {
        for e in r.take_events() {
            self.emit(RunEvent::Batch {
                step: step.to_string(),
                batch_event: e,
            })?;
        }
        Ok(())
    }

    pub(super) async fn batch(
        &self,
        step: &Step,
        b: &BatchSpec,
    ) -> Result<(StepOutcome, String), Stop> {
        let targets = match self.resolve_targets(b).await {
            Ok(t) => t,
            Err(e) => return Ok((StepOutcome::Failed, e)),
        };
        let size = b.size.resolve(targets.len());
        let mut initial = Vec::with_capacity(targets.len());
        for t in &targets {
            self.checkpoint().await?;
            initial.push((t.clone(), self.healthy(b, t, None).await?));
        }
        let cfg = RolloutConfig {
            batch_size: size,
            max_unavailable: b.max_unavailable.unwrap_or(size),
            failure_budget: b.failure_budget,
            soak: b.soak,
            settle: b.settle,
            instance_deadline: b.instance_deadline,
            run_deadline: b.deadline,
            gated: b.gate.is_some(),
        };
        let mut r = Rollout::new(cfg, initial);
        // Soaks, settles and deadlines are durations of the run: its clock.
        let start = self.clock.now();
        let poll = b
            .instance
            .interval
            .min(Duration::from_secs(5))
            .max(Duration::from_millis(200));
        // When the last batch's actions ended: its gate judges only samples taken since.
        let mut acted = None;
        loop {
            self.checkpoint().await?;
            let next = r.next(self.clock.since(start));
            self.flush(&step.id, &mut r)?;
            match next {
                Next::Act { batch, targets } => {
                    let c = Confirmation {
                        step: step.id.clone(),
                        summary: format!(
                            "Batch {batch} of \"{}\": {}",
                            step.id,
                            targets.join(", ")
                        ),
                        word: format!("batch {batch}"),
                        // A batch half done is not a step to go on without.
                        skippable: false,
                    };
                    let asked = self.clock.since(start);
                    if self.confirm(&c).await? != Consent::Given {
                        return Ok((
                            StepOutcome::Declined,
                            format!("batch {batch} not confirmed"),
                        ));
                    }
                    let now = self.clock.since(start);
                    let waited = now.saturating_sub(asked);
                    r.sent(now, waited);
                    if waited >= Duration::from_secs(1) {
                        self.emit(RunEvent::Output {
                            step: step.id.clone(),
                            line: format!(
                                "batch {batch} confirmed after {} s at the confirmation; its deadlines start now",
                                waited.as_secs()
                            ),
                        })?;
                    }
                    for t in &targets {
                        self.checkpoint().await?;
                        let (outcome, detail) = self.act(step, b, t, batch).await?;
                        if outcome != StepOutcome::Succeeded {
                            // The instance stays in flight; its deadline decides whether it is lost.
                            self.emit(RunEvent::Output {
                                step: step.id.clone(),
                                line: format!("action on {t} did not succeed: {detail}"),
                            })?;
                        }
                    }
                    acted = Some(self.source_now().await);
                }
                Next::Watch(names) => {
                    for n in &names {
                        let h = self.healthy(b, n, acted).await?;
                        r.observe(self.clock.since(start), n, h);
                    }
                    self.idle(poll).await?;
                }
                Next::Gate { batch } => {
                    let v = match &b.gate {
                        Some(g) => {
                            self.gate(&step.id, g, None, Some(b.deadline), acted)
                                .await?
                        }
                        None => Verdict::Success,
                    };
                    r.gate_result(match v {
                        Verdict::Success => Ok(()),
                        other => Err(format!("batch {batch}: {other}")),
                    });
                }
                Next::WaitOperator(p) => {
                    let d = self.decide(&step.id, p.to_string()).await?;
                    r.decide(self.clock.since(start), d);
                }
                Next::Finished(f) => {
                    self.flush(&step.id, &mut r)?;
                    return Ok(match f {
                        Finished::Completed => (
                            StepOutcome::Succeeded,
                            format!("{} targets done", targets.len()),
                        ),
                        Finished::Aborted => {
                            (StepOutcome::Cancelled, "aborted by the operator".into())
                        }
                        Finished::Stopped { reason } => (StepOutcome::Failed, reason),
                    });
                }
            }
        }
    }
}
