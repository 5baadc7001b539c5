//! What the preset tests need beyond `realstack.rs`: HAProxy with two backends, one with
//! layer-7 retries (`retry-on 503`) in front of a loopback server that fails on purpose and
//! counts what it did, one whose server never accepts a connection (connection retries).
//! `realstack::Haproxy` has no `retry-on` and health-checks its servers, which turns a
//! refusing server DOWN before its retries can be counted.

#![allow(dead_code)]

use super::realstack::{self, Backend, Request, free_port, require_binary};
use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the backend itself saw: attempts per request id and the last status it answered.
#[derive(Debug, Default, Clone)]
pub struct Counts {
    pub attempts: HashMap<u64, u32>,
    pub last_status: HashMap<u64, u16>,
}

impl Counts {
    pub fn requests(&self) -> u64 {
        self.attempts.len() as u64
    }
    pub fn attempts_total(&self) -> u64 {
        self.attempts.values().map(|a| u64::from(*a)).sum()
    }
    pub fn retries(&self) -> u64 {
        self.attempts_total() - self.requests()
    }
    /// Requests whose final answer was a 5xx.
    pub fn final_5xx(&self) -> u64 {
        self.last_status.values().filter(|s| **s >= 500).count() as u64
    }
}

/// The failure plan of request `id` on attempt `attempt` (1-based): one in ten always fails,
/// three in ten fail once, the rest succeed at once.
pub fn planned_status(id: u64, attempt: u32) -> u16 {
    match id % 10 {
        0 => 503,
        1..=3 if attempt == 1 => 503,
        _ => 200,
    }
}

/// A backend answering `/work?id=N` by [`planned_status`], counting into the returned map.
pub fn failing_backend(dir: &Path) -> (Backend, Arc<Mutex<Counts>>) {
    let counts = Arc::new(Mutex::new(Counts::default()));
    let c = counts.clone();
    let handler: realstack::Handler = Arc::new(move |r: &Request| {
        let Some(id) = r
            .path
            .strip_prefix("/work?id=")
            .and_then(|s| s.parse::<u64>().ok())
        else {
            return (200, "ok\n".into());
        };
        let mut c = c.lock().expect("counts");
        let a = c.attempts.entry(id).or_insert(0);
        *a += 1;
        let status = planned_status(id, *a);
        c.last_status.insert(id, status);
        (status, format!("{status}\n"))
    });
    (Backend::start("flaky", dir, handler), counts)
}

/// HAProxy with `retries` and `retry-on 503` in front of one server, and its Prometheus
/// exporter.
pub struct RetryingHaproxy {
    child: Child,
    pub port: u16,
    pub prometheus_port: u16,
    pub dir: tempfile::TempDir,
}

impl Drop for RetryingHaproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The backend with layer-7 retries (the `proxy` label of its metrics), behind `/work`.
pub const BACKEND: &str = "be_retry";
/// The backend whose server refuses connections, behind `/dead`.
pub const DEAD_BACKEND: &str = "be_dead";

impl RetryingHaproxy {
    /// `retries` on both backends; no health checks, so a refusing server stays UP and every
    /// request makes `1 + retries` connection attempts.
    pub fn start(server_port: u16, retries: u32) -> Option<RetryingHaproxy> {
        let bin = require_binary("haproxy")?;
        let dir = tempfile::tempdir().expect("temp dir");
        let (port, prometheus_port, dead_port) = (free_port(), free_port(), free_port());
        let cfg = format!(
            "defaults\n    mode http\n    timeout connect 100ms\n    timeout client 10s\n    timeout server 10s\n\
             \n    retries {retries}\n\n\
             frontend fe_app\n    bind 127.0.0.1:{port}\n    use_backend {DEAD_BACKEND} if {{ path_beg /dead }}\n    default_backend {BACKEND}\n\n\
             frontend prometheus\n    bind 127.0.0.1:{prometheus_port}\n    http-request use-service prometheus-exporter if {{ path /metrics }}\n\n\
             backend {BACKEND}\n    retry-on 503\n    server s1 127.0.0.1:{server_port}\n\n\
             backend {DEAD_BACKEND}\n    server s1 127.0.0.1:{dead_port}\n"
        );
        let path = dir.path().join("haproxy.cfg");
        std::fs::write(&path, cfg).expect("write haproxy.cfg");
        let log = std::fs::File::create(dir.path().join("haproxy.log")).expect("log");
        let child = Command::new(bin)
            .arg("-db")
            .arg("-f")
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start haproxy");
        let h = RetryingHaproxy {
            child,
            port,
            prometheus_port,
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while realstack::http_get(prometheus_port, "/metrics", Duration::from_secs(1))
            .is_none_or(|(s, _)| s != 200)
        {
            assert!(
                Instant::now() < deadline,
                "haproxy did not start; log:\n{}",
                std::fs::read_to_string(h.dir.path().join("haproxy.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(h)
    }

    pub fn prometheus_target(&self) -> String {
        format!("127.0.0.1:{}", self.prometheus_port)
    }
}
