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
    /// Arguments besides the port and store (a cluster node's name and routes).
    extra: Vec<String>,
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
            extra: Vec::new(),
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
            .args(&self.extra)
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

/// A JetStream cluster of `n` nodes on loopback, routed to each other (the fault tests'
/// "one node killed and restarted").
pub struct Cluster {
    pub nodes: Vec<Nats>,
}

impl Cluster {
    pub fn start(n: usize) -> Option<Cluster> {
        let bin = require_binary("nats-server")?;
        let routes: Vec<u16> = (0..n).map(|_| free_port()).collect();
        let mut nodes: Vec<Nats> = (0..n)
            .map(|k| {
                let others: Vec<String> = (routes.iter().enumerate())
                    .filter(|(j, _)| *j != k)
                    .map(|(_, p)| format!("nats://127.0.0.1:{p}"))
                    .collect();
                Nats {
                    bin: bin.clone(),
                    child: None,
                    port: free_port(),
                    dir: tempfile::tempdir().expect("temp dir"),
                    extra: vec![
                        "--name".into(),
                        format!("node-{k}"),
                        "--cluster_name".into(),
                        "warroom-test".into(),
                        "--cluster".into(),
                        format!("nats://127.0.0.1:{}", routes[k]),
                        "--routes".into(),
                        others.join(","),
                    ],
                }
            })
            .collect();
        for node in &mut nodes {
            node.restart();
        }
        Some(Cluster { nodes })
    }

    /// Every node's URL, comma-separated, as a client takes a cluster.
    pub fn url(&self) -> String {
        (self.nodes.iter().map(Nats::url))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Waits (bounded) until the engine at `url` (comma-separated for a cluster) takes a stream of
/// `replicas` replicas: a node or cluster just started has no JetStream leader yet.
pub async fn until_streams_are_taken(url: &str, replicas: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let made = async {
            let servers: Vec<&str> = url.split(',').collect();
            let client = async_nats::connect(servers).await.ok()?;
            let js = async_nats::jetstream::new(client);
            js.get_or_create_stream(async_nats::jetstream::stream::Config {
                name: "probe".into(),
                subjects: vec!["probe.>".into()],
                num_replicas: replicas,
                ..Default::default()
            })
            .await
            .ok()?;
            js.delete_stream("probe").await.ok()
        };
        if tokio::time::timeout(Duration::from_secs(5), made)
            .await
            .ok()
            .flatten()
            .is_some()
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the engine at {url} never took a stream of {replicas} replica(s)"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

impl Cluster {
    /// Waits (bounded) until the cluster's JetStream takes a stream replicated 3 times.
    pub async fn until_replicated_streams_are_taken(&self) {
        until_streams_are_taken(&self.url(), 3).await;
    }

    /// The node named `name` (`node-K`, as the cluster names them).
    pub fn node(&mut self, name: &str) -> &mut Nats {
        let k: usize = name
            .strip_prefix("node-")
            .and_then(|k| k.parse().ok())
            .unwrap_or_else(|| panic!("not a node of this cluster: {name}"));
        &mut self.nodes[k]
    }
}
