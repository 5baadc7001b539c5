//! One API instance: its database pool, the requests waiting for a connection (oldest first),
//! its memory, and its lifecycle (serving, restarting).

use super::histogram::{FluidHistogram, lognormal_cdf};
use super::scenario::MAX_KINDS;
use std::collections::VecDeque;

/// Response codes the instances count, in the order of [`Instance::codes`].
pub const CODES: [&str; 4] = ["200", "502", "503", "504"];
pub const OK: usize = 0;
pub const CRASHED: usize = 1;
pub const UNAVAILABLE: usize = 2;
pub const TIMED_OUT: usize = 3;

/// Requests issued in one step, waiting for a connection on one instance.
#[derive(Debug, Clone)]
pub struct Waiting {
    pub step: u64,
    pub mass: [f64; MAX_KINDS],
}

/// A simulated API instance.
#[derive(Debug, Clone)]
pub struct Instance {
    /// The N of `api-N`.
    pub index: usize,
    pub name: String,
    pub up: bool,
    /// When a restarting instance serves again.
    pub ready_at: f64,
    pub version: usize,
    /// A deploy reaches this instance at the given time.
    pub pending_version: Option<(usize, f64)>,
    pub pool: f64,
    /// How much slower than nominal this instance's queries run (its host, its network path):
    /// instances differ a little, so the weakest one fails first and a cascade has an order.
    pub factor: f64,
    /// Queries in flight at the end of the last step, per request kind.
    pub busy: [f64; MAX_KINDS],
    /// Connections in use on average during the last step, per request kind.
    pub occupancy: [f64; MAX_KINDS],
    /// Stale connections: checked out by a request its client had already abandoned, left in a
    /// broken state the pool only reclaims at their lifetime's end (or a restart).
    pub stale: f64,
    /// Connections the background worker holds on this instance's pool (a backlog that shares
    /// the instances' pools).
    pub reserved: f64,
    pub queue: VecDeque<Waiting>,
    pub queued: f64,
    pub memory_mb: f64,
    pub restarts: f64,
    pub oom_kills: f64,
    /// Attempts answered, per [`CODES`].
    pub codes: [f64; 4],
    pub acquire_timeouts: f64,
    pub request_duration: FluidHistogram,
    pub pool_wait: FluidHistogram,
}

impl Instance {
    pub fn new(index: usize, version: usize, pool: f64, memory_mb: f64) -> Self {
        Instance {
            index,
            name: format!("api-{index}"),
            up: true,
            ready_at: 0.0,
            version,
            pending_version: None,
            pool,
            factor: 1.0,
            busy: [0.0; MAX_KINDS],
            occupancy: [0.0; MAX_KINDS],
            stale: 0.0,
            reserved: 0.0,
            queue: VecDeque::new(),
            queued: 0.0,
            memory_mb,
            restarts: 0.0,
            oom_kills: 0.0,
            codes: [0.0; 4],
            acquire_timeouts: 0.0,
            request_duration: FluidHistogram::default(),
            pool_wait: FluidHistogram::default(),
        }
    }

    /// Connections checked out (average over the last step): by requests, by the background
    /// worker, and stale ones.
    pub fn in_use(&self) -> f64 {
        // A connection turns stale as its abandoned query ends: until then it is counted once.
        (self.occupancy.iter().sum::<f64>() + self.stale + self.reserved).min(self.pool.max(0.0))
    }

    /// Connections requests may take: the pool less the stale and the worker's.
    pub fn usable(&self) -> f64 {
        (self.pool - self.stale - self.reserved).max(0.0)
    }

    /// Pool occupancy, 0..=1.
    pub fn saturation(&self) -> f64 {
        if self.pool <= 0.0 {
            1.0
        } else {
            (self.in_use() / self.pool).min(1.0)
        }
    }

    /// Queue arrivals issued at `step`, merging with that step's entry.
    pub fn enqueue(&mut self, step: u64, mass: [f64; MAX_KINDS]) {
        let total: f64 = mass.iter().sum();
        if total <= 0.0 {
            return;
        }
        self.queued += total;
        match self.queue.back_mut() {
            Some(w) if w.step == step => {
                for (a, b) in w.mass.iter_mut().zip(mass) {
                    *a += b;
                }
            }
            _ => self.queue.push_back(Waiting { step, mass }),
        }
    }

    /// Take everything out: the instance stops (crash or restart).
    pub fn stop(&mut self, now: f64, restart_s: f64) -> VecDeque<Waiting> {
        self.up = false;
        self.ready_at = now + restart_s;
        self.busy = [0.0; MAX_KINDS];
        self.occupancy = [0.0; MAX_KINDS];
        self.stale = 0.0;
        self.reserved = 0.0;
        self.queued = 0.0;
        self.restarts += 1.0;
        std::mem::take(&mut self.queue)
    }

