//! Evaluated runbook suggestions (issue 30), off the console's loop: for every runbook that can
//! act here, its `[applies]` symptom is read back over the window its rule names (one range
//! query, not a minute of waiting), then, when it holds, each precondition against live data.
//! Only read-only steps are ever run (a check's gate, a read-only `sql`, an `haproxy` show),
//! each within [`LIMIT`]; a runbook whose variables do not resolve, whose symptom or a
//! precondition is not known, or whose action the rehearsal's scenario counts as a wrong move
//! now, is not suggested, and the finding says why. The round answers as `Msg::Advised`;
//! [`judge`] holds the pure rules and what the headline says.

pub mod judge;

use crate::app::msg::Msg;
use crate::clock::SharedClock;
use crate::metrics::Source;
use crate::runbook::model::{Action, Runbook, Step, StepKind};
use crate::runbook::report::StepOutcome;
use crate::runbook::setup::RunbookSetup;
use crate::runbook::template::Context;
use crate::sim::{Control, SimService};
use judge::{Advice, Finding, Judged, Part, Reading, Verdict};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// The longest one runbook's evaluation may take, its symptom and preconditions together.
pub const LIMIT: Duration = Duration::from_secs(20);

/// What an evaluation reads and asks.
#[derive(Clone)]
pub struct Evaluator {
    pub setup: RunbookSetup,
    pub source: Arc<dyn Source>,
    pub clock: SharedClock,
    /// The rehearsal's simulator (`None` on real systems): which moves its scenario counts as
    /// wrong now.
    pub sim: Option<Arc<SimService>>,
}

/// Evaluate `runbooks` in a task; the round answers on `tx` as `Msg::Advised`.
pub fn spawn(runbooks: Vec<Runbook>, evaluator: Evaluator, tx: &mpsc::UnboundedSender<Msg>) {
    let tx = tx.clone();
    tokio::spawn(async move {
        let _ = tx.send(Msg::Advised(evaluator.round(&runbooks).await));
    });
}

impl Evaluator {
    /// One round: every runbook judged, each within [`LIMIT`], at the clock's now.
    pub async fn round(&self, runbooks: &[Runbook]) -> Advice {
        let at = self.clock.now();
        let findings = futures::future::join_all(runbooks.iter().map(|rb| async move {
            let (verdict, absent) = match tokio::time::timeout(LIMIT, self.evaluate(rb, at)).await {
                Ok(v) => v,
                Err(_) => (
                    Verdict::Not(format!(
                        "its evaluation took longer than {}",
                        humantime::format_duration(LIMIT)
                    )),
                    false,
                ),
            };
            Finding {
                runbook: rb.name.clone(),
                verdict,
                absent,
            }
        }))
        .await;
        Advice { at, findings }
    }

    /// One runbook's verdict at `at`, and whether its symptom's query answered no series.
    async fn evaluate(&self, rb: &Runbook, at: chrono::DateTime<chrono::Utc>) -> (Verdict, bool) {
        let not = |why: String| (Verdict::Not(why), false);
        let Some(applies) = &rb.applies else {
            return not("it declares no [applies]".into());
        };
        if let Some(why) = applies.on.refused_here(self.sim.is_some()) {
            return not(why.into());
        }
        let Some(symptom) = &applies.symptom else {
            return not("it declares no symptom: never suggested".into());
        };
        let (bound, resolved) = match self.setup.bind(rb) {
            Ok(b) => b,
            Err(e) => return not(format!("its variables do not resolve: {e}")),
        };
        if let Some(why) = self.wrong_move(&bound, &resolved.values) {
            return not(why);
        }
        let now = at.timestamp_millis() as f64 / 1000.0;
        // Labels are said with the values shown (secrets masked).
        let words = |l: Option<&crate::runbook::label::Label>| l?.words(&resolved.shown).ok();
        // The symptom is rendered from the runbook as loaded: `[applies]` is not a step.
        let symptom = Part {
            name: "symptom".into(),
            words: words(applies.label.as_ref()),
            judged: self.gate(symptom, &resolved.values, now).await,
        };
        if !matches!(symptom.judged, Judged::Holds(_)) {
            let absent = symptom.judged == Judged::NoSeries;
            return (judge::verdict(&symptom, &[]), absent);
        }
        let mut preconditions = Vec::new();
        for step in bound.preconditions() {
            preconditions.push(Part {
                name: resolved.masker.mask(&step.title_rendered(&resolved.values)),
                words: words(step.label.as_ref()),
                judged: self.precondition(&bound, resolved.clone(), step, now).await,
            });
        }
        (judge::verdict(&symptom, &preconditions), false)
    }

