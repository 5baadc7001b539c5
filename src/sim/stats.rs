//! What each step measured, and windows over them: the figures the acceptance tests and the
//! game-day score read, computed from the model rather than from the exported text.

use super::fleet::Instance;
use super::model::{STEP_S, Sim};
use super::scenario::MAX_KINDS;

/// One step's measurements.
#[derive(Debug, Clone, Default)]
pub struct StepStats {
    pub t: f64,
    pub logical: f64,
    /// Attempts issued (first attempts and retries).
    pub attempts: f64,
    /// Attempts answered (any code) by an instance or refused by the gateway.
    pub answered: f64,
    pub errors: f64,
    pub logical_failed: f64,
    pub duplicates: f64,
    pub queue_depth: f64,
    /// Pool occupancy of the least and the average busy instance that serves.
    pub min_saturation: f64,
    pub mean_saturation: f64,
    pub up: usize,
    /// Restarts since the start (planned and crashes).
    pub restarts: f64,
    /// (median query time, queries started) per instance and kind.
    pub queries: Vec<(f64, f64)>,
    /// Attempts answered in time, per request kind.
    pub ok_by_kind: [f64; MAX_KINDS],
}

impl StepStats {
    pub fn new(t: f64, logical: f64, attempts: f64) -> Self {
        StepStats {
            t,
            logical,
            attempts,
            ..StepStats::default()
        }
    }

    pub fn finish(&mut self, instances: &[Instance], depth: f64) {
        let sats: Vec<f64> = instances
            .iter()
            .filter(|i| i.up)
            .map(Instance::saturation)
            .collect();
        self.up = sats.len();
        self.min_saturation = sats.iter().copied().reduce(f64::min).unwrap_or(0.0);
        self.mean_saturation = sats.iter().sum::<f64>() / sats.len().max(1) as f64;
        self.restarts = instances.iter().map(|i| i.restarts).sum();
        self.queue_depth = depth;
    }
}

/// Aggregates over `[from_s, to_s)`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    pub logical: f64,
    pub attempts: f64,
    pub answered: f64,
    pub errors: f64,
    /// Errors over attempts answered.
    pub error_ratio: f64,
    /// Attempts per logical request (retry amplification).
    pub amplification: f64,
    /// Median query time, weighted by queries started.
    pub query_p50: f64,
    /// The lowest pool occupancy of any serving instance at any step.
    pub min_saturation: f64,
    pub restarts: f64,
    pub duplicates: f64,
    pub logical_failed: f64,
    pub max_queue_depth: f64,
    pub last_queue_depth: f64,
    /// Highest logical arrival rate of any step, per second.
    pub peak_rps: f64,
    pub min_up: usize,
    /// Attempts answered in time, per request kind (in the scenario's `[[request]]` order).
    pub ok_by_kind: [f64; MAX_KINDS],
}

impl Sim {
    /// Aggregate the steps in `[from_s, to_s)`.
    pub fn window(&self, from_s: f64, to_s: f64) -> Window {
        // The history is in time order: find the window's ends instead of scanning it all
        // (a game day asks for the last minute at every scrape of a long rehearsal).
        let first = self.history.partition_point(|s| s.t < from_s - 1e-9);
        let end = self
            .history
            .partition_point(|s| s.t < to_s - 1e-9)
            .max(first);
        let steps: Vec<&StepStats> = self.history.range(first..end).collect();
        let mut w = Window {
            min_saturation: 1.0,
            min_up: usize::MAX,
            ..Window::default()
        };
        let mut queries = Vec::new();
        for s in &steps {
            w.logical += s.logical;
            w.attempts += s.attempts;
            w.answered += s.answered;
            w.errors += s.errors;
            w.duplicates += s.duplicates;
            w.logical_failed += s.logical_failed;
            w.min_saturation = w.min_saturation.min(s.min_saturation);
            w.max_queue_depth = w.max_queue_depth.max(s.queue_depth);
            w.last_queue_depth = s.queue_depth;
            w.peak_rps = w.peak_rps.max(s.logical / STEP_S);
            w.min_up = w.min_up.min(s.up);
            queries.extend_from_slice(&s.queries);
            for (a, b) in w.ok_by_kind.iter_mut().zip(s.ok_by_kind) {
                *a += b;
            }
        }
        if let (Some(first), Some(last)) = (steps.first(), steps.last()) {
            w.restarts = last.restarts - first.restarts;
        }
        w.error_ratio = if w.answered > 0.0 {
            w.errors / w.answered
        } else {
            0.0
        };
        w.amplification = if w.logical > 0.0 {
            w.attempts / w.logical
        } else {
            0.0
        };
        w.query_p50 = weighted_median(&mut queries);
        w
    }
}

/// The value below which half the weight lies.
pub fn weighted_median(pairs: &mut [(f64, f64)]) -> f64 {
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = pairs.iter().map(|p| p.1).sum();
    let mut acc = 0.0;
    for &(v, m) in pairs.iter() {
        acc += m;
        if acc >= total / 2.0 {
            return v;
        }
    }
    0.0
}
