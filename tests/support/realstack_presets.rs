//! What the preset tests need beyond `realstack.rs`: HAProxy with two backends, one with
//! layer-7 retries (`retry-on 503`) in front of a loopback server that fails on purpose and
//! counts what it did, one whose server never accepts a connection (connection retries)
//! ([`RetryingHaproxy`]); HAProxy whose servers have `maxconn` and where one server of three
//! answers 503, with its runtime API for `show stat` ([`LimitedHaproxy`]); and VictoriaMetrics,
//! the other engine the presets must read the same on ([`Victoria`]).
//! `realstack::Haproxy` has no `retry-on` and health-checks its servers, which turns a
//! refusing server DOWN before its retries can be counted.

#![allow(dead_code)]

use super::realstack::{self, Backend, Request, free_port, require_binary};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
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

/// A handler answering `PREFIX?id=N` by `plan(id, attempt)`, counting into `counts` (shared
/// by every server of a backend, so an attempt number follows a request across servers);
/// anything else gets 200.
fn counting_handler(
    counts: &Arc<Mutex<Counts>>,
    prefix: &'static str,
    plan: fn(u64, u32) -> u16,
) -> realstack::Handler {
    let c = counts.clone();
    Arc::new(move |r: &Request| {
        let Some(id) = r
            .path
            .strip_prefix(prefix)
            .and_then(|s| s.strip_prefix("?id="))
            .and_then(|s| s.parse::<u64>().ok())
        else {
            return (200, "ok\n".into());
        };
        let mut c = c.lock().expect("counts");
        let a = c.attempts.entry(id).or_insert(0);
        *a += 1;
        let status = plan(id, *a);
        c.last_status.insert(id, status);
        (status, format!("{status}\n"))
    })
}

/// A backend answering `/work?id=N` by [`planned_status`], counting into the returned map.
pub fn failing_backend(dir: &Path) -> (Backend, Arc<Mutex<Counts>>) {
    let counts = Arc::new(Mutex::new(Counts::default()));
    let handler = counting_handler(&counts, "/work", planned_status);
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
        let (port, prometheus_port, dead_port) = (free_port(), free_port(), free_port());
        let cfg = format!(
            "defaults\n    mode http\n    timeout connect 100ms\n    timeout client 10s\n    timeout server 10s\n\
             \n    retries {retries}\n\n\
             frontend fe_app\n    bind 127.0.0.1:{port}\n    use_backend {DEAD_BACKEND} if {{ path_beg /dead }}\n    default_backend {BACKEND}\n\n\
             {}\n\
             backend {BACKEND}\n    retry-on 503\n    server s1 127.0.0.1:{server_port}\n\n\
             backend {DEAD_BACKEND}\n    server s1 127.0.0.1:{dead_port}\n",
            exporter(prometheus_port)
        );
        let (child, dir) = spawn_haproxy(&cfg, prometheus_port)?;
        Some(RetryingHaproxy {
            child,
            port,
            prometheus_port,
            dir,
        })
    }

    pub fn prometheus_target(&self) -> String {
        format!("127.0.0.1:{}", self.prometheus_port)
    }
}

/// The frontend serving HAProxy's built-in exporter on `/metrics`.
fn exporter(prometheus_port: u16) -> String {
    format!(
        "frontend prometheus\n    bind 127.0.0.1:{prometheus_port}\n    http-request use-service prometheus-exporter if {{ path /metrics }}\n"
    )
}

