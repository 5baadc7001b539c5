//! Bad input for the shipped real-system runbooks, as an operator gets it wrong: a DSN that
//! points nowhere, a wrong password, a socket that is not HAProxy's, a backend that does not
//! exist. Each time the first step that meets it fails with one clear line, and nothing after
//! it runs: no pool is resized, no session signalled, no server drained or restarted.

use crate::runbook_real::shipped;
use crate::support::realstack::*;
use crate::support::runbook_run::{Ran, run};

use warroom::runbook::report::{RunOutcome, StepOutcome};

/// The run failed at `step` with a one-line detail holding `want`; no later step started.
fn failed_at(ran: &Ran, step: &str, later: &[&str], want: &[&str]) -> String {
    assert_eq!(ran.outcome, RunOutcome::Failed);
    let (outcome, detail) = ran.step(step).unwrap_or_else(|| panic!("{step} ran"));
    assert_eq!(outcome, StepOutcome::Failed, "{step}: {detail}");
    assert!(!detail.contains('\n'), "one line: {detail:?}");
    for w in want {
        assert!(detail.contains(w), "{step}: {detail:?} lacks {w:?}");
    }
    for l in later {
        assert!(!ran.started(l), "{l} started after {step} failed");
    }
    eprintln!("{step}: {detail}");
    detail
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgbouncer_raise_pool_with_a_dsn_pointing_nowhere_resizes_nothing() {
    let port = free_port();
    let ran = run(
        &shipped("pgbouncer-raise-pool"),
        &[format!(
            "pgbouncer_admin=host=127.0.0.1 port={port} user=pgbouncer dbname=pgbouncer"
        )],
        &[("PGBOUNCER_ADMIN_PASSWORD", "whatever")],
        None,
    )
    .await;
    failed_at(
        &ran,
        "saturated",
        &["raise", "applied"],
        &[&format!("127.0.0.1:{port}")],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_password_fails_the_first_statement_and_nothing_is_signalled() {
    let Some(pg) = Postgres::start() else { return };
    let Some(b) = PgBouncer::start(&pg, BouncerOptions::default()) else {
        return;
    };
    let ran = run(
        &shipped("pgbouncer-raise-pool"),
        &[format!("pgbouncer_admin={}", b.admin_dsn())],
        &[("PGBOUNCER_ADMIN_PASSWORD", "not-the-password")],
        None,
    )
    .await;
    let d = failed_at(
        &ran,
        "saturated",
        &["raise"],
        &["authentication failed", "the login was refused"],
    );
    assert!(!d.contains("not-the-password"), "{d}");
    assert_eq!(b.config_value("default_pool_size").as_deref(), Some("5"));

    // The same wrong password on PostgreSQL: no session is looked at or signalled.
    let ran = run(
        &shipped("pg-cancel-long-transactions"),
        &[format!(
            "pg=host=127.0.0.1 port={} user={SUPERUSER} dbname={APP_DB}",
            pg.port
        )],
        &[("PG_PASSWORD", "not-the-password")],
        None,
    )
    .await;
    let d = failed_at(
        &ran,
        "found",
        &["cancel", "terminate"],
        &["password authentication failed", "the login was refused"],
    );
    assert!(!ran.json().contains("not-the-password"), "{d}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn haproxy_batch_restart_on_a_socket_that_is_not_haproxys_drains_nothing() {
    // A unix socket that answers like something else.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("not-haproxy.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let answering = std::thread::spawn(move || {
        use std::io::{Read, Write};
        for _ in 0..3 {
            let Ok((mut s, _)) = listener.accept() else {
                return;
            };
            let mut buf = [0u8; 256];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        }
    });
    let script = dir.path().join("restart-server");
    let marker = dir.path().join("restarted");
    std::fs::write(&script, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ran = run(
        &shipped("haproxy-batch-restart"),
        &[
            format!("haproxy_socket={}", path.display()),
            format!("restart_command={}", script.display()),
        ],
        &[],
        None,
    )
    .await;
    failed_at(&ran, "all-up", &["restart"], &["not-haproxy.sock"]);
    assert!(!marker.exists(), "the restart command ran");
    drop(answering);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn haproxy_batch_restart_of_a_backend_that_does_not_exist_restarts_nothing() {
    let triggers = tempfile::tempdir().unwrap();
    let web = Backend::start("web1", triggers.path(), default_handler("web1"));
    let Some(h) = Haproxy::start(&[("web1", web.port)], HaproxyOptions::default()) else {
        return;
    };
    assert!(h.wait_status("web1", "UP", std::time::Duration::from_secs(10)));
    let marker = triggers.path().join("restarted");
    let script = triggers.path().join("restart-server");
    std::fs::write(&script, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ran = run(
        &shipped("haproxy-batch-restart"),
        &[
            format!("haproxy_socket={}", h.socket.display()),
            "backend=be_nope".into(),
            format!("restart_command={}", script.display()),
        ],
        &[],
        None,
    )
    .await;
    failed_at(
        &ran,
        "all-up",
        &["restart"],
        &["no row where pxname = \"be_nope\""],
    );
    assert!(!marker.exists(), "the restart command ran");
    assert_eq!(h.stat("web1", "status").as_deref(), Some("UP"));
}
