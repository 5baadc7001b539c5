//! `warroom incident …` end to end through the binary, in a temporary data dir, including
//! hostile note text (RELIABILITY.md, "Bad input").

use std::path::Path;
use std::process::{Command, Output};
use warroom::incident::event::{Priority, Severity, Status, Tag};
use warroom::incident::{Event, Record, Source, Store};
use warroom::sanitize::{self, HOSTILE_SAMPLES};

fn run(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warroom"))
        .arg("--data-dir")
        .arg(data)
        .arg("--log-file")
        .arg(data.join("warroom.log"))
        .args(args)
        .env("WARROOM_ACTOR", "ana")
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap()
}

fn ok(data: &Path, args: &[&str]) -> String {
    let out = run(data, args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn fails(data: &Path, args: &[&str]) -> String {
    let out = run(data, args);
    assert!(!out.status.success(), "{args:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_incident_is_created_fed_and_read_back_without_the_console() {
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let id = ok(
        d,
        &[
            "incident",
            "new",
            "--title",
            "Planner API pool exhausted",
            "--severity",
            "sev1",
        ],
    );
    let id = id.trim();
    assert!(warroom::incident::IncidentId::parse(id).is_ok(), "{id}");

    let ack = ok(
        d,
        &[
            "incident",
            "note",
            id,
            "Pool",
            "at",
            "100%",
            "#impact",
            "#root-cause",
        ],
    );
    assert!(
        // #1 the opening, #2 the incident's global id (issue 17), #3 this note.
        ack.starts_with("recorded #3 at ") && ack.contains("UTC"),
        "{ack}"
    );
    ok(d, &["incident", "status", id, "identified"]);
    ok(
        d,
        &[
            "incident",
            "action",
            id,
            "Alert on pool saturation",
            "--owner",
            "ana",
            "--priority",
            "high",
            "--due",
            "2026-12-10",
        ],
    );
    ok(d, &["incident", "action", id, "Cap gateway retries"]);

    // The journal holds exactly what was said, as typed records.
    let store = Store::new(d);
    let records = store.read(&store.find(id).unwrap()).unwrap().records;
    // Creation also records the incident's global id (issue 17), right after the opening.
    assert!(
        matches!(records[1].kind, Event::IncidentUid { .. }),
        "{records:?}"
    );
    let kinds: Vec<&Event> = records
        .iter()
        .map(|r| &r.kind)
        .filter(|k| !matches!(k, Event::IncidentUid { .. }))
        .collect();
    assert_eq!(records.len(), 6);
    assert!(
        records
            .iter()
            .all(|r| r.source == Source::Operator && r.actor == "ana")
    );
    assert_eq!(
        *kinds[0],
        Event::IncidentOpened {
            title: "Planner API pool exhausted".into(),
            severity: Severity::Sev1
        }
    );
    assert_eq!(
        *kinds[1],
        Event::Note {
            text: "Pool at 100% #impact #root-cause".into(),
            tags: vec![Tag::Impact, Tag::RootCause]
        }
    );
    assert_eq!(
        *kinds[2],
        Event::StatusChanged {
            status: Status::Identified
        }
    );
    assert!(
        matches!(kinds[3], Event::ActionItem { id, priority: Some(Priority::P1), due: Some(_), owner: Some(o), .. } if id == "AI-1" && o == "ana")
    );
    assert!(matches!(kinds[4], Event::ActionItem { id, owner: None, .. } if id == "AI-2"));

    let table = ok(d, &["incident", "timeline", id]);
    assert_eq!(table.lines().count(), 2 + records.len(), "{table}");
    assert!(
        table.contains("Status: identified") && table.contains("Action item AI-1"),
        "{table}"
    );
    assert!(
        table.contains(" UTC "),
        "times carry the zone's abbreviation: {table}"
    );

    let json = ok(d, &["incident", "timeline", id, "--json"]);
    let decoded: Vec<Record> = json
        .split_inclusive('\n')
        .map(|l| Record::decode(l.as_bytes()).unwrap())
        .collect();
    assert_eq!(decoded, records);

    let show = ok(d, &["incident", "show", id]);
    for part in [
        "Planner API pool exhausted",
        "SEV-1",
        "identified",
        "AI-1",
        "AI-2",
        "Writer:    none",
    ] {
        assert!(show.contains(part), "{part} missing from {show}");
    }
    let list = ok(d, &["incident", "list"]);
    assert!(list.contains(id) && list.contains("identified"), "{list}");
}

#[test]
fn mistakes_are_refused_with_a_message_and_nothing_is_written() {
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let id = ok(d, &["incident", "new"]).trim().to_string();
    let cases: [(&[&str], &str); 6] = [
        (
            &["incident", "note", "../../etc", "x"],
            "is not an incident id",
        ),
        (
            &["incident", "note", "2020-01-01-1", "x"],
            "there is no incident \"2020-01-01-1\"",
        ),
        (
            &["incident", "status", &id, "fixed"],
            "status \"fixed\" is not known",
        ),
        (
            &["incident", "action", &id, "x", "--due", "next week"],
            "YYYY-MM-DD",
        ),
        (
            &["incident", "action", &id, "x", "--priority", "urgent"],
            "priority \"urgent\"",
        ),
        (
            &["incident", "new", "--severity", "SEV-9"],
            "severity \"SEV-9\"",
        ),
    ];
    for (args, expected) in cases {
        let stderr = fails(d, args);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    assert_eq!(Store::new(d).list().unwrap().len(), 1);
    // The opening and its global id (issue 17), nothing more.
    assert_eq!(
        ok(d, &["incident", "timeline", &id, "--json"])
            .lines()
            .count(),
        2
    );
}

fn raw_control_bytes(s: &str) -> usize {
    // Newlines separate lines of output; every other hostile character counts.
    s.split('\n')
        .map(|l| l.chars().filter(|c| sanitize::is_hostile(*c)).count())
        .sum()
}

#[test]
fn hostile_note_text_is_stored_and_printed_with_no_raw_control_bytes() {
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let id = ok(
        d,
        &["incident", "new", "--title", "\u{1b}]0;pwned\u{7}title"],
    )
    .trim()
    .to_string();
    // An argument cannot carry a NUL byte; that sample goes through the library below.
    let mut through_binary = 0;
    for sample in HOSTILE_SAMPLES.iter().filter(|s| !s.contains('\0')) {
        ok(d, &["incident", "note", &id, sample]);
        through_binary += 1;
    }
    let store = Store::new(d);
    let found = store.find(&id).unwrap();
    {
        let (mut incident, _) = store
            .open_incident(&found, warroom::incident::store::Role::Cli)
            .unwrap();
        for sample in HOSTILE_SAMPLES.iter().filter(|s| s.contains('\0')) {
            incident
                .journal
                .append(Source::Operator, sample, Event::note(*sample))
                .unwrap();
        }
    }
    let records = store.read(&found).unwrap().records;
    // The opening, the global id (issue 17), then one note per sample.
    assert_eq!(records.len(), 2 + HOSTILE_SAMPLES.len());
    assert!(through_binary + 2 < records.len());

    let file = String::from_utf8(std::fs::read(store.journal_path(&found)).unwrap()).unwrap();
    let table = ok(d, &["incident", "timeline", &id]);
    let json = ok(d, &["incident", "timeline", &id, "--json"]);
    let show = ok(d, &["incident", "show", &id]);
    let list = ok(d, &["incident", "list"]);
    let counts = [
        ("journal file", raw_control_bytes(&file)),
        ("timeline", raw_control_bytes(&table)),
        ("timeline --json", raw_control_bytes(&json)),
        ("show", raw_control_bytes(&show)),
        ("list", raw_control_bytes(&list)),
    ];
    println!(
        "hostile text: {} samples, raw control bytes per output: {counts:?}",
        HOSTILE_SAMPLES.len()
    );
    assert!(counts.iter().all(|(_, n)| *n == 0), "{counts:?}");
    // Every note is one table row: no sample broke a line or moved the cursor.
    assert_eq!(table.lines().count(), 2 + records.len(), "{table}");
    // Stored text is the sanitized text, nothing more and nothing less.
    for (r, sample) in records[2..]
        .iter()
        .zip(HOSTILE_SAMPLES.iter().filter(|s| !s.contains('\0')))
    {
        assert_eq!(
            r.kind,
            Event::note(sanitize::multiline(sample).into_owned())
        );
    }
}

/// The header facts a draft needs can be set from the command line: severity and services,
/// shown by `incident show`, and the export's lint no longer asks for the services.
#[test]
fn severity_and_services_are_set_from_the_command_line() {
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let id = ok(d, &["incident", "new", "--title", "Checkout down"]);
    let id = id.trim();
    let lint_before = ok(d, &["export", id]);
    assert!(lint_before.contains("services"), "{lint_before}");
    ok(d, &["incident", "severity", id, "SEV-1"]);
    ok(
        d,
        &["incident", "services", id, "checkout, payments", "search"],
    );
    let show = ok(d, &["incident", "show", id]);
    assert!(show.contains("SEV-1"), "{show}");
    assert!(show.contains("checkout, payments, search"), "{show}");
    let lint_after = ok(d, &["export", id]);
    assert!(!lint_after.contains("services"), "{lint_after}");
    let md = std::fs::read_to_string(d.join("incidents").join(id).join("exports/postmortem.md"))
        .unwrap();
    assert!(md.contains("SEV-1") && md.contains("checkout"), "{md}");
    let bad = fails(d, &["incident", "severity", id, "SEV-9"]);
    assert!(bad.contains("SEV-9"), "{bad}");
    let none = fails(d, &["incident", "services", id, " , "]);
    assert!(none.contains("name at least one service"), "{none}");
}
