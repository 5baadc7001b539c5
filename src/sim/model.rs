//! The fleet model: a pure function of the scenario and the seed, advanced in fixed steps.
//!
//! Each step: faults due fire; logical requests arrive on the daily curve; the retry ledger adds
//! the retries now due; the load balancer spreads attempts over the instances that serve; the
//! database slows every query in proportion to the work in it beyond its capacity (processor
//! sharing, so one slow query slows all); each instance returns finished connections, expires
//! requests that waited past the acquire timeout and admits the oldest waiting ones; memory
//! follows the requests held and an instance over its limit is killed and restarts; the
//! background worker takes jobs; cohorts past the client deadline are closed and retried.

use super::backlog::Backlog;
use super::fleet::{CRASHED, Instance, UNAVAILABLE};
use super::histogram::FluidHistogram;
use super::retry::{Layer, RetryLedger};
use super::scenario::{MAX_KINDS, Scenario};
use super::score::ScoreKeeper;
use super::stats::StepStats;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;

/// Simulated seconds per step.
pub const STEP_S: f64 = 0.5;
/// With load shedding on, expensive requests may fill the pool only up to this share.
const SHED_AT: f64 = 0.75;
/// Steps of history kept for windows and the score (four simulated hours).
const HISTORY: usize = 4 * 3600 * 2;

/// Control settings the team changes during the rehearsal.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Settings {
    pub pool: u32,
    pub memory_limit_mb: f64,
    pub load_shedding: bool,
    pub idempotency_enforced: bool,
}

/// Counts since the start.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Totals {
    pub logical: f64,
    pub logical_failed: f64,
    pub retries: [f64; 3],
    pub duplicates: f64,
    /// Attempts the gateway refused because no instance served.
    pub no_instance: f64,
    pub writes: f64,
}

/// Something that happened: a fault or an action, for `/state` and the score.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Event {
    pub at_s: f64,
    pub what: String,
    pub mitigation: bool,
    /// Why the scenario counts this action as a wrong move, when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrong: Option<String>,
}

/// The simulated fleet.
#[derive(Debug, Clone)]
pub struct Sim {
    pub(crate) sc: Scenario,
    pub(crate) seed: u64,
    rng: StdRng,
    pub(crate) step: u64,
    pub(crate) instances: Vec<Instance>,
    pub(crate) settings: Settings,
    pub(crate) ledger: RetryLedger,
    pub(crate) backlog: Backlog,
    pub(crate) totals: Totals,
    /// One per scenario query.
    pub(crate) query_hist: Vec<FluidHistogram>,
    /// Query index of each request kind.
    kind_query: [usize; MAX_KINDS],
    /// Seconds of database work and of holding outside the database, per version and query.
    pub(crate) work: Vec<Vec<f64>>,
    pub(crate) hold: Vec<Vec<f64>>,
    pub(crate) slowdown: f64,
    pub(crate) next_fault: usize,
    /// Traffic multiplier and until when.
    pub(crate) surge: (f64, f64),
    /// Extra connection hold time (seconds) and until when.
    pub(crate) extra_hold: (f64, f64),
    /// Versions deployed, oldest first; rollback returns to the one before the last.
    pub(crate) deployed: Vec<usize>,
    pub(crate) history: VecDeque<StepStats>,
    pub(crate) score: ScoreKeeper,
    pub(crate) events: Vec<Event>,
}

