//! A real Alertmanager for integration tests: started on a free loopback port with a temporary
//! storage directory and clustering off, stopped when dropped. Include it next to
//! `support/prometheus.rs` (it uses its `require_binary`, `free_port` and `wait_ready`).
//!
//! In CI (`CI` set) a missing `prometheus-alertmanager` binary fails the test; elsewhere the
//! test is skipped with a visible message.

#![allow(dead_code)]

use super::prometheus::{free_port, require_binary, wait_ready};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The Debian package's binary name (upstream calls it `alertmanager`).
pub const BINARY: &str = "prometheus-alertmanager";

/// A running Alertmanager.
pub struct AlertmanagerServer {
    child: Child,
    /// Base URL, e.g. `http://127.0.0.1:41234`.
    pub url: String,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

impl AlertmanagerServer {
    /// `host:port`, for Prometheus's `alerting` section.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// What it logged so far (for failure messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("alertmanager.log")).unwrap_or_default()
    }
}

impl Drop for AlertmanagerServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start Alertmanager with one route to a receiver that sends nothing and short group timers
/// (so alerts show up within about a second), or `None` where it is not installed outside CI.
pub fn start() -> Option<AlertmanagerServer> {
    let bin = require_binary(BINARY)?;
    let dir = tempfile::tempdir().expect("temp dir");
    let port = free_port();
    let cfg = dir.path().join("alertmanager.yml");
    std::fs::write(
        &cfg,
        "route:\n  receiver: nowhere\n  group_wait: 1s\n  group_interval: 1s\n  \
         repeat_interval: 1h\nreceivers:\n  - name: nowhere\n",
    )
    .expect("write alertmanager.yml");
    let server = AlertmanagerServer {
        child: spawn(&bin, dir.path(), port),
        url: format!("http://127.0.0.1:{port}"),
        port,
        dir,
    };
    server.wait_ready();
    Some(server)
}

fn spawn(bin: &std::path::Path, dir: &std::path::Path, port: u16) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("alertmanager.log"))
        .expect("log file");
    Command::new(bin)
        .arg(format!(
            "--config.file={}",
            dir.join("alertmanager.yml").display()
        ))
        .arg(format!("--storage.path={}", dir.join("data").display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        // No gossip port: tests run side by side and must not collide on 9094.
        .arg("--cluster.listen-address=")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start alertmanager")
}

impl AlertmanagerServer {
    fn wait_ready(&self) {
        assert!(
            wait_ready(self.port, "/-/ready", Duration::from_secs(30)),
            "alertmanager did not become ready; log: {}",
            self.log()
        );
    }

    /// Stops it (SIGTERM, so it writes its silences to its storage as it does on any orderly
    /// shutdown) and waits until it is gone (bounded).
    pub fn stop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        while self.child.try_wait().expect("wait alertmanager").is_none() {
            assert!(
                std::time::Instant::now() < deadline,
                "alertmanager did not stop on SIGTERM; log: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Starts it again on the same port and storage after [`stop`](Self::stop).
    pub fn start_again(&mut self) {
        let bin = require_binary(BINARY).expect("it ran before");
        self.child = spawn(&bin, self.dir.path(), self.port);
        self.wait_ready();
    }
}

/// A Prometheus rule group (evaluated every second) whose alerts fire at once and for good,
/// each `(name, severity)` with `service: planner-api`: the labels a silence is made from.
pub fn always_firing(group: &str, alerts: &[(&str, &str)]) -> String {
    let mut yaml = format!("groups:\n  - name: {group}\n    interval: 1s\n    rules:\n");
    for (name, severity) in alerts {
        yaml.push_str(&format!(
            "      - alert: {name}\n        expr: vector(1)\n        labels:\n          \
             severity: {severity}\n          service: planner-api\n"
        ));
    }
    yaml
}
