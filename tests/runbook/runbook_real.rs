//! The shipped real-system runbooks (`runbooks/`) run against the real stack, each on the move
//! it exists for, their gates reading a real Prometheus that scrapes the real exporters, judged
//! by what the real components say afterwards:
//! PgBouncer's pool raised under pgbench load until no client waits; long transactions in
//! PostgreSQL cancelled, then the survivors terminated, a young one left alone; an HAProxy
//! backend restarted server by server, drained, with traffic flowing and no request failing.

use crate::support::realstack;
use crate::support::runbook_run;

use realstack::*;
use runbook_run::run;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use warroom::metrics::{InstantQuery, Series, Source};
use warroom::runbook::report::{RunEvent, RunOutcome, StepOutcome};

/// The text of the shipped runbook `name`, as built into warroom.
pub fn shipped(name: &str) -> String {
    let file = format!("runbooks/{name}.toml");
    warroom::runbook::catalog::SHIPPED
        .iter()
        .find(|(f, _)| *f == file)
        .map(|(_, text)| text.to_string())
        .unwrap_or_else(|| panic!("{name} is not shipped"))
}

/// A Prometheus scraping `targets` every second, and a client on it once `ready` (a query)
/// has an answer with data (bounded: 30 s).
pub async fn prometheus_on(
    targets: Vec<String>,
    ready: &str,
) -> Option<(prometheus::PromServer, Arc<dyn warroom::metrics::Source>)> {
    let (prom, source) = prometheus_every(targets, "1s")?;
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let a = source
            .query(warroom::metrics::InstantQuery {
                query: ready.into(),
                time: None,
            })
            .await;
        if a.is_ok_and(|a| !a.series.is_empty()) {
            return Some((prom, source));
        }
        assert!(Instant::now() < until, "prometheus never answered {ready}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A Prometheus scraping `targets` every `scrape_interval`, and a client on it.
pub fn prometheus_every(
    targets: Vec<String>,
    scrape_interval: &'static str,
) -> Option<(prometheus::PromServer, Arc<dyn Source>)> {
    let prom = prometheus::start(prometheus::PromOptions {
        targets,
        scrape_interval,
        ..Default::default()
    })?;
    let client = warroom::metrics::prometheus::PrometheusClient::new(
        warroom::metrics::prometheus::ClientOptions::new(prom.url.clone()),
    )
    .unwrap();
    Some((prom, Arc::new(client)))
}

/// The value of the first series `query` answers with at `time` (the server's now when
/// `None`).
pub async fn value(source: &Arc<dyn Source>, query: &str, time: Option<f64>) -> Option<f64> {
    let q = InstantQuery {
        query: query.into(),
        time,
    };
    let a = source.query(q).await.ok()?;
    a.series.first().and_then(Series::last).map(|p| p.v)
}

/// Wait (at most 60 s) until Prometheus has taken a new sample of `selector`: a step started
/// right after has a whole scrape interval before the next one.
pub async fn just_scraped(source: &Arc<dyn Source>, selector: &str) {
    let sampled_at = format!("timestamp({selector})");
    let until = Instant::now() + Duration::from_secs(60);
    let mut first = None;
    loop {
        assert!(
            Instant::now() < until,
            "no two scrapes of {selector} within 60 s"
        );
        match (first, value(source, &sampled_at, None).await) {
            (None, Some(t)) => first = Some(t),
            (Some(f), Some(t)) if t > f => return,
            _ => {}
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The gate readings of step `id`, each with when it was recorded.
pub fn readings(ran: &runbook_run::Ran, id: &str) -> Vec<(chrono::DateTime<chrono::Utc>, String)> {
    ran.records
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::GateReading { step, reading, .. } if step == id => {
                Some((r.at, reading.clone()))
            }
            _ => None,
        })
        .collect()
}

/// The readings of a gate that followed a change: the first is of a scrape from before the
/// change (inconclusive), whose value `passing` would have passed at the time it was read;
/// none passes; a later one reads `after`, the change.
pub async fn stale_then_fresh(
    source: &Arc<dyn Source>,
    query: &str,
    readings: &[(chrono::DateTime<chrono::Utc>, String)],
    passing: f64,
    after: &str,
) {
    eprintln!("{readings:#?}");
    let (first_at, first) = &readings[0];
    assert!(
        first.starts_with("inconclusive: newest reading ")
            && first.ends_with(" s before the step ended"),
        "the first reading is of a scrape from before the step: {first}"
    );
    let then = first_at.timestamp_millis() as f64 / 1000.0;
    assert_eq!(value(source, query, Some(then)).await, Some(passing));
    assert!(
        readings.iter().all(|(_, r)| !r.starts_with("success")),
        "no reading passes: {readings:?}"
    );
    assert!(
        readings.iter().any(|(_, r)| r == after),
        "a scrape after the step shows it ({after}): {readings:?}"
    );
}

/// The stale zero on the real PgBouncer: Prometheus (every 5 s) has scraped no waiting client,
/// a step pauses the database under load so every client waits, and the gate that waits for
/// no waiting client reads at once: its reading of the zero from before the pause is
/// inconclusive, then it sees the waiting clients and never passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_no_waiting_client_gate_does_not_pass_on_a_scrape_from_before_the_pause() {
    let Some(pg) = Postgres::start() else { return };
    let Some(b) = PgBouncer::start(
        &pg,
        BouncerOptions {
            default_pool_size: 12,
            ..Default::default()
        },
    ) else {
        return;
    };
    let Some(b_exporter) = Exporter::pgbouncer(&b) else {
        return;
    };
    let Some((_prom, source)) = prometheus_every(vec![b_exporter.target()], "5s") else {
        return;
    };
    // Ten clients of 100 ms transactions on a pool of twelve: nobody waits.
    let Some(load) = Pgbench::start(
        b.port,
        "select pg_sleep(0.1);\n",
        10,
        Duration::from_secs(40),
    ) else {
        return;
    };
    let selector = format!(r#"pgbouncer_pools_client_waiting_connections{{database="{APP_DB}"}}"#);
    let query = format!("sum({selector})");
    just_scraped(&source, &selector).await;
    just_scraped(&source, &selector).await;
    assert_eq!(
        value(&source, &query, None).await,
        Some(0.0),
        "nobody waits"
    );
    let src = format!(
        r#"name = "pause-then-check"
[variables]
admin = {{ default = "{admin}" }}
password = {{ secret = true, env = "PGBOUNCER_ADMIN_PASSWORD" }}

[[step]]
id = "pause"
kind = "sql"
title = "Pause {APP_DB}"
dsn = "{{{{admin}}}}"
password = "{{{{password}}}}"
statement = "PAUSE {APP_DB}"

[[step]]
id = "no-waiting"
kind = "wait"
title = "No client waits"
timeout = "9s"
gate = {{ query = '{query}', below = 0.5, interval = "1s", consecutive = 2 }}
"#,
        admin = b.admin_dsn()
    );
    let ran = run(
        &src,
        &[],
        &[("PGBOUNCER_ADMIN_PASSWORD", BOUNCER_ADMIN_PASSWORD)],
        Some(source.clone()),
    )
    .await;
    let waiting_now = waiting(&b);
    let _ = b.admin(&format!("RESUME {APP_DB}"));
    drop(load);
    eprintln!("cl_waiting during the pause: {waiting_now:?}");
    assert_eq!(ran.step("pause").map(|s| s.0), Some(StepOutcome::Succeeded));
    let readings = readings(&ran, "no-waiting");
    let last = readings.last().map(|r| r.1.clone()).unwrap_or_default();
    assert!(last.starts_with("fail ("), "{readings:?}");
    stale_then_fresh(&source, &query, &readings, 0.0, &last).await;
    let (outcome, detail) = ran.step("no-waiting").unwrap();
    assert_eq!(outcome, StepOutcome::TimedOut, "{detail}");
}

fn assert_succeeded(ran: &runbook_run::Ran) {
    for e in &ran.events {
        match e {
            RunEvent::StepFinished {
                step,
                outcome,
                detail,
            } => {
                eprintln!("{step}: {outcome:?} {detail}");
            }
            RunEvent::Paused { step, reason } => eprintln!("{step} paused: {reason}"),
            RunEvent::Output { step, line } if ran.outcome != RunOutcome::Succeeded => {
                eprintln!("{step} | {line}");
            }
            _ => {}
        }
    }
    assert_eq!(ran.outcome, RunOutcome::Succeeded);
}

/// `cl_waiting` of appdb/app in PgBouncer's SHOW POOLS.
fn waiting(b: &PgBouncer) -> Option<u64> {
    let rows = b.admin("SHOW POOLS").ok()?;
    rows.lines()
        .find(|l| l.starts_with("appdb|app|"))
        .and_then(|l| l.split('|').nth(3)?.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgbouncer_raise_pool_drains_the_waiting_clients() {
    let Some(pg) = Postgres::start() else { return };
    let Some(b) = PgBouncer::start(
        &pg,
        BouncerOptions {
            default_pool_size: 2,
            ..Default::default()
        },
    ) else {
        return;
    };
    let Some(pg_exporter) = Exporter::postgres(&pg) else {
        return;
    };
    let Some(b_exporter) = Exporter::pgbouncer(&b) else {
        return;
    };
    let Some((_prom, source)) = prometheus_on(
        vec![pg_exporter.target(), b_exporter.target()],
        "pgbouncer_up and on () pg_up",
    )
    .await
    else {
        return;
    };
    // Ten clients of 500 ms transactions on a pool of two: most of them wait.
    let Some(load) = Pgbench::start(
        b.port,
        "select pg_sleep(0.5);\n",
        10,
        Duration::from_secs(30),
    ) else {
        return;
    };
    // Saturated: several readings in a row with clients waiting.
    let until = Instant::now() + Duration::from_secs(15);
    let mut in_a_row = 0;
    let mut before = 0;
    while in_a_row < 3 && Instant::now() < until {
        let w = waiting(&b).unwrap_or(0);
        in_a_row = if w > 0 { in_a_row + 1 } else { 0 };
        before = before.max(w);
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        in_a_row >= 3,
        "the pool never saturated: {:?}",
        b.admin("SHOW POOLS")
    );
    let ran = run(
        &shipped("pgbouncer-raise-pool"),
        &[
            format!("pgbouncer_admin={}", b.admin_dsn()),
            "database=appdb".into(),
            "user=app".into(),
            "pool_size=12".into(),
            "drain_within=20s".into(),
            "interval=1s".into(),
        ],
        &[("PGBOUNCER_ADMIN_PASSWORD", BOUNCER_ADMIN_PASSWORD)],
        Some(source),
    )
    .await;
    assert_succeeded(&ran);
    assert!(ran.step("database-has-room").is_some());
    assert!(
        ran.step("saturated")
            .unwrap()
            .1
            .contains("\"cl_waiting\" =")
    );
    // PgBouncer says so: the new size, and no client waiting.
    assert_eq!(b.config_value("default_pool_size").as_deref(), Some("12"));
    for _ in 0..5 {
        assert_eq!(waiting(&b), Some(0));
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("cl_waiting before: {before}, after: 0");
    drop(load);
    assert!(!ran.json().contains(BOUNCER_ADMIN_PASSWORD));
}

/// The backend pid and state of the session named `app`, if it is connected.
fn backend(pg: &Postgres, app: &str) -> Option<(String, String)> {
    let out = pg.psql(
        "postgres",
        &format!("select pid, state from pg_stat_activity where application_name = '{app}'"),
    );
    let line = out.lines().next()?.to_string();
    let (pid, state) = line.split_once('|')?;
    Some((pid.to_string(), state.to_string()))
}

fn wait_state(pg: &Postgres, app: &str, state: &str) -> bool {
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        if backend(pg, app).is_some_and(|(_, s)| s == state) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pg_cancel_long_transactions_cancels_then_terminates_only_the_survivors() {
    let Some(pg) = Postgres::start() else { return };
    pg.psql(
        APP_DB,
        "create table items (x int); alter table items owner to app;",
    );
    // Prometheus first: the sessions' ages are measured from their start.
    let Some(exporter) = Exporter::postgres(&pg) else {
        return;
    };
    let Some((_prom, source)) = prometheus_on(
        vec![exporter.target()],
        &format!("pg_stat_activity_max_tx_duration{{datname=\"{APP_DB}\"}}"),
    )
    .await
    else {
        return;
    };
    // A: a long statement in a transaction; B: idle in a transaction holding a lock.
    let _a = session(pg.port, "long-a", "BEGIN;\nSELECT pg_sleep(600);\n");
    let _b = session(
        pg.port,
        "long-b",
        "BEGIN;\nLOCK TABLE items IN ACCESS EXCLUSIVE MODE;\n",
    );
    assert!(wait_state(&pg, "long-a", "active"));
    assert!(wait_state(&pg, "long-b", "idle in transaction"));
    // Older than the 10 s limit; C, started now, stays younger than it for the whole run (the
    // last step's gate reads the longest transaction of the database, C's included).
    std::thread::sleep(Duration::from_millis(11_000));
    // C: young, idle in a transaction: not long, left alone.
    let _c = session(pg.port, "young-c", "BEGIN;\nSELECT 1;\n");
    assert!(wait_state(&pg, "young-c", "idle in transaction"));
    let (pid_a, _) = backend(&pg, "long-a").unwrap();
    let (pid_b, _) = backend(&pg, "long-b").unwrap();
    let ran = run(
        &shipped("pg-cancel-long-transactions"),
        &[
            format!(
                "pg=host=127.0.0.1 port={} user={SUPERUSER} dbname={APP_DB}",
                pg.port
            ),
            format!("database={APP_DB}"),
            "older_than=10".into(),
            "max_count=5".into(),
            "stop_within=10s".into(),
            "interval=1s".into(),
        ],
        &[("PG_PASSWORD", SUPERUSER_PASSWORD)],
        Some(source),
    )
    .await;
    assert_succeeded(&ran);
    // Found both long ones; cancelled the statement running (A's) and only that one.
    assert!(
        ran.step("found")
            .unwrap()
            .1
            .contains("the number of rows = 2")
    );
    let cancel = ran.step("cancel").unwrap().1;
    assert!(
        cancel.starts_with("1 row(s)") && cancel.contains(&format!("pid={pid_a}")),
        "{cancel}"
    );
    // B's session survives a cancel (it runs nothing, it holds the lock): it is terminated.
    let term = ran.step("terminate").unwrap().1;
    assert!(
        term.contains(&format!(
            "pid={pid_b}, state=idle in transaction, terminated=t"
        )),
        "{term}"
    );
    // PostgreSQL says so: A's statement stopped and A is in no long transaction, B is gone,
    // C is still there, the lock is free.
    let a_now = backend(&pg, "long-a");
    eprintln!("A after the run: {a_now:?}");
    assert!(
        a_now.as_ref().is_none_or(|(_, s)| s != "active"),
        "{a_now:?}"
    );
    assert!(backend(&pg, "long-b").is_none());
    assert_eq!(
        backend(&pg, "young-c").map(|b| b.1).as_deref(),
        Some("idle in transaction")
    );
    pg.psql(
        APP_DB,
        "set lock_timeout = '1s'; lock table items in access exclusive mode;",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pg_cancel_long_transactions_never_touches_more_than_max_count() {
    let Some(pg) = Postgres::start() else { return };
    let _s: Vec<Session> = (0..3)
        .map(|i| session(pg.port, &format!("long-{i}"), "BEGIN;\nSELECT 1;\n"))
        .collect();
    for i in 0..3 {
        assert!(wait_state(&pg, &format!("long-{i}"), "idle in transaction"));
    }
    std::thread::sleep(Duration::from_millis(2500));
    let ran = run(
        &shipped("pg-cancel-long-transactions"),
        &[
            format!(
                "pg=host=127.0.0.1 port={} user={SUPERUSER} dbname={APP_DB}",
                pg.port
            ),
            format!("database={APP_DB}"),
            "older_than=2".into(),
            "max_count=1".into(),
            "stop_within=2s".into(),
        ],
        &[("PG_PASSWORD", SUPERUSER_PASSWORD)],
        None,
    )
    .await;
    // One terminated; two left, so the last check times out and the run stops there.
    let term = ran.step("terminate").unwrap().1;
    assert!(term.starts_with("1 row(s)"), "{term}");
    let left = (0..3)
        .filter(|i| backend(&pg, &format!("long-{i}")).is_some())
        .count();
    assert_eq!(left, 2);
    assert_eq!(ran.step("none-left").unwrap().0, StepOutcome::TimedOut);
    assert_eq!(ran.outcome, RunOutcome::Failed);
    // The run stopped there: the gate after it never ran.
    assert!(!ran.started("longest-falls"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn haproxy_batch_restart_restarts_every_server_without_a_failed_request() {
    let triggers = tempfile::tempdir().unwrap();
    let names = ["web1", "web2", "web3"];
    let backends: Vec<Backend> = names
        .iter()
        .map(|n| Backend::start(n, triggers.path(), default_handler(n)))
        .collect();
    let servers: Vec<(&str, u16)> = backends.iter().map(|b| (b.name.as_str(), b.port)).collect();
    let Some(h) = Haproxy::start(&servers, HaproxyOptions::default()) else {
        return;
    };
    for n in names {
        assert!(h.wait_status(n, "UP", Duration::from_secs(10)));
    }
    let Some(prom) = prometheus::start(prometheus::PromOptions {
        targets: vec![h.prometheus_target()],
        ..Default::default()
    }) else {
        return;
    };
    // The restart command: ask the backend to restart and return once it listens again.
    let script = triggers.path().join("restart-server");
    let d = triggers.path().display();
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nrm -f {d}/up-$1\ntouch {d}/restart-$1\ni=0\nwhile [ ! -e {d}/up-$1 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n[ -e {d}/up-$1 ]\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Wait until Prometheus has HAProxy's servers.
    let client = warroom::metrics::prometheus::PrometheusClient::new(
        warroom::metrics::prometheus::ClientOptions::new(prom.url.clone()),
    )
    .unwrap();
    let source: Arc<dyn warroom::metrics::Source> = Arc::new(client);
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let a = source
            .query(warroom::metrics::InstantQuery {
                query: "count(haproxy_server_status{proxy=\"be_app\",state=\"UP\"} == 1)".into(),
                time: None,
            })
            .await;
        if a.is_ok_and(|a| {
            a.series
                .first()
                .and_then(warroom::metrics::Series::last)
                .is_some_and(|p| p.v == 3.0)
        }) {
            break;
        }
        assert!(
            Instant::now() < until,
            "prometheus never saw three servers up"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Traffic through HAProxy all along: every answer counted.
    let stop = Arc::new(AtomicBool::new(false));
    let (ok, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let traffic = {
        let (stop, ok, failed, port) = (stop.clone(), ok.clone(), failed.clone(), h.port);
        std::thread::spawn(move || {
            let end = Instant::now() + Duration::from_secs(120);
            while !stop.load(Ordering::SeqCst) && Instant::now() < end {
                match http_get(port, "/slow?ms=30", Duration::from_secs(5)) {
                    Some((200, _)) => ok.fetch_add(1, Ordering::SeqCst),
                    _ => failed.fetch_add(1, Ordering::SeqCst),
                };
            }
        })
    };
    let ran = run(
        &shipped("haproxy-batch-restart"),
        &[
            "settle=2s".into(),
            format!("haproxy_socket={}", h.socket.display()),
            "backend=be_app".into(),
            format!("restart_command={}", script.display()),
            "soak=2s".into(),
            "healthy_within=20s".into(),
            "drain_within=20s".into(),
            "instance_deadline=60s".into(),
        ],
        &[],
        Some(source),
    )
    .await;
    stop.store(true, Ordering::SeqCst);
    traffic.join().unwrap();
    assert_succeeded(&ran);
    // Every server was restarted exactly once, and is ready and UP again.
    for b in &backends {
        assert_eq!(b.restarts.load(Ordering::SeqCst), 1, "{}", b.name);
        assert_eq!(
            h.stat(&b.name, "status").as_deref(),
            Some("UP"),
            "{}",
            b.name
        );
    }
    let (ok, failed) = (ok.load(Ordering::SeqCst), failed.load(Ordering::SeqCst));
    eprintln!("requests through HAProxy during the restart: {ok} answered 200, {failed} failed");
    assert!(ok > 50, "{ok}");
    assert_eq!(failed, 0, "requests failed during a drained restart");
    // The figure: from the last server made ready to the batch step's end (its gate passed).
    let ready_at = ran
        .records
        .iter()
        .filter(|r| matches!(&r.event, RunEvent::Output { line, .. } if line.ends_with("set server be_app/web3 state ready")))
        .map(|r| r.at)
        .next_back()
        .unwrap();
    let done_at = ran
        .records
        .iter()
        .find(|r| matches!(&r.event, RunEvent::StepFinished { step, .. } if step == "restart"))
        .map(|r| r.at)
        .unwrap();
    eprintln!(
        "from the last server ready to the gate's success: {} ms",
        (done_at - ready_at).num_milliseconds()
    );
}
