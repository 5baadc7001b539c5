//! A real Redis for the queue-drain runbook: `redis-server` on a free loopback port (no
//! persistence) and the real `prometheus-redis-exporter` watching the queue's lists, plus a
//! small RESP client for the test's producers and workers. Stopped when dropped; a missing
//! binary fails in CI and is skipped elsewhere, like `realstack.rs`.

#![allow(dead_code)]

use super::prometheus::{free_port, http_get, require_binary};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `redis-server`.
pub struct Redis {
    child: Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Redis {
    pub fn start() -> Option<Redis> {
        let bin = require_binary("redis-server")?;
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let log = std::fs::File::create(dir.path().join("redis.log")).expect("log");
        let child = Command::new(bin)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        let r = Redis { child, port, dir };
        let until = Instant::now() + Duration::from_secs(20);
        while Instant::now() < until {
            if r.connect().and_then(|mut c| c.command(&["PING"])).is_ok() {
                return Some(r);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "redis-server did not start; log:\n{}",
            std::fs::read_to_string(r.dir.path().join("redis.log")).unwrap_or_default()
        );
    }

    /// `redis://127.0.0.1:PORT/0`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    pub fn connect(&self) -> std::io::Result<Resp> {
        let s = TcpStream::connect_timeout(
            &([127, 0, 0, 1], self.port).into(),
            Duration::from_secs(2),
        )?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        s.set_write_timeout(Some(Duration::from_secs(5)))?;
        Ok(Resp {
            reader: BufReader::new(s.try_clone()?),
            writer: s,
        })
    }
}

/// A reply of the RESP protocol (what the test needs of it).
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Option<String>),
    Array(Option<Vec<Reply>>),
}

/// One connection speaking RESP.
pub struct Resp {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Resp {
    /// Send one command and read its reply.
    pub fn command(&mut self, args: &[&str]) -> std::io::Result<Reply> {
        self.send(args)?;
        self.read()
    }

    /// Send one command without reading its reply (a BRPOP left blocked, say).
    pub fn send(&mut self, args: &[&str]) -> std::io::Result<()> {
        let mut out = format!("*{}\r\n", args.len());
        for a in args {
            out += &format!("${}\r\n{a}\r\n", a.len());
        }
        self.writer.write_all(out.as_bytes())
    }

    fn read(&mut self) -> std::io::Result<Reply> {
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        let line = line.trim_end();
        let bad = || std::io::Error::other(format!("not a RESP reply: {line:?}"));
        let (kind, rest) = line.split_at_checked(1).ok_or_else(bad)?;
        Ok(match kind {
            "+" => Reply::Status(rest.into()),
            "-" => Reply::Error(rest.into()),
            ":" => Reply::Int(rest.parse().map_err(|_| bad())?),
            "$" => {
                let n: i64 = rest.parse().map_err(|_| bad())?;
                if n < 0 {
                    Reply::Bulk(None)
                } else {
                    let mut buf = vec![0u8; n as usize + 2];
                    self.reader.read_exact(&mut buf)?;
                    buf.truncate(n as usize);
                    Reply::Bulk(Some(String::from_utf8_lossy(&buf).into_owned()))
                }
            }
            "*" => {
                let n: i64 = rest.parse().map_err(|_| bad())?;
                if n < 0 {
                    Reply::Array(None)
                } else {
                    let mut items = Vec::with_capacity(n as usize);
                    for _ in 0..n {
                        items.push(self.read()?);
                    }
                    Reply::Array(Some(items))
                }
            }
            _ => return Err(bad()),
        })
    }

    /// The fields of `INFO section` (`connected_clients` → "7").
    pub fn info(&mut self, section: &str) -> std::collections::BTreeMap<String, String> {
        match self.command(&["INFO", section]) {
            Ok(Reply::Bulk(Some(text))) => text
                .lines()
                .filter_map(|l| l.split_once(':'))
                .map(|(k, v)| (k.to_string(), v.trim().to_string()))
                .collect(),
            other => panic!("INFO {section}: {other:?}"),
        }
    }

    /// `LLEN key`.
    pub fn llen(&mut self, key: &str) -> i64 {
        match self.command(&["LLEN", key]) {
            Ok(Reply::Int(n)) => n,
            other => panic!("LLEN {key}: {other:?}"),
        }
    }
}

/// The real `prometheus-redis-exporter` on `redis`, exporting the lengths of `keys`.
pub struct RedisExporter {
    child: Child,
    pub port: u16,
}

impl Drop for RedisExporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl RedisExporter {
    pub fn start(redis: &Redis, keys: &[&str]) -> Option<RedisExporter> {
        let bin = require_binary("prometheus-redis-exporter")?;
        let port = free_port();
        let child = Command::new(bin)
            .arg(format!("-redis.addr={}", redis.url()))
            .arg(format!("-web.listen-address=127.0.0.1:{port}"))
            .arg(format!("-check-keys={}", keys.join(",")))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start prometheus-redis-exporter");
        let e = RedisExporter { child, port };
        let until = Instant::now() + Duration::from_secs(20);
        while Instant::now() < until {
            if let Some((200, body)) = http_get(port, "/metrics", Duration::from_secs(2))
                && body.contains("redis_up 1")
            {
                return Some(e);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("prometheus-redis-exporter never reported redis_up 1");
    }

    pub fn target(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}
