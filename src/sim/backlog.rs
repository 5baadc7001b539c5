//! The background queue and its worker: jobs wait in a backlog and the worker runs a fixed
//! number at once, each holding a database connection of its own for the job's query time.

use super::scenario::Queue;

/// What the worker is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueMode {
    Running,
    Paused,
    /// Refuse new jobs and finish the backlog, then run again.
    Draining,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Backlog {
    pub name: String,
    pub depth: f64,
    pub mode: QueueMode,
    pub concurrency: f64,
    /// Index of the job's query in the scenario.
    #[serde(skip)]
    pub query: usize,
    /// Worker connections in use.
    pub busy: f64,
    pub processed: f64,
    /// Jobs refused while draining.
    pub refused: f64,
    /// The most jobs started per second (a paced drain); `None`: as many as the worker runs.
    pub rate: Option<f64>,
    /// The worker's jobs take the instances' connections.
    #[serde(skip)]
    pub shares_pool: bool,
}

impl Backlog {
    pub fn new(q: &Queue, query: usize) -> Self {
        Backlog {
            name: q.name.clone(),
            depth: q.initial_depth.max(0.0),
            mode: if q.running {
                QueueMode::Running
            } else {
                QueueMode::Paused
            },
            concurrency: q.concurrency as f64,
            query,
            busy: 0.0,
            processed: 0.0,
            refused: 0.0,
            rate: None,
            shares_pool: q.shares_pool,
        }
    }

    /// The most jobs per second the worker would start now, for jobs lasting `job_s`: the
    /// pace it was given, else its workers' pace; a drain without a pace goes as fast as the
    /// connections allow.
    pub fn max_rate(&self, job_s: f64) -> f64 {
        match (self.rate, self.mode) {
            (Some(r), _) => r,
            (None, QueueMode::Draining) => f64::INFINITY,
            (None, _) => self.concurrency / job_s.max(1e-3),
        }
    }

    /// Take `inflow` new jobs and run the worker for `dt` seconds of jobs lasting `job_s`, on
    /// at most `connections` connections.
    pub fn step(&mut self, inflow: f64, job_s: f64, dt: f64, connections: f64) {
        if self.mode == QueueMode::Draining {
            self.refused += inflow;
        } else {
            self.depth += inflow;
        }
        if self.mode == QueueMode::Paused || self.depth <= 0.0 {
            self.busy = 0.0;
            return;
        }
        let job_s = job_s.max(1e-3);
        let rate = self
            .max_rate(job_s)
            .min(self.depth / dt)
            .min(connections.max(0.0) / job_s);
        self.busy = rate * job_s;
        let done = rate * dt;
        self.depth -= done;
        self.processed += done;
        if self.depth < 0.5 {
            self.depth = 0.0;
            if self.mode == QueueMode::Draining {
                self.mode = QueueMode::Running;
            }
        }
    }
}
