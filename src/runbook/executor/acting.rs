//! Running `sql` and `haproxy` steps and actions: render, check, send, show the rows (bounded,
//! sanitized, masked) and judge them; a step that waits reads again, honouring pause and abort
//! between readings, until its condition holds or its time is up.

use super::{Executor, Stop};
use crate::runbook::haproxy::{self, DRAIN_POLL, HaproxyError, HaproxyOp, HaproxySpec, Socket};
use crate::runbook::mask::Masker;
use crate::runbook::report::{RunEvent, StepOutcome};
use crate::runbook::rows::{Judgement, RowCondition, Rows};
use crate::runbook::sql::{self, SqlSpec};
use crate::runbook::template::Context;
use std::time::Duration;

/// Reading lines sent while a step waits for its condition, at most (the last one is in the
/// step's record regardless).
const MAX_READING_LINES: usize = 50;

/// One reading: rows and notices, or why there are none (and whether trying again may help).
type Reading = Result<(Rows, Vec<String>), (String, bool)>;

/// What a step reads its rows from.
enum Source<'a> {
    Sql {
        conn: &'a sql::Target,
        statement: &'a str,
        read_only: bool,
        statement_timeout: Duration,
    },
    Haproxy {
        socket: &'a Socket,
        line: &'a str,
        timeout: Duration,
    },
}

impl Source<'_> {
    /// One reading, within `left`.
    async fn read(&self, left: Duration) -> Reading {
        match self {
            Source::Sql {
                conn,
                statement,
                read_only,
                statement_timeout,
            } => {
                let connect = left.min(sql::MAX_CONNECT);
                let work = sql::run(
                    conn,
                    statement,
                    *read_only,
                    connect,
                    (*statement_timeout).min(left),
                );
                // The step's deadline bounds everything, a cancel request included.
                match tokio::time::timeout(left + Duration::from_secs(3), work).await {
                    Ok(Ok(a)) => Ok((a.rows, a.notices)),
                    Ok(Err(e)) => Err((e.to_string(), e.transient())),
                    Err(_) => Err((format!("{}: the step's deadline passed", conn.at), true)),
                }
            }
            Source::Haproxy {
                socket,
                line,
                timeout,
            } => haproxy::show(socket, line, (*timeout).min(left))
                .await
                .map(|r| (r, Vec::new()))
                .map_err(|e| (e.to_string(), e.transient())),
        }
    }
}

/// How a read-and-judge ends: the step's outcome, its detail, and the row condition's verdict
/// when one was reached (`Some(true)` holds, `Some(false)` does not; `None`: nothing judged,
/// the reading failed or was inconclusive), and the number judged when it is one. The advice
/// reads the verdict and the number, never the detail.
pub(crate) struct Judged {
    pub outcome: StepOutcome,
    pub detail: String,
    pub condition: Option<bool>,
    pub reading: Option<f64>,
}

impl Judged {
    /// The outcome and its detail, as every step reports them.
    pub(crate) fn reported(self) -> (StepOutcome, String) {
        (self.outcome, self.detail)
    }

    fn done(outcome: StepOutcome, detail: String) -> Judged {
        Judged {
            outcome,
            detail,
            condition: None,
            reading: None,
        }
    }

    fn failed(detail: String) -> Judged {
        Judged::done(StepOutcome::Failed, detail)
    }
}

impl Executor {
    fn out(&self, step: &str, line: String) -> Result<(), Stop> {
        self.emit(RunEvent::Output {
            step: step.to_string(),
            line,
        })
    }

