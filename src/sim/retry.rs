//! The retry ledger: every attempt issued in one step forms a cohort; the cohort learns which
//! of its attempts succeeded before the client's deadline, and whatever failed is retried by
//! the innermost layer that still has attempts left (worker, then gateway, then client), after
//! that layer's backoff with full jitter, within the shared budget when there is one.
//!
//! Attempts are fluid masses split into retry classes `(client, gateway, worker)` attempt
//! numbers, so amplification, budget and duplicates follow from the counts, not from per-request
//! objects.

use super::scenario::{MAX_KINDS, Retries};
use std::collections::VecDeque;
use std::time::Duration;

/// The three layers that retry, outermost first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    Client,
    Gateway,
    Worker,
}

impl Layer {
    pub const ALL: [Layer; 3] = [Layer::Client, Layer::Gateway, Layer::Worker];

    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Client => "client",
            Layer::Gateway => "gateway",
            Layer::Worker => "worker",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Classes: attempt numbers (0-based) per layer, each below 4.
pub const CLASSES: usize = 64;
type Masses = [[f64; CLASSES]; MAX_KINDS];

fn class(c: usize, g: usize, w: usize) -> usize {
    c * 16 + g * 4 + w
}

fn split(cl: usize) -> (usize, usize, usize) {
    (cl / 16, (cl / 4) % 4, cl % 4)
}

/// Attempts made before an attempt of this class, for the layer sizes given.
fn earlier_attempts(cl: usize, attempts: [usize; 3]) -> f64 {
    let (c, g, w) = split(cl);
    (c * attempts[1] * attempts[2] + g * attempts[2] + w) as f64
}

#[derive(Debug, Clone)]
struct Cohort {
    step: u64,
    issued: Masses,
    total: [f64; MAX_KINDS],
    ok: [f64; MAX_KINDS],
    failed: [f64; MAX_KINDS],
    late_commits: [f64; MAX_KINDS],
}

/// Per-layer policy as the scenario sets it.
#[derive(Debug, Clone, Copy)]
struct Policy {
    attempts: usize,
    retryable: f64,
    base_s: f64,
    cap_s: f64,
}

/// What a step's issue produced.
#[derive(Debug, Clone, Copy, Default)]
pub struct Issued {
    /// Attempts per kind to route to the fleet this step, retries included.
    pub attempts: [f64; MAX_KINDS],
    /// Retries per layer issued this step.
    pub retries: [f64; 3],
    /// Retries the budget or a disabled layer refused (those logical requests fail).
    pub refused: [f64; MAX_KINDS],
}

/// The ledger of cohorts and scheduled retries.
#[derive(Debug, Clone)]
pub struct RetryLedger {
    dt: f64,
    timeout_steps: u64,
    policy: [Policy; 3],
    budget_ratio: Option<f64>,
    /// Layers currently allowed to retry (the control API turns them off).
    enabled: [bool; 3],
    tokens: f64,
    cohorts: VecDeque<Cohort>,
    /// Retries due at the coming steps; index 0 is the next issue.
    due: VecDeque<Box<Masses>>,
    /// Logical requests that failed for good, per kind, since the last take.
    logical_failed: [f64; MAX_KINDS],
    /// Late commits over client-visible failures, smoothed: how likely a retried write had
    /// already been written.
    commit_given_failure: [f64; MAX_KINDS],
}

impl RetryLedger {
    pub fn new(retries: &Retries, dt: f64, timeout_s: f64) -> Self {
        let p = |l: &super::scenario::RetryLayer| Policy {
            attempts: l.attempts.clamp(1, 4) as usize,
            retryable: l.retryable.clamp(0.0, 1.0),
            base_s: l.backoff_base_ms.max(0.0) / 1000.0,
            cap_s: l.backoff_cap_ms.max(0.0) / 1000.0,
        };
        RetryLedger {
            dt,
            timeout_steps: (timeout_s / dt).ceil().max(1.0) as u64,
            policy: [p(&retries.client), p(&retries.gateway), p(&retries.worker)],
            budget_ratio: retries.budget_ratio,
            enabled: [
                retries.client.enabled,
                retries.gateway.enabled,
                retries.worker.enabled,
            ],
            tokens: 0.0,
            cohorts: VecDeque::new(),
            due: VecDeque::new(),
            logical_failed: [0.0; MAX_KINDS],
            commit_given_failure: [0.0; MAX_KINDS],
        }
    }

