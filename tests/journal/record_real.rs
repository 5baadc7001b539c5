//! `warroom record ID` as a child process against real components: `warroom sim serve` scraped
//! by a real Prometheus with an alerting rule, which sends to a real Alertmanager. The alert
//! reaches the journal once as firing (seen by both Prometheus and Alertmanager) and once as
//! resolved after the control call that ends it; the bad deploy's threshold crossing is
//! recorded from the panels; SIGTERM stops the recorder, which records it and releases the lock.

use crate::support::alertmanager;
use crate::support::prometheus;
use crate::support::sim as sim_support;

use prometheus::{PromOptions, free_port};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use warroom::incident::{Event, Record, Store};

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Fires while the client layer retries; the simulator turns it off on request.
const RULES: &str = r#"groups:
  - name: warroom-test
    interval: 1s
    rules:
      - alert: ClientRetriesOn
        expr: app_retry_enabled{layer="client"} > 0
        labels:
          severity: page
        annotations:
          summary: "client retries are on: \u001b[2J storms amplify"
"#;

fn warroom(data: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warroom"));
    cmd.arg("--data-dir")
        .arg(data)
        .arg("--config")
        .arg(data.join("warroom.toml"))
        .arg("--log-file")
        .arg(data.join("warroom.log"))
        .env("NO_COLOR", "1");
    cmd
}

fn timeline(data: &Path, id: &str) -> Vec<Record> {
    let out = warroom(data)
        .args(["incident", "timeline", id, "--json"])
        .output()
        .expect("run warroom incident timeline");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| Record::decode(format!("{l}\n").as_bytes()).expect("a checksummed record a line"))
        .collect()
}

fn count(records: &[Record], pred: impl Fn(&Event) -> bool) -> usize {
    records.iter().filter(|r| pred(&r.kind)).count()
}

fn firing(e: &Event) -> bool {
    matches!(e, Event::AlertFiring { name, .. } if name == "ClientRetriesOn")
}

fn resolved(e: &Event) -> bool {
    matches!(e, Event::AlertResolved { name, .. } if name == "ClientRetriesOn")
}

/// Polls the timeline until `pred` holds (bounded).
fn wait_timeline(
    data: &Path,
    id: &str,
    within: Duration,
    pred: impl Fn(&[Record]) -> bool,
) -> Vec<Record> {
    let deadline = Instant::now() + within;
    loop {
        let records = timeline(data, id);
        if pred(&records) || Instant::now() > deadline {
            return records;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn the_recorder_records_alerts_and_crossings_from_real_components_and_stops_cleanly() {
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
    let data = tempfile::tempdir().unwrap();
    // 120 simulated seconds (four at 30x) before the bad deploy saturates the pools.
    let _sim = sim_support::serve(
        sim_port,
        "planner-peak",
        &["--speed", "30", "--start-at", "1080"],
    );
    std::fs::write(
        data.path().join("warroom.toml"),
        "refresh = \"1s\"\ntimezone = \"Europe/Berlin\"\n[alerts]\ninterval = \"1s\"\ntimeout = \"3s\"\n",
    )
    .unwrap();
    let out = warroom(data.path())
        .args(["incident", "new", "--title", "planner peak"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();

    let stderr = std::fs::File::create(data.path().join("record.err")).unwrap();
    let mut recorder = Killed(
        warroom(data.path())
            .args(["record", &id, "--prometheus", &prom.url])
            .args(["--alertmanager", &am.url])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("start warroom record"),
    );
    let store = Store::new(data.path());
    let found = store.find(&id).unwrap();
    let holder = {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(h) = store.holder(&found).unwrap().filter(|h| h.pid != 0) {
                break h;
            }
            assert!(
                Instant::now() < deadline,
                "the recorder did not take the lock"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    assert_eq!(
        (holder.role.as_str(), holder.pid),
        ("recorder", recorder.0.id())
    );

    // The alert fires (Prometheus first, Alertmanager soon after) and the fault crosses panels.
    let records = wait_timeline(data.path(), &id, Duration::from_secs(30), |r| {
        count(r, firing) > 0
            && count(r, |e| matches!(e, Event::ThresholdCrossed { .. })) > 0
            && am_has_it(am.port)
    });
    let log = || std::fs::read_to_string(data.path().join("record.err")).unwrap_or_default();
    assert_eq!(count(&records, firing), 1, "{records:#?}\n{}", log());
    assert!(
        count(&records, |e| matches!(e, Event::ThresholdCrossed { .. })) > 0,
        "no crossing: {}",
        log()
    );
    let alert = records.iter().find(|r| firing(&r.kind)).unwrap();
    let Event::AlertFiring { labels, .. } = &alert.kind else {
        unreachable!()
    };
    assert_eq!(labels.get("severity").map(String::as_str), Some("page"));
    assert!(log().contains("Alert firing: ClientRetriesOn"), "{}", log());
    // Times on the status lines are in the configured timezone.
    assert!(
        log().contains(" CET") || log().contains(" CEST"),
        "{}",
        log()
    );

    // Alertmanager has it too, and a few more polls of both record nothing more.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(count(&timeline(data.path(), &id), firing), 1);

    let turned_off = chrono::Utc::now();
    sim_support::control(sim_port, "retries", r#"{"layer":"all","enabled":false}"#);
    let records = wait_timeline(data.path(), &id, Duration::from_secs(30), |r| {
        count(r, resolved) > 0 && !am_has_it(am.port)
    });
    assert_eq!(count(&records, resolved), 1, "{records:#?}\n{}", log());
    let at = records.iter().find(|r| resolved(&r.kind)).unwrap().time;
    eprintln!(
        "control call to resolved record: {} ms (scrape 1 s, rule 1 s, polls 1 s)",
        (at - turned_off).num_milliseconds()
    );
    std::thread::sleep(Duration::from_secs(3));
    let records = timeline(data.path(), &id);
    assert_eq!(
        (count(&records, firing), count(&records, resolved)),
        (1, 1),
        "{}",
        log()
    );

    let pid = nix::unistd::Pid::from_raw(recorder.0.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = recorder.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the recorder did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}: {}", log());
    assert_eq!(store.holder(&found).unwrap(), None, "the lock is released");
    let recovery = store.read(&found).unwrap();
    assert!(recovery.torn.is_none());
    assert_eq!(
        recovery.records.last().map(|r| &r.kind),
        Some(&Event::Interrupted {
            signal: "SIGTERM".into()
        })
    );
    assert!(log().contains("stopped by SIGTERM"), "{}", log());
    // On its way out it took the panels' snapshots for the postmortem, with data in them.
    let snaps = warroom::incident::snapshot::read_all(&store.snapshots_dir(&found)).unwrap();
    assert_eq!(
        snaps.len(),
        warroom::metrics::presets::sim_panels().len(),
        "{}",
        log()
    );
    assert!(
        snaps
            .iter()
            .any(|s| s.error.is_none() && s.series.iter().any(|x| !x.points.is_empty())),
        "snapshots hold no data"
    );
    eprintln!("the recorder's status lines:\n{}", log());
}

/// Whether Alertmanager currently lists the alert.
fn am_has_it(port: u16) -> bool {
    prometheus::http_get(port, "/api/v2/alerts", Duration::from_secs(2))
        .is_some_and(|(status, body)| status == 200 && body.contains("ClientRetriesOn"))
}
