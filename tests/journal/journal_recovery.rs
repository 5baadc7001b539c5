//! RELIABILITY.md, "The journal": a torn tail is recovered at every byte offset, and corruption
//! in the middle is always detected and never "repaired" silently.

use chrono::{DateTime, Utc};
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::sync::Arc;
use warroom::clock::ManualClock;
use warroom::incident::event::{Direction, Level, Severity, Status};
use warroom::incident::{Event, Journal, JournalError, Record, Source};

fn clock() -> Arc<ManualClock> {
    let t: DateTime<Utc> = "2026-07-17T07:18:00Z".parse().unwrap();
    Arc::new(ManualClock::new(t))
}

/// Writes a journal of `n` varied records and returns them.
fn write_journal(path: &Path, n: usize) -> Vec<Record> {
    let clock = clock();
    let (mut j, rec) = Journal::open_with(path, clock.clone(), |f| Box::new(f)).unwrap();
    assert!(rec.records.is_empty() && rec.torn.is_none());
    let mut out = Vec::new();
    for i in 0..n {
        clock.advance(std::time::Duration::from_millis(61_001));
        let event = match i % 4 {
            0 => Event::IncidentOpened {
                title: format!("Planner API pool exhausted {i}"),
                severity: Severity::Sev1,
            },
            1 => Event::ThresholdCrossed {
                panel: "DB pool in use".into(),
                level: Level::Crit,
                direction: Direction::Up,
                value: 0.97 + i as f64 / 1000.0,
                threshold: 0.95,
                at: chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
            },
            2 => Event::StatusChanged {
                status: Status::Identified,
            },
            _ => Event::note(format!("record {i}: retries at three layers #factor")),
        };
        out.push(j.append(Source::Operator, "ana", event).unwrap());
    }
    out
}

/// Byte offset where each line starts, plus the total length.
fn line_starts(bytes: &[u8]) -> Vec<usize> {
    let mut starts = vec![0];
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' && i + 1 < bytes.len() {
            starts.push(i + 1);
        }
    }
    starts
}

#[test]
fn a_torn_tail_is_recovered_at_every_byte_offset() {
    let dir = tempfile::tempdir().unwrap();
    let original_path = dir.path().join("original.jsonl");
    let records = write_journal(&original_path, 6);
    let full = std::fs::read(&original_path).unwrap();
    let last_start = *line_starts(&full).last().unwrap();
    let kept = &records[..records.len() - 1];

    let mut cases = 0;
    let mut wrong = Vec::new();
    for cut in last_start..full.len() {
        cases += 1;
        let case_dir = dir.path().join(format!("cut-{cut}"));
        std::fs::create_dir(&case_dir).unwrap();
        let path = case_dir.join("journal.jsonl");
        std::fs::write(&path, &full[..cut]).unwrap();

        let (mut j, recovery) = Journal::open_with(&path, clock(), |f| Box::new(f)).unwrap();
        let mut ok =
            recovery.records.len() >= kept.len() && recovery.records[..kept.len()] == *kept;
        if cut == last_start {
            // Cut exactly at a record boundary: nothing is torn.
            ok &= recovery.torn.is_none() && recovery.records.len() == kept.len();
        } else {
            let torn = recovery.torn.as_ref();
            ok &= torn.is_some_and(|t| {
                t.offset == last_start as u64
                    && t.len == (cut - last_start) as u64
                    && t.kept_at
                        .as_ref()
                        .is_some_and(|p| std::fs::read(p).unwrap() == full[last_start..cut])
            });
            // The recovery itself is on the timeline.
            ok &= recovery.records.len() == kept.len() + 1
                && matches!(
                    recovery.records[kept.len()].kind,
                    Event::JournalNotice { .. }
                );
        }
        let appended = j
            .append(Source::Operator, "ana", Event::note("after recovery"))
            .unwrap();
        ok &= appended.seq == recovery.records.len() as u64 + 1;
        drop(j);
        let reread = warroom::incident::journal::read(&path).unwrap();
        ok &= reread.torn.is_none()
            && reread.records.len() == recovery.records.len() + 1
            && reread.records[..kept.len()] == *kept
            && reread.records.last() == Some(&appended);
        if !ok {
            wrong.push(cut);
        }
    }
    let expected_cases = full.len() - last_start;
    assert_eq!(cases, expected_cases);
    println!(
        "torn tail: {cases} byte offsets cut, {} wrong recoveries",
        wrong.len()
    );
    assert!(wrong.is_empty(), "wrong recoveries at cuts {wrong:?}");
}

