//! Running one step of each kind.

use super::{Control, Executor, MAX_OUTPUT_EVENTS, Stop};
use crate::runbook::exec::{self, ExecStatus};
use crate::runbook::gate::Verdict;
use crate::runbook::model::{ExecSpec, HttpSpec, Step, StepKind};
use crate::runbook::operator::{Confirmation, Consent};
use crate::runbook::plan;
use crate::runbook::report::{RunEvent, StepOutcome};
use chrono::{DateTime, Utc};
use tokio::sync::watch;

impl Executor {
    /// Run `step`; `changed` is when the last mutating step before it ended (its gates judge
    /// only samples taken since).
    pub(super) async fn step(
        &self,
        step: &Step,
        changed: Option<DateTime<Utc>>,
    ) -> Result<(StepOutcome, String), Stop> {
        match &step.kind {
            StepKind::Note { .. } => Ok((StepOutcome::Succeeded, String::new())),
            StepKind::Manual { text } => {
                let c = Confirmation {
                    step: step.id.clone(),
                    summary: self.vars.masker.mask(text),
                    word: "done".into(),
                    skippable: step.skippable,
                };
                Ok(match self.confirm(&c).await? {
                    Consent::Given => (StepOutcome::Succeeded, "done".into()),
                    Consent::Skipped => (StepOutcome::Skipped, super::SKIPPED_BY_OPERATOR.into()),
                    Consent::Refused => (StepOutcome::Declined, "not confirmed".into()),
                })
            }
            StepKind::Check(g) => Ok(match self.gate(&step.id, g, None, None, changed).await? {
                Verdict::Success => (StepOutcome::Succeeded, "condition holds".into()),
                v => (StepOutcome::Failed, v.to_string()),
            }),
            StepKind::Wait { gate, timeout } => {
                // Waiting tolerates bad readings: only success or the timeout end it.
                let mut g = gate.clone();
                g.failure_limit = u32::MAX;
                g.inconclusive_limit = u32::MAX;
                Ok(
                    match self
                        .gate(&step.id, &g, None, Some(*timeout), changed)
                        .await?
                    {
                        Verdict::Success => (StepOutcome::Succeeded, "condition holds".into()),
                        Verdict::Inconclusive(why) => (StepOutcome::TimedOut, why),
                        v => (StepOutcome::Failed, v.to_string()),
                    },
                )
            }
            StepKind::Http(h) => {
                let scope = format!("{}/{}", self.run_id, step.id);
                self.http(&step.id, h, None, &scope, step.mutating).await
            }
            StepKind::Exec(e) => self.exec(&step.id, e, None).await,
            StepKind::Batch(b) => self.batch(step, b).await,
            StepKind::Sql(q) => Ok(self.sql_judged(&step.id, q, None).await?.reported()),
            StepKind::Haproxy(h) => Ok(self.haproxy_judged(&step.id, h, None).await?.reported()),
        }
    }