/// HAProxy started on `cfg` in a new temporary directory (`{dir}` in `cfg` is that
/// directory), once its exporter answers on `prometheus_port`; `None` where it is not
/// installed outside CI.
fn spawn_haproxy(cfg: &str, prometheus_port: u16) -> Option<(Child, tempfile::TempDir)> {
    let bin = require_binary("haproxy")?;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("haproxy.cfg");
    let cfg = cfg.replace("{dir}", &dir.path().display().to_string());
    std::fs::write(&path, cfg).expect("write haproxy.cfg");
    let log_path = dir.path().join("haproxy.log");
    let log = std::fs::File::create(&log_path).expect("log");
    let mut child = Command::new(bin)
        .arg("-db")
        .arg("-f")
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start haproxy");
    let deadline = Instant::now() + Duration::from_secs(30);
    while realstack::http_get(prometheus_port, "/metrics", Duration::from_secs(1))
        .is_none_or(|(s, _)| s != 200)
    {
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!(
                "haproxy did not start; log:\n{}",
                std::fs::read_to_string(&log_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Some((child, dir))
}

/// The backend whose two servers have `maxconn` [`SERVER_MAXCONN`] and are filled in order
/// (`balance first`), behind `/held`: the test holds sessions on the first.
pub const HELD_BACKEND: &str = "be_held";
/// The backend of two healthy servers and one answering 503 (`retry-on 503`, `option
/// redispatch`, round robin), behind `/pair?id=N`.
pub const PAIR_BACKEND: &str = "be_pair";
/// `maxconn` of [`HELD_BACKEND`]'s servers.
pub const SERVER_MAXCONN: u32 = 20;

/// HAProxy in front of servers with limits and a server that fails, with its runtime API on a
/// unix socket (`show stat`) and its exporter; the servers are loopback backends it owns.
pub struct LimitedHaproxy {
    child: Child,
    pub port: u16,
    pub prometheus_port: u16,
    pub socket: PathBuf,
    /// What [`PAIR_BACKEND`]'s servers saw, together.
    pub pair_counts: Arc<Mutex<Counts>>,
    /// Set to let the requests held on [`HELD_BACKEND`] finish.
    pub release: Arc<AtomicBool>,
    _servers: Vec<Backend>,
    pub dir: tempfile::TempDir,
}

impl Drop for LimitedHaproxy {
    fn drop(&mut self) {
        self.release.store(true, Ordering::SeqCst);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl LimitedHaproxy {
    pub fn start(retries: u32) -> Option<LimitedHaproxy> {
        let servers_dir = tempfile::tempdir().expect("temp dir");
        let pair_counts = Arc::new(Mutex::new(Counts::default()));
        let release = Arc::new(AtomicBool::new(false));
        let r = release.clone();
        // Held until released (or a minute).
        let hold: realstack::Handler = Arc::new(move |_: &Request| {
            let until = Instant::now() + Duration::from_secs(60);
            while !r.load(Ordering::SeqCst) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(20));
            }
            (200, "held\n".into())
        });
        let servers = vec![
            Backend::start("held", servers_dir.path(), hold),
            Backend::start(
                "ok1",
                servers_dir.path(),
                counting_handler(&pair_counts, "/pair", |_, _| 200),
            ),
            Backend::start(
                "ok2",
                servers_dir.path(),
                counting_handler(&pair_counts, "/pair", |_, _| 200),
            ),
            Backend::start(
                "bad",
                servers_dir.path(),
                counting_handler(&pair_counts, "/pair", |_, _| 503),
            ),
        ];
        let (port, prometheus_port) = (free_port(), free_port());
        let p = |i: usize| servers[i].port;
        let cfg = format!(
            "global\n    stats socket {{dir}}/admin.sock mode 600 level admin\n\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 90s\n    timeout server 90s\n    retries {retries}\n\n\
             frontend fe_app\n    bind 127.0.0.1:{port}\n    use_backend {HELD_BACKEND} if {{ path_beg /held }}\n    default_backend {PAIR_BACKEND}\n\n\
             {}\n\
             backend {HELD_BACKEND}\n    balance first\n    server s1 127.0.0.1:{held} maxconn {SERVER_MAXCONN}\n    server s2 127.0.0.1:{held} maxconn {SERVER_MAXCONN}\n\n\
             backend {PAIR_BACKEND}\n    balance roundrobin\n    option redispatch\n    retry-on 503\n    server ok1 127.0.0.1:{ok1}\n    server ok2 127.0.0.1:{ok2}\n    server bad 127.0.0.1:{bad}\n",
            exporter(prometheus_port),
            held = p(0),
            ok1 = p(1),
            ok2 = p(2),
            bad = p(3),
        );
        let (child, dir) = spawn_haproxy(&cfg, prometheus_port)?;
        Some(LimitedHaproxy {
            child,
            port,
            prometheus_port,
            socket: dir.path().join("admin.sock"),
            pair_counts,
            release,
            _servers: servers,
            dir,
        })
    }

    pub fn prometheus_target(&self) -> String {
        format!("127.0.0.1:{}", self.prometheus_port)
    }

    /// `show stat` over the runtime API: one map of field to value per row (`pxname`,
    /// `svname`, `scur`, `slim`, `req_tot`, `connect`, `reuse`, `wretr`, `wredis`...).
    pub fn show_stat(&self) -> Vec<HashMap<String, String>> {
        use std::io::{Read, Write};
        let mut s = std::os::unix::net::UnixStream::connect(&self.socket).expect("admin socket");
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        s.write_all(b"show stat\n").expect("show stat");
        let mut text = String::new();
        s.read_to_string(&mut text).expect("show stat answer");
        let mut lines = text.lines();
        let header: Vec<String> = lines
            .next()
            .unwrap_or_default()
            .trim_start_matches("# ")
            .split(',')
            .map(str::to_string)
            .collect();
        lines
            .filter(|l| !l.is_empty())
            .map(|l| {
                header
                    .iter()
                    .cloned()
                    .zip(l.split(',').map(str::to_string))
                    .collect()
            })
            .collect()
    }

    /// A number of `show stat` for `proxy`'s row `name` (`BACKEND`, or a server), 0 if empty.
    pub fn stat(&self, proxy: &str, name: &str, field: &str) -> f64 {
        let rows = self.show_stat();
        let row = rows
            .iter()
            .find(|r| {
                r.get("pxname").map(String::as_str) == Some(proxy)
                    && r.get("svname").map(String::as_str) == Some(name)
            })
            .unwrap_or_else(|| panic!("no {proxy}/{name} in show stat: {rows:?}"));
        let v = row
            .get(field)
            .unwrap_or_else(|| panic!("no {field} in show stat"));
        if v.is_empty() {
            0.0
        } else {
            v.parse().unwrap_or_else(|_| panic!("{field} = {v:?}"))
        }
    }
}

/// A running VictoriaMetrics (Debian's `victoria-metrics`, single node): its Prometheus query
/// API at [`Victoria::url`], fed by its own scraper (`targets`, like [`realstack::prometheus`])
/// or by [`Victoria::import`].
pub struct Victoria {
    child: Child,
    pub url: String,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

impl Drop for Victoria {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Victoria {
    /// Start VictoriaMetrics scraping `targets` (job `warroom-test`) every `scrape_interval`.
    /// Results are not cached and points are visible at once (`-search.latencyOffset`), so a
    /// query sees what was just written, as it does on Prometheus.
    pub fn start(targets: &[String], scrape_interval: &str) -> Option<Victoria> {
        let bin = require_binary("victoria-metrics")?;
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let list: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
        let cfg = dir.path().join("scrape.yml");
        std::fs::write(
            &cfg,
            format!(
                "global:\n  scrape_interval: {scrape_interval}\nscrape_configs:\n  - job_name: warroom-test\n    static_configs:\n      - targets: [{}]\n",
                list.join(", ")
            ),
        )
        .expect("write scrape.yml");
        let log = std::fs::File::create(dir.path().join("victoria.log")).expect("log");
        let child = Command::new(bin)
            .arg(format!(
                "-storageDataPath={}",
                dir.path().join("data").display()
            ))
            .arg(format!("-httpListenAddr=127.0.0.1:{port}"))
            .arg(format!("-promscrape.config={}", cfg.display()))
            .args(["-search.latencyOffset=0s", "-search.disableCache"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start victoria-metrics");
        let v = Victoria {
            child,
            url: format!("http://127.0.0.1:{port}"),
            port,
            dir,
        };
        assert!(
            realstack::prometheus::wait_ready(port, "/health", Duration::from_secs(30)),
            "victoria-metrics did not start; log:\n{}",
            std::fs::read_to_string(v.dir.path().join("victoria.log")).unwrap_or_default()
        );
        Some(v)
    }

    /// Write `body` (text exposition with timestamps) through `/api/v1/import/prometheus`,
    /// each series given `labels` (e.g. `job`, `instance`, as a scrape would), then flush it
    /// to where queries read.
    pub fn import(&self, body: &str, labels: &[(&str, &str)]) {
        let extra: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("extra_label={k}={v}"))
            .collect();
        let path = format!("/api/v1/import/prometheus?{}", extra.join("&"));
        let status = self.request("POST", &path, body);
        assert!(status == 204 || status == 200, "import answered {status}");
        assert_eq!(self.request("GET", "/internal/force_flush", ""), 200);
    }

    fn request(&self, method: &str, path: &str, body: &str) -> u16 {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        write!(
            s,
            "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .expect("send");
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out.split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no status from victoria-metrics: {out:?}"))
    }
}
