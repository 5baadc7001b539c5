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
    let log = std::fs::File::create(dir.path().join("alertmanager.log")).expect("log file");
    let child = Command::new(bin)
        .arg(format!("--config.file={}", cfg.display()))
        .arg(format!(
            "--storage.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        // No gossip port: tests run side by side and must not collide on 9094.
        .arg("--cluster.listen-address=")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start alertmanager");
    let server = AlertmanagerServer {
        child,
        url: format!("http://127.0.0.1:{port}"),
        port,
        dir,
    };
    assert!(
        wait_ready(port, "/-/ready", Duration::from_secs(30)),
        "alertmanager did not become ready; log: {}",
        server.log()
    );
    Some(server)
}