    /// Read with `read`, show the rows, judge them by `expect`; with `wait`, read again every
    /// `interval` until the condition holds or `wait` has passed.
    #[allow(clippy::too_many_arguments)]
    async fn read_and_judge(
        &self,
        step: &str,
        masker: &Masker,
        target: Option<&str>,
        expect: Option<&RowCondition>,
        wait: Option<Duration>,
        interval: Duration,
        source: &Source<'_>,
        limit: Duration,
    ) -> Result<Judged, Stop> {
        // The wait and its readings are durations of the run (its clock); each reading's own
        // timeout bounds a network call (wall time).
        let start = self.clock.now();
        let budget = wait.unwrap_or(limit);
        let mut readings = 0usize;
        loop {
            self.checkpoint().await?;
            let left = budget
                .saturating_sub(self.clock.since(start))
                .max(Duration::from_millis(100));
            let reading = source.read(left.min(limit)).await;
            readings += 1;
            let last_chance = wait.is_none() || self.clock.since(start) + interval >= budget;
            let (rows, notices) = match reading {
                Ok(r) => r,
                Err((why, transient)) => {
                    let why = masker.mask(&why);
                    if transient && !last_chance {
                        if readings <= MAX_READING_LINES {
                            self.out(step, format!("reading {readings}: {why}"))?;
                        }
                        self.idle(interval).await?;
                        continue;
                    }
                    let outcome = if wait.is_some() && transient {
                        StepOutcome::TimedOut
                    } else {
                        StepOutcome::Failed
                    };
                    return Ok(Judged {
                        outcome,
                        detail: why,
                        condition: None,
                        reading: None,
                    });
                }
            };
            for n in notices {
                self.out(step, masker.mask(&format!("notice: {n}")))?;
            }
            // Judged on a column, the judgement names the value: the rest is only counted.
            let summary = match expect {
                Some(c) if c.column.is_some() => format!("{} row(s)", rows.count()),
                _ => rows.summary(masker),
            };
            let Some(cond) = expect else {
                for l in rows.shown(masker) {
                    self.out(step, l)?;
                }
                return Ok(Judged {
                    outcome: StepOutcome::Succeeded,
                    detail: summary,
                    condition: None,
                    reading: None,
                });
            };
            let (judgement, number) = match cond.judge_reading(&rows, &self.vars.values, target) {
                Ok(j) => j,
                Err(e) => {
                    return Ok(Judged {
                        outcome: StepOutcome::Failed,
                        detail: e.to_string(),
                        condition: None,
                        reading: None,
                    });
                }
            };
            let text = masker.mask(&crate::sanitize::line(judgement.text()));
            if judgement.holds() || last_chance {
                for l in rows.shown(masker) {
                    self.out(step, l)?;
                }
                let (outcome, word) = match &judgement {
                    Judgement::Holds(_) => (StepOutcome::Succeeded, "condition holds"),
                    Judgement::Fails(_) if wait.is_some() => {
                        (StepOutcome::TimedOut, "condition still not met")
                    }
                    Judgement::Fails(_) => (StepOutcome::Failed, "condition not met"),
                    Judgement::Inconclusive(_) if wait.is_some() => {
                        (StepOutcome::TimedOut, "still inconclusive")
                    }
                    Judgement::Inconclusive(_) => (StepOutcome::Failed, "inconclusive"),
                };
                let after = match (wait, outcome) {
                    (Some(w), StepOutcome::TimedOut) => {
                        format!(" after {}", humantime::format_duration(w))
                    }
                    _ => String::new(),
                };
                let condition = match &judgement {
                    Judgement::Holds(_) => Some(true),
                    Judgement::Fails(_) => Some(false),
                    Judgement::Inconclusive(_) => None,
                };
                return Ok(Judged {
                    outcome,
                    detail: format!("{word}{after}: {text}; {summary}"),
                    condition,
                    reading: number,
                });
            }
            if readings <= MAX_READING_LINES {
                self.out(step, format!("reading {readings}: {text}"))?;
            }
            self.idle(interval).await?;
        }
    }

    /// Run a `sql` step or action, with the row condition's verdict.
    pub(crate) async fn sql_judged(
        &self,
        step: &str,
        spec: &SqlSpec,
        target: Option<&str>,
    ) -> Result<Judged, Stop> {
        let values = &self.vars.values;
        let failed = |e: String| Ok(Judged::failed(self.vars.masker.mask(&e)));
        let dsn = match spec.dsn.render(values, target, Context::Literal) {
            Ok(d) => d,
            Err(e) => return failed(e.to_string()),
        };
        let statement = match spec.statement.render(values, target, Context::Sql) {
            Ok(s) => s,
            Err(e) => return failed(e.to_string()),
        };
        let password = match sql::password(&spec.password, values, target) {
            Ok(p) => p,
            Err(e) => return failed(format!("the password: {e}")),
        };
        let mut masker = self.vars.masker.clone();
        if let Some(p) = &password {
            masker.add(p.expose());
        }
        let conn = match sql::Target::new(&dsn, password) {
            Ok(c) => c,
            Err(e) => return failed(e.to_string()),
        };
        self.checkpoint().await?;
        let shown: String = crate::sanitize::line(&statement)
            .chars()
            .take(300)
            .collect();
        self.out(step, masker.mask(&format!("sql on {}: {shown}", conn.at)))?;
        let source = Source::Sql {
            conn: &conn,
            statement: &statement,
            read_only: spec.read_only,
            statement_timeout: spec.statement_timeout,
        };
        let judged = self
            .read_and_judge(
                step,
                &masker,
                target,
                spec.expect.as_ref(),
                spec.wait,
                spec.interval,
                &source,
                spec.deadline,
            )
            .await?;
        Ok(Judged {
            detail: masker.mask(&judged.detail),
            ..judged
        })
    }

