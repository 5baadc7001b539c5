//! Small application instances for the real incident: loopback HTTP servers
//! ([`realstack::Backend`]) that answer each request with a real query through PgBouncer
//! (tokio-postgres, a few connections per instance) and count their own answers, so a test
//! measures the service from the instances themselves; and the users, a few client threads
//! that call the service through HAProxy in a closed loop.
//!
//! `GET /health` answers without the database (HAProxy's check), `GET /items` runs
//! `SELECT count(*) FROM items`: 200 with the count, 503 when the query fails or takes longer
//! than [`QUERY_DEADLINE`] (the role's `lock_timeout` makes a query behind a lock fail first).

#![allow(dead_code)]

use super::realstack::{self, APP_PASSWORD, Backend, Handler, Request};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// The longest a request waits for its query.
pub const QUERY_DEADLINE: Duration = Duration::from_secs(5);
/// Connections each instance keeps to PgBouncer.
pub const CONNECTIONS: usize = 4;

/// One instance's own count of its answers.
#[derive(Debug, Default)]
pub struct Counts {
    pub ok: AtomicU64,
    pub failed: AtomicU64,
}

/// A running instance.
pub struct App {
    pub backend: Backend,
    pub counts: Arc<Counts>,
    _runtime: Arc<tokio::runtime::Runtime>,
}

/// The instance's connections: a queue of clients, one per request at a time.
struct Pool {
    clients: Mutex<Vec<tokio_postgres::Client>>,
    free: tokio::sync::Semaphore,
}

impl App {
    /// Start instance `name` querying through PgBouncer at `dsn` (without its password).
    pub fn start(name: &str, dsn: &str, dir: &Path) -> App {
        let runtime = Arc::new(
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("an app runtime"),
        );
        let config: tokio_postgres::Config = format!("{dsn} password={APP_PASSWORD}")
            .parse()
            .expect("the app's DSN");
        let clients = runtime.block_on(async {
            let mut clients = Vec::new();
            for _ in 0..CONNECTIONS {
                let (client, conn) = config
                    .connect(tokio_postgres::NoTls)
                    .await
                    .expect("the app connects through PgBouncer");
                tokio::spawn(async move {
                    let _ = conn.await;
                });
                clients.push(client);
            }
            clients
        });
        let pool = Arc::new(Pool {
            clients: Mutex::new(clients),
            free: tokio::sync::Semaphore::new(CONNECTIONS),
        });
        let counts = Arc::new(Counts::default());
        let handler: Handler = {
            let (rt, pool, counts) = (runtime.clone(), pool.clone(), counts.clone());
            Arc::new(move |r: &Request| {
                if r.path == "/health" {
                    return (200, "ok\n".into());
                }
                let answer =
                    rt.block_on(async { tokio::time::timeout(QUERY_DEADLINE, query(&pool)).await });
                match answer {
                    Ok(Ok(n)) => {
                        counts.ok.fetch_add(1, Ordering::SeqCst);
                        (200, format!("{n}\n"))
                    }
                    Ok(Err(e)) => {
                        counts.failed.fetch_add(1, Ordering::SeqCst);
                        (503, format!("database: {e}\n"))
                    }
                    Err(_) => {
                        counts.failed.fetch_add(1, Ordering::SeqCst);
                        (503, "database: timed out\n".into())
                    }
                }
            })
        };
        App {
            backend: Backend::start(name, dir, handler),
            counts,
            _runtime: runtime,
        }
    }
}

/// A connection taken from the pool, given back when dropped (also when the request's
/// deadline drops the query).
struct Lease<'a> {
    pool: &'a Pool,
    client: Option<tokio_postgres::Client>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let (Some(c), Ok(mut clients)) = (self.client.take(), self.pool.clients.lock()) {
            clients.push(c);
        }
    }
}

async fn query(pool: &Pool) -> Result<String, String> {
    let _permit = pool.free.acquire().await.map_err(|e| e.to_string())?;
    let client = pool
        .clients
        .lock()
        .map_err(|_| "poisoned".to_string())?
        .pop()
        .ok_or("no connection")?;
    let lease = Lease {
        pool,
        client: Some(client),
    };
    let c = lease.client.as_ref().ok_or("no connection")?;
    let rows = c
        .simple_query("SELECT count(*) FROM items")
        .await
        .map_err(|e| e.to_string())?;
    rows.iter()
        .find_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(String::from),
            _ => None,
        })
        .ok_or_else(|| "no row".to_string())
}

