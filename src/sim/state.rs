//! The `/state` document: what the model is doing now, in JSON, for people and runbooks.

use super::model::{STEP_S, Sim};
use super::retry::Layer;
use serde_json::{Value, json};

/// Events kept in the state document (the newest).
const EVENTS: usize = 50;

/// `HH:MM:SS` of simulated second `t` on the scenario's clock.
pub fn clock(start: &str, t: f64) -> String {
    let mut parts = start
        .split(':')
        .map(|p| p.trim().parse::<u64>().unwrap_or(0));
    let (h, m) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    let secs = (h * 3600 + m * 60 + t.max(0.0) as u64) % 86_400;
    format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

/// The state document.
pub fn state(sim: &Sim, speed: f64) -> Value {
    let sc = sim.scenario();
    let now = sim.now();
    let recent = sim.window(now - 60.0, now + STEP_S);
    let retries: serde_json::Map<String, Value> = Layer::ALL
        .iter()
        .map(|l| (l.as_str().to_string(), Value::Bool(sim.retries_enabled(*l))))
        .collect();
    let instances: Vec<Value> = sim
        .instances()
        .iter()
        .map(|i| {
            json!({
                "pod": i.name,
                "up": i.up,
                "version": sc.versions.get(i.version).map(|v| v.name.as_str()),
                "pool_in_use": (i.in_use() * 10.0).round() / 10.0,
                "pool_max": i.pool,
                "pool_stale": (i.stale * 10.0).round() / 10.0,
                "waiting": i.queued.round(),
                "memory_mb": i.memory_mb.round(),
                "restarts": i.restarts,
            })
        })
        .collect();
    let events = sim.events();
    let events = &events[events.len().saturating_sub(EVENTS)..];
    json!({
        "scenario": sc.name,
        "service": sc.service,
        "title": sc.title,
        "briefing": sc.briefing.trim(),
        "sim_time_s": now,
        "clock": clock(&sc.start_clock, now),
        "speed": speed,
        "seed": sim.seed(),
        "version": sim.version(),
        "fault_at_s": sc.fault_at(),
        "settings": sim.settings(),
        "retries": retries,
        "queue": {
            "name": sim.backlog.name,
            "depth": sim.backlog.depth.floor(),
            "mode": sim.backlog.mode,
        },
        "database_slowdown": (sim.slowdown * 100.0).round() / 100.0,
        "instances": instances,
        "last_minute": {
            "arrival_rps": (recent.logical / 60.0).round(),
            "error_ratio": (recent.error_ratio * 1e4).round() / 1e4,
            "attempts_per_request": (recent.amplification * 100.0).round() / 100.0,
            "query_p50_s": (recent.query_p50 * 1e4).round() / 1e4,
        },
        "score": sim.score(),
        "events": events,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn clock_wraps_midnight() {
        assert_eq!(super::clock("06:40", 1200.0), "07:00:00");
        assert_eq!(super::clock("23:59", 120.5), "00:01:00");
    }
}
