//! One real incident, end to end, keys and screen only. Three app instances behind HAProxy
//! (with `retries`) answer users with a real query through PgBouncer to PostgreSQL; a
//! Prometheus scrapes postgres_exporter, the PgBouncer exporter and HAProxy. The fault is made
//! for real: a migration's transaction takes an ACCESS EXCLUSIVE lock on the table every
//! request reads and stays open. The app's queries queue behind it and fail at the role's
//! `lock_timeout`, PgBouncer's pool fills. `warroom open --prometheus URL` (a config with no
//! `[[panel]]`: only the refresh and `[runbooks.vars]`) discovers the stacks and shows the
//! pool's saturation and the 5xx ratio from the presets; the operator opens the runbook pane,
//! runs the shipped `pg-cancel-long-transactions` with its typed confirmations, the lock goes
//! and the service recovers, as the app instances' own counts say; the incident is resolved and
//! exported with `E`. Then: the journal holds every step with its outcome, and the draft's
//! impact window is the one the app instances measured, within a few scrape intervals.

use crate::support::app_instances::{self, App, HeldTransaction, Sampler, Users};
use crate::support::journey::{self, Journey};
use crate::support::realstack::{self, prometheus};
use crate::support::tmux;

use chrono::{DateTime, Utc};
use std::time::{Duration, SystemTime};
use warroom::incident::Event;
use warroom::incident::event::StepState;

/// The steps of `pg-cancel-long-transactions`, in order.
const STEPS: [&str; 6] = [
    "found",
    "cancel",
    "stopped",
    "terminate",
    "none-left",
    "longest-falls",
];
/// The discovered panels the operator reads.
const SATURATION: &str = "PgBouncer pool saturation";
const ERRORS: &str = "HAProxy backend 5xx ratio";
/// How far the draft's impact window may be from the measured one: a few scrape intervals
/// (1 s) and the console's refresh (1 s).
const TOLERANCE_S: f64 = 5.0;

fn utc(t: SystemTime) -> DateTime<Utc> {
    DateTime::<Utc>::from(t)
}

/// The number before `%` in a panel's headline (`1.4% ▲ WARN`).
fn percent(headline: &str) -> Option<f64> {
    headline.split('%').next()?.trim().parse().ok()
}