    /// Open this step's cohort with the first attempts plus the retries now due.
    pub fn issue(&mut self, step: u64, first: [f64; MAX_KINDS]) -> Issued {
        let enabled = self.enabled;
        let mut out = Issued::default();
        let mut cohort = Cohort {
            step,
            issued: [[0.0; CLASSES]; MAX_KINDS],
            total: [0.0; MAX_KINDS],
            ok: [0.0; MAX_KINDS],
            failed: [0.0; MAX_KINDS],
            late_commits: [0.0; MAX_KINDS],
        };
        let due = self.due.pop_front();
        let mut wanted = 0.0;
        if let Some(due) = &due {
            for (k, row) in due.iter().enumerate() {
                for (cl, &m) in row.iter().enumerate().skip(1) {
                    if m <= 0.0 {
                        continue;
                    }
                    if enabled[retrying_layer(cl).index()] {
                        wanted += m;
                    } else {
                        out.refused[k] += m;
                    }
                }
            }
        }
        let first_total: f64 = first.iter().sum();
        let allow = match self.budget_ratio {
            Some(ratio) => {
                let cap = 50.0 + ratio * first_total * 20.0;
                self.tokens = (self.tokens + ratio * first_total).min(cap);
                let granted = wanted.min(self.tokens);
                self.tokens -= granted;
                if wanted > 0.0 { granted / wanted } else { 1.0 }
            }
            None => 1.0,
        };
        for (k, &f) in first.iter().enumerate() {
            cohort.issued[k][0] = f;
            cohort.total[k] = f;
        }
        if let Some(due) = &due {
            for (k, row) in due.iter().enumerate() {
                for (cl, &m) in row.iter().enumerate().skip(1) {
                    let layer = retrying_layer(cl);
                    if m <= 0.0 || !enabled[layer.index()] {
                        continue;
                    }
                    let granted = m * allow;
                    out.refused[k] += m - granted;
                    out.retries[layer.index()] += granted;
                    cohort.issued[k][cl] += granted;
                    cohort.total[k] += granted;
                }
            }
        }
        for k in 0..MAX_KINDS {
            self.logical_failed[k] += out.refused[k];
        }
        out.attempts = cohort.total;
        self.cohorts.push_back(cohort);
        out
    }

    /// Attempts of cohort `step` that answered in time.
    pub fn succeed(&mut self, step: u64, kind: usize, mass: f64) {
        if let Some(c) = self.cohort(step) {
            c.ok[kind] += mass;
        }
    }

    /// Attempts that committed a write after the client had given up.
    pub fn late_commit(&mut self, step: u64, kind: usize, mass: f64) {
        if let Some(c) = self.cohort(step) {
            c.late_commits[kind] += mass;
        }
    }

    /// Attempts of cohort `step` that failed visibly now (503, crash): retried from now.
    pub fn fail_fast(&mut self, step: u64, kind: usize, mass: f64) {
        let Some(c) = self.cohort(step) else { return };
        let room = (c.total[kind] - c.ok[kind] - c.failed[kind]).max(0.0);
        let mass = mass.min(room);
        if mass <= 0.0 || c.total[kind] <= 0.0 {
            return;
        }
        c.failed[kind] += mass;
        let share = mass / c.total[kind];
        let row = c.issued[kind];
        self.schedule_failures(kind, &row, share);
    }

    /// Close the cohorts whose deadline passed: what has not answered timed out.
    pub fn finalize(&mut self, now_step: u64) {
        while let Some(front) = self.cohorts.front() {
            if front.step + self.timeout_steps > now_step {
                break;
            }
            let Some(c) = self.cohorts.pop_front() else {
                break;
            };
            for k in 0..MAX_KINDS {
                let timed_out = (c.total[k] - c.ok[k] - c.failed[k]).max(0.0);
                let failures = timed_out + c.failed[k];
                if failures > 1e-9 {
                    let q = (c.late_commits[k] / failures).clamp(0.0, 1.0);
                    self.commit_given_failure[k] = 0.9 * self.commit_given_failure[k] + 0.1 * q;
                }
                if timed_out > 0.0 && c.total[k] > 0.0 {
                    self.schedule_failures(k, &c.issued[k], timed_out / c.total[k]);
                }
            }
        }
    }

    /// Expected duplicate writes among `mass` commits of cohort `step`'s retries of `kind`.
    pub fn duplicates_among(&self, step: u64, kind: usize, mass: f64) -> f64 {
        let Some(c) = self.cohorts.iter().find(|c| c.step == step) else {
            return 0.0;
        };
        if c.total[kind] <= 0.0 {
            return 0.0;
        }
        let q = self.commit_given_failure[kind];
        let sizes = self.policy.map(|p| p.attempts);
        let mut dup = 0.0;
        for (cl, &m) in c.issued[kind].iter().enumerate().skip(1) {
            if m > 0.0 {
                let n = earlier_attempts(cl, sizes);
                dup += m / c.total[kind] * (1.0 - (1.0 - q).powf(n));
            }
        }
        mass * dup
    }

    /// Logical requests that failed for good since the last call, per kind.
    pub fn take_logical_failures(&mut self) -> [f64; MAX_KINDS] {
        std::mem::take(&mut self.logical_failed)
    }

    /// Whether a layer retries.
    pub fn enabled(&self, layer: Layer) -> bool {
        self.enabled[layer.index()]
    }

    /// Turn a layer's retries on or off; turning off drops the retries waiting in its backoff.
    pub fn set_enabled(&mut self, layer: Layer, on: bool) {
        self.enabled[layer.index()] = on;
        if !on {
            self.cancel_layer(layer);
        }
    }