/// The instances' counts summed, read every 100 ms: (when, ok, failed).
pub struct Sampler {
    pub samples: Arc<Mutex<Vec<(SystemTime, u64, u64)>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    /// Sample `counts` for at most `limit`.
    pub fn start(counts: Vec<Arc<Counts>>, limit: Duration) -> Sampler {
        let samples: Arc<Mutex<Vec<(SystemTime, u64, u64)>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (samples, stop) = (samples.clone(), stop.clone());
            std::thread::spawn(move || {
                let end = Instant::now() + limit;
                while !stop.load(Ordering::SeqCst) && Instant::now() < end {
                    let ok = counts.iter().map(|c| c.ok.load(Ordering::SeqCst)).sum();
                    let failed = counts.iter().map(|c| c.failed.load(Ordering::SeqCst)).sum();
                    if let Ok(mut s) = samples.lock() {
                        s.push((SystemTime::now(), ok, failed));
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
        };
        Sampler {
            samples,
            stop,
            thread: Some(thread),
        }
    }

    /// Stop and return the samples.
    pub fn finish(mut self) -> Vec<(SystemTime, u64, u64)> {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.samples.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

/// The impact as the instances saw it: from the start of the first 100 ms in which they
/// answered nothing well or failed a request, to the end of the last such one (after `after`).
pub fn impact(
    samples: &[(SystemTime, u64, u64)],
    after: SystemTime,
) -> Option<(SystemTime, SystemTime)> {
    let bad: Vec<(SystemTime, SystemTime)> = samples
        .windows(2)
        .filter(|w| w[1].0 > after)
        .filter(|w| w[1].1 == w[0].1 || w[1].2 > w[0].2)
        .map(|w| (w[0].0, w[1].0))
        .collect();
    Some((bad.first()?.0, bad.last()?.1))
}

/// Users: `threads` clients calling `GET /items` through `port` in a closed loop with `think`
/// between calls, until stopped or `limit` passes.
pub struct Users {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
    pub answered: Arc<AtomicU64>,
    pub failed: Arc<AtomicU64>,
}

impl Users {
    pub fn start(port: u16, threads: usize, think: Duration, limit: Duration) -> Users {
        let stop = Arc::new(AtomicBool::new(false));
        let (answered, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let threads = (0..threads)
            .map(|_| {
                let (stop, answered, failed) = (stop.clone(), answered.clone(), failed.clone());
                std::thread::spawn(move || {
                    let end = Instant::now() + limit;
                    while !stop.load(Ordering::SeqCst) && Instant::now() < end {
                        match realstack::http_get(port, "/items", Duration::from_secs(10)) {
                            Some((200, _)) => answered.fetch_add(1, Ordering::SeqCst),
                            _ => failed.fetch_add(1, Ordering::SeqCst),
                        };
                        std::thread::sleep(think);
                    }
                })
            })
            .collect();
        Users {
            stop,
            threads,
            answered,
            failed,
        }
    }

    pub fn stop(self) -> (u64, u64) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads {
            let _ = t.join();
        }
        (
            self.answered.load(Ordering::SeqCst),
            self.failed.load(Ordering::SeqCst),
        )
    }
}

/// A psql session that opens a transaction and holds it (stdin kept open): the fault.
pub struct HeldTransaction {
    child: std::process::Child,
}

impl Drop for HeldTransaction {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl HeldTransaction {
    /// As the superuser over TCP, named `app_name`, running `sql` and then waiting.
    pub fn start(pg: &realstack::Postgres, app_name: &str, sql: &str) -> HeldTransaction {
        use std::io::Write;
        let mut child = std::process::Command::new(realstack::pg_binary("psql").expect("psql"))
            .args(["-h", "127.0.0.1", "-p", &pg.port.to_string()])
            .args([
                "-U",
                realstack::SUPERUSER,
                "-d",
                realstack::APP_DB,
                "-X",
                "-q",
            ])
            .env("PGPASSWORD", realstack::SUPERUSER_PASSWORD)
            .env("PGAPPNAME", app_name)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start psql");
        let mut stdin = child.stdin.take().expect("psql's stdin");
        stdin.write_all(sql.as_bytes()).expect("send the SQL");
        stdin.flush().expect("send the SQL");
        // Keep the pipe open: psql waits for more, the transaction stays open.
        std::mem::forget(stdin);
        HeldTransaction { child }
    }
}
