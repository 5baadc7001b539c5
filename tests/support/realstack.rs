//! Real components for integration tests, each on free loopback ports in its own temporary
//! directory and stopped when dropped: a PostgreSQL cluster with a password-auth role,
//! PgBouncer in front of it (admin console, pool mode, pool size), the real
//! `prometheus-postgres-exporter`, a PgBouncer exporter that works with PgBouncer 1.18
//! (spreaker's `pgbouncer-exporter` from PyPI), HAProxy with its runtime API on a unix and a
//! TCP socket and its built-in Prometheus exporter, small loopback HTTP backends the test
//! provides, and a `pgbench` load with a custom script.
//!
//! A missing component goes through `skip.rs`: it fails the test when `CI` is set, and elsewhere
//! the test prints `SKIPPED <test>: …`, is counted and passes. PostgreSQL and PgBouncer refuse to run as root, so
//! when the tests run as root (CI) they run as `nobody` (the temporary directory is handed to
//! it); otherwise as the current user.
//!
//! ```ignore
//! use crate::support::realstack;
//! let Some(pg) = realstack::Postgres::start() else { return };
//! let Some(bouncer) = realstack::PgBouncer::start(&pg, realstack::BouncerOptions::default()) else { return };
//! ```

#![allow(dead_code)]

pub use super::prometheus;

pub use prometheus::{free_port, http_get, require_binary};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long any component may take to become ready.
const READY_WITHIN: Duration = Duration::from_secs(30);

/// The superuser's name and password of every test cluster.
pub const SUPERUSER: &str = "postgres";
pub const SUPERUSER_PASSWORD: &str = "su-pass-4c1e";
/// The application role (password auth over TCP) and its database.
pub const APP_USER: &str = "app";
pub const APP_PASSWORD: &str = "app-pass-93d2";
pub const APP_DB: &str = "appdb";
/// PgBouncer's admin-console user and its stats-only user.
pub const BOUNCER_ADMIN: &str = "bouncer_admin";
pub const BOUNCER_ADMIN_PASSWORD: &str = "admin-pass-7f0a";
pub const BOUNCER_STATS: &str = "bouncer_stats";
pub const BOUNCER_STATS_PASSWORD: &str = "stats-pass-2b6d";

/// A PostgreSQL server binary (`initdb`, `postgres`, `psql`, `pgbench`): the newest
/// `/usr/lib/postgresql/*/bin/NAME`, else `NAME` on PATH.
pub fn pg_binary(name: &str) -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(std::result::Result::ok)
        .filter_map(|e| {
            let version: u32 = e.file_name().to_str()?.parse().ok()?;
            let p = e.path().join("bin").join(name);
            p.is_file().then_some((version, p))
        })
        .collect();
    found.sort();
    if let Some((_, p)) = found.pop() {
        return Some(p);
    }
    require_binary(name)
}

/// The user the servers run as: `nobody` when the tests run as root, else the current user.
#[derive(Debug, Clone, Copy)]
struct RunAs {
    uid: u32,
    gid: u32,
}

fn run_as() -> Option<RunAs> {
    // /proc/self belongs to the process's effective user.
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self").map_or(true, |m| m.uid() != 0) {
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").expect("read /etc/passwd");
    for wanted in ["nobody", "postgres"] {
        for line in passwd.lines() {
            let f: Vec<&str> = line.split(':').collect();
            if f.len() > 3 && f[0] == wanted {
                let (Ok(uid), Ok(gid)) = (f[2].parse(), f[3].parse()) else {
                    continue;
                };
                return Some(RunAs { uid, gid });
            }
        }
    }
    panic!(
        "running as root, and neither `nobody` nor `postgres` is in /etc/passwd to run the servers as"
    );
}

/// A command that runs as [`run_as`]'s user (std drops the supplementary groups too).
fn command_as(program: &Path, who: Option<RunAs>) -> Command {
    let mut c = Command::new(program);
    if let Some(u) = who {
        c.uid(u.uid).gid(u.gid);
    }
    c.stdin(Stdio::null());
    c
}

