//! The real-stack starter itself: each component starts on loopback and answers.

use crate::support::realstack;

use realstack::*;
use std::io::{Read, Write};
use std::time::Duration;

fn psql_tcp(port: u16, user: &str, password: &str, db: &str, sql: &str) -> Result<String, String> {
    let psql = pg_binary("psql").ok_or("no psql")?;
    let out = std::process::Command::new(psql)
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-U",
            user,
            "-d",
            db,
        ])
        .args(["-X", "-A", "-t", "-c", sql])
        .env("PGPASSWORD", password)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn postgres_pgbouncer_and_their_exporters_answer() {
    let Some(pg) = Postgres::start() else { return };
    // Password auth over TCP: the right password works, a wrong one does not.
    assert_eq!(
        psql_tcp(
            pg.port,
            APP_USER,
            APP_PASSWORD,
            APP_DB,
            "select current_user"
        )
        .unwrap(),
        APP_USER
    );
    let wrong = psql_tcp(pg.port, APP_USER, "wrong", APP_DB, "select 1").unwrap_err();
    assert!(wrong.contains("password authentication failed"), "{wrong}");
    assert!(pg.socket_dir.join(format!(".s.PGSQL.{}", pg.port)).exists());

    let Some(bouncer) = PgBouncer::start(
        &pg,
        BouncerOptions {
            default_pool_size: 4,
            ..BouncerOptions::default()
        },
    ) else {
        return;
    };
    assert_eq!(
        psql_tcp(
            bouncer.port,
            APP_USER,
            APP_PASSWORD,
            APP_DB,
            "select 40 + 2"
        )
        .unwrap(),
        "42"
    );
    assert_eq!(
        bouncer.config_value("default_pool_size").as_deref(),
        Some("4")
    );
    assert_eq!(
        bouncer.config_value("pool_mode").as_deref(),
        Some("transaction")
    );
    let pools = bouncer.admin("SHOW POOLS").unwrap();
    assert!(
        pools.lines().any(|l| l.starts_with("appdb|app|")),
        "{pools}"
    );

    let Some(pg_exporter) = Exporter::postgres(&pg) else {
        return;
    };
    let m = pg_exporter.metrics().unwrap();
    assert!(m.lines().any(|l| l == "pg_up 1"), "no pg_up 1");
    let Some(bouncer_exporter) = Exporter::pgbouncer(&bouncer) else {
        return;
    };
    let m = bouncer_exporter.metrics().unwrap();
    let size = m
        .lines()
        .find(|l| {
            l.starts_with("pgbouncer_databases_database_pool_size{")
                && l.contains("database=\"appdb\"")
        })
        .unwrap_or_else(|| panic!("no pool size for appdb in:\n{m}"));
    assert!(size.ends_with(" 4.0") || size.ends_with(" 4"), "{size}");

    // pgbench with a custom script through PgBouncer really runs transactions.
    let Some(bench) = Pgbench::start(
        bouncer.port,
        "select pg_sleep(0.01);\n",
        3,
        Duration::from_secs(1),
    ) else {
        return;
    };
    let out = bench.wait();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tps = Pgbench::tps(&out).expect("a tps figure");
    assert!(tps > 10.0, "tps {tps}");
}

#[test]
fn haproxy_serves_its_backends_and_answers_on_both_sockets() {
    let triggers = tempfile::tempdir().unwrap();
    let web1 = Backend::start("web1", triggers.path(), default_handler("web1"));
    let web2 = Backend::start("web2", triggers.path(), default_handler("web2"));
    let Some(h) = Haproxy::start(
        &[("web1", web1.port), ("web2", web2.port)],
        HaproxyOptions::default(),
    ) else {
        return;
    };
    assert!(h.wait_status("web1", "UP", Duration::from_secs(10)));
    assert!(h.wait_status("web2", "UP", Duration::from_secs(10)));
    let mut names = Vec::new();
    for _ in 0..4 {
        let (status, body) =
            http_get(h.port, "/", Duration::from_secs(5)).expect("frontend answers");
        assert_eq!(status, 200);
        names.push(body.trim().to_string());
    }
    assert!(
        names.contains(&"web1".to_string()) && names.contains(&"web2".to_string()),
        "{names:?}"
    );

    let state = h.runtime("show servers state be_app").unwrap();
    assert!(
        state.lines().filter(|l| l.contains(" be_app ")).count() == 2,
        "{state}"
    );
    // The TCP socket speaks the same API.
    let mut s = std::net::TcpStream::connect(h.stats_addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"show info\n").unwrap();
    let mut info = String::new();
    s.read_to_string(&mut info).unwrap();
    assert!(info.contains("Name: HAProxy"), "{info}");

    let (status, metrics) =
        http_get(h.prometheus_port, "/metrics", Duration::from_secs(5)).unwrap();
    assert_eq!(status, 200);
    assert!(
        metrics.contains("haproxy_server_status{proxy=\"be_app\",server=\"web1\",state=\"UP\"} 1"),
        "no UP status for web1"
    );

    // A restart through the trigger file: the backend goes down, HAProxy sees it, it comes back.
    std::fs::write(triggers.path().join("restart-web1"), "").unwrap();
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while web1.restarts.load(std::sync::atomic::Ordering::SeqCst) == 0
        && std::time::Instant::now() < until
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(web1.restarts.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(h.wait_status("web1", "UP", Duration::from_secs(10)));
}