    fn cancel_layer(&mut self, layer: Layer) {
        for due in &mut self.due {
            for (k, row) in due.iter_mut().enumerate() {
                for (cl, m) in row.iter_mut().enumerate().skip(1) {
                    if retrying_layer(cl) == layer && *m > 0.0 {
                        self.logical_failed[k] += *m;
                        *m = 0.0;
                    }
                }
            }
        }
    }

    fn cohort(&mut self, step: u64) -> Option<&mut Cohort> {
        // Cohorts are in step order; the one asked for is usually near the back.
        self.cohorts.iter_mut().rev().find(|c| c.step == step)
    }

    /// `share` of every class in `row` failed: hand each to the innermost layer with attempts
    /// left (and that considers the failure retryable); the rest fail logically.
    fn schedule_failures(&mut self, kind: usize, row: &[f64; CLASSES], share: f64) {
        for (cl, &m) in row.iter().enumerate() {
            if m <= 0.0 {
                continue;
            }
            let mut left = m * share;
            let (c, g, w) = split(cl);
            let [pc, pg, pw] = self.policy;
            let [ec, eg, ew] = self.enabled;
            if ew && w + 1 < pw.attempts {
                let r = left * pw.retryable;
                self.schedule(kind, class(c, g, w + 1), r, pw, w);
                left -= r;
            }
            if eg && g + 1 < pg.attempts {
                let r = left * pg.retryable;
                self.schedule(kind, class(c, g + 1, 0), r, pg, g);
                left -= r;
            }
            if ec && c + 1 < pc.attempts {
                let r = left * pc.retryable;
                self.schedule(kind, class(c + 1, 0, 0), r, pc, c);
                left -= r;
            }
            self.logical_failed[kind] += left;
        }
    }

    /// Spread `mass` uniformly over the full-jitter window of retry number `n`.
    fn schedule(&mut self, kind: usize, cl: usize, mass: f64, p: Policy, n: usize) {
        if mass <= 0.0 {
            return;
        }
        // The same capped exponential ceiling as warroom's own retries; full jitter is the
        // uniform spread below it.
        let ceiling = crate::backoff::Backoff {
            base: Duration::from_secs_f64(p.base_s),
            cap: Duration::from_secs_f64(p.cap_s),
            max_attempts: p.attempts as u32,
        }
        .ceiling(n as u32)
        .as_secs_f64();
        let steps = (ceiling / self.dt).round() as usize + 1;
        while self.due.len() < steps {
            self.due.push_back(Box::new([[0.0; CLASSES]; MAX_KINDS]));
        }
        let each = mass / steps as f64;
        for slot in self.due.iter_mut().take(steps) {
            slot[kind][cl] += each;
        }
    }
}

/// The layer whose retry produced an attempt of this class.
fn retrying_layer(cl: usize) -> Layer {
    match split(cl) {
        (_, _, w) if w > 0 => Layer::Worker,
        (_, g, _) if g > 0 => Layer::Gateway,
        _ => Layer::Client,
    }
}

/// Parse a layer name.
pub fn layer_from_str(s: &str) -> Option<Layer> {
    Layer::ALL.into_iter().find(|l| l.as_str() == s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::scenario::RetryLayer;

    fn layer(attempts: u32, retryable: f64) -> RetryLayer {
        RetryLayer {
            attempts,
            retryable,
            backoff_base_ms: 0.0,
            backoff_cap_ms: 0.0,
            enabled: true,
        }
    }

    /// Always failing: attempts per logical request are the product of the layers' attempts.
    #[test]
    fn hard_down_amplification_is_the_product_of_layers() {
        let r = Retries {
            client: layer(2, 1.0),
            gateway: layer(3, 1.0),
            worker: layer(1, 1.0),
            budget_ratio: None,
        };
        let mut l = RetryLedger::new(&r, 0.5, 1.0);
        let (mut first, mut all) = (0.0, 0.0);
        for step in 0..400u64 {
            let f = if step < 200 { 10.0 } else { 0.0 };
            let out = l.issue(step, [f, 0.0, 0.0, 0.0]);
            first += f;
            all += out.attempts[0];
            l.finalize(step);
        }
        assert!((all / first - 6.0).abs() < 0.01, "{}", all / first);
    }

    #[test]
    fn a_budget_caps_retries_near_its_ratio() {
        let r = Retries {
            client: layer(2, 1.0),
            gateway: layer(3, 1.0),
            worker: layer(1, 1.0),
            budget_ratio: Some(0.1),
        };
        let mut l = RetryLedger::new(&r, 0.5, 1.0);
        let (mut first, mut all) = (0.0, 0.0);
        for step in 0..2000u64 {
            let out = l.issue(step, [10.0, 0.0, 0.0, 0.0]);
            first += 10.0;
            all += out.attempts[0];
            l.finalize(step);
        }
        let amp = all / first;
        assert!(amp < 1.11 && amp > 1.05, "{amp}");
    }
}