#[test]
fn a_lock_held_by_a_migration_is_found_and_ended_from_the_runbook_pane() {
    let Some(pg) = realstack::Postgres::start() else {
        return;
    };
    if prometheus::require_binary("tmux").is_none() {
        return;
    }
    pg.psql(
        realstack::APP_DB,
        "create table items (id int primary key, name text); insert into items select g, 'item ' || g from generate_series(1, 100) g; alter table items owner to app;",
    );
    // The app's role gives up on a lock after a second (its queries fail rather than hang).
    pg.psql("postgres", "alter role app set lock_timeout = '1s'");
    let Some(bouncer) = realstack::PgBouncer::start(
        &pg,
        realstack::BouncerOptions {
            default_pool_size: 4,
            ..Default::default()
        },
    ) else {
        return;
    };
    let Some(pg_exporter) = realstack::Exporter::postgres(&pg) else {
        return;
    };
    let Some(b_exporter) = realstack::Exporter::pgbouncer(&bouncer) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let apps: Vec<App> = ["app1", "app2", "app3"]
        .iter()
        .map(|n| App::start(n, &bouncer.dsn(), dir.path()))
        .collect();
    let servers: Vec<(&str, u16)> = apps
        .iter()
        .map(|a| (a.backend.name.as_str(), a.backend.port))
        .collect();
    let Some(haproxy) = realstack::Haproxy::start(&servers, realstack::HaproxyOptions::default())
    else {
        return;
    };
    for (name, _) in &servers {
        assert!(haproxy.wait_status(name, "UP", Duration::from_secs(10)));
    }
    let Some(prom) = prometheus::start(prometheus::PromOptions {
        targets: vec![
            pg_exporter.target(),
            b_exporter.target(),
            haproxy.prometheus_target(),
        ],
        ..Default::default()
    }) else {
        return;
    };
    // Users from now on (bounded), and the instances' own counts every 100 ms. Twice as many
    // users as PgBouncer has server connections: during the fault clients queue for the pool,
    // so it stays full until the lock goes (with as many users as connections, a user between
    // two requests leaves a connection free and the pool reads 75 % while every request fails).
    let users = Users::start(
        haproxy.port,
        8,
        Duration::from_millis(30),
        Duration::from_secs(400),
    );
    let sampler = Sampler::start(
        apps.iter().map(|a| a.counts.clone()).collect(),
        Duration::from_secs(400),
    );

    // The console: no panels configured, the runbooks pointed at this PostgreSQL, the
    // superuser's password from the environment.
    std::fs::write(
        dir.path().join("warroom.toml"),
        format!(
            "refresh = \"1s\"\n\n[runbooks.vars]\npg = \"host=127.0.0.1 port={} user={} dbname={}\"\ndatabase = \"{}\"\nolder_than = \"5\"\nstop_within = \"5s\"\ninterval = \"1s\"\n",
            pg.port,
            realstack::SUPERUSER,
            realstack::APP_DB,
            realstack::APP_DB
        ),
    )
    .unwrap();
    let command = format!(
        "env PG_PASSWORD={} {}",
        realstack::SUPERUSER_PASSWORD,
        journey::console_command(
            dir.path(),
            &format!("open --title \"Orders failing\" --prometheus {}", prom.url)
        )
    );
    let Some(term) = tmux::Tmux::start(&command, 200, 60) else {
        return;
    };
    let j = Journey::new(term, dir.path());
    j.wait(
        "the pool and 5xx panels live",
        Duration::from_secs(60),
        |s| {
            journey::panel_headline(s, SATURATION).is_some_and(|h| percent(&h).is_some())
                && journey::panel_headline(s, ERRORS).is_some_and(|h| percent(&h).is_some())
        },
    );
    j.keys(&["t"]);
    // A quarter of a minute of normal service first.
    std::thread::sleep(Duration::from_secs(15));

    // The fault: a migration's transaction locks the table and stays open.
    let fault_at = SystemTime::now();
    let _migration = HeldTransaction::start(
        &pg,
        "migration",
        "BEGIN;\nLOCK TABLE items IN ACCESS EXCLUSIVE MODE;\n",
    );
    j.wait(
        "the pool-saturation panel to turn critical",
        Duration::from_secs(30),
        |s| journey::panel_headline(s, SATURATION).is_some_and(|h| h.ends_with("▲ CRIT")),
    );
    // The operator watches the errors climb on the preset's 5xx ratio (5-minute rates: the
    // share grows with the fault's length) until they pass its warning level of 1 %.
    let errors = j.wait(
        "the 5xx ratio past its warning level",
        Duration::from_secs(80),
        |s| journey::panel_headline(s, ERRORS).is_some_and(|h| h.ends_with("WARN")),
    );
    eprintln!(
        "5xx ratio shown during the fault: {:?}",
        journey::panel_headline(&errors, ERRORS)
    );
    // The transaction must be older than the runbook's 5 s; the fault lasts 12 s in all, as
    // long as on a slow CI machine, so the draft is compared on a fault of the same length.
    let age = fault_at.elapsed().unwrap_or_default();
    std::thread::sleep(Duration::from_secs(12).saturating_sub(age));

    // The runbook pane: pg-cancel-long-transactions, its plan, its confirmations.
    j.keys(&["b"]);
    j.expect("pg-cancel-long-transactions", Duration::from_secs(10));
    for _ in 0..journey::position_in_list("pg-cancel-long-transactions", false) {
        j.keys(&["j"]);
    }
    j.keys(&["Enter"]);
    j.expect(
        "Plan · pg-cancel-long-transactions",
        Duration::from_secs(20),
    );
    let plan = j.wait("the plan's statements", Duration::from_secs(20), |s| {
        s.contains("pg_cancel_backend")
    });
    assert!(
        !plan.contains(realstack::SUPERUSER_PASSWORD),
        "the password on the screen:\n{plan}"
    );
    j.keys(&["x"]);
    j.expect(
        "Run runbook \"pg-cancel-long-transactions\"?",
        Duration::from_secs(10),
    );
    j.text("pg-cancel-long-transactions");
    j.keys(&["Enter"]);
    let end = j.run_to_the_end("pg-cancel-long-transactions", Duration::from_secs(120), 4);
    for step in STEPS {
        assert!(
            end.contains(&format!("✓ {step}")),
            "step {step} did not succeed:\n{end}"
        );
    }
    j.keys(&["Escape"]);
    j.keys(&["Escape"]);
    j.wait("the runbook pane to close", Duration::from_secs(10), |s| {
        !s.contains("Run · pg-cancel-long-transactions")
    });
    // The console records the recovery once the value has stayed back for a minute.
    // (The timeline pane wraps its rows: "crit" may start the next line.)
    let below = format!("{SATURATION} fell below");
    j.wait(
        &format!("{below} crit on the timeline"),
        Duration::from_secs(90),
        |s| {
            let lines: Vec<&str> = s.lines().collect();
            (0..lines.len()).any(|i| {
                lines[i].contains(&format!("{below} crit"))
                    || (lines[i].contains(&below)
                        && lines.get(i + 1).is_some_and(|n| n.contains("│crit ")))
            })
        },
    );
    j.wait(
        "the pool panel back to normal",
        Duration::from_secs(20),
        |s| journey::panel_headline(s, SATURATION).is_some_and(|h| !h.ends_with("CRIT")),
    );
    // The impact ends when the error ratio's fall is recorded (after its own settling minute,
    // which may come after the pool's): resolving and exporting before it would leave the
    // draft without an end.
    let id = journey::only_incident(dir.path());
    let errors_fell = |records: &[warroom::incident::Record]| {
        records.iter().any(|r| {
            matches!(&r.kind, Event::ThresholdCrossed { panel, direction, .. }
                if panel == ERRORS && *direction == warroom::incident::event::Direction::Down)
        })
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while !errors_fell(&journey::timeline(dir.path(), &id)) {
        assert!(
            std::time::Instant::now() < deadline,
            "the error ratio's fall was never recorded; the console's log:\n{}",
            j.log_tail()
        );
        std::thread::sleep(Duration::from_secs(2));
    }

    // Resolve, export, quit.
    j.keys(&["s"]);
    j.expect("Incident status", Duration::from_secs(10));
    j.keys(&["Up"]);
    j.wait("resolved to be selected", Duration::from_secs(5), |s| {
        s.contains("▸ resolved")
    });
    j.keys(&["Enter"]);
    j.expect("Status: resolved", Duration::from_secs(10));
    j.keys(&["E"]);
    j.expect("exported", Duration::from_secs(60));
    j.keys(&["q"]);
    j.expect("[exited 0]", Duration::from_secs(20));
    let (answered, failed) = users.stop();
    let samples = sampler.finish();

    // The instances' own record: the impact, and the recovery.
    let (m_start, m_end) =
        app_instances::impact(&samples, fault_at).expect("the instances saw the fault");
    let last = samples.last().unwrap();
    let ok_after_end: u64 = last.1
        - samples
            .iter()
            .find(|s| s.0 >= m_end)
            .map_or(last.1, |s| s.1);
    assert!(
        ok_after_end > 1000,
        "the service recovered: {ok_after_end} answered well after the impact"
    );
    eprintln!(
        "users: {answered} answered, {failed} failed; impact measured by the instances {:.1} s after the fault to {:.1} s",
        m_start
            .duration_since(fault_at)
            .unwrap_or_default()
            .as_secs_f64(),
        m_end
            .duration_since(fault_at)
            .unwrap_or_default()
            .as_secs_f64()
    );

    // The journal: every step with its outcome, the crossing that defined the impact.
    let id = journey::only_incident(dir.path());
    let records = journey::timeline(dir.path(), &id);
    for step in STEPS {
        assert!(
            records.iter().any(|r| matches!(&r.kind,
                Event::RunbookStep { step: s, state: StepState::Succeeded, .. } if s == step)),
            "step {step} succeeded in the journal"
        );
    }
    assert!(
        records.iter().any(
            |r| matches!(&r.kind, Event::ThresholdCrossed { panel, .. } if panel == SATURATION)
        ),
        "the pool's crossing in the journal"
    );

    // The draft the console exported, and its facts.
    let md = std::fs::read_to_string(
        dir.path()
            .join("data/incidents")
            .join(&id)
            .join("exports/postmortem.md"),
    )
    .expect("the console's export");
    assert!(md.contains("pg-cancel-long-transactions"), "{md}");
    let facts = journey::facts(dir.path(), &id);
    let at = |k: &str| {
        let s = facts["impact"][k]["utc"]
            .as_str()
            .unwrap_or_else(|| panic!("impact {k} in the facts: {facts:#}"));
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    };
    let (d_start, d_end) = (at("start"), at("end"));
    let off = |a: DateTime<Utc>, b: SystemTime| (a - utc(b)).num_milliseconds() as f64 / 1000.0;
    let (ds, de) = (off(d_start, m_start), off(d_end, m_end));
    eprintln!(
        "impact window: draft {d_start} to {d_end}; measured {} to {}; start {ds:+.1} s, end {de:+.1} s",
        utc(m_start),
        utc(m_end)
    );
    let crossings: Vec<String> = records
        .iter()
        .filter(|r| matches!(r.kind, Event::ThresholdCrossed { .. }))
        .map(|r| format!("{} {:?}", r.time, r.kind))
        .collect();
    eprintln!("crossings:\n{}", crossings.join("\n"));
    assert!(
        ds.abs() <= TOLERANCE_S && de.abs() <= TOLERANCE_S,
        "the draft's impact window is {ds:+.1} s / {de:+.1} s from the measured one; the crossings:\n{}",
        crossings.join("\n")
    );
}