    /// Send one request; the idempotency key of `scope` is made durable first.
    pub(crate) async fn http(
        &self,
        step: &str,
        spec: &HttpSpec,
        target: Option<&str>,
        scope: &str,
        mutating: bool,
    ) -> Result<(StepOutcome, String), Stop> {
        let req = match plan::request(spec, &self.vars.values, target) {
            Ok(r) => r,
            Err(e) => return Ok((StepOutcome::Failed, e.to_string())),
        };
        let url = self.vars.masker.mask(&req.url);
        let key = if mutating {
            let body = req
                .body
                .as_ref()
                .map(|b| format!(" {}", self.vars.masker.mask(&b.to_string())))
                .unwrap_or_default();
            let shown = format!("{} {url}{body}", req.method.as_str());
            match self.intents.key_for(scope, &shown) {
                Ok(k) => Some(k),
                // No durable key, no send.
                Err(e) => return Err(Stop::NotRecorded(e.to_string())),
            }
        } else {
            None
        };
        self.checkpoint().await?;
        let mut record_err = None;
        let resp = self
            .sender
            .send_on(self.clock.as_ref(), &req, key.as_deref(), |a| {
                let r = self.emit(RunEvent::Attempt {
                    step: step.to_string(),
                    target: target.map(str::to_string),
                    attempt: a.number,
                    method: req.method.as_str().into(),
                    url: url.clone(),
                    idempotency_key: key.clone(),
                    status: a.status,
                    error: a.error.as_ref().map(|e| self.vars.masker.mask(e)),
                });
                if let Err(e) = r {
                    record_err.get_or_insert(e);
                }
            })
            .await;
        if let Some(e) = record_err {
            return Err(e);
        }
        let body = self.vars.masker.mask(&resp.body);
        Ok(match resp.failure {
            None => (
                StepOutcome::Succeeded,
                crate::runbook::http::answer_text(resp.status.unwrap_or_default(), &body),
            ),
            Some(f) => match crate::runbook::http::excerpt(&body) {
                e if e.is_empty() => (StepOutcome::Failed, f),
                e => (StepOutcome::Failed, format!("{f}: {e}")),
            },
        })
    }

    /// Run one command in its own process group.
    pub(crate) async fn exec(
        &self,
        step: &str,
        spec: &ExecSpec,
        target: Option<&str>,
    ) -> Result<(StepOutcome, String), Stop> {
        let argv = match plan::argv(spec, &self.vars.values, target) {
            Ok(a) => a,
            Err(e) => return Ok((StepOutcome::Failed, e.to_string())),
        };
        self.checkpoint().await?;
        self.emit(RunEvent::Spawned {
            step: step.to_string(),
            target: target.map(str::to_string),
            argv: argv.iter().map(|a| self.vars.masker.mask(a)).collect(),
        })?;
        let (tx, rx) = watch::channel(false);
        let mut control = self.control.clone();
        let bridge = tokio::spawn(async move {
            loop {
                if *control.borrow_and_update() == Control::Abort {
                    let _ = tx.send(true);
                    return;
                }
                if control.changed().await.is_err() {
                    return;
                }
            }
        });
        let cmd = exec::Command {
            argv,
            timeout: spec.timeout,
            grace: spec.grace,
        };
        let mut sent = 0usize;
        let mut record_err = None;
        let result = exec::run_on(self.clock.as_ref(), &cmd, &self.vars.masker, rx, |line| {
            if sent < MAX_OUTPUT_EVENTS {
                sent += 1;
                if let Err(e) = self.emit(RunEvent::Output {
                    step: step.to_string(),
                    line: line.to_string(),
                }) {
                    record_err.get_or_insert(e);
                }
            }
        })
        .await;
        bridge.abort();
        if let Some(e) = record_err {
            return Err(e);
        }
        let r = match result {
            Ok(r) => r,
            Err(e) => return Ok((StepOutcome::Failed, e.to_string())),
        };
        let tail = r
            .tail
            .iter()
            .rev()
            .take(3)
            .rev()
            .cloned()
            .collect::<Vec<_>>()
            .join(" | ");
        let trunc = if r.truncated {
            " (output truncated)"
        } else {
            ""
        };
        Ok(match r.status {
            ExecStatus::Succeeded => (StepOutcome::Succeeded, format!("exit 0{trunc} {tail}")),
            ExecStatus::Failed { code } => (
                StepOutcome::Failed,
                format!(
                    "exit {}{trunc} {tail}",
                    code.map_or("by signal".into(), |c| c.to_string())
                ),
            ),
            ExecStatus::TimedOut => (
                StepOutcome::TimedOut,
                format!(
                    "timed out after {}{trunc} {tail}",
                    humantime::format_duration(spec.timeout)
                ),
            ),
            ExecStatus::Cancelled => (StepOutcome::Cancelled, format!("cancelled{trunc}")),
        })
    }
}
