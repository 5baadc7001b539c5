//! RELIABILITY.md, "The journal": a failing write or sync is never treated as success. The
//! journal says it is not durable, the record is not acknowledged, and appends work again (with
//! no gap) once the disk does.

use std::path::Path;
use std::sync::Arc;
use warroom::clock::WallClock;
use warroom::incident::storage::{Faults, FaultyStorage};
use warroom::incident::{Durability, Event, Journal, JournalError, Source};

fn faulty(path: &Path) -> (Journal, Faults) {
    let faults = Faults::default();
    let f = faults.clone();
    let (j, _) = Journal::open_with(path, Arc::new(WallClock), move |file| {
        Box::new(FaultyStorage::new(file, f))
    })
    .unwrap();
    (j, faults)
}

fn note(j: &mut Journal, text: &str) -> Result<u64, JournalError> {
    j.append(Source::Operator, "ana", Event::note(text))
        .map(|r| r.seq)
}

fn texts(path: &Path) -> Vec<String> {
    let recovery = warroom::incident::journal::read(path).unwrap();
    assert!(recovery.torn.is_none(), "{:?}", recovery.torn);
    recovery
        .records
        .iter()
        .map(|r| match &r.kind {
            Event::Note { text, .. } => text.clone(),
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn a_failing_sync_makes_the_journal_not_durable_until_a_sync_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let (mut j, faults) = faulty(&path);
    assert_eq!(note(&mut j, "one").unwrap(), 1);
    assert_eq!(note(&mut j, "two").unwrap(), 2);
    let len_before = std::fs::metadata(&path).unwrap().len();

    faults.fail_syncs(1);
    let err = note(&mut j, "lost: sync failed").unwrap_err();
    assert!(matches!(err, JournalError::NotDurable { .. }), "{err}");
    assert!(err.to_string().contains("NOT recorded"), "{err}");
    assert!(!j.is_durable());
    assert!(
        matches!(j.durability(), Durability::NotDurable { cause, .. } if cause.contains("sync"))
    );
    // The unacknowledged bytes were cut off again.
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len_before);

    // The disk still fails: the next append is refused, not falsely acknowledged.
    faults.fail_syncs(1);
    assert!(matches!(
        note(&mut j, "lost: still failing"),
        Err(JournalError::NotDurable { .. })
    ));
    assert!(!j.is_durable());
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len_before);

    // The disk is back: the next append restores durability and takes the next number.
    assert_eq!(note(&mut j, "three").unwrap(), 3);
    assert!(j.is_durable());
    drop(j);
    assert_eq!(texts(&path), ["one", "two", "three"]);
}

#[test]
fn a_failing_or_short_write_is_not_acknowledged_and_leaves_no_half_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let (mut j, faults) = faulty(&path);
    note(&mut j, "one").unwrap();

    faults.fail_writes(1);
    assert!(note(&mut j, "lost: write failed").is_err());
    assert!(!j.is_durable());

    faults.short_writes(1);
    let err = note(&mut j, "lost: short write").unwrap_err();
    assert!(err.to_string().contains("short write"), "{err}");

    assert_eq!(note(&mut j, "two").unwrap(), 2);
    assert!(j.is_durable());
    drop(j);
    assert_eq!(texts(&path), ["one", "two"]);
}

#[test]
fn a_half_line_left_by_a_failed_cleanup_is_cut_before_the_next_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let (mut j, faults) = faulty(&path);
    note(&mut j, "one").unwrap();

    // Half a line reaches the file and cutting it back fails twice.
    faults.short_writes(1);
    faults.fail_truncates(2);
    assert!(note(&mut j, "lost: short write").is_err());
    let torn_len = std::fs::metadata(&path).unwrap().len();
    assert!(
        note(&mut j, "lost: cannot restore").is_err(),
        "restoring fails, so the append must fail"
    );
    assert!(!j.is_durable());
    assert_eq!(std::fs::metadata(&path).unwrap().len(), torn_len);

    assert_eq!(note(&mut j, "two").unwrap(), 2);
    drop(j);
    assert_eq!(texts(&path), ["one", "two"]);
}

#[test]
fn a_crash_while_not_durable_leaves_a_torn_tail_that_the_next_open_sets_aside() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let (mut j, faults) = faulty(&path);
    note(&mut j, "one").unwrap();
    faults.short_writes(1);
    faults.fail_truncates(1);
    assert!(note(&mut j, "lost").is_err());
    drop(j); // the process dies here

    let (mut j, recovery) = Journal::open(&path).unwrap();
    assert!(recovery.torn.is_some());
    assert_eq!(recovery.records.len(), 2, "the record and the notice");
    assert_eq!(note(&mut j, "two").unwrap(), 3);
}

#[test]
fn a_value_json_cannot_carry_is_refused_before_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let (mut j, _) = Journal::open(&path).unwrap();
    let err = j
        .append(
            Source::Metric,
            "panel",
            Event::ThresholdCrossed {
                panel: "p99 latency".into(),
                level: warroom::incident::event::Level::Warn,
                direction: warroom::incident::event::Direction::Up,
                value: 0.7,
                threshold: f64::NAN,
                at: chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
            },
        )
        .unwrap_err();
    assert!(matches!(err, JournalError::Invalid(_)), "{err}");
    assert!(j.is_durable(), "a refused event is not a disk problem");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
}