/// RELIABILITY.md: a complete last line with a bad checksum is damage, not a torn write. It
/// was acknowledged once (its newline is its last byte, written in the same call), so cutting
/// it off would drop an acknowledged record: opening refuses and changes nothing.
#[test]
fn a_complete_last_line_with_a_bad_checksum_is_damage_not_a_torn_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    write_journal(&path, 3);
    let mut bytes = std::fs::read(&path).unwrap();
    let last_start = *line_starts(&bytes).last().unwrap();
    bytes[last_start + 20] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    let err = Journal::open_with(&path, clock(), |f| Box::new(f))
        .map(|_| ())
        .expect_err("a damaged complete last line is refused");
    match &err {
        JournalError::Corrupt {
            line, good_after, ..
        } => assert_eq!((*line, *good_after), (3, 0), "{err}"),
        other => panic!("expected damage, got {other}"),
    }
    let shown = err.to_string();
    assert!(
        shown.contains("checksum") && shown.contains("not a torn write"),
        "{shown}"
    );
    // Nothing was cut or set aside, and reading says the same.
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert_eq!(set_aside(dir.path()), 0);
    assert!(matches!(
        warroom::incident::journal::read(&path),
        Err(JournalError::Corrupt { line: 3, .. })
    ));
    // Without its newline the same line is a torn write, as before. (A crash tears only a
    // record not yet acknowledged, which no tail marker names: the marker goes too.)
    std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    std::fs::remove_file(path.with_extension("tail")).unwrap();
    let (_j, recovery) = Journal::open_with(&path, clock(), |f| Box::new(f)).unwrap();
    assert!(recovery.torn.is_some());
}

/// How many torn tails were set aside in `dir` (`journal.torn-<n>`).
fn set_aside(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("journal.torn")
        })
        .count()
}

fn line_of(bytes: &[u8], pos: usize) -> usize {
    1 + bytes[..pos].iter().filter(|b| **b == b'\n').count()
}

#[test]
fn a_thousand_random_byte_flips_in_the_middle_are_all_detected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    write_journal(&path, 40);
    let full = std::fs::read(&path).unwrap();
    let middle_end = *line_starts(&full).last().unwrap(); // everything before the last record
    let seed = rand::random::<u64>();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);

    let flips = 1000;
    let mut detected = 0;
    let mut right_line = 0;
    for _ in 0..flips {
        let pos = rng.random_range(0..middle_end);
        let mask: u8 = rng.random_range(1..=255);
        let mut damaged = full.clone();
        damaged[pos] ^= mask;
        std::fs::write(&path, &damaged).unwrap();
        match Journal::open_with(&path, clock(), |f| Box::new(f)) {
            Err(JournalError::Corrupt { line, .. }) => {
                detected += 1;
                right_line += usize::from(line == line_of(&full, pos));
            }
            Err(JournalError::SequenceGap { .. }) => detected += 1,
            Err(other) => panic!("unexpected error {other} (seed {seed})"),
            Ok(_) => {}
        }
        // Nothing was changed or set aside: the operator decides.
        assert_eq!(std::fs::read(&path).unwrap(), damaged, "seed {seed}");
    }
    let entries = set_aside(dir.path());
    assert_eq!(entries, 0, "no torn-tail files were written (seed {seed})");
    println!(
        "byte flips: {detected}/{flips} detected ({:.1} %), {right_line} named the damaged line",
        100.0 * detected as f64 / flips as f64
    );
    assert_eq!(detected, flips, "seed {seed}");
    assert_eq!(right_line, detected, "seed {seed}");
}

