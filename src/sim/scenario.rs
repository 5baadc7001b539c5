//! Scenario files (`runbooks/gameday/*.toml`): the fleet, the traffic curve, the fault schedule
//! and the briefing of one rehearsal. The three house-format incidents are built in, so
//! `warroom sim serve planner-peak` works from any directory; any other argument is a path.

use crate::diagnostic::Diagnostic;
use serde::Deserialize;
use serde_spanned::Spanned;
use std::collections::BTreeMap;
use std::path::Path;

/// Request kinds, queries and layers are small fixed sets so the model can keep flat arrays.
pub const MAX_KINDS: usize = 4;

/// The scenarios shipped with warroom, by name.
pub const BUILTIN: [(&str, &str); 3] = [
    (
        "planner-peak",
        include_str!("../../runbooks/gameday/planner-peak.toml"),
    ),
    (
        "bird-count",
        include_str!("../../runbooks/gameday/bird-count.toml"),
    ),
    (
        "crash-loop",
        include_str!("../../runbooks/gameday/crash-loop.toml"),
    ),
];

/// One rehearsal, as written in its file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    /// The `service` label of every metric.
    pub service: String,
    pub title: String,
    /// What the team is told before the rehearsal starts.
    pub briefing: String,
    /// Wall-clock label of simulated second 0, "HH:MM" (shown in `/state`).
    pub start_clock: String,
    /// Length of the rehearsal in simulated seconds (the model keeps running past it).
    pub duration_s: f64,
    /// The error-ratio objective the score counts minutes against.
    pub objective_error_ratio: f64,
    pub traffic: Traffic,
    pub fleet: Fleet,
    pub database: Database,
    #[serde(rename = "request")]
    pub requests: Vec<RequestKind>,
    #[serde(rename = "query")]
    pub queries: Vec<Query>,
    #[serde(rename = "version", default)]
    pub versions: Vec<Version>,
    pub retries: Retries,
    pub queue: Queue,
    #[serde(rename = "fault", default)]
    pub faults: Vec<Fault>,
    /// The moves this scenario knows to be wrong (the response score counts them).
    #[serde(rename = "wrong_move", default)]
    pub wrong_moves: Vec<WrongMove>,
    /// The seed incident's own response as plays (`RUNBOOK@WHEN`, at the seed's moments):
    /// what `--play seed` runs.
    #[serde(default)]
    pub response: Vec<String>,
}

/// A move the scenario knows makes things worse, and why.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WrongMove {
    pub kind: WrongMoveKind,
    /// `fast-drain`: the most jobs per second the pools can take beside live traffic.
    #[serde(default)]
    pub rate: Option<f64>,
    /// What the timeline and the score say.
    pub why: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WrongMoveKind {
    /// More replicas than serve now.
    ScaleOut,
    /// Draining or resuming a backlog of more than a minute's worth at more than `rate`.
    FastDrain,
    /// Restarting a pod while the instances and the memory limit are still the scenario's.
    PlainRestart,
}

/// Arrivals: a daily curve (a floor plus a bell around the peak) with multiplicative noise.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Traffic {
    /// Logical requests per second at the usual daily peak.
    pub peak_rps: f64,
    /// Requests per second far from the peak.
    pub base_rps: f64,
    /// Simulated second of the peak.
    pub peak_at_s: f64,
    /// Standard deviation of the bell, seconds.
    pub width_s: f64,
    /// Relative standard deviation of the per-step noise.
    #[serde(default)]
    pub noise: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fleet {
    pub instances: u32,
    /// Database connections per instance.
    pub pool: u32,
    /// The client's deadline for one attempt.
    pub request_timeout_s: f64,
    /// How long a request waits for a connection before the instance gives up.
    pub acquire_timeout_s: f64,
    /// Time from a restart (planned or crash) until the instance serves again.
    pub restart_s: f64,
    pub memory_base_mb: f64,
    /// Memory each queued or running request holds.
    pub memory_per_request_kb: f64,
    pub memory_limit_mb: f64,
    /// The version deployed at second 0 (one of `[[version]]`).
    pub version: Spanned<String>,
    /// A deploy reaches all instances over this many seconds.
    pub rollout_s: f64,
    /// Spread (log-normal sigma) of query times around their median.
    #[serde(default = "default_spread")]
    pub spread: f64,
    /// Of the requests answered after their client gave up, the share that leaves its
    /// connection stale (checked out, unusable) until the connection's lifetime ends or the
    /// instance restarts: the stale pools of the planner incident.
    #[serde(default)]
    pub stale_share: f64,
    /// A stale connection's expected remaining lifetime (the pool's maximum lifetime).
    #[serde(default = "default_stale_lifetime")]
    pub stale_lifetime_s: f64,
}

fn default_spread() -> f64 {
    0.3
}

