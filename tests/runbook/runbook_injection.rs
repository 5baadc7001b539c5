//! Variables never become code: a value given with `--var` lands in a SQL statement, a PromQL
//! gate or a `sh -c` script quoted by that language's own rules, and a `read_only` statement
//! is enforced by PostgreSQL itself. Each attack is the hostile tester's reproduction, run on
//! the real component (PostgreSQL, Prometheus, /bin/sh).

use crate::support::realstack::*;
use crate::support::runbook_run::{Ran, run};
use crate::support::{prometheus, runbook_run};

use std::sync::Arc;
use warroom::metrics::prometheus::{ClientOptions, PrometheusClient};
use warroom::runbook::report::{RunOutcome, StepOutcome};

const PW_ENV: &str = "WARROOM_TEST_PG_PASSWORD";
const DROP_VICTIM: &str = "x'; COMMIT; DROP TABLE victim; --";

fn sql_runbook(dsn: &str, steps: &str) -> String {
    format!(
        "name = \"sqlinj\"\n[variables]\npg = {{ default = \"{dsn}\" }}\npg_password = {{ secret = true, env = \"{PW_ENV}\" }}\nname = {{ default = \"a\" }}\n\n{steps}"
    )
}

fn victim(pg: &Postgres) {
    pg.psql(
        APP_DB,
        "create table victim (id int); insert into victim values (1); alter table victim owner to app; \
         create table items (name text); insert into items values ('a'), ('b'); alter table items owner to app;",
    );
}

