//! `warroom replay` in a real terminal (tmux), on an incident recorded through the journal
//! with a simulated clock and holding panel snapshots, while another process holds the
//! incident's lock: it plays, pauses, seeks, shows the cursor's time in the configured zone and
//! the timeline up to it, quits with the terminal restored, and leaves the journal unchanged.
//! Also the command's errors, which need no terminal.

use crate::support::records;
use crate::support::tmux;

use chrono::{DateTime, Duration, Utc};
use std::path::Path;
use warroom::incident::snapshot::{self, PanelSnapshot, SnapshotSeries, SnapshotWindow};
use warroom::incident::vocabulary::{Severity, Status};
use warroom::incident::{Event, IncidentId, Source, Store};
use warroom::metrics::presets::sim_panels;

fn t0() -> DateTime<Utc> {
    "2026-11-29T14:00:00Z".parse().unwrap()
}

/// An incident with seven records over 55 minutes and a snapshot of four panels.
fn recorded(data: &Path) -> (Store, IncidentId) {
    let store = Store::new(data);
    let id = store.create(t0()).unwrap();
    let (mut journal, clock) = records::manual_journal(&store, &id, t0());
    let events = [
        (
            0,
            Event::IncidentOpened {
                title: "Checkout pool exhaustion".into(),
                severity: Severity::Sev2,
            },
        ),
        (9, Event::note("pool at 100% after the deploy")),
        (
            12,
            Event::StatusChanged {
                status: Status::Identified,
            },
        ),
        (31, Event::note("rolled back the deploy")),
        (40, Event::note("retries disabled at the gateway")),
        (
            50,
            Event::StatusChanged {
                status: Status::Monitoring,
            },
        ),
        (
            55,
            Event::StatusChanged {
                status: Status::Resolved,
            },
        ),
    ];
    let at = |minute| t0() + Duration::minutes(minute) + Duration::seconds(17);
    let entries = events.map(|(minute, event)| (at(minute), Source::Operator, "ana", event));
    records::append_at(&mut journal, &clock, entries);
    let window = SnapshotWindow::covering(t0(), t0() + Duration::hours(1), 60.0);
    let snaps: Vec<PanelSnapshot> = sim_panels()
        .iter()
        .take(4)
        .enumerate()
        .map(|(order, p)| PanelSnapshot {
            order,
            slug: snapshot::slug(&p.title),
            title: p.title.clone(),
            query: p.query.clone(),
            unit: snapshot::unit_name(p.unit).into(),
            warn: p.warn,
            crit: p.crit,
            bad_when: "above".into(),
            legend: None,
            signal: None,
            window,
            series: vec![SnapshotSeries {
                labels: Default::default(),
                points: (0..=60)
                    .map(|m| [(t0().timestamp() + m * 60) as f64, m as f64 / 60.0])
                    .collect(),
            }],
            error: None,
        })
        .collect();
    snapshot::write_all(&store.snapshots_dir(&id), &snaps).unwrap();
    (store, id)
}

#[test]
fn replay_plays_pauses_seeks_and_quits_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (store, id) = recorded(&data);
    // A recorder holds the incident: replay reads it anyway, and changes nothing.
    let _lock = store
        .lock(&id, warroom::incident::store::Role::Recorder)
        .unwrap();
    let journal_before = std::fs::read(store.journal_path(&id)).unwrap();
    std::fs::write(dir.path().join("w.toml"), "timezone = \"Europe/Berlin\"\n").unwrap();
    let cmd = format!(
        "{} --config {} --log-file {} --data-dir {} replay {id}",
        env!("CARGO_BIN_EXE_warroom"),
        dir.path().join("w.toml").display(),
        dir.path().join("log").display(),
        data.display(),
    );
    let Some(term) = tmux::Tmux::start(&cmd, 140, 40) else {
        return;
    };
    let wait = std::time::Duration::from_secs(10);
    let screen = term.expect("REPLAY ▶ playing 60×", wait);
    assert!(screen.contains("Checkout pool exhaustion"), "{screen}");
    assert_eq!(
        term.format("#{alternate_on}"),
        "1",
        "on the alternate screen"
    );
    term.send(&["Space"]);
    term.expect("REPLAY ⏸ paused", wait);
    // Home, then 10 + 10 + 5 × 1 minutes: the first record's time plus 25 minutes.
    term.send(&["Home", "L", "L", "l", "l", "l", "l", "l"]);
    let screen = term.expect("2026-11-29 15:25:17 CET", wait);
    assert!(
        screen.contains("15:12:17 operator Status: identified"),
        "{screen}"
    );
    assert!(
        screen.contains("15:09:17 operator pool at 100%"),
        "{screen}"
    );
    assert!(
        !screen.contains("rolled back"),
        "14:31 UTC is after the cursor: {screen}"
    );
    let newest = screen.find("Status: identified").unwrap();
    let older = screen.find("pool at 100%").unwrap();
    assert!(newest < older, "newest first: {screen}");
    // Back a minute crosses nothing; to the end (the snapshots' end, 15:00 UTC) shows the
    // whole incident.
    term.send(&["h"]);
    term.expect("2026-11-29 15:24:17 CET", wait);
    term.send(&["End"]);
    let screen = term.expect("Status: resolved", wait);
    assert!(screen.contains("2026-11-29 16:00:00 CET"), "{screen}");
    assert!(screen.contains("rolled back the deploy"), "{screen}");
    term.send(&["+"]);
    term.expect("REPLAY ⏸ paused 120×", wait);
    term.send(&["q"]);
    term.expect("[exited 0]", wait);
    assert_eq!(
        term.format("#{alternate_on}"),
        "0",
        "the terminal is restored"
    );
    assert_eq!(
        std::fs::read(store.journal_path(&id)).unwrap(),
        journal_before,
        "replay never writes the journal"
    );
}

fn warroom(data: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_warroom"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn replay_errors_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let (_, id) = recorded(dir.path());
    let out = warroom(dir.path(), &["replay", "2026-11-29-9"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains(&format!("known incidents: \"{id}\"")), "{err}");
    assert!(err.contains("warroom incident list"), "{err}");
    let out = warroom(dir.path(), &["replay", &id.to_string(), "--speed", "0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("--speed \"0\""), "{err}");
}