    /// Run an `haproxy` step or action, with the row condition's verdict (of a `show`).
    pub(crate) async fn haproxy_judged(
        &self,
        step: &str,
        spec: &HaproxySpec,
        target: Option<&str>,
    ) -> Result<Judged, Stop> {
        let values = &self.vars.values;
        let masker = &self.vars.masker;
        let failed = |e: String| Ok(Judged::failed(masker.mask(&e)));
        let socket = match spec
            .socket
            .render(values, target, Context::Literal)
            .map_err(HaproxyError::from)
            .and_then(|s| Socket::parse(&s))
        {
            Ok(s) => s,
            Err(e) => return failed(e.to_string()),
        };
        let line = match haproxy::command(&spec.op, values, target) {
            Ok(l) => l,
            Err(e) => return failed(e.to_string()),
        };
        self.checkpoint().await?;
        self.out(
            step,
            masker.mask(&format!("haproxy {}: {line}", socket.shown())),
        )?;
        let timeout = spec.timeout;
        let mut detail = match &spec.op {
            HaproxyOp::SetState { .. } | HaproxyOp::SetWeight { .. } => {
                if let Err(e) = haproxy::set(&socket, &line, timeout).await {
                    return failed(e.to_string());
                }
                format!("{line}: done")
            }
            HaproxyOp::ShowStat | HaproxyOp::ShowServersState { .. } => {
                let judged = self
                    .read_and_judge(
                        step,
                        masker,
                        target,
                        spec.expect.as_ref(),
                        spec.wait,
                        spec.interval,
                        &Source::Haproxy {
                            socket: &socket,
                            line: &line,
                            timeout,
                        },
                        timeout,
                    )
                    .await?;
                return Ok(Judged {
                    detail: masker.mask(&judged.detail),
                    ..judged
                });
            }
            HaproxyOp::WaitSessions { .. } => String::new(),
        };
        if let (Some(within), Some(server)) = (spec.drain_wait, spec.op.server()) {
            let server = match server
                .render(values, target, Context::Literal)
                .map_err(HaproxyError::from)
                .and_then(|s| haproxy::server_name(&s))
            {
                Ok(s) => s,
                Err(e) => return failed(e.to_string()),
            };
            let (outcome, text) = self.drain(step, &socket, &server, within, timeout).await?;
            if !detail.is_empty() {
                detail.push_str("; ");
            }
            detail.push_str(&text);
            if outcome != StepOutcome::Succeeded {
                return Ok(Judged::done(outcome, masker.mask(&detail)));
            }
        }
        Ok(Judged::done(StepOutcome::Succeeded, masker.mask(&detail)))
    }

    /// Wait until `server` has no current session (`scur`), at most `within`.
    async fn drain(
        &self,
        step: &str,
        socket: &Socket,
        server: &str,
        within: Duration,
        timeout: Duration,
    ) -> Result<(StepOutcome, String), Stop> {
        let start = self.clock.now();
        let mut first = None;
        let mut shown = 0usize;
        loop {
            self.checkpoint().await?;
            let now = match haproxy::sessions(socket, server, timeout).await {
                Ok(n) => n,
                Err(e) => return Ok((StepOutcome::Failed, e.to_string())),
            };
            let first = *first.get_or_insert(now);
            if now == 0 {
                return Ok((
                    StepOutcome::Succeeded,
                    format!(
                        "{server}: {first} current session(s) at the start, 0 after {:.1} s",
                        self.clock.since(start).as_secs_f64()
                    ),
                ));
            }
            if self.clock.since(start) >= within {
                return Ok((
                    StepOutcome::TimedOut,
                    HaproxyError::NotDrained {
                        socket: socket.shown(),
                        server: server.to_string(),
                        sessions: now,
                        after: humantime::format_duration(within).to_string(),
                    }
                    .to_string(),
                ));
            }
            if shown < MAX_READING_LINES {
                shown += 1;
                self.out(step, format!("{server}: {now} current session(s)"))?;
            }
            self.idle(
                DRAIN_POLL
                    .min(within.saturating_sub(self.clock.since(start)))
                    .max(Duration::from_millis(10)),
            )
            .await?;
        }
    }
}