impl Sim {
    /// A fleet at second 0 of the scenario.
    pub fn new(sc: Scenario, seed: u64) -> Sim {
        let qi = |name: &str| sc.queries.iter().position(|q| q.name == name).unwrap_or(0);
        let mut kind_query = [0; MAX_KINDS];
        for (k, r) in sc.requests.iter().enumerate().take(MAX_KINDS) {
            kind_query[k] = qi(r.query.get_ref());
        }
        let per_version =
            |over: fn(&super::scenario::Version) -> &std::collections::BTreeMap<String, f64>,
             base: fn(&super::scenario::Query) -> f64| {
                sc.versions
                    .iter()
                    .map(|v| {
                        sc.queries
                            .iter()
                            .map(|q| over(v).get(&q.name).copied().unwrap_or(base(q)) / 1000.0)
                            .collect()
                    })
                    .collect::<Vec<Vec<f64>>>()
            };
        let work = per_version(|v| &v.work_ms, |q| q.work_ms);
        let hold = per_version(|v| &v.hold_ms, |q| q.hold_ms);
        let version = sc.version_index(sc.fleet.version.get_ref()).unwrap_or(0);
        let mut rng = StdRng::seed_from_u64(seed);
        let instances = (0..sc.fleet.instances as usize)
            .map(|i| {
                let mut inst =
                    Instance::new(i, version, sc.fleet.pool as f64, sc.fleet.memory_base_mb);
                inst.factor = instance_factor(&mut rng);
                inst
            })
            .collect();
        let settings = Settings {
            pool: sc.fleet.pool,
            memory_limit_mb: sc.fleet.memory_limit_mb,
            load_shedding: false,
            idempotency_enforced: false,
        };
        let mut faults = sc.faults.clone();
        faults.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
        let job_query = qi(sc.queue.query.get_ref());
        let mut sc = sc;
        sc.faults = faults;
        Sim {
            ledger: RetryLedger::new(&sc.retries, STEP_S, sc.fleet.request_timeout_s),
            backlog: Backlog::new(&sc.queue, job_query),
            query_hist: vec![FluidHistogram::default(); sc.queries.len()],
            score: ScoreKeeper::new(sc.fault_at(), sc.objective_error_ratio),
            rng,
            seed,
            step: 0,
            instances,
            settings,
            totals: Totals::default(),
            kind_query,
            work,
            hold,
            slowdown: 1.0,
            next_fault: 0,
            surge: (1.0, f64::INFINITY),
            extra_hold: (0.0, f64::INFINITY),
            deployed: vec![version],
            history: VecDeque::new(),
            events: Vec::new(),
            sc,
        }
    }

    /// Simulated seconds since the start.
    pub fn now(&self) -> f64 {
        self.step as f64 * STEP_S
    }

    /// Steps taken since the start.
    pub fn step_index(&self) -> u64 {
        self.step
    }

    pub fn scenario(&self) -> &Scenario {
        &self.sc
    }

    /// Advance until the simulated time reaches `t` seconds.
    pub fn run_until(&mut self, t: f64) {
        while self.now() + STEP_S / 2.0 < t {
            self.step();
        }
    }

    /// Logical requests per second the curve asks for at `t`, before noise.
    pub fn arrival_rate(&self, t: f64) -> f64 {
        let tr = &self.sc.traffic;
        let x = (t - tr.peak_at_s) / tr.width_s;
        let curve = tr.base_rps + (tr.peak_rps - tr.base_rps) * (-0.5 * x * x).exp();
        let surge = if t < self.surge.1 { self.surge.0 } else { 1.0 };
        curve * surge
    }

    fn normal(&mut self) -> f64 {
        normal(&mut self.rng)
    }

    /// A new instance's speed factor, from the model's noise.
    pub(crate) fn new_instance_factor(&mut self) -> f64 {
        instance_factor(&mut self.rng)
    }

