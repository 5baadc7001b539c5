//! The cost of a `sql` and an `haproxy` step on loopback, against the real components
//! (PostgreSQL, PgBouncer's console, HAProxy's runtime API) started as the tests start them:
//! each step run through the executor, end to end (render, connect, authenticate, send, read,
//! judge, record in memory), timed one by one; median and p99. The bare protocol exchange is
//! timed beside it, so the executor's share shows. Prints figure lines for `benches/all.sh`.
//! Skips (with a line) where a component is not installed.

#[path = "support/figure.rs"]
mod figure;
#[path = "../tests/support/prometheus.rs"]
pub mod prometheus;
#[path = "../tests/support/realstack.rs"]
mod realstack;
#[path = "../tests/support/skip.rs"]
mod skip;

use realstack::*;
use std::sync::Arc;
use std::time::{Duration, Instant};
use warroom::runbook::executor::{Control, Executor};
use warroom::runbook::operator::AssumeYes;
use warroom::runbook::report::{MemoryIntents, MemorySink, RunOutcome};
use warroom::runbook::{haproxy, http, load, sql, vars};

const RUNS: usize = 300;

fn quantiles(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (figure::quantile(&v, 0.5), figure::quantile(&v, 0.99))
}

fn executor(src: &str, env: &[(&str, &str)]) -> Executor {
    let rb = load::parse("bench.toml", std::path::Path::new("bench.toml"), src).unwrap();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Executor {
        vars: vars::resolve(&rb, &[], |k| {
            env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
        })
        .unwrap(),
        runbook: rb,
        source: None,
        sender: http::Sender::new(
            warroom::backoff::Backoff::default(),
            http::run_retry_budget(),
        )
        .unwrap(),
        sink: Arc::new(MemorySink::default()),
        intents: Arc::new(MemoryIntents::default()),
        operator: Arc::new(AssumeYes),
        control: tokio::sync::watch::channel(Control::Run).1,
        clock: Arc::new(warroom::clock::WallClock),
        run_id: "bench".into(),
        dry_run: false,
    }
}

/// Time `RUNS` runs of a one-step runbook; ms.
fn time_steps(rt: &tokio::runtime::Runtime, name: &str, src: &str, env: &[(&str, &str)]) {
    let exec = executor(src, env);
    let mut v = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        let outcome = rt.block_on(exec.run());
        v.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(outcome, RunOutcome::Succeeded, "{name}");
    }
    let (p50, p99) = quantiles(v);
    println!("{name:<48} median {p50:>7.3} ms   p99 {p99:>7.3} ms");
    figure::report(
        &format!("{name} step, median"),
        p50,
        "ms",
        figure::Target::Under(50.0),
    );
    figure::report(
        &format!("{name} step, p99"),
        p99,
        "ms",
        figure::Target::Under(200.0),
    );
}

fn time_bare(name: &str, mut f: impl FnMut()) {
    let mut v = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        f();
        v.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let (p50, p99) = quantiles(v);
    println!("{name:<48} median {p50:>7.3} ms   p99 {p99:>7.3} ms");
    figure::report(name, p50, "ms", figure::Target::None);
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let Some(pg) = Postgres::start() else { return };
    let Some(b) = PgBouncer::start(&pg, BouncerOptions::default()) else {
        return;
    };
    let sql_step = |dsn: &str, statement: &str| {
        format!(
            "name = \"bench\"\n[variables]\npw = {{ secret = true, env = \"PW\" }}\n[[step]]\nid = \"q\"\nkind = \"sql\"\ndsn = \"{dsn}\"\npassword = \"{{{{pw}}}}\"\nstatement = \"{statement}\"\nread_only = true\n"
        )
    };
    time_steps(
        &rt,
        "sql SELECT 1 on PostgreSQL (connect, SCRAM)",
        &sql_step(&pg.dsn(), "SELECT 1"),
        &[("PW", APP_PASSWORD)],
    );
    time_steps(
        &rt,
        "sql SHOW POOLS on PgBouncer's console",
        &format!(
            "{}expect = {{ column = \"pool_mode\", where = {{ database = \"pgbouncer\" }}, equals = \"statement\" }}\n",
            sql_step(&b.admin_dsn(), "SHOW POOLS")
        ),
        &[("PW", BOUNCER_ADMIN_PASSWORD)],
    );
    let target =
        sql::Target::new(&pg.dsn(), Some(warroom::secret::Secret::new(APP_PASSWORD))).unwrap();
    time_bare("bare: tokio-postgres connect + SELECT 1", || {
        rt.block_on(sql::run(
            &target,
            "SELECT 1",
            false,
            Duration::from_secs(5),
            Duration::from_secs(5),
        ))
        .unwrap();
    });

    let triggers = tempfile::tempdir().unwrap();
    let web = Backend::start("web1", triggers.path(), default_handler("web1"));
    let Some(h) = Haproxy::start(&[("web1", web.port)], HaproxyOptions::default()) else {
        return;
    };
    let hap = |body: &str| {
        format!(
            "name = \"bench\"\n[[step]]\nid = \"h\"\nkind = \"haproxy\"\nsocket = \"{}\"\n{body}\n",
            h.socket.display()
        )
    };
    time_steps(
        &rt,
        "haproxy set server weight (unix socket)",
        &hap("server = \"be_app/web1\"\nweight = 7"),
        &[],
    );
    time_steps(
        &rt,
        "haproxy show stat + condition (unix socket)",
        &hap(
            "show = \"stat\"\nexpect = { column = \"status\", where = { svname = \"web1\" }, equals = \"UP\" }",
        ),
        &[],
    );
    let tcp = format!(
        "name = \"bench\"\n[[step]]\nid = \"h\"\nkind = \"haproxy\"\nsocket = \"{}\"\nserver = \"be_app/web1\"\nweight = 7\n",
        h.stats_addr()
    );
    time_steps(&rt, "haproxy set server weight (TCP socket)", &tcp, &[]);
    let socket = haproxy::Socket::parse(&h.socket.display().to_string()).unwrap();
    time_bare("bare: runtime API set server weight (unix)", || {
        rt.block_on(haproxy::set(
            &socket,
            "set server be_app/web1 weight 7",
            Duration::from_secs(5),
        ))
        .unwrap();
    });
}
