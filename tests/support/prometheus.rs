//! A real Prometheus for integration tests: started on a free loopback port with a temporary
//! storage directory, stopped when dropped.
//!
//! A missing `prometheus` binary goes through `skip.rs`: a failure in CI, a counted SKIPPED
//! line elsewhere.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use super::skip::require_binary;

/// A running Prometheus.
pub struct PromServer {
    child: Child,
    /// Base URL, e.g. `http://127.0.0.1:41234`.
    pub url: String,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

impl Drop for PromServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Options for [`start`].
#[derive(Debug, Clone)]
pub struct PromOptions {
    /// `host:port` targets scraped by job `warroom-test`.
    pub targets: Vec<String>,
    pub scrape_interval: &'static str,
    /// Rule file contents (alerting or recording rules), if any.
    pub rules: Option<String>,
    /// Alertmanager `host:port`, if any.
    pub alertmanager: Option<String>,
    /// Extra command-line flags.
    pub extra_args: Vec<String>,
}

impl Default for PromOptions {
    fn default() -> Self {
        PromOptions {
            targets: Vec::new(),
            scrape_interval: "1s",
            rules: None,
            alertmanager: None,
            extra_args: Vec::new(),
        }
    }
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind a loopback port")
}

/// A minimal blocking HTTP GET on loopback; returns (status, body). Bounded by `timeout`.
pub fn http_get(port: u16, path: &str, timeout: Duration) -> Option<(u16, String)> {
    let mut s = TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), timeout).ok()?;
    s.set_read_timeout(Some(timeout)).ok()?;
    s.set_write_timeout(Some(timeout)).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf).into_owned();
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text
        .split_once("\r\n\r\n")
        .map(|x| x.1.to_string())
        .unwrap_or_default();
    Some((status, body))
}

/// Wait (bounded) until `path` on `port` answers 200.
pub fn wait_ready(port: u16, path: &str, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Some((200, _)) = http_get(port, path, Duration::from_secs(1)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// Start Prometheus, or `None` (with a message) where it is not installed outside CI.
pub fn start(opts: PromOptions) -> Option<PromServer> {
    launch(opts, false)
}

/// [`start`], with Prometheus's query log on: [`PromServer::queries`] reads what was asked.
pub fn start_logging_queries(opts: PromOptions) -> Option<PromServer> {
    launch(opts, true)
}

impl PromServer {
    /// Every PromQL query Prometheus ran (instant and range; not the label and series
    /// look-ups), in order, from its query log.
    pub fn queries(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.dir.path().join("queries.log")).unwrap_or_default();
        text.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|v| v["params"]["query"].as_str().map(String::from))
            .collect()
    }
}

fn launch(opts: PromOptions, query_log: bool) -> Option<PromServer> {
    let bin = require_binary("prometheus")?;
    let dir = tempfile::tempdir().expect("temp dir");
    let port = free_port();
    let targets: Vec<String> = opts.targets.iter().map(|t| format!("'{t}'")).collect();
    let mut yml = format!(
        "global:\n  scrape_interval: {si}\n  evaluation_interval: {si}\n",
        si = opts.scrape_interval
    );
    if query_log {
        yml += &format!(
            "  query_log_file: '{}'\n",
            dir.path().join("queries.log").display()
        );
    }
    if let Some(rules) = &opts.rules {
        let path = dir.path().join("rules.yml");
        std::fs::write(&path, rules).expect("write rules");
        yml += &format!("rule_files:\n  - '{}'\n", path.display());
    }
    if let Some(am) = &opts.alertmanager {
        yml += &format!(
            "alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: ['{am}']\n"
        );
    }
    yml += &format!(
        "scrape_configs:\n  - job_name: warroom-test\n    static_configs:\n      - targets: [{}]\n",
        targets.join(", ")
    );
    let cfg = dir.path().join("prometheus.yml");
    std::fs::write(&cfg, yml).expect("write prometheus.yml");
    let log = std::fs::File::create(dir.path().join("prometheus.log")).expect("log file");
    let child = Command::new(bin)
        .arg(format!("--config.file={}", cfg.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .args(&opts.extra_args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start prometheus");
    let server = PromServer {
        child,
        url: format!("http://127.0.0.1:{port}"),
        port,
        dir,
    };
    assert!(
        wait_ready(port, "/-/ready", Duration::from_secs(30)),
        "prometheus did not become ready; log: {}",
        std::fs::read_to_string(server.dir.path().join("prometheus.log")).unwrap_or_default()
    );
    Some(server)
}
