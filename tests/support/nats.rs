//! A real NATS server with JetStream for the sharing tests (issue 36): `nats-server -js` on a
//! free loopback port with its store in a temporary dir. Stopped when dropped and restartable
//! on the same port and store (the "node comes back" of the fault tests); a missing binary fails
//! in CI and is skipped elsewhere.

#![allow(dead_code)]

use super::prometheus::{free_port, require_binary};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One `nats-server` node.
pub struct Nats {
    bin: PathBuf,
    child: Option<Child>,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Nats {
    /// A single JetStream node.
    pub fn start() -> Option<Nats> {
        let bin = require_binary("nats-server")?;
        let mut n = Nats {
            bin,
            child: None,
            port: free_port(),
            dir: tempfile::tempdir().expect("temp dir"),
        };
        n.restart();
        Some(n)
    }

    /// `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Kills the node (SIGKILL: no goodbye to its clients).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts the node again on its port and store, and waits until it takes connections.
    pub fn restart(&mut self) {
        self.stop();
        let log = std::fs::File::create(self.dir.path().join("nats.log")).expect("log");
        let child = Command::new(&self.bin)
            .args([
                "-a",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-js",
                "-sd",
            ])
            .arg(self.dir.path().join("store"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start nats-server");
        self.child = Some(child);
        let until = Instant::now() + Duration::from_secs(20);
        while Instant::now() < until {
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "nats-server did not start; log:\n{}",
            std::fs::read_to_string(self.dir.path().join("nats.log")).unwrap_or_default()
        );
    }
}