    /// One step of `STEP_S` seconds.
    pub fn step(&mut self) {
        let now = self.now();
        let dt = STEP_S;
        self.fire_faults(now);
        for inst in &mut self.instances {
            if !inst.up && now >= inst.ready_at {
                inst.up = true;
                inst.memory_mb = self.sc.fleet.memory_base_mb;
            }
            if let Some((v, at)) = inst.pending_version
                && now >= at
            {
                inst.version = v;
                inst.pending_version = None;
            }
        }
        let extra_hold = if now < self.extra_hold.1 {
            self.extra_hold.0
        } else {
            0.0
        };

        // Arrivals and the retries due.
        let noise = (1.0 + self.sc.traffic.noise * self.normal()).max(0.0);
        let logical = self.arrival_rate(now) * noise * dt;
        let mut first = [0.0; MAX_KINDS];
        for (k, r) in self.sc.requests.iter().enumerate() {
            first[k] = logical * r.share;
            if r.write {
                self.totals.writes += first[k];
            }
        }
        self.totals.logical += logical;
        let issued = self.ledger.issue(self.step, first);
        for (t, r) in self.totals.retries.iter_mut().zip(issued.retries) {
            *t += r;
        }
        let attempts: f64 = issued.attempts.iter().sum();
        let mut stats = StepStats::new(now, logical, attempts);

        // The database: solve slowdown = max(1, active work / capacity) by fixed-point
        // iteration (it converges: the active work grows slower than the slowdown).
        let mut s = self.slowdown.max(1.0);
        for _ in 0..4 {
            s = (self.db_active(s, extra_hold) / self.sc.database.capacity).max(1.0);
        }
        self.slowdown = s;

        // Route to the instances that serve.
        let up: Vec<usize> = (0..self.instances.len())
            .filter(|&i| self.instances[i].up)
            .collect();
        if up.is_empty() {
            for (k, &m) in issued.attempts.iter().enumerate() {
                self.ledger.fail_fast(self.step, k, m);
                self.totals.no_instance += m;
                stats.answered += m;
                stats.errors += m;
            }
        }
        let share = 1.0 / up.len().max(1) as f64;
        // A backlog that shares the pools holds its connections on the instances that serve,
        // evenly; stale connections age out over their lifetime.
        let reclaim = (-dt / self.sc.fleet.stale_lifetime_s).exp();
        let worker_share = if self.backlog.shares_pool {
            self.backlog.busy * share
        } else {
            0.0
        };
        for inst in &mut self.instances {
            inst.stale *= reclaim;
            inst.reserved = if inst.up {
                worker_share.min((inst.pool - inst.stale).max(0.0))
            } else {
                0.0
            };
        }
        let stale_share = self.sc.fleet.stale_share;
        let timeout = self.sc.fleet.request_timeout_s;
        let spread = self.sc.fleet.spread;
        let max_wait_steps = (self.sc.fleet.acquire_timeout_s / dt).ceil() as u64;
        for &i in &up {
            let jitter = (0.04 * self.normal()).exp() * self.instances[i].factor;
            let inst = &mut self.instances[i];
            let mut mass = issued.attempts.map(|m| m * share);
            let v = inst.version;
            let mut hold_k = [1.0; MAX_KINDS];
            let kinds = self.sc.requests.len();
            for (h, &q) in hold_k.iter_mut().zip(&self.kind_query).take(kinds) {
                *h = (self.work[v][q] * s + self.hold[v][q] + extra_hold) * jitter;
            }
            if self.settings.load_shedding {
                // Expensive requests get only the connections below SHED_AT of the pool, and
                // none while requests wait: the rest of the pool stays free for simple ones.
                let mut room = if inst.queued > 0.5 {
                    0.0
                } else {
                    (SHED_AT * inst.usable() - (inst.in_use() - inst.stale - inst.reserved))
                        .max(0.0)
                };
                for (k, r) in self.sc.requests.iter().enumerate() {
                    if r.simple || mass[k] <= 0.0 {
                        continue;
                    }
                    let per_connection = dt.max(hold_k[k]) / hold_k[k];
                    let keep = mass[k].min(room * per_connection);
                    room -= keep / per_connection;
                    let shed = mass[k] - keep;
                    inst.codes[UNAVAILABLE] += shed;
                    stats.answered += shed;
                    stats.errors += shed;
                    self.ledger.fail_fast(self.step, k, shed);
                    mass[k] = keep;
                }
            }
            inst.enqueue(self.step, mass);

            for w in inst.expire(self.step, max_wait_steps, dt) {
                for (k, &m) in w.mass.iter().enumerate() {
                    self.ledger.fail_fast(w.step, k, m);
                    stats.answered += m;
                    stats.errors += m;
                }
            }
            let mut leaked = 0.0;
            for (from, k, x, age) in inst.admit(self.step, &hold_k, dt) {
                let ok = inst.answer(x, age, hold_k[k], spread, timeout);
                // Answered after the client gave up: some leave their connection stale.
                leaked += stale_share * (x - ok);
                self.ledger.succeed(from, k, ok);
                stats.ok_by_kind[k] += ok;
                stats.answered += x;
                stats.errors += x - ok;
                let q = self.kind_query[k];
                self.query_hist[q].observe(hold_k[k], spread, x);
                stats.queries.push((hold_k[k], x));
                if self.sc.requests[k].write {
                    self.ledger.late_commit(from, k, x - ok);
                    if !self.settings.idempotency_enforced {
                        let d = self.ledger.duplicates_among(from, k, x);
                        self.totals.duplicates += d;
                        stats.duplicates += d;
                    }
                }
            }
            inst.stale = (inst.stale + leaked).min(inst.pool);
        }

        // Memory follows the requests held; past the limit the instance is killed.
        for i in 0..self.instances.len() {
            if !self.instances[i].up {
                continue;
            }
            let wobble = 1.0 + 0.01 * self.normal();
            let fleet = &self.sc.fleet;
            let inst = &mut self.instances[i];
            let held = inst.queued + inst.in_use();
            inst.memory_mb =
                (fleet.memory_base_mb + held * fleet.memory_per_request_kb / 1024.0) * wobble;
            if inst.memory_mb > self.settings.memory_limit_mb {
                inst.oom_kills += 1.0;
                let lost = inst.stop(now, fleet.restart_s);
                for w in lost {
                    for (k, &m) in w.mass.iter().enumerate() {
                        inst.codes[CRASHED] += m;
                        stats.answered += m;
                        stats.errors += m;
                        self.ledger.fail_fast(w.step, k, m);
                    }
                }
            }
        }

        // Failed logical writes may wait in the backlog (a phone keeps the survey).
        let failed = self.ledger.take_logical_failures();
        let mut deferred = 0.0;
        for (k, r) in self.sc.requests.iter().enumerate() {
            self.totals.logical_failed += failed[k];
            stats.logical_failed += failed[k];
            if r.write {
                deferred += failed[k] * self.sc.queue.defer_failed;
            }
        }
        let peak = self.sc.traffic.peak_rps.max(1e-9);
        let inflow = self.sc.queue.inflow_at_peak_rps * self.arrival_rate(now) / peak * dt;
        let v = self.deployed.last().copied().unwrap_or(0);
        let q = self.backlog.query;
        let job_s = self.work[v][q] * s + self.hold[v][q] + extra_hold;
        let connections = if self.backlog.shares_pool {
            (self.instances.iter().filter(|i| i.up))
                .map(|i| (i.pool - i.stale).max(0.0))
                .sum()
        } else {
            f64::INFINITY
        };
        self.backlog.step(inflow + deferred, job_s, dt, connections);

        self.ledger.finalize(self.step + 1);
        stats.finish(&self.instances, self.backlog.depth);
        self.score.record(&stats);
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(stats);
        self.step += 1;
    }