fn outcome(ran: &Ran, id: &str) -> (StepOutcome, String) {
    ran.step(id)
        .unwrap_or_else(|| panic!("{id} did not finish: {}", ran.json()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_injected_variable_stays_a_value_in_read_only_and_mutating_statements() {
    let Some(pg) = Postgres::start() else { return };
    victim(&pg);
    let src = sql_runbook(
        &pg.dsn(),
        r#"
[[step]]
id = "look"
kind = "sql"
dsn = "{{pg}}"
password = "{{pg_password}}"
statement = "SELECT count(*) AS n FROM items WHERE name = '{{name}}'"
read_only = true
expect = { column = "n", equals = 0 }

[[step]]
id = "remove"
kind = "sql"
dsn = "{{pg}}"
password = "{{pg_password}}"
statement = "DELETE FROM items WHERE name = '{{name}}'"
"#,
    );
    let ran = run(
        &src,
        &[format!("name={DROP_VICTIM}")],
        &[(PW_ENV, APP_PASSWORD)],
        None,
    )
    .await;
    assert_eq!(
        outcome(&ran, "look").0,
        StepOutcome::Succeeded,
        "{}",
        ran.json()
    );
    assert_eq!(
        outcome(&ran, "remove").0,
        StepOutcome::Succeeded,
        "{}",
        ran.json()
    );
    assert_eq!(ran.outcome, RunOutcome::Succeeded);
    // The table is still there, and nothing matched the hostile name.
    assert_eq!(pg.psql(APP_DB, "select count(*) from victim").trim(), "1");
    assert_eq!(pg.psql(APP_DB, "select count(*) from items").trim(), "2");
    // The same runbook with an ordinary value deletes what it names: the quoting is not
    // what kept the rows.
    let ran = run(&src, &["name=a".into()], &[(PW_ENV, APP_PASSWORD)], None).await;
    assert_eq!(
        outcome(&ran, "look").0,
        StepOutcome::Failed,
        "{}",
        ran.json()
    );
    assert_eq!(pg.psql(APP_DB, "select count(*) from items").trim(), "2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_variable_that_is_not_a_number_is_refused_before_anything_runs() {
    let Some(pg) = Postgres::start() else { return };
    victim(&pg);
    let src = format!(
        "name = \"t\"\n[variables]\npg = {{ default = \"{}\" }}\npg_password = {{ secret = true, env = \"{PW_ENV}\" }}\nn = {{ default = \"1\", type = \"number\" }}\n\n[[step]]\nid = \"limited\"\nkind = \"sql\"\ndsn = \"{{{{pg}}}}\"\npassword = \"{{{{pg_password}}}}\"\nstatement = \"SELECT name FROM items LIMIT {{{{n}}}}\"\nread_only = true\n",
        pg.dsn()
    );
    let ran = run(&src, &["n=2".into()], &[(PW_ENV, APP_PASSWORD)], None).await;
    assert_eq!(
        outcome(&ran, "limited").0,
        StepOutcome::Succeeded,
        "{}",
        ran.json()
    );
    // A typed number variable given a non-number is refused when the variables resolve; the
    // render refuses it too (defence in depth), shown here through the template itself.
    let rb = runbook_run::parse(&src);
    let warroom::runbook::model::StepKind::Sql(spec) = &rb.steps[0].kind else {
        panic!("not a sql step")
    };
    let values = [("n".to_string(), "1; DROP TABLE victim".to_string())].into();
    let err = spec
        .statement
        .render(&values, None, warroom::runbook::template::Context::Sql)
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"n\"") && err.contains("bare"), "{err}");
    assert!(!err.contains("DROP"), "the value is not quoted back: {err}");
    assert_eq!(pg.psql(APP_DB, "select count(*) from victim").trim(), "1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_step_cannot_write_even_when_it_ends_its_transaction() {
    let Some(pg) = Postgres::start() else { return };
    victim(&pg);
    // `COMMIT` alone is one command: it ends the read-only transaction and nothing follows
    // it; the write the hostile tester chained after it cannot be written in one statement.
    let src = sql_runbook(
        &pg.dsn(),
        r#"
[[step]]
id = "sneaky"
kind = "sql"
dsn = "{{pg}}"
password = "{{pg_password}}"
statement = "WITH gone AS (DELETE FROM victim RETURNING id) SELECT count(*) FROM gone"
read_only = true
"#,
    );
    let ran = run(&src, &[], &[(PW_ENV, APP_PASSWORD)], None).await;
    let (o, detail) = outcome(&ran, "sneaky");
    assert_eq!(o, StepOutcome::Failed, "{detail}");
    assert!(detail.contains("read-only transaction"), "{detail}");
    assert_eq!(pg.psql(APP_DB, "select count(*) from victim").trim(), "1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_injected_promql_value_cannot_make_a_gate_pass() {
    let Some(prom) = prometheus::start(prometheus::PromOptions::default()) else {
        return;
    };
    let source = Arc::new(PrometheusClient::new(ClientOptions::new(prom.url.clone())).unwrap());
    let src = r#"
name = "promqlinj"
[variables]
job = { default = "api" }

[[step]]
id = "echo"
kind = "check"
gate = { query = 'count(label_replace(vector(1), "job", "{{job}}", "", ""))', above = 0 }

[[step]]
id = "serving"
kind = "check"
gate = { query = 'sum(up{job="{{job}}"})', above = 0 }

[[step]]
id = "regex"
kind = "check"
gate = { query = 'count(up{job=~"{{job}}"} or label_replace(vector(1), "job", "{{job}}", "", "") > 0)', above = 0 }
"#;
    for hostile in [
        "no-such-job\"}) or vector(1) #",
        "no-such-job\\\"}) or vector(1) #",
    ] {
        let ran = run(
            src,
            &[format!("job={hostile}")],
            &[],
            Some(source.clone() as Arc<dyn warroom::metrics::Source>),
        )
        .await;
        // The value reached Prometheus as a string: the first gate reads it back as a label.
        assert_eq!(
            outcome(&ran, "echo").0,
            StepOutcome::Succeeded,
            "{}",
            ran.json()
        );
        let (o, detail) = outcome(&ran, "serving");
        assert_ne!(o, StepOutcome::Succeeded, "{hostile}: {detail}");
        assert_ne!(ran.outcome, RunOutcome::Succeeded);
    }
}

/// Regex metacharacters are escaped as Go's RE2 takes them: Prometheus parses the query, and
/// the value matches only itself (no series here has that job, so the count is 0, where `.*`
/// unescaped would have been a valid regex matching anything).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_regex_value_is_escaped_as_prometheus_parses_it() {
    let Some(prom) = prometheus::start(prometheus::PromOptions::default()) else {
        return;
    };
    let source = Arc::new(PrometheusClient::new(ClientOptions::new(prom.url.clone())).unwrap());
    let src = r#"
name = "regexinj"
[variables]
job = { default = "api" }

[[step]]
id = "parsed"
kind = "check"
gate = { query = 'count(up{job=~"{{job}}"}) or vector(0)', below = 0.5 }

[[step]]
id = "raw"
kind = "check"
gate = { query = 'count(up{job!~`{{job}}`}) or vector(0)', below = 0.5 }
"#;
    let hostile = r"a.b*c+d?(e)|[f]{2}^$\#&-~/ '";
    let ran = run(
        src,
        &[format!("job={hostile}")],
        &[],
        Some(source as Arc<dyn warroom::metrics::Source>),
    )
    .await;
    assert_eq!(
        outcome(&ran, "parsed").0,
        StepOutcome::Succeeded,
        "{}",
        ran.json()
    );
    assert_eq!(
        outcome(&ran, "raw").0,
        StepOutcome::Succeeded,
        "{}",
        ran.json()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_script_gets_its_values_as_words() {
    let dir = tempfile::tempdir().unwrap();
    let pwned = dir.path().join("pwned");
    let src = r#"
name = "shinj"
[variables]
name = { default = "a" }

[[step]]
id = "bare"
kind = "exec"
argv = ["sh", "-c", "printf '%s|' {{name}}"]

[[step]]
id = "double"
kind = "exec"
argv = ["/bin/sh", "-ec", "printf '%s|' \"{{name}}\" \"$(printf %s {{name}})\""]

[[step]]
id = "single"
kind = "exec"
argv = ["sh", "-c", "printf '%s|' '{{name}}'"]
"#;
    let hostile = format!(
        "x'; touch {p}; echo \"$(touch {p})\" `touch {p}` '",
        p = pwned.display()
    );
    let ran = run(src, &[format!("name={hostile}")], &[], None).await;
    for id in ["bare", "double", "single"] {
        assert_eq!(
            outcome(&ran, id).0,
            StepOutcome::Succeeded,
            "{id}: {}",
            ran.json()
        );
        let out = ran.output(id).join("\n");
        assert!(
            out.contains(&format!("{hostile}|")),
            "{id}: the value is one word, as given: {out:?}"
        );
    }
    assert!(!pwned.exists(), "a value ran as a command");
}

/// The hostile tester's reproduction as a user types it: `warroom runbook run sqlinj --var
/// "name=x'; COMMIT; DROP TABLE victim; --" --yes`, with the log at debug level. The table
/// stays; the secret that the statement carries appears nowhere: not in the log (where the
/// PostgreSQL driver writes each statement at debug level), the run's records or the output.
#[test]
fn the_cli_run_keeps_the_table_and_logs_no_statement_secret() {
    let Some(pg) = Postgres::start() else { return };
    victim(&pg);
    let dir = tempfile::tempdir().unwrap();
    let books = dir.path().join("runbooks");
    std::fs::create_dir_all(&books).unwrap();
    // The secret is the real password: the login must succeed for the statement to run.
    let canary = APP_PASSWORD;
    let src = sql_runbook(
        &pg.dsn(),
        r#"
[[step]]
id = "look"
kind = "sql"
dsn = "{{pg}}"
password = "{{pg_password}}"
statement = "SELECT count(*) AS n FROM items WHERE name = '{{name}}' AND '{{pg_password}}' <> ''"
read_only = true
"#,
    );
    std::fs::write(books.join("sqlinj.toml"), src).unwrap();
    std::fs::write(dir.path().join("empty.toml"), "").unwrap();
    let log = dir.path().join("warroom.log");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_warroom"))
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("--config")
        .arg(dir.path().join("empty.toml"))
        .arg("--log-file")
        .arg(&log)
        .args(["runbook", "run", "sqlinj", "--yes", "--runbooks"])
        .arg(&books)
        .args(["--var", &format!("name={DROP_VICTIM}")])
        .env("WARROOM_LOG_LEVEL", "debug")
        .env(PW_ENV, canary)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run warroom");
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{shown}");
    assert!(!shown.contains(canary), "{shown}");
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        logged.contains("run finished"),
        "the log was not written:\n{logged}"
    );
    assert!(
        !logged.contains(canary),
        "the log holds the secret:\n{logged}"
    );
    let mut recorded = String::new();
    let files = walk(&dir.path().join("data"));
    assert!(
        files.iter().any(|f| f.to_string_lossy().contains("sqlinj")),
        "no run file: {files:?}"
    );
    for f in files {
        recorded += &std::fs::read_to_string(&f).unwrap_or_default();
        if f.to_string_lossy().contains("sqlinj") {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{} is mode {mode:o}", f.display());
        }
    }
    assert!(!recorded.contains(canary), "a run record holds the secret");
    assert_eq!(pg.psql(APP_DB, "select count(*) from victim").trim(), "1");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
