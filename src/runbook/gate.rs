//! Gates: a PromQL condition judged on each reading, and the rule that turns readings into a
//! verdict. Pure: the executor queries, this module only judges.
//!
//! Conventions (shown in every plan):
//! - `above x` holds when the value is strictly greater than `x`; `below x` strictly less;
//!   `between [a, b]` when `a <= value <= b`.
//! - The gate passes after `consecutive` successes in a row and at least `min_samples` readings.
//! - It fails when failed readings are MORE than `failure_limit` (Argo's `failed > failureLimit`):
//!   with a limit of 1, one bad reading is tolerated and the second fails the gate.
//! - Empty answers, several series when one was expected, NaN and ±Inf are never a success
//!   nor a failure: they are inconclusive (or an error when the query itself failed). ±Inf is
//!   what a ratio over zero or a quantile in the `+Inf` bucket gives: no measure to judge.
//! - Readings and verdicts are said in words (`fail (0.31)`, `inconclusive: series … is +Inf`),
//!   on screen and in run records alike.

use super::template::Template;
use crate::metrics::{QueryAnswer, SourceError};
use std::fmt;
use std::time::Duration;

/// What the value must do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Condition {
    Above(f64),
    Below(f64),
    /// Inclusive bounds, low <= high.
    Between(f64, f64),
}

impl Condition {
    /// Whether a finite value satisfies the condition.
    pub fn holds(&self, v: f64) -> bool {
        match *self {
            Condition::Above(x) => v > x,
            Condition::Below(x) => v < x,
            Condition::Between(lo, hi) => lo <= v && v <= hi,
        }
    }
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Condition::Above(x) => write!(f, "value > {x}"),
            Condition::Below(x) => write!(f, "value < {x}"),
            Condition::Between(a, b) => write!(f, "{a} <= value <= {b}"),
        }
    }
}

/// How many series the query should answer with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Exactly one series (the default: `sum(...)`, a ratio).
    One,
    /// One or more series; every one must satisfy the condition.
    Each,
}

/// A gate as written in a runbook, with its defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct GateSpec {
    pub query: Template,
    pub condition: Condition,
    pub expect: Expect,
    /// Successes in a row needed to pass.
    pub consecutive: u32,
    /// Failed readings tolerated; one more fails the gate.
    pub failure_limit: u32,
    /// Inconclusive readings tolerated; one more makes the gate inconclusive.
    pub inconclusive_limit: u32,
    /// Query errors in a row tolerated; one more makes the gate an error.
    pub error_limit: u32,
    /// Readings needed before the gate may pass.
    pub min_samples: u32,
    /// Time between readings.
    pub interval: Duration,
}

/// Defaults for a gate: three good readings ten seconds apart, one bad reading tolerated.
pub const DEFAULT_CONSECUTIVE: u32 = 3;
pub const DEFAULT_FAILURE_LIMIT: u32 = 1;
pub const DEFAULT_INCONCLUSIVE_LIMIT: u32 = 3;
pub const DEFAULT_ERROR_LIMIT: u32 = 3;
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(10);

impl GateSpec {
    /// A gate with the default counts.
    pub fn new(query: Template, condition: Condition) -> Self {
        GateSpec {
            query,
            condition,
            expect: Expect::One,
            consecutive: DEFAULT_CONSECUTIVE,
            failure_limit: DEFAULT_FAILURE_LIMIT,
            inconclusive_limit: DEFAULT_INCONCLUSIVE_LIMIT,
            error_limit: DEFAULT_ERROR_LIMIT,
            min_samples: DEFAULT_CONSECUTIVE,
            interval: DEFAULT_INTERVAL,
        }
    }

    /// The rule in words, for the plan.
    pub fn describe_rule(&self) -> String {
        format!(
            "pass after {} consecutive successes (min {} samples, every {}); fail when failed readings > {}; inconclusive when inconclusive readings > {}; error when query errors in a row > {}; {}",
            self.consecutive,
            self.min_samples,
            humantime::format_duration(self.interval),
            self.failure_limit,
            self.inconclusive_limit,
            self.error_limit,
            match self.expect {
                Expect::One => "exactly one series expected",
                Expect::Each => "every series must hold (at least one)",
            }
        )
    }
}

/// The judgement of one reading.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    Success(f64),
    Fail(f64),
    Inconclusive(String),
    Error(String),
}

/// A reading's value in words: `+Inf`, `-Inf`, `NaN` by name, else at most four decimals.
fn number(v: f64) -> String {
    if let Some(word) = crate::strings::non_finite(v) {
        return word.into();
    }
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.to_string() }
}

