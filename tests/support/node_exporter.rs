//! The real `prometheus-node-exporter` (Debian's package) on a free loopback port, stopped
//! when dropped; a missing binary fails in CI and is skipped elsewhere, like `realstack.rs`.

#![allow(dead_code)]

use super::prometheus::{free_port, http_get, require_binary};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running node exporter.
pub struct NodeExporter {
    child: Child,
    pub port: u16,
}

impl Drop for NodeExporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl NodeExporter {
    /// Start it with its default collectors; `None` where it is not installed outside CI.
    pub fn start() -> Option<NodeExporter> {
        let bin = require_binary("prometheus-node-exporter")?;
        let port = free_port();
        let child = Command::new(bin)
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start prometheus-node-exporter");
        let e = NodeExporter { child, port };
        let until = Instant::now() + Duration::from_secs(20);
        while Instant::now() < until {
            if let Some((200, body)) = http_get(port, "/metrics", Duration::from_secs(5))
                && body.contains("node_uname_info")
            {
                return Some(e);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("prometheus-node-exporter never served node_uname_info");
    }

    /// `host:port` for a Prometheus scrape config.
    pub fn target(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}
