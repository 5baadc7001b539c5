//! A whole incident, end to end, as an on-call engineer lives it (issue 9): a real Prometheus
//! with an alerting rule on pool saturation and a real Alertmanager scrape and watch
//! `warroom sim serve planner-peak --speed 30`; `warroom open` runs in a real terminal (tmux)
//! and is driven only with keys and read only from the screen: the pool-saturation panel turns
//! critical and the alert reaches the timeline; severity, a tagged note and an action item
//! are recorded; `pool-exhaustion` runs from the runbook pane with its confirmations and the
//! error ratio recovers; the incident is resolved, exported, and the console quits. Then the
//! journal, the draft (the house format, its facts against the simulator's own record) and
//! the terminal are checked, and the console's resource use is reported as figures.
//!
//! The same journey with `warroom demo` (no Prometheus) is the second test.

use crate::support::alertmanager;
use crate::support::figure;
use crate::support::journey;
use crate::support::journey_record;
use crate::support::procstat;
use crate::support::prometheus;
use crate::support::sim as sim_support;
use crate::support::tmux;

use journey::Journey;
use journey_record::{SimRecord, compare_with_the_simulator, prometheus_requests};
use prometheus::{PromOptions, free_port};
use std::path::Path;
use std::time::Duration;
use warroom::incident::Event;

/// Fires while any instance's pool is nearly full.
const RULES: &str = r#"groups:
  - name: warroom-journey
    interval: 1s
    rules:
      - alert: PoolSaturated
        expr: max(db_pool_connections_in_use / db_pool_connections_max) > 0.95
        for: 1s
        labels:
          severity: page
        annotations:
          summary: "database connection pools are full"
"#;

/// Rate windows of 3 s: 90 simulated seconds at 30x, the one-minute windows of the default
/// dashboard compressed (a 1 s scrape leaves two or three samples in each).
const PANELS: &str = r#"
[[panel]]
title = "Pool saturation"
query = "max by (pod) (db_pool_connections_in_use / db_pool_connections_max)"
unit = "percent"
warn = 0.8
crit = 0.95
legend = "{{pod}}"

[[panel]]
title = "Error ratio"
query = 'sum(rate(app_requests_total{code=~"5.."}[3s])) / sum(rate(app_requests_total[3s]))'
unit = "percent"
warn = 0.01
crit = 0.05

[[panel]]
title = "Retry amplification"
query = "sum(rate(app_requests_total[3s])) / sum(rate(app_logical_requests_total[3s]))"
unit = "ratio"
warn = 1.3
crit = 2.0

[[panel]]
title = "Instances up"
query = "sum(app_instance_up) / count(app_instance_up)"
unit = "percent"
warn = 0.9
crit = 0.7
bad_when = "below"
"#;

/// The steps of `pool-exhaustion`, in order.
const STEPS: [&str; 6] = [
    "why",
    "rollback",
    "disable-retries",
    "amplification-falls",
    "restart",
    "recovered",
];

/// The same incident actions in both journeys: severity, a tagged note, an action item.
fn record_the_incident(j: &Journey) {
    j.keys(&["v"]);
    j.expect("Incident severity", Duration::from_secs(10));
    // The dialog starts on SEV-3 (or the current severity); one up is SEV-2.
    j.keys(&["Up", "Enter"]);
    j.expect("Severity set to SEV-2", Duration::from_secs(10));
    j.keys(&["n"]);
    j.expect("Note for the timeline", Duration::from_secs(10));
    j.text("stop_times bypasses its index after the deploy #root-cause");
    j.keys(&["Enter"]);
    // The timeline wraps long lines: wait for one word of the note, the editor closed.
    j.wait("the note on the timeline", Duration::from_secs(10), |s| {
        s.contains("stop_times") && !s.contains("Note for the timeline")
    });
    j.keys(&["a"]);
    j.expect("Action item", Duration::from_secs(10));
    j.text("Add an index check to the release pipeline");
    j.keys(&["Tab"]);
    j.text("planner-team");
    j.keys(&["Tab"]);
    j.text("P1");
    j.keys(&["Tab"]);
    j.text("2026-12-31");
    j.keys(&["Enter"]);
    j.expect("Action item AI-1:", Duration::from_secs(10));
}