fn default_stale_lifetime() -> f64 {
    1800.0
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Database {
    /// Queries the database runs at full speed at once; beyond it every query slows in
    /// proportion (processor sharing), which is how one slow query slows all of them.
    pub capacity: f64,
}

/// A kind of user request and the query it runs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestKind {
    pub name: String,
    /// Fraction of arrivals.
    pub share: f64,
    pub query: Spanned<String>,
    /// Simple requests are kept alive by load shedding.
    #[serde(default)]
    pub simple: bool,
    /// Writes can be duplicated by retries when idempotency is not enforced.
    #[serde(default)]
    pub write: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Query {
    pub name: String,
    /// Database time at no contention.
    pub work_ms: f64,
    /// Time the connection is held outside the database (a network call in the transaction).
    #[serde(default)]
    pub hold_ms: f64,
}

/// A deployable version; it may change queries.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Version {
    pub name: String,
    #[serde(default)]
    pub work_ms: BTreeMap<String, f64>,
    #[serde(default)]
    pub hold_ms: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Retries {
    pub client: RetryLayer,
    pub gateway: RetryLayer,
    pub worker: RetryLayer,
    /// Shared retry budget: retries allowed per first attempt, all layers together.
    #[serde(default)]
    pub budget_ratio: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryLayer {
    /// Attempts in all, the first included (1 = no retries; at most 4).
    pub attempts: u32,
    /// Fraction of failures this layer considers retryable.
    #[serde(default = "one")]
    pub retryable: f64,
    #[serde(default)]
    pub backoff_base_ms: f64,
    #[serde(default)]
    pub backoff_cap_ms: f64,
    #[serde(default = "yes")]
    pub enabled: bool,
}

fn one() -> f64 {
    1.0
}
fn yes() -> bool {
    true
}

/// The background queue and its worker.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Queue {
    /// The `queue` label.
    pub name: String,
    /// Jobs per second at the traffic peak (scaled with the curve).
    #[serde(default)]
    pub inflow_at_peak_rps: f64,
    /// Fraction of failed logical writes that wait in the backlog instead of being lost.
    #[serde(default)]
    pub defer_failed: f64,
    /// Jobs the worker runs at once.
    pub concurrency: u32,
    pub query: Spanned<String>,
    #[serde(default = "yes")]
    pub running: bool,
    #[serde(default)]
    pub initial_depth: f64,
    /// The worker's jobs take connections from the instances' pools (the bird survey's sync
    /// backlog goes through the ingestion service) instead of a pool of their own.
    #[serde(default)]
    pub shares_pool: bool,
}

/// Something that goes wrong at a given time.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fault {
    pub at_s: f64,
    pub kind: FaultKind,
    /// `deploy`: the version deployed.
    #[serde(default)]
    pub version: Option<Spanned<String>>,
    /// `surge`: traffic multiplier.
    #[serde(default)]
    pub factor: Option<f64>,
    /// `latency`: extra connection hold time added to every query.
    #[serde(default)]
    pub hold_ms: Option<f64>,
    /// `surge`, `latency`: when it ends (never if absent).
    #[serde(default)]
    pub until_s: Option<f64>,
    /// What the timeline calls it.
    pub note: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    Deploy,
    Surge,
    Latency,
}