/// Hand `path` to the servers' user.
fn give(path: &Path, who: Option<RunAs>) {
    if let Some(u) = who {
        std::os::unix::fs::chown(path, Some(u.uid), Some(u.gid))
            .expect("chown to the servers' user");
    }
}

fn write_file(path: &Path, text: &str, who: Option<RunAs>) {
    std::fs::write(path, text).expect("write a test file");
    give(path, who);
}

/// Stop a server: SIGTERM (or the given signal), then SIGKILL after 5 s.
fn stop(child: &mut Child, sig: nix::sys::signal::Signal) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::kill(pid, sig);
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Whether something accepts TCP connections on `port`.
pub fn accepts(port: u16) -> bool {
    TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(300)).is_ok()
}

fn wait_until(within: Duration, mut ok: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + within;
    while Instant::now() < until {
        if ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

fn log_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let start = text.len().saturating_sub(4000);
    text.get(start..).unwrap_or(&text).to_string()
}

/// A running PostgreSQL cluster: superuser [`SUPERUSER`] (password over TCP, trust on its
/// unix socket) and role [`APP_USER`] with password [`APP_PASSWORD`] owning [`APP_DB`].
pub struct Postgres {
    child: Child,
    pub port: u16,
    /// The directory of its unix socket (`.s.PGSQL.PORT`).
    pub socket_dir: PathBuf,
    pub dir: tempfile::TempDir,
    who: Option<RunAs>,
    psql: PathBuf,
}

impl Drop for Postgres {
    fn drop(&mut self) {
        // SIGINT is PostgreSQL's fast shutdown: backends end too.
        stop(&mut self.child, nix::sys::signal::Signal::SIGINT);
    }
}

impl Postgres {
    /// Start a cluster, or `None` (with a message) where PostgreSQL is not installed outside CI.
    pub fn start() -> Option<Postgres> {
        Postgres::start_with(60)
    }

    /// [`Postgres::start`] with `max_connections` (three of them reserved for superusers).
    pub fn start_with(max_connections: u32) -> Option<Postgres> {
        let initdb = pg_binary("initdb")?;
        let postgres = pg_binary("postgres")?;
        let psql = pg_binary("psql")?;
        let who = run_as();
        let dir = tempfile::tempdir().expect("temp dir");
        give(dir.path(), who);
        let pwfile = dir.path().join("superuser.pw");
        write_file(&pwfile, SUPERUSER_PASSWORD, who);
        let data = dir.path().join("data");
        let out = command_as(&initdb, who)
            .arg("-D")
            .arg(&data)
            .args(["-U", SUPERUSER, "-E", "UTF8", "--no-sync"])
            .args(["--auth-local=trust", "--auth-host=scram-sha-256"])
            .arg(format!("--pwfile={}", pwfile.display()))
            .output()
            .expect("run initdb");
        assert!(
            out.status.success(),
            "initdb failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let socket_dir = dir.path().join("sock");
        std::fs::create_dir(&socket_dir).expect("socket dir");
        give(&socket_dir, who);
        let port = free_port();
        let log_path = dir.path().join("postgres.log");
        let log = std::fs::File::create(&log_path).expect("log file");
        give(&log_path, who);
        let child = command_as(&postgres, who)
            .arg("-D")
            .arg(&data)
            .arg("-k")
            .arg(&socket_dir)
            .args(["-h", "127.0.0.1", "-p", &port.to_string()])
            .args(["-c", "fsync=off", "-c", "synchronous_commit=off"])
            .args(["-c", "shared_buffers=16MB"])
            .arg("-c")
            .arg(format!("max_connections={max_connections}"))
            .args(["-c", "logging_collector=off"])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start postgres");
        let pg = Postgres {
            child,
            port,
            socket_dir,
            dir,
            who,
            psql,
        };
        let ready = wait_until(READY_WITHIN, || {
            pg.try_psql("postgres", "select 1")
                .is_ok_and(|o| o.trim() == "1")
        });
        assert!(
            ready,
            "postgres did not become ready; log:\n{}",
            log_of(&log_path)
        );
        pg.psql(
            "postgres",
            &format!("create role {APP_USER} login password '{APP_PASSWORD}'"),
        );
        pg.psql(
            "postgres",
            &format!("create database {APP_DB} owner {APP_USER}"),
        );
        Some(pg)
    }

    /// Run SQL as the superuser over the unix socket; `Err` with psql's message.
    pub fn try_psql(&self, db: &str, sql: &str) -> Result<String, String> {
        let out = Command::new(&self.psql)
            .arg("-h")
            .arg(&self.socket_dir)
            .args(["-p", &self.port.to_string(), "-U", SUPERUSER, "-d", db])
            .args(["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    /// [`Postgres::try_psql`] that panics on an error.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        self.try_psql(db, sql)
            .unwrap_or_else(|e| panic!("psql {sql:?} failed: {e}"))
    }

    /// A libpq key=value DSN for the app role over TCP, without its password.
    pub fn dsn(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user={APP_USER} dbname={APP_DB}",
            self.port
        )
    }

    /// A URL with the superuser's password (for exporters, which take a password in the DSN).
    pub fn superuser_url(&self, db: &str) -> String {
        format!(
            "postgresql://{SUPERUSER}:{SUPERUSER_PASSWORD}@127.0.0.1:{}/{db}?sslmode=disable",
            self.port
        )
    }

    /// The server's log so far (its last 4,000 bytes).
    pub fn log(&self) -> String {
        log_of(&self.dir.path().join("postgres.log"))
    }
}

/// PgBouncer's settings for a test.
#[derive(Debug, Clone)]
pub struct BouncerOptions {
    /// `session`, `transaction` or `statement`.
    pub pool_mode: &'static str,
    pub default_pool_size: u32,
    pub max_client_conn: u32,
}

impl Default for BouncerOptions {
    fn default() -> Self {
        BouncerOptions {
            pool_mode: "transaction",
            default_pool_size: 5,
            max_client_conn: 200,
        }
    }
}

/// A running PgBouncer in front of a [`Postgres`]: database [`APP_DB`] for [`APP_USER`], its
/// admin console (`dbname=pgbouncer`) for [`BOUNCER_ADMIN`] and [`BOUNCER_STATS`].
pub struct PgBouncer {
    child: Child,
    pub port: u16,
    pub socket_dir: PathBuf,
    pub dir: tempfile::TempDir,
    pub options: BouncerOptions,
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        stop(&mut self.child, nix::sys::signal::Signal::SIGINT);
    }
}

impl PgBouncer {
    /// Start PgBouncer, or `None` (with a message) where it is not installed outside CI.
    pub fn start(pg: &Postgres, options: BouncerOptions) -> Option<PgBouncer> {
        let bin = require_binary("pgbouncer")?;
        let who = pg.who;
        let dir = tempfile::tempdir().expect("temp dir");
        give(dir.path(), who);
        let port = free_port();
        let d = dir.path();
        let users = format!(
            "\"{APP_USER}\" \"{APP_PASSWORD}\"\n\"{BOUNCER_ADMIN}\" \"{BOUNCER_ADMIN_PASSWORD}\"\n\"{BOUNCER_STATS}\" \"{BOUNCER_STATS_PASSWORD}\"\n"
        );
        write_file(&d.join("userlist.txt"), &users, who);
        let ini = format!(
            "[databases]\n{APP_DB} = host=127.0.0.1 port={pg_port} dbname={APP_DB}\n\n[pgbouncer]\n\
             listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir = {dir}\n\
             auth_type = scram-sha-256\nauth_file = {dir}/userlist.txt\n\
             admin_users = {BOUNCER_ADMIN}\nstats_users = {BOUNCER_STATS}\n\
             pool_mode = {mode}\ndefault_pool_size = {size}\nmax_client_conn = {max}\n\
             logfile = {dir}/pgbouncer.log\npidfile = {dir}/pgbouncer.pid\n\
             ignore_startup_parameters = extra_float_digits\n",
            pg_port = pg.port,
            dir = d.display(),
            mode = options.pool_mode,
            size = options.default_pool_size,
            max = options.max_client_conn,
        );
        let ini_path = d.join("pgbouncer.ini");
        write_file(&ini_path, &ini, who);
        let child = command_as(&bin, who)
            .arg(&ini_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start pgbouncer");
        let b = PgBouncer {
            child,
            port,
            socket_dir: d.to_path_buf(),
            dir,
            options,
        };
        assert!(
            wait_until(READY_WITHIN, || accepts(port)),
            "pgbouncer did not start; log:\n{}",
            b.log()
        );
        Some(b)
    }

    /// The app role's DSN through PgBouncer, without its password.
    pub fn dsn(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user={APP_USER} dbname={APP_DB}",
            self.port
        )
    }

    /// The admin console's DSN, without its password.
    pub fn admin_dsn(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user={BOUNCER_ADMIN} dbname=pgbouncer",
            self.port
        )
    }

    /// The stats user's URL with its password (for the exporter).
    pub fn stats_url(&self) -> String {
        format!(
            "postgresql://{BOUNCER_STATS}:{BOUNCER_STATS_PASSWORD}@127.0.0.1:{}/pgbouncer",
            self.port
        )
    }

    /// Run an admin-console command with psql (simple protocol); the rows, `|`-separated.
    pub fn admin(&self, command: &str) -> Result<String, String> {
        self.admin_psql(command, &["-t"])
    }

    /// An admin-console command with psql's own options added (`-t`: rows only).
    fn admin_psql(&self, command: &str, options: &[&str]) -> Result<String, String> {
        let psql = pg_binary("psql").ok_or("psql is not installed")?;
        let out = Command::new(psql)
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args([
                "-U",
                BOUNCER_ADMIN,
                "-d",
                "pgbouncer",
                "-X",
                "-A",
                "-c",
                command,
            ])
            .args(options)
            .env("PGPASSWORD", BOUNCER_ADMIN_PASSWORD)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    /// The app's pool in `SHOW POOLS`, column by name (`cl_waiting`, `sv_active`, …), read
    /// with its header so the columns of every PgBouncer version are found by name.
    pub fn app_pool(&self) -> Option<std::collections::BTreeMap<String, String>> {
        let text = self.admin_psql("SHOW POOLS", &[]).ok()?;
        let mut lines = text.lines();
        let header: Vec<String> = lines.next()?.split('|').map(str::to_string).collect();
        lines.find_map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            (f.first() == Some(&APP_DB) && f.get(1) == Some(&APP_USER)).then(|| {
                (header.iter().cloned())
                    .zip(f.iter().map(std::string::ToString::to_string))
                    .collect()
            })
        })
    }

    /// A `SHOW CONFIG` value, e.g. `default_pool_size`.
    pub fn config_value(&self, key: &str) -> Option<String> {
        let rows = self.admin("SHOW CONFIG").ok()?;
        rows.lines().find_map(|l| {
            let mut f = l.split('|');
            (f.next()? == key).then(|| f.next().unwrap_or("").to_string())
        })
    }

    pub fn log(&self) -> String {
        log_of(&self.dir.path().join("pgbouncer.log"))
    }
}