    /// Remove and return the requests that waited past the acquire timeout.
    pub fn expire(&mut self, now_step: u64, max_wait_steps: u64, dt: f64) -> Vec<Waiting> {
        let mut out = Vec::new();
        while let Some(front) = self.queue.front() {
            if front.step + max_wait_steps > now_step {
                break;
            }
            if let Some(w) = self.queue.pop_front() {
                let m: f64 = w.mass.iter().sum();
                self.queued -= m;
                self.acquire_timeouts += m;
                self.codes[UNAVAILABLE] += m;
                self.pool_wait.observe(max_wait_steps as f64 * dt, 0.0, m);
                out.push(w);
            }
        }
        if self.queue.is_empty() {
            self.queued = 0.0;
        }
        out
    }

    /// Run one step of the pool: queries in flight use their connections (each lasts about
    /// `hold[k]`, memoryless), and the connection-seconds left go to waiting requests, oldest
    /// first. Returns the admitted pieces: (issue step, kind, mass, age in seconds).
    ///
    /// Counting connection-seconds rather than connections keeps Little's law true when a
    /// query is much shorter than a step (one connection serves many 42 ms queries per step).
    pub fn admit(
        &mut self,
        now_step: u64,
        hold: &[f64; MAX_KINDS],
        dt: f64,
    ) -> Vec<(u64, usize, f64, f64)> {
        let mut done = [0.0; MAX_KINDS];
        let mut used = [0.0; MAX_KINDS];
        for k in 0..MAX_KINDS {
            let t = hold[k].max(1e-4);
            done[k] = 1.0 - (-dt / t).exp();
            used[k] = self.busy[k] * t * done[k];
            self.busy[k] *= 1.0 - done[k];
        }
        let mut room = self.usable() * dt - used.iter().sum::<f64>();
        let mut out = Vec::new();
        while room > 1e-9 {
            let Some(front) = self.queue.front_mut() else {
                break;
            };
            let total: f64 = front.mass.iter().sum();
            if total <= 0.0 {
                self.queue.pop_front();
                continue;
            }
            let cost: f64 = (0..MAX_KINDS)
                .map(|k| front.mass[k] / total * hold[k].max(1e-4) * done[k])
                .sum();
            let take = total.min(room / cost.max(1e-12));
            let frac = take / total;
            let age = now_step.saturating_sub(front.step) as f64 * dt;
            for (k, m) in front.mass.iter_mut().enumerate() {
                let x = *m * frac;
                if x > 0.0 {
                    out.push((front.step, k, x, age));
                    used[k] += x * hold[k].max(1e-4) * done[k];
                    self.busy[k] += x * (1.0 - done[k]);
                    *m -= x;
                }
            }
            room -= take * cost;
            self.queued -= take;
            if frac >= 1.0 - 1e-12 {
                self.queue.pop_front();
            }
        }
        if self.queue.is_empty() {
            self.queued = 0.0;
        }
        self.occupancy = used.map(|u| u / dt);
        out
    }

    /// Record one admitted piece: the fraction answered before the deadline succeeds, the rest
    /// is a timeout (its query still runs and still holds the connection).
    pub fn answer(&mut self, mass: f64, age: f64, hold: f64, spread: f64, deadline: f64) -> f64 {
        let ok = mass * lognormal_cdf(deadline - age, hold, spread);
        self.codes[OK] += ok;
        self.codes[TIMED_OUT] += mass - ok;
        self.pool_wait.observe(age, 0.0, mass);
        self.request_duration.observe(age + hold, spread, mass);
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admission_is_oldest_first_and_bounded_by_the_pool() {
        // 10 connections, 10 s queries, half-second steps: about 10 admitted at once.
        let mut i = Instance::new(0, 0, 10.0, 100.0);
        i.enqueue(1, [8.0, 0.0, 0.0, 0.0]);
        i.enqueue(2, [8.0, 0.0, 0.0, 0.0]);
        let got = i.admit(3, &[10.0; MAX_KINDS], 0.5);
        let total: f64 = got.iter().map(|g| g.2).sum();
        assert!((total - 10.0).abs() < 0.3, "{total}");
        assert_eq!(got[0].0, 1);
        assert!((i.queued - (16.0 - total)).abs() < 1e-9);
        assert!((i.saturation() - 1.0).abs() < 1e-9);
        // Short queries: one connection serves many per step (Little's law).
        let mut j = Instance::new(1, 0, 10.0, 100.0);
        j.enqueue(1, [100.0, 0.0, 0.0, 0.0]);
        let got = j.admit(1, &[0.01; MAX_KINDS], 0.5);
        let total: f64 = got.iter().map(|g| g.2).sum();
        assert!((total - 100.0).abs() < 1e-9);
        assert!(
            (j.in_use() - 100.0 * 0.01 / 0.5).abs() < 1e-6,
            "{}",
            j.in_use()
        );
    }

    #[test]
    fn waiting_past_the_acquire_timeout_expires() {
        let mut i = Instance::new(0, 0, 0.0, 100.0);
        i.enqueue(0, [5.0, 0.0, 0.0, 0.0]);
        i.enqueue(10, [5.0, 0.0, 0.0, 0.0]);
        let gone = i.expire(12, 10, 0.5);
        assert_eq!(gone.len(), 1);
        assert!((i.acquire_timeouts - 5.0).abs() < 1e-9);
        assert!((i.queued - 5.0).abs() < 1e-9);
    }
}