    /// Queries running inside the database (not holding a connection outside it) if every
    /// query's database time is stretched by `s`.
    fn db_active(&self, s: f64, extra_hold: f64) -> f64 {
        let mut active = 0.0;
        for inst in self.instances.iter().filter(|i| i.up) {
            for (k, &b) in inst
                .occupancy
                .iter()
                .enumerate()
                .take(self.sc.requests.len())
            {
                if b > 0.0 {
                    let q = self.kind_query[k];
                    let w = self.work[inst.version][q] * s;
                    active += b * w / (w + self.hold[inst.version][q] + extra_hold);
                }
            }
        }
        let v = self.deployed.last().copied().unwrap_or(0);
        let q = self.backlog.query;
        let w = self.work[v][q] * s;
        active + self.backlog.busy * w / (w + self.hold[v][q] + extra_hold)
    }

    /// Whether a layer's retries are on.
    pub fn retries_enabled(&self, layer: Layer) -> bool {
        self.ledger.enabled(layer)
    }

    /// The game-day score so far.
    pub fn score(&self) -> &super::score::Score {
        self.score.score()
    }

    /// The seed of the model's noise.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn instances(&self) -> &[Instance] {
        &self.instances
    }

    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The version most recently deployed.
    pub fn version(&self) -> &str {
        let v = self.deployed.last().copied().unwrap_or(0);
        self.sc.versions.get(v).map_or("", |v| v.name.as_str())
    }
}

/// A standard normal sample (Box–Muller: rand 0.9 has no normal distribution without
/// rand_distr).
fn normal(rng: &mut StdRng) -> f64 {
    let u1: f64 = rng.random::<f64>().max(1e-12);
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Instances differ by a few percent, never by much.
fn instance_factor(rng: &mut StdRng) -> f64 {
    (0.05 * normal(rng)).exp().clamp(0.85, 1.15)
}
