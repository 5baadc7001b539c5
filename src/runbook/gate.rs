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
//! - Fresh readings only: a gate that follows a mutating step judges only samples taken after
//!   that step ended. Prometheus answers an instant query with the last sample of each series
//!   within its lookback (5 minutes), so a reading just after a step may be a scrape from
//!   before it. [`freshness_queries`] asks when the series a query reads were last sampled
//!   (`timestamp()` of each selector); a reading whose oldest newest sample is not after the
//!   step's end is inconclusive ([`stale`]: `newest reading 12 s before the step ended`), never
//!   a success nor a failure.

use super::template::Template;
use crate::metrics::{QueryAnswer, SourceError};
use chrono::{DateTime, Utc};
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

/// The queries that tell when the series `query` reads were last sampled: one
/// `min(timestamp(selector))` per selector, in Unix seconds, each answering with the oldest of
/// its series' newest samples. Selectors with `offset` or `@` read the past on purpose and
/// are left out; a range selector counts by its newest sample. `Err` when `query` is not PromQL.
pub fn freshness_queries(query: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for vs in crate::metrics::selectors::selectors(query)? {
        if vs.offset.is_none() && vs.at.is_none() {
            let q = format!("min(timestamp({vs}))");
            if !out.contains(&q) {
                out.push(q);
            }
        }
    }
    Ok(out)
}

/// The oldest sample time in answers to [`freshness_queries`] (`None` when no series answered:
/// nothing read, so nothing stale).
pub fn oldest_sample(answers: &[QueryAnswer]) -> Option<DateTime<Utc>> {
    answers
        .iter()
        .flat_map(|a| &a.series)
        .filter_map(crate::metrics::Series::last)
        .filter(|p| p.v.is_finite())
        .map(|p| p.v)
        .min_by(f64::total_cmp)
        .and_then(|secs| DateTime::from_timestamp_millis((secs * 1000.0).round() as i64))
}

/// The freshness rule: a reading whose newest sample (the oldest among the series read) was
/// not taken after `changed`, the end of the mutating step the gate follows (on the source's
/// own clock: see the executor), is inconclusive. A sample taken at that very instant is not
/// after it: the embedded store's "now" is its newest sample.
pub fn stale(newest: DateTime<Utc>, changed: DateTime<Utc>) -> Option<Reading> {
    let before = (changed - newest).to_std().ok()?;
    if before.is_zero() {
        return Some(Reading::Inconclusive(
            "newest reading taken as the step ended, none since".into(),
        ));
    }
    let secs = before.as_secs_f64();
    let said = if secs >= 10.0 {
        format!("{secs:.0}")
    } else {
        number((secs * 10.0).ceil() / 10.0)
    };
    Some(Reading::Inconclusive(format!(
        "newest reading {said} s before the step ended"
    )))
}