#[test]
fn the_error_for_damage_in_the_middle_names_the_line_and_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    write_journal(&path, 5);
    let mut bytes = std::fs::read(&path).unwrap();
    let third = line_starts(&bytes)[2];
    bytes[third + 3] = b'X';
    std::fs::write(&path, &bytes).unwrap();
    let err = Journal::open(&path).unwrap_err().to_string();
    assert!(err.contains("line 3"), "{err}");
    assert!(err.contains("2 good record(s) follow"), "{err}");
    assert!(err.contains("nothing was changed"), "{err}");
}

#[test]
fn a_missing_record_is_a_gap_even_when_every_line_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    write_journal(&path, 5);
    let bytes = std::fs::read(&path).unwrap();
    let starts = line_starts(&bytes);
    let mut without_third = bytes[..starts[2]].to_vec();
    without_third.extend_from_slice(&bytes[starts[3]..]);
    std::fs::write(&path, &without_third).unwrap();
    match Journal::open(&path) {
        Err(JournalError::SequenceGap {
            line,
            expected_prev,
            found,
            ..
        }) => assert_eq!((line, expected_prev, found), (3, 2, 4)),
        other => panic!("expected a gap, got {other:?}"),
    }
    assert_eq!(std::fs::read(&path).unwrap(), without_third);
}

/// RELIABILITY.md, "The journal": a journal cut exactly at a record boundary, to nothing, or
/// removed, still reads as a valid journal line by line; its tail marker says records that were
/// acknowledged are missing, so opening and reading stop with an error and change nothing. A
/// marker that cannot be read is said on the timeline, never silently trusted.
#[test]
fn a_journal_cut_at_a_record_boundary_or_to_nothing_is_reported_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("original").join("journal.jsonl");
    std::fs::create_dir(original.parent().unwrap()).unwrap();
    let records = write_journal(&original, 6);
    let full = std::fs::read(&original).unwrap();
    let marker = std::fs::read(original.with_extension("tail")).unwrap();
    let mut boundaries = line_starts(&full);
    assert_eq!(boundaries.len(), records.len());
    boundaries.push(full.len());
    for (kept, &cut) in boundaries.iter().enumerate() {
        let case = dir.path().join(format!("cut-{kept}"));
        std::fs::create_dir(&case).unwrap();
        let path = case.join("journal.jsonl");
        std::fs::write(&path, &full[..cut]).unwrap();
        std::fs::write(path.with_extension("tail"), &marker).unwrap();
        let read = warroom::incident::journal::read(&path);
        let opened = Journal::open(&path).map(|_| ());
        if kept == records.len() {
            assert_eq!(read.unwrap().records, records, "the whole journal reads");
            opened.unwrap();
            continue;
        }
        for result in [read.map(|_| ()), opened] {
            match result {
                Err(e @ JournalError::Cut { .. }) => {
                    let shown = e.to_string();
                    assert!(
                        shown.contains(&format!("ends at record {kept}"))
                            && shown.contains("record 6 was written and synced"),
                        "{shown}"
                    );
                }
                other => panic!("cut to {kept} records: {other:?}"),
            }
        }
        assert_eq!(
            std::fs::read(&path).unwrap(),
            &full[..cut],
            "nothing changed"
        );
    }
    // The journal removed, its marker left: refused, and no empty journal is made.
    let gone = dir.path().join("gone");
    std::fs::create_dir(&gone).unwrap();
    std::fs::write(gone.join("journal.tail"), &marker).unwrap();
    let path = gone.join("journal.jsonl");
    assert!(matches!(
        warroom::incident::journal::read(&path),
        Err(JournalError::Cut { .. })
    ));
    assert!(matches!(
        Journal::open(&path),
        Err(JournalError::Cut { .. })
    ));
    assert!(!path.exists(), "no empty journal was created");

    // A marker that does not parse: the journal opens, and says the check could not be made.
    std::fs::write(original.with_extension("tail"), b"garbage").unwrap();
    let (_j, recovery) = Journal::open(&original).unwrap();
    let said = match &recovery.records.last().unwrap().kind {
        Event::JournalNotice { message } => message.clone(),
        other => panic!("{other:?}"),
    };
    assert!(said.contains("tail marker was unreadable"), "{said}");
    assert_eq!(recovery.records[..records.len()], records[..]);
}
