//! `sql` steps against a real PostgreSQL and a real PgBouncer (its admin console), started on
//! loopback by the test: rows shown and recorded bounded and masked, conditions, read-only
//! enforcement, timeouts that cancel on the server, and bad input that fails with one line.

use crate::support::realstack;
use crate::support::runbook_run;

use realstack::*;
use runbook_run::run;
use std::time::{Duration, Instant};
use warroom::runbook::report::{RunOutcome, StepOutcome};

const PW_ENV: &str = "WARROOM_TEST_PG_PASSWORD";

/// A runbook with `pg` (a DSN) and `pg_password` (secret, from [`PW_ENV`]) and `steps`.
fn runbook(dsn: &str, steps: &str) -> String {
    format!(
        "name = \"t\"\n[variables]\npg = {{ default = \"{dsn}\" }}\npg_password = {{ secret = true, env = \"{PW_ENV}\" }}\n\n{steps}"
    )
}

fn items(pg: &Postgres) {
    pg.psql(APP_DB, "create table items (name text primary key, size int); insert into items values ('a', 1), ('b', 5), ('c', 9); alter table items owner to app;");
}

/// Each failing step: exactly one line, never a success, the run stops (nothing after it runs).
fn fails_in_one_line(ran: &runbook_run::Ran, id: &str, needle: &str) -> String {
    let (outcome, detail) = ran
        .step(id)
        .unwrap_or_else(|| panic!("{id} did not finish"));
    assert!(
        matches!(outcome, StepOutcome::Failed | StepOutcome::TimedOut),
        "{id}: {outcome:?} {detail}"
    );
    assert!(!detail.contains('\n'), "{detail}");
    assert!(
        detail.contains(needle),
        "{id}: expected {needle:?} in {detail:?}"
    );
    assert_eq!(ran.outcome, RunOutcome::Failed);
    assert!(!ran.started("after"), "a step after the failure ran");
    detail
}

