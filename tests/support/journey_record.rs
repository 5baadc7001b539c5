//! What the journey compares the console's record with: the simulator's own `/state`, read
//! every 250 ms while the journey runs, and Prometheus's own count of the requests it answered.
//! Include next to `support/prometheus.rs`.

#![allow(dead_code)]

use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Prometheus scrapes and evaluates every second in the journey: 30 simulated seconds at 30x.
pub const SCRAPE_S: f64 = 1.0;

/// One reading of the simulator's own `/state`: when (wall clock), its last simulated
/// minute's error ratio, and its fullest pool.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    pub at: DateTime<Utc>,
    pub error_ratio: f64,
    /// Attempts per logical request.
    pub amplification: f64,
    pub pool: f64,
}

/// Reads the simulator's `/state` every 250 ms until stopped (bounded: at most 20 minutes).
pub struct SimRecord {
    readings: Arc<Mutex<Vec<Reading>>>,
    stop: Arc<AtomicBool>,
}

impl SimRecord {
    pub fn start(port: u16) -> SimRecord {
        let readings = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (r, s) = (readings.clone(), stop.clone());
        std::thread::spawn(move || {
            for _ in 0..4800 {
                if s.load(Ordering::Relaxed) {
                    break;
                }
                let at = Utc::now();
                if let Some((200, body)) =
                    super::prometheus::http_get(port, "/state", Duration::from_secs(2))
                    && let Ok(v) = serde_json::from_str::<serde_json::Value>(&body)
                {
                    let pool = v["instances"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|i| Some(i["pool_in_use"].as_f64()? / i["pool_max"].as_f64()?))
                        .fold(0.0, f64::max);
                    let last = &v["last_minute"];
                    if let (Some(e), Some(a)) = (
                        last["error_ratio"].as_f64(),
                        last["attempts_per_request"].as_f64(),
                    ) {
                        r.lock().unwrap().push(Reading {
                            at,
                            error_ratio: e,
                            amplification: a,
                            pool,
                        });
                    }
                }
                std::thread::sleep(Duration::from_millis(250));
            }
        });
        SimRecord { readings, stop }
    }

    pub fn finish(&self) -> Vec<Reading> {
        self.stop.store(true, Ordering::Relaxed);
        self.readings.lock().unwrap().clone()
    }
}

impl Drop for SimRecord {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Prometheus's own count of the HTTP requests it answered, by handler.
pub fn prometheus_requests(port: u16) -> BTreeMap<String, f64> {
    let (_, body) = super::prometheus::http_get(port, "/metrics", Duration::from_secs(5))
        .expect("prometheus /metrics");
    let mut by = BTreeMap::new();
    for line in body.lines() {
        let Some(rest) = line.strip_prefix("prometheus_http_requests_total{") else {
            continue;
        };
        let Some((labels, value)) = rest.rsplit_once("} ") else {
            continue;
        };
        let handler = labels
            .split("handler=\"")
            .nth(1)
            .and_then(|h| h.split('"').next())
            .unwrap_or("?")
            .to_string();
        *by.entry(handler).or_insert(0.0) += value.trim().parse::<f64>().unwrap_or(0.0);
    }
    by
}

/// The rate window of the journey's error-ratio panel, in wall seconds.
const PANEL_WINDOW_S: f64 = 3.0;

/// The simulator's `last_minute`: 60 simulated seconds, 2 wall seconds at 30x.
const SIM_WINDOW_S: f64 = 2.0;

/// The draft's impact marks are whole seconds: the snapshot's steps.
const STEP_S: f64 = 1.0;

fn secs(a: DateTime<Utc>, b: DateTime<Utc>) -> f64 {
    (a - b).num_milliseconds() as f64 / 1000.0
}

/// Impact start and end within four seconds (see `slack`) of the simulator's own error ratio
/// crossing 5 % (and falling back under 95 % of it), and the peak error ratio within 15 % of
/// the simulator's over the panel's window (the snapshot samples the 3 s rate once a
/// second, and runs have differed from the windowed truth by up to 7.4 %).
pub fn compare_with_the_simulator(facts: &serde_json::Value, readings: &[Reading]) {
    let crit = 0.05;
    let at = |k: &str| {
        let s = facts["impact"][k]["utc"]
            .as_str()
            .unwrap_or_else(|| panic!("impact {k} in the facts: {facts:#}"));
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    };
    let (start, end) = (at("start"), at("end"));
    let truth_start = readings
        .iter()
        .find(|r| r.error_ratio >= crit)
        .expect("the simulator's error ratio crossed 5 %")
        .at;
    let truth_end = readings
        .iter()
        .rfind(|r| r.error_ratio >= crit * 0.95)
        .unwrap()
        .at;
    // Like for like: the panel reads a 3 s rate (90 simulated seconds at 30x), so the
    // simulator's peak is taken over the same window: the highest mean of its readings in
    // any 3 s. A spike shorter than the window is averaged by both.
    let peak_truth = readings
        .iter()
        .map(|r| {
            let inside: Vec<f64> = readings
                .iter()
                .filter(|o| o.at <= r.at && secs(r.at, o.at) <= PANEL_WINDOW_S)
                .map(|o| o.error_ratio)
                .collect();
            inside.iter().sum::<f64>() / inside.len().max(1) as f64
        })
        .fold(0.0, f64::max);
    let pool_truth = readings.iter().map(|r| r.pool).fold(0.0, f64::max);
    let peak = facts["signals"]["error_ratio"]["value"].as_f64().unwrap();
    let pool = facts["signals"]["pool_saturation"]["value"]
        .as_f64()
        .unwrap();
    let amp_truth = readings.iter().map(|r| r.amplification).fold(0.0, f64::max);
    let amp = facts["signals"]["retry_amplification"]["value"]
        .as_f64()
        .unwrap();
    // Printed, not compared: the simulator's attempts per request leave out the queued
    // attempts that restarts answer, and its minute is not the panel's 90 s window.
    eprintln!("peak retry amplification {amp} (simulator {amp_truth})");
    eprintln!(
        "impact start {start} (simulator {truth_start}, {:+.1} s), end {end} (simulator {truth_end}, {:+.1} s); peak error ratio {peak} (simulator {peak_truth}), pool {pool} (simulator {pool_truth})",
        secs(start, truth_start),
        secs(end, truth_end)
    );
    // How late the panel may see a crossing that the simulator saw: a scrape to take the
    // sample, another for the rate to hold two samples with errors, a step of the snapshot,
    // and the panel's wider window (3 s of rate against the simulator's 2 s), which lags on a
    // ramp by up to the difference. A run on CI saw +3.3 s at the start.
    let slack = 2.0 * SCRAPE_S + STEP_S + (PANEL_WINDOW_S - SIM_WINDOW_S);
    assert!(
        secs(start, truth_start).abs() <= slack,
        "impact start {start} vs the simulator's {truth_start}"
    );
    assert!(
        secs(end, truth_end).abs() <= slack,
        "impact end {end} vs the simulator's {truth_end}"
    );
    assert!(
        (peak - peak_truth).abs() <= peak_truth * 0.15,
        "peak error ratio {peak} vs the simulator's {peak_truth}"
    );
    assert!(
        (pool - pool_truth).abs() <= 0.02,
        "peak pool saturation {pool} vs the simulator's {pool_truth}"
    );
}