impl Scenario {
    /// A built-in scenario by name, or else a file by path.
    pub fn load(name_or_path: &str) -> Result<Scenario, Diagnostic> {
        if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Scenario::parse(&format!("runbooks/gameday/{name}.toml"), text);
        }
        let path = Path::new(name_or_path);
        let text = std::fs::read_to_string(path).map_err(|e| {
            let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
            Diagnostic::at(
                name_or_path,
                "",
                None,
                format!(
                    "cannot read scenario \"{name_or_path}\": {e}; give a file or one of {}",
                    names.join(", ")
                ),
            )
        })?;
        Scenario::parse(&path.display().to_string(), &text)
    }

    /// Parse and check a scenario; every error points at its line and column.
    pub fn parse(file: &str, text: &str) -> Result<Scenario, Diagnostic> {
        let sc: Scenario =
            toml::from_str(text).map_err(|e| Diagnostic::from_toml(file, text, &e))?;
        sc.check(file, text)?;
        Ok(sc)
    }

    fn check(&self, file: &str, text: &str) -> Result<(), Diagnostic> {
        let at = |span: std::ops::Range<usize>, msg: String| {
            Err(Diagnostic::at(file, text, Some(span), msg))
        };
        let whole = |msg: String| Err(Diagnostic::at(file, text, None, msg));
        let known_query = |q: &str| self.queries.iter().any(|x| x.name == q);
        let known_version = |v: &str| self.versions.iter().any(|x| x.name == v);
        if self.requests.is_empty() || self.requests.len() > MAX_KINDS {
            return whole(format!(
                "a scenario needs 1 to {MAX_KINDS} [[request]] kinds, found {}",
                self.requests.len()
            ));
        }
        let shares: f64 = self.requests.iter().map(|r| r.share).sum();
        if (shares - 1.0).abs() > 1e-6 {
            return whole(format!(
                "the [[request]] shares add up to \"{shares}\"; they must add up to 1"
            ));
        }
        for r in &self.requests {
            if !known_query(r.query.get_ref()) {
                return at(
                    r.query.span(),
                    format!(
                        "unknown query \"{}\"; add a [[query]] with that name",
                        r.query.get_ref()
                    ),
                );
            }
        }
        if !known_query(self.queue.query.get_ref()) {
            return at(
                self.queue.query.span(),
                format!("unknown query \"{}\"", self.queue.query.get_ref()),
            );
        }
        if !known_version(self.fleet.version.get_ref()) {
            return at(
                self.fleet.version.span(),
                format!(
                    "unknown version \"{}\"; add a [[version]] with that name",
                    self.fleet.version.get_ref()
                ),
            );
        }
        for f in &self.faults {
            match (f.kind, &f.version, f.factor, f.hold_ms) {
                (FaultKind::Deploy, Some(v), _, _) if !known_version(v.get_ref()) => {
                    return at(v.span(), format!("unknown version \"{}\"", v.get_ref()));
                }
                (FaultKind::Deploy, None, _, _) => {
                    return whole(format!("the deploy fault at {}s needs a version", f.at_s));
                }
                (FaultKind::Surge, _, None, _) => {
                    return whole(format!("the surge fault at {}s needs a factor", f.at_s));
                }
                (FaultKind::Latency, _, _, None) => {
                    return whole(format!("the latency fault at {}s needs hold_ms", f.at_s));
                }
                _ => {}
            }
        }
        for layer in [
            &self.retries.client,
            &self.retries.gateway,
            &self.retries.worker,
        ] {
            if !(1..=4).contains(&layer.attempts) {
                return whole(format!(
                    "retry attempts must be 1 to 4, found \"{}\"",
                    layer.attempts
                ));
            }
            let backoff_ok = |ms: f64| ms.is_finite() && (0.0..=3_600_000.0).contains(&ms);
            if !backoff_ok(layer.backoff_base_ms) || !backoff_ok(layer.backoff_cap_ms) {
                return whole("retry backoff must be 0 to 3600000 ms".to_string());
            }
            if !(0.0..=1.0).contains(&layer.retryable) {
                return whole(format!(
                    "retryable is a fraction from 0 to 1, found \"{}\"",
                    layer.retryable
                ));
            }
        }
        let positive = [
            ("fleet.request_timeout_s", self.fleet.request_timeout_s),
            ("fleet.acquire_timeout_s", self.fleet.acquire_timeout_s),
            ("fleet.memory_limit_mb", self.fleet.memory_limit_mb),
            ("database.capacity", self.database.capacity),
            ("traffic.width_s", self.traffic.width_s),
            ("duration_s", self.duration_s),
            ("fleet.stale_lifetime_s", self.fleet.stale_lifetime_s),
        ];
        for (name, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return whole(format!("{name} must be a positive number, found \"{v}\""));
            }
        }
        if !(0.0..=1.0).contains(&self.fleet.stale_share) {
            return whole(format!(
                "fleet.stale_share is a fraction from 0 to 1, found \"{}\"",
                self.fleet.stale_share
            ));
        }
        for w in &self.wrong_moves {
            if w.kind == WrongMoveKind::FastDrain
                && !w.rate.is_some_and(|r| r.is_finite() && r > 0.0)
            {
                return whole(
                    "a fast-drain wrong move needs the safe rate in jobs per second: rate = 40.0"
                        .into(),
                );
            }
        }
        if self.fleet.instances == 0 || self.fleet.instances > 64 {
            return whole("fleet.instances must be 1 to 64".to_string());
        }
        Ok(())
    }

    /// The first fault's time: where the score's clock starts.
    pub fn fault_at(&self) -> Option<f64> {
        self.faults.iter().map(|f| f.at_s).reduce(f64::min)
    }

    /// Index of a version by name.
    pub fn version_index(&self, name: &str) -> Option<usize> {
        self.versions.iter().position(|v| v.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_load() {
        for (name, _) in BUILTIN {
            let sc = Scenario::load(name).unwrap();
            assert_eq!(sc.name, name);
        }
    }

    #[test]
    fn unknown_keys_point_at_their_line() {
        let (_, text) = BUILTIN[0];
        let broken = text.replacen("[fleet]\n", "[fleet]\ncolour = 3\n", 1);
        let line = broken.lines().position(|l| l == "colour = 3").unwrap() + 1;
        let d = Scenario::parse("x.toml", &broken).unwrap_err();
        assert_eq!(d.line, line, "{d}");
        assert!(d.message.contains("colour"), "{d}");
    }

    #[test]
    fn unknown_query_reference_points_at_the_value() {
        let (_, text) = BUILTIN[1];
        let broken = text.replacen("query = \"submit_survey\"", "query = \"nope\"", 1);
        let d = Scenario::parse("x.toml", &broken).unwrap_err();
        assert!(d.message.contains("\"nope\""), "{d}");
        assert!(d.source_line.unwrap().contains("nope"));
    }

    #[test]
    fn infinite_backoff_is_refused() {
        let (_, text) = BUILTIN[0];
        let broken = text.replacen("backoff_cap_ms = 4000.0", "backoff_cap_ms = inf", 1);
        let d = Scenario::parse("x.toml", &broken).unwrap_err();
        assert!(d.message.contains("backoff"), "{d}");
    }
}