const AFTER: &str = r#"
[[step]]
id = "after"
kind = "sql"
dsn = "{{pg}}"
password = "{{pg_password}}"
statement = "create table touched (x int)"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_are_shown_bounded_and_judged_on_real_postgres() {
    let Some(pg) = Postgres::start() else { return };
    items(&pg);
    let src = runbook(
        &pg.dsn(),
        r#"
[[step]]
id = "read"
kind = "sql"
dsn = "{{pg}}"
password = "{{pg_password}}"
statement = "SELECT name, size FROM items ORDER BY name"
read_only = true
expect = { column = "size", where = { name = "b" }, above = 4 }

[[step]]
id = "count"
kind = "sql"
dsn = "{{pg}}"
password = "{{pg_password}}"
statement = "SELECT name FROM items WHERE size > 2"
read_only = true
expect = { equals = 2 }

[[step]]
id = "grow"
kind = "sql"
dsn = "{{pg}}"
password = "{{pg_password}}"
statement = "UPDATE items SET size = size + 10 WHERE name = 'a'"
"#,
    );
    let ran = run(&src, &[], &[(PW_ENV, APP_PASSWORD)], None).await;
    assert_eq!(ran.outcome, RunOutcome::Succeeded, "{:#?}", ran.events);
    let (o, detail) = ran.step("read").unwrap();
    assert_eq!(o, StepOutcome::Succeeded);
    assert!(detail.contains("condition holds: \"size\" = 5"), "{detail}");
    assert!(detail.ends_with("; 3 row(s)"), "{detail}");
    let table = ran.output("read");
    assert!(
        table.iter().any(|l| l.starts_with("name | size")),
        "{table:?}"
    );
    assert!(table.iter().any(|l| l == "(3 row(s))"), "{table:?}");
    assert!(table.iter().any(|l| l == "b    | 5"), "{table:?}");
    let (_, count) = ran.step("count").unwrap();
    assert!(count.contains("the number of rows = \"2\""), "{count}");
    assert!(ran.step("grow").unwrap().1.contains("1 row(s) affected"));
    // The mutation really happened, once.
    assert_eq!(
        pg.psql(APP_DB, "select size from items where name = 'a'")
            .trim(),
        "11"
    );
    // The password never appears in anything the run showed or recorded.
    assert!(!ran.json().contains(APP_PASSWORD));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_is_enforced_by_the_server() {
    let Some(pg) = Postgres::start() else { return };
    items(&pg);
    let src = runbook(
        &pg.dsn(),
        &format!(
            r#"
[[step]]
id = "sneaky"
kind = "sql"
dsn = "{{{{pg}}}}"
password = "{{{{pg_password}}}}"
statement = "DELETE FROM items"
read_only = true
{AFTER}"#
        ),
    );
    let ran = run(&src, &[], &[(PW_ENV, APP_PASSWORD)], None).await;
    fails_in_one_line(&ran, "sneaky", "read-only transaction");
    assert_eq!(pg.psql(APP_DB, "select count(*) from items").trim(), "3");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgbouncer_console_shows_pools_and_takes_a_new_pool_size() {
    let Some(pg) = Postgres::start() else { return };
    let Some(bouncer) = PgBouncer::start(
        &pg,
        BouncerOptions {
            default_pool_size: 3,
            ..Default::default()
        },
    ) else {
        return;
    };
    let src = runbook(
        &bouncer.admin_dsn(),
        r#"
[variables.size]
default = "17"
type = "number"

[[step]]
id = "pools"
kind = "sql"
dsn = "{{pg}}"
password = "{{pg_password}}"
statement = "SHOW POOLS"
read_only = true
expect = { column = "pool_mode", where = { database = "appdb", user = "app" }, equals = "transaction" }

[[step]]
id = "raise"
kind = "sql"
dsn = "{{pg}}"
password = "{{pg_password}}"
statement = "SET default_pool_size = {{size}}"

[[step]]
id = "confirm"
kind = "sql"
dsn = "{{pg}}"
password = "{{pg_password}}"
statement = "SHOW CONFIG"
read_only = true
expect = { column = "value", where = { key = "default_pool_size" }, equals = "{{size}}" }

[[step]]
id = "not-a-show"
kind = "sql"
dsn = "{{pg}}"
password = "{{pg_password}}"
statement = "RELOAD"
read_only = true
"#,
    );
    // The pool exists once a client used it.
    Pgbench::start(bouncer.port, "select 1;\n", 1, Duration::from_secs(1))
        .unwrap()
        .wait();
    let ran = run(&src, &[], &[(PW_ENV, BOUNCER_ADMIN_PASSWORD)], None).await;
    let (o, d) = ran.step("pools").unwrap();
    assert_eq!(o, StepOutcome::Succeeded, "{d}");
    assert_eq!(ran.step("raise").unwrap().0, StepOutcome::Succeeded);
    assert_eq!(
        ran.step("confirm").unwrap().0,
        StepOutcome::Succeeded,
        "{:?}",
        ran.step("confirm")
    );
    // PgBouncer itself says so, and the read-only "RELOAD" was refused before it was sent (a
    // read-only SET is refused when the runbook loads: see runbook_injection).
    assert_eq!(
        bouncer.config_value("default_pool_size").as_deref(),
        Some("17")
    );
    let (o, d) = ran.step("not-a-show").unwrap();
    assert_eq!(o, StepOutcome::Failed);
    assert!(d.contains("allows only SHOW"), "{d}");
    assert!(!d.contains('\n'));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_fails_with_one_clear_line_and_touches_nothing() {
    let Some(pg) = Postgres::start() else { return };
    items(&pg);
    let nowhere = format!("host=127.0.0.1 port={} user=app dbname=appdb", free_port());
    let cases: Vec<(&str, String, String, &str)> = vec![
        (
            "nowhere",
            nowhere,
            "statement = \"SELECT 1\"\nread_only = true".into(),
            "cannot connect to app@127.0.0.1",
        ),
        (
            "wrong-password",
            pg.dsn(),
            "statement = \"SELECT 1\"\nread_only = true".into(),
            "password authentication failed for user \"app\"",
        ),
        (
            "statement-error",
            pg.dsn(),
            "statement = \"SELEC 1\"\nread_only = true".into(),
            "ERROR 42601: syntax error at or near \"SELEC\"",
        ),
        (
            "no-such-table",
            pg.dsn(),
            "statement = \"SELECT * FROM nope\"\nread_only = true".into(),
            "ERROR 42P01: relation \"nope\" does not exist",
        ),
        (
            "condition",
            pg.dsn(),
            "statement = \"SELECT size FROM items WHERE name = 'c'\"\nread_only = true\nexpect = { column = \"size\", below = 5 }".into(),
            "condition not met: \"size\" = 9, expected it < 5",
        ),
        (
            "no-row",
            pg.dsn(),
            "statement = \"SELECT size FROM items WHERE name = 'zz'\"\nread_only = true\nexpect = { column = \"size\", below = 5 }".into(),
            "inconclusive: no row to judge",
        ),
        (
            "bad-dsn",
            "host=127.0.0.1 port=notaport".into(),
            "statement = \"SELECT 1\"\nread_only = true".into(),
            "does not parse",
        ),
    ];
    for (id, dsn, body, needle) in cases {
        let src = runbook(
            &dsn,
            &format!(
                "[[step]]\nid = \"{id}\"\nkind = \"sql\"\ndsn = \"{{{{pg}}}}\"\npassword = \"{{{{pg_password}}}}\"\n{body}\n{AFTER}"
            ),
        );
        let password = if id == "wrong-password" {
            "not-the-password"
        } else {
            APP_PASSWORD
        };
        let ran = run(&src, &[], &[(PW_ENV, password)], None).await;
        let line = fails_in_one_line(&ran, id, needle);
        assert!(!ran.json().contains(password), "{id}: the password leaked");
        eprintln!("{id}: {line}");
    }
    // Nothing else was touched: the step after each failure never ran.
    assert!(pg.try_psql(APP_DB, "select 1 from touched").is_err());
    assert_eq!(pg.psql(APP_DB, "select count(*) from items").trim(), "3");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_past_its_timeout_is_cancelled_on_the_server() {
    let Some(pg) = Postgres::start() else { return };
    let src = runbook(
        &pg.dsn(),
        &format!(
            r#"
[[step]]
id = "slow"
kind = "sql"
dsn = "{{{{pg}}}}"
password = "{{{{pg_password}}}}"
statement = "SELECT pg_sleep(30)"
read_only = true
statement_timeout = "1s"
deadline = "5s"
{AFTER}"#
        ),
    );
    let started = Instant::now();
    let ran = run(&src, &[], &[(PW_ENV, APP_PASSWORD)], None).await;
    let took = started.elapsed();
    fails_in_one_line(
        &ran,
        "slow",
        "did not finish within 1s; a cancel request was sent",
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
    // The server is not still sleeping for us.
    let still = (0..40).find(|_| {
        let n = pg.psql(
            "postgres",
            "select count(*) from pg_stat_activity where query like '%pg_sleep(30)%' and state = 'active' and pid <> pg_backend_pid()",
        );
        if n.trim() == "0" {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
        false
    });
    assert!(still.is_some(), "the statement kept running on the server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_step_reads_until_its_condition_holds() {
    let Some(pg) = Postgres::start() else { return };
    items(&pg);
    let src = runbook(
        &pg.dsn(),
        r#"
[[step]]
id = "wait-rows"
kind = "sql"
dsn = "{{pg}}"
password = "{{pg_password}}"
statement = "SELECT count(*) AS n FROM items"
read_only = true
expect = { column = "n", above = 4 }
wait = "20s"
interval = "200ms"
"#,
    );
    let socket = pg.socket_dir.clone();
    let port = pg.port;
    let inserter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1200));
        let psql = pg_binary("psql").unwrap();
        std::process::Command::new(psql)
            .arg("-h")
            .arg(&socket)
            .args(["-p", &port.to_string(), "-U", SUPERUSER, "-d", APP_DB, "-c"])
            .arg("insert into items values ('d', 1), ('e', 2)")
            .output()
            .unwrap();
    });
    let started = Instant::now();
    let ran = run(&src, &[], &[(PW_ENV, APP_PASSWORD)], None).await;
    inserter.join().unwrap();
    let (o, d) = ran.step("wait-rows").unwrap();
    assert_eq!(o, StepOutcome::Succeeded, "{d}");
    assert!(d.contains("\"n\" = 5"), "{d}");
    assert!(started.elapsed() >= Duration::from_millis(1200));
    let readings = ran
        .output("wait-rows")
        .iter()
        .filter(|l| l.starts_with("reading "))
        .count();
    assert!(readings >= 2, "{:?}", ran.output("wait-rows"));

    // Never holding, it times out (distinct from failing) with the last value.
    let src = src
        .replace("above = 4", "above = 100")
        .replace("\"20s\"", "\"1s\"");
    let ran = run(&src, &[], &[(PW_ENV, APP_PASSWORD)], None).await;
    let (o, d) = ran.step("wait-rows").unwrap();
    assert_eq!(o, StepOutcome::TimedOut, "{d}");
    assert!(
        d.contains("condition still not met after 1s: \"n\" = 5"),
        "{d}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_file_must_be_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let Some(pg) = Postgres::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pg.pass");
    std::fs::write(&file, format!("{APP_PASSWORD}\n")).unwrap();
    let src = format!(
        "name = \"t\"\n[[step]]\nid = \"read\"\nkind = \"sql\"\ndsn = \"{}\"\npassword_file = \"{}\"\nstatement = \"SELECT current_user AS who\"\nread_only = true\nexpect = {{ column = \"who\", equals = \"app\" }}\n",
        pg.dsn(),
        file.display()
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let ran = run(&src, &[], &[], None).await;
    let (o, d) = ran.step("read").unwrap();
    assert_eq!(o, StepOutcome::Failed);
    assert!(d.contains("chmod 600"), "{d}");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let ran = run(&src, &[], &[], None).await;
    assert_eq!(
        ran.step("read").unwrap().0,
        StepOutcome::Succeeded,
        "{:?}",
        ran.step("read")
    );
    assert!(!ran.json().contains(APP_PASSWORD));
}