/// Open the runbook pane, run `pool-exhaustion` with its confirmations, close the pane
/// (`rehearsal`: the console is the demo's, where the rehearsal runbooks are listed first).
fn run_pool_exhaustion(j: &Journey, rehearsal: bool) -> String {
    j.keys(&["b"]);
    j.expect("pool-exhaustion", Duration::from_secs(10));
    // The list is sorted by name, the shipped runbooks first among equals.
    for _ in 0..journey::position_in_list("pool-exhaustion", rehearsal) {
        j.keys(&["j"]);
    }
    j.keys(&["Enter"]);
    j.expect("Plan · pool-exhaustion", Duration::from_secs(20));
    // The pane opens at once and says the plan is being prepared; the plan follows. It shares
    // the screen with the panels: scroll it (j) to its first request.
    let mut plan = j.term.screen();
    for _ in 0..120 {
        plan = j.term.screen();
        if plan.contains("/control/rollback") {
            break;
        }
        if !plan.contains("preparing the plan") {
            j.keys(&["j"]);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    j.keys(&["x"]);
    j.expect("Run runbook \"pool-exhaustion\"?", Duration::from_secs(10));
    j.text("pool-exhaustion");
    j.keys(&["Enter"]);
    let end = j.run_to_the_end("pool-exhaustion", Duration::from_secs(150), 12);
    for step in STEPS {
        assert!(
            end.contains(&format!("✓ {step}")),
            "step {step} did not succeed:\n{end}"
        );
    }
    j.keys(&["Escape"]);
    j.keys(&["Escape"]);
    j.wait("the runbook pane to close", Duration::from_secs(10), |s| {
        !s.contains("Run · pool-exhaustion")
    });
    plan
}

/// Resolve, export, quit; the terminal is restored and shows the shell.
fn resolve_export_quit(j: &Journey) {
    j.keys(&["s"]);
    j.expect("Incident status", Duration::from_secs(10));
    // The choices wrap: one up from the first (no status yet) is the last, resolved.
    j.keys(&["Up"]);
    j.wait("resolved to be selected", Duration::from_secs(5), |s| {
        s.contains("▸ resolved")
    });
    j.keys(&["Enter"]);
    j.expect("Status: resolved", Duration::from_secs(10));
    j.keys(&["E"]);
    j.expect("exported", Duration::from_secs(60));
}

fn quit(j: &Journey) -> String {
    j.keys(&["q"]);
    let screen = j.expect("[exited 0]", Duration::from_secs(20));
    assert_eq!(
        j.term.format("#{alternate_on}"),
        "0",
        "the terminal was restored (alternate screen left):\n{screen}"
    );
    screen
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

#[test]
fn journey_against_prometheus_from_alert_to_postmortem() {
    let Some(am) = alertmanager::start() else {
        return;
    };
    let sim_port = free_port();
    let Some(prom) = prometheus::start(PromOptions {
        targets: vec![format!("127.0.0.1:{sim_port}")],
        scrape_interval: "1s",
        rules: Some(RULES.into()),
        alertmanager: Some(am.address()),
        extra_args: Vec::new(),
    }) else {
        return;
    };
    if prometheus::require_binary("tmux").is_none() {
        return;
    }
    // 120 simulated seconds (four at 30x) before the bad deploy.
    let _sim = sim_support::serve(
        sim_port,
        "planner-peak",
        &["--speed", "30", "--start-at", "1080"],
    );
    let record = SimRecord::start(sim_port);
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("warroom.toml"),
        &format!(
            r#"refresh = "1s"
range = "5m"
timezone = "Europe/Berlin"

[prometheus]
url = "{prom}"
timeout = "5s"

[alertmanager]
url = "{am}"

[alerts]
interval = "1s"
timeout = "3s"

[runbooks.vars]
base_url = "http://127.0.0.1:{sim_port}"
window = "3s"
interval = "1s"
soak = "1s"
settle = "1s"
{PANELS}"#,
            prom = prom.url,
            am = am.url,
        ),
    );
    let before = prometheus_requests(prom.port);
    let Some(term) = tmux::Tmux::start(
        &journey::console_command(dir.path(), "open --title \"Journey planner peak\""),
        160,
        48,
    ) else {
        return;
    };
    let j = Journey::new(term, dir.path());
    j.expect("Pool saturation", Duration::from_secs(20));
    let console_pid = procstat::first_child(j.term.format("#{pane_pid}").parse().unwrap())
        .expect("the console's process");
    assert_eq!(
        j.term.format("#{alternate_on}"),
        "1",
        "the console's screen"
    );
    j.wait(
        "the pool-saturation panel to turn critical",
        Duration::from_secs(60),
        |s| journey::panel_headline(s, "Pool saturation").is_some_and(|h| h.ends_with("▲ CRIT")),
    );
    j.keys(&["t"]);
    j.expect("Alert firing: PoolSaturated", Duration::from_secs(60));
    record_the_incident(&j);
    let plan = run_pool_exhaustion(&j, false);
    assert!(
        plan.contains(&format!(
            "POST http://127.0.0.1:{sim_port}/control/rollback"
        )),
        "the plan posts to the simulator named in [runbooks.vars]:\n{plan}"
    );
    // The error ratio is back under its warning level on the dashboard.
    j.wait(
        "the error ratio to recover on its panel",
        Duration::from_secs(30),
        |s| journey::panel_headline(s, "Error ratio").is_some_and(|h| h.ends_with("✓ ok")),
    );
    // The console records a recovery once the value has stayed back for a minute (its rule
    // against flapping): then the timeline has the end of the impact.
    j.expect("Error ratio fell below crit", Duration::from_secs(90));
    resolve_export_quit(&j);
    // Resource use, read just before the console quits.
    let ticks = procstat::cpu_ticks(console_pid);
    let hwm_kib = procstat::status_kib(console_pid, "VmHWM:");
    quit(&j);
    let after = prometheus_requests(prom.port);
    let readings = record.finish();

    let requests: f64 = after
        .iter()
        .filter(|(h, _)| h.as_str() != "/metrics")
        .map(|(h, v)| v - before.get(h).copied().unwrap_or(0.0))
        .sum();
    let by_handler: Vec<String> = after
        .iter()
        .filter(|(h, _)| h.as_str() != "/metrics")
        .map(|(h, v)| format!("{h}={}", v - before.get(h).copied().unwrap_or(0.0)))
        .filter(|s| !s.ends_with("=0"))
        .collect();
    eprintln!("requests to Prometheus by handler: {by_handler:?}");
    let cpu_s = ticks as f64 / procstat::TICKS_PER_SEC;
    assert!(cpu_s > 0.0 && hwm_kib > 0, "the console's /proc was read");
    assert!(requests > 0.0, "the console queried Prometheus");
    figure::report("journey console CPU", cpu_s, "s", figure::Target::None);
    figure::report(
        "journey console peak memory (VmHWM)",
        hwm_kib as f64 / 1024.0,
        "MiB",
        figure::Target::Under(100.0),
    );
    figure::report(
        "journey requests to Prometheus",
        requests,
        "requests",
        figure::Target::None,
    );

    // The journal.
    let id = journey::only_incident(dir.path());
    let records = journey::timeline(dir.path(), &id);
    journey::check_journal(&records, &STEPS, Some("PoolSaturated"));
    let resolved_alert = records
        .iter()
        .any(|r| matches!(&r.kind, Event::AlertResolved { name, .. } if name == "PoolSaturated"));
    eprintln!("alert resolved on the timeline: {resolved_alert}");

    // The draft the console exported: the house format.
    let md = std::fs::read_to_string(
        dir.path()
            .join("data/incidents")
            .join(&id)
            .join("exports/postmortem.md"),
    )
    .expect("the console's export");
    journey::check_draft(&md);
    assert!(
        md.contains("PoolSaturated"),
        "the alert in the draft:\n{md}"
    );

    // Its facts (from the same journal and snapshots) against the simulator's own record.
    let facts = journey::facts(dir.path(), &id);
    compare_with_the_simulator(&facts, &readings);
}

/// The same journey with `warroom demo`: no Prometheus, no Alertmanager; the rehearsal's own
/// simulator and embedded store, its runbooks bound to them.
#[test]
fn journey_in_the_demo_from_crossing_to_postmortem() {
    if prometheus::require_binary("tmux").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("warroom.toml"),
        "timezone = \"Europe/Berlin\"\n[runbooks.vars]\nbase_url = \"http://127.0.0.1:1\"\n",
    );
    let Some(term) = tmux::Tmux::start(
        &journey::console_command(dir.path(), "demo --speed 30"),
        160,
        48,
    ) else {
        return;
    };
    let j = Journey::new(term, dir.path());
    j.expect("Briefing", Duration::from_secs(20));
    j.keys(&["Escape"]);
    j.wait("the briefing to close", Duration::from_secs(10), |s| {
        !s.contains("Briefing")
    });
    // The bad deploy lands 5 simulated minutes in (10 s at 30x): the pools fill up.
    j.wait(
        "the pool-saturation panel to turn critical",
        Duration::from_secs(60),
        |s| journey::panel_headline(s, "Pool saturation").is_some_and(|h| h.ends_with("▲ CRIT")),
    );
    j.keys(&["t"]);
    j.expect("rose above", Duration::from_secs(30));
    record_the_incident(&j);
    let plan = run_pool_exhaustion(&j, true);
    // The rehearsal's own simulator, not the config's base_url: its values come first.
    assert!(
        plan.contains("POST http://127.0.0.1:") && !plan.contains("http://127.0.0.1:1/"),
        "the demo's control URL:\n{plan}"
    );
    j.wait(
        "the error ratio to recover on its panel",
        Duration::from_secs(60),
        |s| journey::panel_headline(s, "Error ratio").is_some_and(|h| h.ends_with("✓ ok")),
    );
    resolve_export_quit(&j);
    let screen = quit(&j);
    assert!(
        screen.contains("The rehearsal of planner-peak is over"),
        "{screen}"
    );
    assert!(screen.contains("time to first mitigation"), "{screen}");

    let id = journey::only_incident(dir.path());
    let records = journey::timeline(dir.path(), &id);
    journey::check_journal(&records, &STEPS, None);
    // The scenario's service is recorded as the one affected, as a headless game day does.
    let scenario = warroom::sim::Scenario::load("planner-peak").unwrap();
    assert!(
        records.iter().any(|r| matches!(&r.kind,
            Event::ServicesChanged { services } if services.len() == 1 && services[0] == scenario.service)),
        "no record of the service {:?}",
        scenario.service
    );
    let md = std::fs::read_to_string(
        dir.path()
            .join("data/incidents")
            .join(&id)
            .join("exports/postmortem.md"),
    )
    .expect("the console's export");
    journey::check_draft(&md);
    assert!(md.contains("Rehearsal: "), "{md}");
}