/// [`judge`], then the freshness rule: with `changed` (the end of the mutating step the gate
/// follows), a success or failure judged on a sample older than `changed` is inconclusive.
pub fn judge_fresh(
    condition: Condition,
    expect: Expect,
    answer: &Result<QueryAnswer, SourceError>,
    newest: Option<DateTime<Utc>>,
    changed: Option<DateTime<Utc>>,
) -> Reading {
    let reading = judge(condition, expect, answer);
    if !matches!(reading, Reading::Success(_) | Reading::Fail(_)) {
        return reading;
    }
    match (newest, changed) {
        (Some(n), Some(c)) => stale(n, c).unwrap_or(reading),
        _ => reading,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Point, Series};

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(secs, 0).unwrap()
    }

    fn answer(t: f64, v: f64) -> Result<QueryAnswer, SourceError> {
        Ok(QueryAnswer {
            series: vec![Series {
                labels: Default::default(),
                points: vec![Point { t, v }],
            }],
            ..Default::default()
        })
    }

    #[test]
    fn a_sample_from_before_the_step_is_inconclusive_whatever_its_value() {
        let step_end = at(1_000);
        for v in [0.0, 3253.0] {
            let r = judge_fresh(
                Condition::Below(100.0),
                Expect::One,
                &answer(1_010.0, v),
                Some(at(988)),
                Some(step_end),
            );
            assert_eq!(
                r,
                Reading::Inconclusive("newest reading 12 s before the step ended".into())
            );
        }
    }

    #[test]
    fn a_sample_after_the_step_is_judged() {
        let step_end = at(1_000);
        for newest in [at(1_001), at(1_005)] {
            let read = |v: f64| {
                judge_fresh(
                    Condition::Below(100.0),
                    Expect::One,
                    &answer(1_010.0, v),
                    Some(newest),
                    Some(step_end),
                )
            };
            assert_eq!(read(0.0), Reading::Success(0.0));
            assert_eq!(read(3253.0), Reading::Fail(3253.0));
        }
    }

    #[test]
    fn without_a_change_before_it_a_gate_judges_any_reading() {
        let r = judge_fresh(
            Condition::Below(100.0),
            Expect::One,
            &answer(1_010.0, 0.0),
            Some(at(10)),
            None,
        );
        assert_eq!(r, Reading::Success(0.0));
    }

    #[test]
    fn errors_and_empty_answers_stay_what_they_are() {
        let empty = Ok(QueryAnswer::default());
        let r = judge_fresh(
            Condition::Below(1.0),
            Expect::One,
            &empty,
            Some(at(1)),
            Some(at(2)),
        );
        assert_eq!(
            r,
            Reading::Inconclusive("the query returned no series".into())
        );
        let err = Err(SourceError::Unreachable("refused".into()));
        let r = judge_fresh(Condition::Below(1.0), Expect::One, &err, None, Some(at(2)));
        assert!(matches!(r, Reading::Error(_)), "{r:?}");
    }

    #[test]
    fn under_a_second_late_is_said_to_the_tenth() {
        let end = DateTime::from_timestamp_millis(1_000_000).unwrap();
        let newest = DateTime::from_timestamp_millis(999_650).unwrap();
        assert_eq!(
            stale(newest, end).map(|r| r.to_string()),
            Some("inconclusive: newest reading 0.4 s before the step ended".into())
        );
        assert_eq!(
            stale(end, end).map(|r| r.to_string()),
            Some("inconclusive: newest reading taken as the step ended, none since".into())
        );
        let after = DateTime::from_timestamp_millis(1_000_001).unwrap();
        assert_eq!(stale(after, end), None);
    }

    #[test]
    fn only_inconclusive_readings_never_pass() {
        let mut spec = GateSpec::new(Template::parse("sum(x)").unwrap(), Condition::Below(100.0));
        spec.inconclusive_limit = 3;
        let mut run = GateRun::default();
        let stale = stale(at(988), at(1_000)).unwrap();
        let verdicts: Vec<Verdict> = (0..4).map(|_| run.feed(&spec, &stale)).collect();
        assert!(verdicts[..3].iter().all(|v| *v == Verdict::Pending));
        assert!(
            matches!(&verdicts[3], Verdict::Inconclusive(w) if w.contains("newest reading 12 s")),
            "{verdicts:?}"
        );
        // A fresh success afterwards starts the count of successes from zero.
        let mut run = GateRun::default();
        spec.inconclusive_limit = u32::MAX;
        spec.consecutive = 2;
        spec.min_samples = 2;
        run.feed(&spec, &Reading::Success(0.0));
        run.feed(&spec, &stale);
        assert_eq!(run.feed(&spec, &Reading::Success(0.0)), Verdict::Pending);
        assert_eq!(run.feed(&spec, &Reading::Success(0.0)), Verdict::Success);
    }

    #[test]
    fn freshness_reads_every_selector_once_without_offsets() {
        let q = r#"sum(redis_key_size{key="queue:default"}) - 100 and on () rate(jobs_total{q="a"}[1m]) > 0 unless sum(redis_key_size{key="queue:default"}) > on () up offset 5m"#;
        let got = freshness_queries(q).unwrap();
        assert_eq!(
            got,
            [
                r#"min(timestamp(redis_key_size{key="queue:default"}))"#,
                r#"min(timestamp(jobs_total{q="a"}))"#,
            ]
        );
        for f in &got {
            promql_parser::parser::parse(f).unwrap_or_else(|e| panic!("{e}: {f}"));
        }
        assert!(freshness_queries("sum(").is_err());
        assert_eq!(
            freshness_queries("vector(1)").unwrap(),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_oldest_newest_sample_decides() {
        let a = answer(5.0, 990.0).unwrap();
        let b = answer(5.0, 1_001.5).unwrap();
        assert_eq!(
            oldest_sample(&[b.clone(), a]),
            DateTime::from_timestamp_millis(990_000)
        );
        assert_eq!(oldest_sample(&[QueryAnswer::default()]), None);
        assert_eq!(
            oldest_sample(&[b]),
            DateTime::from_timestamp_millis(1_001_500)
        );
    }
}