/// A running exporter (postgres_exporter or the PgBouncer exporter).
pub struct Exporter {
    child: Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

impl Drop for Exporter {
    fn drop(&mut self) {
        stop(&mut self.child, nix::sys::signal::Signal::SIGTERM);
    }
}

impl Exporter {
    /// `host:port` for a Prometheus scrape config.
    pub fn target(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The exposition text of `/metrics`.
    pub fn metrics(&self) -> Option<String> {
        match http_get(self.port, "/metrics", Duration::from_secs(5)) {
            Some((200, body)) => Some(body),
            _ => None,
        }
    }

    fn wait_for(&self, line_prefix: &str) -> bool {
        wait_until(READY_WITHIN, || {
            self.metrics()
                .is_some_and(|m| m.lines().any(|l| l.starts_with(line_prefix)))
        })
    }

    /// The real `prometheus-postgres-exporter` scraping `pg` as its superuser.
    pub fn postgres(pg: &Postgres) -> Option<Exporter> {
        let bin = require_binary("prometheus-postgres-exporter")?;
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let log = std::fs::File::create(dir.path().join("exporter.log")).expect("log");
        let child = Command::new(bin)
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .env("DATA_SOURCE_NAME", pg.superuser_url("postgres"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start prometheus-postgres-exporter");
        let e = Exporter { child, port, dir };
        assert!(
            e.wait_for("pg_up 1"),
            "postgres_exporter did not report pg_up 1; log:\n{}",
            log_of(&e.dir.path().join("exporter.log"))
        );
        Some(e)
    }

    /// Spreaker's `pgbouncer-exporter` (PyPI `prometheus-pgbouncer-exporter`) on `b`'s console.
    pub fn pgbouncer(b: &PgBouncer) -> Option<Exporter> {
        let bin = require_binary("pgbouncer-exporter")?;
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let cfg = dir.path().join("exporter.yml");
        std::fs::write(
            &cfg,
            format!(
                "exporter_host: 127.0.0.1\nexporter_port: {port}\npgbouncers:\n  - dsn: {}\n    exclude_databases:\n      - pgbouncer\n",
                b.stats_url()
            ),
        )
        .expect("write exporter.yml");
        let log = dir.path().join("exporter.log");
        let child = Command::new(bin)
            .arg("--config")
            .arg(&cfg)
            .arg("--log-file")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start pgbouncer-exporter");
        let e = Exporter { child, port, dir };
        assert!(
            e.wait_for("pgbouncer_up 1"),
            "pgbouncer-exporter did not report pgbouncer_up 1; log:\n{}",
            log_of(&log)
        );
        Some(e)
    }
}

/// What a [`Backend`]'s handler sees of a request.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// Path and query, e.g. `/slow?ms=500`.
    pub path: String,
}

/// A handler: the status and body to answer.
pub type Handler = Arc<dyn Fn(&Request) -> (u16, String) + Send + Sync>;

/// A small loopback HTTP/1.0 server, one thread per connection (at most 64 at once), that a
/// test puts behind HAProxy. `GET /health` answers 200 unless the handler says otherwise;
/// `/slow?ms=N` holds the connection N ms (for draining tests). It can be restarted: its
/// listener closes for a while and comes back on the same port, by [`Backend::restart`] or
/// when a file `restart-NAME` appears in [`Backend::trigger_dir`] (what a runbook's
/// "restart command" touches; the backend removes it, and writes `up-NAME` once it listens again).
pub struct Backend {
    pub name: String,
    pub port: u16,
    /// Requests answered so far.
    pub served: Arc<AtomicU64>,
    /// Restarts done so far.
    pub restarts: Arc<AtomicU64>,
    pub trigger_dir: PathBuf,
    stop: Arc<AtomicBool>,
    restart_for: Arc<Mutex<Option<Duration>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Backend {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The default handler: 200 with the backend's name; `/slow?ms=N` sleeps first.
pub fn default_handler(name: &str) -> Handler {
    let name = name.to_string();
    Arc::new(move |r: &Request| {
        if let Some(ms) = r.path.strip_prefix("/slow?ms=") {
            let ms: u64 = ms.parse().unwrap_or(0).min(60_000);
            std::thread::sleep(Duration::from_millis(ms));
        }
        (200, format!("{name}\n"))
    })
}

impl Backend {
    /// Start a backend named `name`; `trigger_dir` is watched for `restart-NAME`.
    pub fn start(name: &str, trigger_dir: &Path, handler: Handler) -> Backend {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a backend");
        let port = listener.local_addr().expect("backend address").port();
        let stop = Arc::new(AtomicBool::new(false));
        let served = Arc::new(AtomicU64::new(0));
        let restarts = Arc::new(AtomicU64::new(0));
        let restart_for: Arc<Mutex<Option<Duration>>> = Arc::default();
        let trigger = trigger_dir.join(format!("restart-{name}"));
        let thread = {
            let (stop, served, restarts, restart_for) = (
                stop.clone(),
                served.clone(),
                restarts.clone(),
                restart_for.clone(),
            );
            std::thread::spawn(move || {
                serve(
                    listener,
                    port,
                    &trigger,
                    handler,
                    stop,
                    served,
                    restarts,
                    restart_for,
                );
            })
        };
        Backend {
            name: name.to_string(),
            port,
            served,
            restarts,
            trigger_dir: trigger_dir.to_path_buf(),
            stop,
            restart_for,
            thread: Some(thread),
        }
    }

    /// Close the listener for `downtime`, then listen again on the same port.
    pub fn restart(&self, downtime: Duration) {
        if let Ok(mut r) = self.restart_for.lock() {
            *r = Some(downtime);
        }
    }

    /// `host:port`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

#[allow(clippy::too_many_arguments)]
fn serve(
    mut listener: TcpListener,
    port: u16,
    trigger: &Path,
    handler: Handler,
    stop: Arc<AtomicBool>,
    served: Arc<AtomicU64>,
    restarts: Arc<AtomicU64>,
    restart_for: Arc<Mutex<Option<Duration>>>,
) {
    listener
        .set_nonblocking(true)
        .expect("nonblocking listener");
    let live = Arc::new(AtomicU64::new(0));
    while !stop.load(Ordering::SeqCst) {
        let mut downtime = restart_for.lock().ok().and_then(|mut r| r.take());
        if downtime.is_none() && trigger.exists() {
            let _ = std::fs::remove_file(trigger);
            downtime = Some(Duration::from_millis(500));
        }
        if let Some(d) = downtime {
            drop(listener);
            std::thread::sleep(d);
            listener = loop {
                match TcpListener::bind(("127.0.0.1", port)) {
                    Ok(l) => break l,
                    Err(_) if !stop.load(Ordering::SeqCst) => {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    Err(_) => return,
                }
            };
            listener
                .set_nonblocking(true)
                .expect("nonblocking listener");
            let n = restarts.fetch_add(1, Ordering::SeqCst) + 1;
            // `up-NAME`: a restart command can wait for it, as `systemctl restart` waits.
            let up = trigger.with_file_name(
                trigger
                    .file_name()
                    .and_then(|f| f.to_str())
                    .map(|f| f.replacen("restart-", "up-", 1))
                    .unwrap_or_default(),
            );
            let _ = std::fs::write(up, n.to_string());
            continue;
        }
        match listener.accept() {
            Ok((stream, _)) => {
                if live.load(Ordering::SeqCst) >= 64 {
                    continue;
                }
                live.fetch_add(1, Ordering::SeqCst);
                let (handler, served, live) = (handler.clone(), served.clone(), live.clone());
                std::thread::spawn(move || {
                    answer(stream, &handler);
                    served.fetch_add(1, Ordering::SeqCst);
                    live.fetch_sub(1, Ordering::SeqCst);
                });
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

fn answer(stream: TcpStream, handler: &Handler) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    // Headers up to the blank line (bounded).
    for _ in 0..100 {
        let mut l = String::new();
        match reader.read_line(&mut l) {
            Ok(0) | Err(_) => break,
            Ok(_) if l == "\r\n" || l == "\n" => break,
            Ok(_) => {}
        }
    }
    let mut parts = first.split_whitespace();
    let req = Request {
        method: parts.next().unwrap_or("").to_string(),
        path: parts.next().unwrap_or("/").to_string(),
    };
    let (status, body) = handler(&req);
    let mut s = stream;
    let _ = write!(
        s,
        "HTTP/1.0 {status} X\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = s.flush();
}

/// HAProxy's settings for a test.
#[derive(Debug, Clone)]
pub struct HaproxyOptions {
    pub backend: &'static str,
    /// `retries` in `defaults`.
    pub retries: u32,
    /// Health-check interval of each server.
    pub check_inter: &'static str,
}

impl Default for HaproxyOptions {
    fn default() -> Self {
        HaproxyOptions {
            backend: "be_app",
            retries: 3,
            check_inter: "200ms",
        }
    }
}

/// A running HAProxy: frontend [`Haproxy::port`] → backend `options.backend` with one server
/// per `(name, port)`, health-checked with `GET /health`; the runtime API (`level admin`) on a
/// unix socket and on TCP; the built-in Prometheus exporter on `/metrics`.
pub struct Haproxy {
    child: Child,
    pub port: u16,
    pub stats_port: u16,
    pub prometheus_port: u16,
    pub socket: PathBuf,
    /// A second unix socket at `level user` (set commands are refused there).
    pub user_socket: PathBuf,
    pub dir: tempfile::TempDir,
    pub options: HaproxyOptions,
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        stop(&mut self.child, nix::sys::signal::Signal::SIGTERM);
    }
}

impl Haproxy {
    /// Start HAProxy in front of `servers`, or `None` where it is not installed outside CI.
    pub fn start(servers: &[(&str, u16)], options: HaproxyOptions) -> Option<Haproxy> {
        let bin = require_binary("haproxy")?;
        let dir = tempfile::tempdir().expect("temp dir");
        let (port, stats_port, prometheus_port) = (free_port(), free_port(), free_port());
        let socket = dir.path().join("admin.sock");
        let mut cfg = format!(
            "global\n    stats socket {sock} mode 600 level admin\n    stats socket {user_sock} mode 600 level user\n    stats socket ipv4@127.0.0.1:{stats_port} level admin\n    stats timeout 10s\n\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 30s\n    timeout server 30s\n    retries {retries}\n    option redispatch\n\n\
             frontend fe_app\n    bind 127.0.0.1:{port}\n    default_backend {be}\n\n\
             frontend prometheus\n    bind 127.0.0.1:{prometheus_port}\n    http-request use-service prometheus-exporter if {{ path /metrics }}\n\n\
             backend {be}\n    balance roundrobin\n    option httpchk GET /health\n",
            sock = socket.display(),
            user_sock = dir.path().join("user.sock").display(),
            retries = options.retries,
            be = options.backend,
        );
        for (name, p) in servers {
            cfg += &format!(
                "    server {name} 127.0.0.1:{p} check inter {} fall 2 rise 1\n",
                options.check_inter
            );
        }
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
        let h = Haproxy {
            child,
            port,
            stats_port,
            prometheus_port,
            socket,
            user_socket: dir.path().join("user.sock"),
            dir,
            options,
        };
        let ready = wait_until(READY_WITHIN, || {
            h.runtime("show info")
                .is_ok_and(|r| r.contains("Name: HAProxy"))
        });
        assert!(
            ready,
            "haproxy did not start; log:\n{}",
            log_of(&h.dir.path().join("haproxy.log"))
        );
        Some(h)
    }

    /// Send one runtime-API command over the unix socket; the whole reply.
    pub fn runtime(&self, command: &str) -> std::io::Result<String> {
        let mut s = std::os::unix::net::UnixStream::connect(&self.socket)?;
        s.set_read_timeout(Some(Duration::from_secs(5)))?;
        s.write_all(format!("{command}\n").as_bytes())?;
        let mut out = String::new();
        s.read_to_string(&mut out)?;
        Ok(out)
    }

    /// The TCP runtime socket as `host:port`.
    pub fn stats_addr(&self) -> String {
        format!("127.0.0.1:{}", self.stats_port)
    }

    /// A field of `show stat` for `server` of the test backend (e.g. `status`, `scur`).
    pub fn stat(&self, server: &str, field: &str) -> Option<String> {
        let text = self.runtime("show stat").ok()?;
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next()?.trim_start_matches("# ").split(',').collect();
        let col = header.iter().position(|h| *h == field)?;
        lines.find_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f.first() == Some(&self.options.backend) && f.get(1) == Some(&server))
                .then(|| f.get(col).map(std::string::ToString::to_string))
                .flatten()
        })
    }

    /// Wait (bounded) until `server`'s `show stat` status is `status`.
    pub fn wait_status(&self, server: &str, status: &str, within: Duration) -> bool {
        wait_until(within, || {
            self.stat(server, "status").as_deref() == Some(status)
        })
    }

    /// `host:port` of the built-in Prometheus exporter.
    pub fn prometheus_target(&self) -> String {
        format!("127.0.0.1:{}", self.prometheus_port)
    }
}

/// A psql session of [`APP_USER`] on [`APP_DB`] at `127.0.0.1:port` (PostgreSQL or PgBouncer),
/// named `app` (`application_name`), with `sql` sent and its stdin held open: psql waits for
/// more, so a transaction it began stays open. Killed when dropped.
pub struct Session {
    child: Child,
    _stdin: std::process::ChildStdin,
}

impl Session {
    /// Whether psql has ended (its session closed).
    pub fn ended(&mut self) -> bool {
        self.child.try_wait().ok().flatten().is_some()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn session(port: u16, app: &str, sql: &str) -> Session {
    let mut child = Command::new(pg_binary("psql").expect("psql"))
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(["-U", APP_USER, "-d", APP_DB, "-X", "-q"])
        .env("PGPASSWORD", APP_PASSWORD)
        .env("PGAPPNAME", app)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start psql");
    let mut stdin = child.stdin.take().expect("psql's stdin");
    stdin.write_all(sql.as_bytes()).expect("send to psql");
    stdin.flush().expect("send to psql");
    Session {
        child,
        _stdin: stdin,
    }
}

/// A `pgbench` run with a custom script, stopped when dropped.
pub struct Pgbench {
    child: Option<Child>,
    pub dir: tempfile::TempDir,
}

impl Drop for Pgbench {
    fn drop(&mut self) {
        if let Some(c) = &mut self.child {
            stop(c, nix::sys::signal::Signal::SIGINT);
        }
    }
}

impl Pgbench {
    /// Run `script` with `clients` clients for `duration` against `host:port` as [`APP_USER`]
    /// on [`APP_DB`] (through PgBouncer or straight to PostgreSQL), simple protocol, no vacuum.
    pub fn start(port: u16, script: &str, clients: u32, duration: Duration) -> Option<Pgbench> {
        Pgbench::start_with(port, script, clients, duration, &[])
    }

    /// [`Pgbench::start`] with more of pgbench's options (`--log`: see [`Pgbench::logged`]).
    pub fn start_with(
        port: u16,
        script: &str,
        clients: u32,
        duration: Duration,
        extra: &[&str],
    ) -> Option<Pgbench> {
        let bin = pg_binary("pgbench")?;
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("load.sql");
        std::fs::write(&path, script).expect("write the pgbench script");
        let _ = std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755));
        let child = Command::new(bin)
            .args([
                "-n",
                "-M",
                "simple",
                "-h",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .args(["-U", APP_USER, "-c", &clients.to_string(), "-j", "1"])
            .args(["-T", &duration.as_secs().max(1).to_string()])
            .arg("-f")
            .arg(&path)
            .args(extra)
            .args(
                (extra.iter().any(|a| matches!(*a, "-l" | "--log")))
                    .then(|| ["--log-prefix".into(), dir.path().join("tx")])
                    .into_iter()
                    .flatten(),
            )
            .arg(APP_DB)
            .env("PGPASSWORD", APP_PASSWORD)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start pgbench");
        Some(Pgbench {
            child: Some(child),
            dir,
        })
    }

    /// Wait for the run to end (it ends by itself after its duration) and return its output.
    pub fn wait(mut self) -> Output {
        let child = self.child.take().expect("pgbench is running");
        child.wait_with_output().expect("wait for pgbench")
    }

    /// The transactions of its script (the first `-f`: not those of scripts added with
    /// `-f` in `extra`) of a run started with `--log`, so far: (when each ended, its latency),
    /// in seconds since the epoch and seconds, from pgbench's own per-transaction log
    /// (`client tx latency_us script epoch_s epoch_us`).
    pub fn logged(&self) -> Vec<(f64, f64)> {
        let mut out: Vec<(f64, f64)> = Vec::new();
        for e in std::fs::read_dir(self.dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with("tx.") {
                continue;
            }
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            out.extend(text.lines().filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let latency: f64 = f.get(2)?.parse().ok()?;
                if *f.get(3)? != "0" {
                    return None;
                }
                let (s, us): (f64, f64) = (f.get(4)?.parse().ok()?, f.get(5)?.parse().ok()?);
                Some((s + us / 1e6, latency / 1e6))
            }));
        }
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        out
    }

    /// The `tps = N` figure of a finished run's output.
    pub fn tps(out: &Output) -> Option<f64> {
        String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
            l.trim()
                .strip_prefix("tps = ")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
    }
}