impl fmt::Display for Reading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reading::Success(v) => write!(f, "success ({})", number(*v)),
            Reading::Fail(v) => write!(f, "fail ({})", number(*v)),
            Reading::Inconclusive(why) => write!(f, "inconclusive: {why}"),
            Reading::Error(why) => write!(f, "error: {why}"),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Pending => f.write_str("pending"),
            Verdict::Success => f.write_str("success"),
            Verdict::Fail(why) => write!(f, "fail: {why}"),
            Verdict::Inconclusive(why) => write!(f, "inconclusive: {why}"),
            Verdict::Error(why) => write!(f, "error: {why}"),
        }
    }
}

impl Reading {
    pub fn is_success(&self) -> bool {
        matches!(self, Reading::Success(_))
    }
}

/// Judge one answer. Only a finite value that holds is a success.
pub fn judge(
    condition: Condition,
    expect: Expect,
    answer: &Result<QueryAnswer, SourceError>,
) -> Reading {
    let answer = match answer {
        Ok(a) => a,
        Err(e) => return Reading::Error(e.to_string()),
    };
    if answer.series.is_empty() {
        return Reading::Inconclusive("the query returned no series".into());
    }
    if expect == Expect::One && answer.series.len() > 1 {
        return Reading::Inconclusive(format!(
            "the query returned {} series; expected exactly one (aggregate it, e.g. sum(...))",
            answer.series.len()
        ));
    }
    let mut worst_ok = None;
    for s in &answer.series {
        let Some(p) = s.last() else {
            return Reading::Inconclusive(format!("series {} has no sample", s.label_text()));
        };
        if p.v.is_nan() {
            return Reading::Inconclusive(format!("series {} is NaN", s.label_text()));
        }
        if p.v.is_infinite() {
            return Reading::Inconclusive(format!(
                "series {} is {} (a ratio over zero, or a quantile past the last bucket): not judged",
                s.label_text(),
                number(p.v)
            ));
        }
        if !condition.holds(p.v) {
            return Reading::Fail(p.v);
        }
        worst_ok.get_or_insert(p.v);
    }
    match worst_ok {
        Some(v) => Reading::Success(v),
        None => Reading::Inconclusive("no value".into()),
    }
}

/// Where a gate stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Keep reading.
    Pending,
    Success,
    Fail(String),
    Inconclusive(String),
    Error(String),
}

impl Verdict {
    pub fn is_final(&self) -> bool {
        !matches!(self, Verdict::Pending)
    }
}

/// The running count of one gate evaluation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GateRun {
    pub samples: u32,
    pub consecutive_successes: u32,
    pub failures: u32,
    pub inconclusive: u32,
    pub errors_in_a_row: u32,
}

impl GateRun {
    /// Feed a reading; returns the verdict so far.
    pub fn feed(&mut self, spec: &GateSpec, reading: &Reading) -> Verdict {
        self.samples += 1;
        match reading {
            Reading::Success(_) => {
                self.consecutive_successes += 1;
                self.errors_in_a_row = 0;
            }
            Reading::Fail(_) => {
                self.consecutive_successes = 0;
                self.failures += 1;
                self.errors_in_a_row = 0;
            }
            Reading::Inconclusive(_) => {
                self.consecutive_successes = 0;
                self.inconclusive += 1;
                self.errors_in_a_row = 0;
            }
            Reading::Error(_) => {
                self.consecutive_successes = 0;
                self.errors_in_a_row += 1;
            }
        }
        self.verdict(spec, reading)
    }

    fn verdict(&self, spec: &GateSpec, last: &Reading) -> Verdict {
        if self.failures > spec.failure_limit {
            return Verdict::Fail(format!(
                "{} failed readings > failure limit {} (last {last})",
                self.failures, spec.failure_limit
            ));
        }
        if self.errors_in_a_row > spec.error_limit {
            return Verdict::Error(format!(
                "{} query errors in a row > limit {} (last {last})",
                self.errors_in_a_row, spec.error_limit
            ));
        }
        if self.inconclusive > spec.inconclusive_limit {
            return Verdict::Inconclusive(format!(
                "{} inconclusive readings > limit {} (last {last})",
                self.inconclusive, spec.inconclusive_limit
            ));
        }
        if last.is_success()
            && self.consecutive_successes >= spec.consecutive.max(1)
            && self.samples >= spec.min_samples
        {
            return Verdict::Success;
        }
        Verdict::Pending
    }
}