    /// A gate's window read back and judged.
    async fn gate(
        &self,
        spec: &crate::runbook::gate::GateSpec,
        values: &crate::runbook::template::Values,
        now: f64,
    ) -> Judged {
        let query = match spec.query.render(values, None, Context::PromQl) {
            Ok(q) => q,
            Err(e) => return Judged::Unknown(e.to_string()),
        };
        let q = judge::window(spec, query, now);
        let answer = self.source.query_range(q.clone()).await;
        judge::judge_window(spec, &q, &answer)
    }

    /// One precondition, read once and never anything but read.
    async fn precondition(
        &self,
        rb: &Runbook,
        vars: crate::runbook::vars::Resolved,
        step: &Step,
        now: f64,
    ) -> Judged {
        let read_only = !step.mutating
            && match &step.kind {
                StepKind::Check(_) => true,
                StepKind::Sql(s) => s.read_only,
                StepKind::Haproxy(h) => !h.op.mutates(),
                _ => false,
            };
        if !read_only {
            return Judged::Unknown("not a read-only step: not run to advise".into());
        }
        if let StepKind::Check(gate) = &step.kind {
            return self.gate(gate, &vars.values, now).await;
        }
        let exec = match crate::runbook::launch::executor(
            rb,
            vars,
            Some(self.source.clone()),
            "advice",
            self.clock.clone(),
        ) {
            Ok(e) => e,
            Err(e) => return Judged::Unknown(e.to_string()),
        };
        // One reading: a step that would wait for its condition is read once.
        let result = match &step.kind {
            StepKind::Sql(s) => {
                let spec = crate::runbook::sql::SqlSpec {
                    wait: None,
                    ..s.clone()
                };
                exec.sql_judged(&step.id, &spec, None).await
            }
            StepKind::Haproxy(h) => {
                let spec = crate::runbook::haproxy::HaproxySpec {
                    wait: None,
                    ..h.clone()
                };
                exec.haproxy_judged(&step.id, &spec, None).await
            }
            _ => return Judged::Unknown("not a step that reads".into()),
        };
        let Ok(read) = result else {
            return Judged::Unknown("the reading was stopped".into());
        };
        let reading = || Reading {
            value: read.reading,
            condition: step.kind.condition(),
            said: rows_said(&read.detail),
        };
        match (read.outcome, read.condition) {
            (_, Some(false)) => Judged::Fails(reading()),
            (StepOutcome::Succeeded, _) => Judged::Holds(reading()),
            _ => Judged::Unknown(read.detail.clone()),
        }
    }

    /// Why the rehearsal's scenario counts one of `rb`'s actions on the simulator's control
    /// API as a wrong move in the state it is in now, if it does.
    fn wrong_move(
        &self,
        rb: &Runbook,
        values: &crate::runbook::template::Values,
    ) -> Option<String> {
        let sim = self.sim.as_ref()?;
        let requests = rb
            .steps
            .iter()
            .filter(|s| s.mutating)
            .flat_map(|s| match &s.kind {
                StepKind::Http(h) => vec![h],
                StepKind::Batch(b) => (b.actions.iter())
                    .filter_map(|a| match a {
                        Action::Http(h) => Some(h),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            });
        for h in requests {
            let Ok(req) = crate::runbook::plan::request(h, values, Some("advice")) else {
                continue;
            };
            let Some((_, endpoint)) = req.url.split_once("/control/") else {
                continue;
            };
            let body = req.body.map(|b| b.to_string()).unwrap_or_default();
            let Ok(control) = Control::parse(endpoint, body.as_bytes()) else {
                continue;
            };
            if let Some(why) = sim.with_sim(|s| s.wrong_move(&control)) {
                return Some(format!(
                    "the scenario counts its {endpoint} as a wrong move now: {why}"
                ));
            }
        }
        None
    }
}

/// A read step's detail as the reason says it: the judgement, without the word before it.
fn rows_said(detail: &str) -> String {
    let judged = detail.split_once(": ").map_or(detail, |(_, rest)| rest);
    judged
        .split(';')
        .next()
        .unwrap_or(judged)
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::rows_said;

    #[test]
    fn a_read_steps_detail_keeps_its_judgement() {
        assert_eq!(
            rows_said("condition not met: cl_waiting is 0, needs > 0; 1 row(s)"),
            "cl_waiting is 0, needs > 0"
        );
        assert_eq!(rows_said("3 row(s)"), "3 row(s)");
    }
}
