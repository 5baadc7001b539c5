//! The game-day score: how fast the team acted and recovered, and what the outage cost.

use super::stats::StepStats;

/// Consecutive good minutes that count as recovered.
const STABLE_MINUTES: usize = 5;

/// The score of a rehearsal so far.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Score {
    pub fault_at_s: Option<f64>,
    /// From the first fault to the first control action after it.
    pub time_to_first_mitigation_s: Option<f64>,
    /// From the first fault to the start of the first run of five minutes under the objective.
    pub time_to_recovery_s: Option<f64>,
    pub failed_logical_requests: f64,
    pub duplicate_writes: f64,
    /// Whole minutes whose error ratio was above the objective.
    pub minutes_over_objective: u32,
}

#[derive(Debug, Clone)]
pub struct ScoreKeeper {
    fault_at: Option<f64>,
    objective: f64,
    minute_start: f64,
    minute_errors: f64,
    minute_answered: f64,
    good_run: usize,
    /// Recovery counts only after the outage showed itself.
    seen_bad: bool,
    score: Score,
}

impl ScoreKeeper {
    pub fn new(fault_at: Option<f64>, objective: f64) -> Self {
        ScoreKeeper {
            fault_at,
            objective,
            minute_start: 0.0,
            minute_errors: 0.0,
            minute_answered: 0.0,
            good_run: 0,
            seen_bad: false,
            score: Score {
                fault_at_s: fault_at,
                time_to_first_mitigation_s: None,
                time_to_recovery_s: None,
                failed_logical_requests: 0.0,
                duplicate_writes: 0.0,
                minutes_over_objective: 0,
            },
        }
    }

    pub fn record(&mut self, s: &StepStats) {
        self.score.failed_logical_requests += s.logical_failed;
        self.score.duplicate_writes += s.duplicates;
        if s.t >= self.minute_start + 60.0 {
            self.close_minute();
            self.minute_start += 60.0;
        }
        self.minute_errors += s.errors;
        self.minute_answered += s.answered;
    }

    fn close_minute(&mut self) {
        let ratio = if self.minute_answered > 0.0 {
            self.minute_errors / self.minute_answered
        } else {
            0.0
        };
        self.minute_errors = 0.0;
        self.minute_answered = 0.0;
        let after_fault = self.fault_at.is_some_and(|f| self.minute_start >= f);
        if ratio > self.objective {
            self.score.minutes_over_objective += 1;
            self.good_run = 0;
            self.seen_bad |= after_fault;
            return;
        }
        let Some(fault) = self.fault_at else { return };
        if !self.seen_bad || self.score.time_to_recovery_s.is_some() {
            return;
        }
        self.good_run += 1;
        if self.good_run == STABLE_MINUTES {
            let start = self.minute_start - 60.0 * (STABLE_MINUTES as f64 - 1.0);
            self.score.time_to_recovery_s = Some((start - fault).max(0.0));
        }
    }

    /// A control action at `t`.
    pub fn note_action(&mut self, t: f64) {
        if let Some(fault) = self.fault_at
            && t >= fault
            && self.score.time_to_first_mitigation_s.is_none()
        {
            self.score.time_to_first_mitigation_s = Some(t - fault);
        }
    }

    pub fn score(&self) -> &Score {
        &self.score
    }
}
