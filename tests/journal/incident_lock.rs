//! RELIABILITY.md, "The journal": two writers on one incident. Exactly one writes; the other is
//! told who holds the incident and since when.

use std::process::Command;
use warroom::incident::{Event, Source, Store, StoreError};

fn warroom(data: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warroom"));
    cmd.arg("--data-dir")
        .arg(data)
        .arg("--log-file")
        .arg(data.join("warroom.log"))
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "0");
    cmd
}

// One test runs the scenarios in turn: a child spawned by a concurrent test would hold a copy of
// this process's lock descriptor between its fork and its exec, and make the lock look held.
#[test]
fn two_writers_on_one_incident() {
    a_second_writer_in_this_process_is_refused_and_told_who_holds_it();
    the_cli_refuses_to_write_an_incident_a_console_holds();
    concurrent_cli_writers_take_turns_and_none_is_lost();
    a_holder_named_by_a_dead_process_is_reported_as_unknown();
}

fn a_second_writer_in_this_process_is_refused_and_told_who_holds_it() {
    let data = tempfile::tempdir().unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();

    let (mut first, _) = store
        .open_incident(&id, warroom::incident::store::Role::Console)
        .unwrap();
    let second = store.open_incident(&id, warroom::incident::store::Role::Recorder);
    let Err(StoreError::Held { holder, .. }) = &second else {
        panic!("the second writer was not refused: {second:?}");
    };
    assert_eq!(holder.pid, std::process::id());
    assert_eq!(holder.role, warroom::incident::store::Role::Console);
    let message = second.unwrap_err().to_string();
    assert!(
        message.contains(&format!("pid {}", std::process::id())),
        "{message}"
    );
    assert!(
        message.contains("console") && message.contains("since"),
        "{message}"
    );
    assert_eq!(
        store.holder(&id).unwrap().map(|h| h.role),
        Some(warroom::incident::store::Role::Console)
    );

    first
        .journal
        .append(
            Source::Operator,
            "ana",
            Event::note("only the holder writes"),
        )
        .unwrap();
    drop(first);
    assert_eq!(
        store.holder(&id).unwrap(),
        None,
        "dropping the holder releases the lock"
    );
    let (_second, recovery) = store
        .open_incident(&id, warroom::incident::store::Role::Recorder)
        .unwrap();
    assert_eq!(recovery.records.len(), 1);
}

fn the_cli_refuses_to_write_an_incident_a_console_holds() {
    let data = tempfile::tempdir().unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let journal = store.journal_path(&id);

    let held = store
        .open_incident(&id, warroom::incident::store::Role::Console)
        .unwrap();
    let before = std::fs::read(&journal).unwrap();
    let out = warroom(data.path())
        .args(["incident", "note", &id.to_string(), "from a chat bot"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(&format!("warroom console (pid {})", std::process::id())),
        "{stderr}"
    );
    assert!(
        stderr.contains("since") && stderr.contains("UTC"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&journal).unwrap(),
        before,
        "nothing was written"
    );

    drop(held);
    let out = warroom(data.path())
        .args(["incident", "note", &id.to_string(), "from a chat bot"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(store.read(&id).unwrap().records.len(), 1);
}

fn concurrent_cli_writers_take_turns_and_none_is_lost() {
    let data = tempfile::tempdir().unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let writers = 6;
    let children: Vec<_> = (0..writers)
        .map(|i| {
            warroom(data.path())
                .args(["incident", "note", &id.to_string(), &format!("writer {i}")])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let ok = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .filter(|o| o.status.success())
        .count();
    // Short commands wait for each other (with backoff), so every note lands exactly once.
    let records = store.read(&id).unwrap().records;
    assert_eq!(ok, writers);
    assert_eq!(records.len(), writers);
    for i in 0..writers {
        let text = format!("writer {i}");
        let n = records
            .iter()
            .filter(|r| matches!(&r.kind, Event::Note { text: t, .. } if *t == text))
            .count();
        assert_eq!(n, 1, "{text}");
    }
}

fn a_holder_named_by_a_dead_process_is_reported_as_unknown() {
    let data = tempfile::tempdir().unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let mut child = Command::new("true").spawn().unwrap();
    let dead_pid = child.id();
    child.wait().unwrap();

    let _held = store
        .lock(&id, warroom::incident::store::Role::Console)
        .unwrap();
    // The lock file still names an earlier holder that has exited.
    let stale = format!(r#"{{"pid":{dead_pid},"since":"2026-11-29T08:00:00Z","role":"console"}}"#);
    std::fs::write(store.dir(&id).join("lock"), stale).unwrap();
    let err = store
        .lock(&id, warroom::incident::store::Role::Cli)
        .unwrap_err();
    let Some(holder) = (match &err {
        StoreError::Held { holder, .. } => Some(holder.clone()),
        _ => None,
    }) else {
        panic!("expected Held, got {err}");
    };
    assert_eq!(holder.pid, 0, "a dead pid is not named as the holder");
    assert!(err.to_string().contains("another process"), "{err}");
}
