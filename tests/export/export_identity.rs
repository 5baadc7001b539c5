//! A journal from before the global incident id (issue 17) reads as it did and exports byte
//! for byte the same before and after its first publication gives it one; and the full
//! timeline is one option away from the folded one.

use crate::support::export_incident as incident;

use std::path::{Path, PathBuf};
use warroom::incident::event::Event;
use warroom::incident::record::Record;
use warroom::postmortem::{self, ExportOptions, Format};

/// Every file an export wrote, by path relative to `dir`, with its bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for sub in ["", "charts"] {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_file() {
                out.push((
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

fn export_all(store: &warroom::incident::Store, id: &warroom::incident::IncidentId, out: &Path) {
    for format in [Format::Markdown, Format::Status, Format::Json] {
        let mut opts = ExportOptions::new(format, incident::TZ);
        opts.out = Some(out.to_path_buf());
        postmortem::export(store, id, &opts).unwrap();
    }
}

#[test]
fn an_old_journal_reads_unchanged_and_exports_the_same_before_and_after_its_global_id() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident::build(&dir.path().join("data"), &[], true);
    let journal = store.journal_path(&id);
    let before_bytes = std::fs::read(&journal).unwrap();
    // Its lines are the old format: no global id anywhere, and each reads back and encodes to
    // exactly the same bytes.
    assert!(!String::from_utf8_lossy(&before_bytes).contains("incident_uid"));
    for line in before_bytes.split_inclusive(|b| *b == b'\n') {
        let r = Record::decode(line).unwrap();
        assert_eq!(
            r.encode().unwrap(),
            line,
            "{}",
            String::from_utf8_lossy(line)
        );
    }

    let first = dir.path().join("first");
    export_all(&store, &id, &first);
    // Exporting writes nothing into the journal.
    assert_eq!(std::fs::read(&journal).unwrap(), before_bytes);

    // The first publication gives it a global id, recorded in the journal…
    let now = incident::at("23:00");
    let uid = warroom::github::identity::ensure(&store, &id, now).unwrap();
    let records = store.read(&id).unwrap().records;
    assert!(matches!(
        &records.last().unwrap().kind,
        Event::IncidentUid { uid: u } if *u == uid
    ));
    // …and the draft, the status page, the facts and the charts are byte for byte the same.
    let second = dir.path().join("second");
    export_all(&store, &id, &second);
    let (a, b) = (files(&first), files(&second));
    assert!(
        a.len() >= 10,
        "{:?}",
        a.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    assert_eq!(
        a.iter().map(|f| &f.0).collect::<Vec<_>>(),
        b.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for ((path, x), (_, y)) in a.iter().zip(&b) {
        assert!(
            x == y,
            "{path:?} differs once the journal has its global id"
        );
    }
    // Asking again gives the same id and records nothing more.
    assert_eq!(
        warroom::github::identity::ensure(&store, &id, now).unwrap(),
        uid
    );
    assert_eq!(store.read(&id).unwrap().records.len(), records.len());
}

#[test]
fn the_full_timeline_is_one_option_away() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident::build(&dir.path().join("data"), &[], true);
    let rows = |mode| {
        let mut opts = ExportOptions::new(Format::Json, incident::TZ);
        opts.out = Some(dir.path().join(format!("{mode:?}")));
        opts.timeline = mode;
        let report = postmortem::export(&store, &id, &opts).unwrap();
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&report.written[0]).unwrap()).unwrap();
        assert_eq!(v["timeline_mode"], format!("{mode:?}").to_lowercase());
        v["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["event"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let folded = rows(postmortem::timeline::Mode::Folded);
    let full = rows(postmortem::timeline::Mode::Full);
    // Every crossing in the journal has its row in the full record; folded, one per panel.
    let crossings = incident::entries(&[])
        .iter()
        .filter(|e| matches!(e.3, Event::ThresholdCrossed { .. }))
        .count();
    let crossing_rows = |rows: &[String]| rows.iter().filter(|r| r.contains("threshold")).count();
    assert_eq!(crossing_rows(&full), crossings, "{full:#?}");
    // Three panels crossed: one row each, and the recovery.
    assert_eq!(crossing_rows(&folded), 4, "{folded:#?}");
    assert!(full.len() > folded.len());
    // The alert's resolution is in the full record only.
    assert!(full.iter().any(|r| r == "Alert PlannerHigh503 resolved."));
    assert!(
        !folded
            .iter()
            .any(|r| r.contains("resolved.") && r.contains("Alert"))
    );
    println!(
        "timeline: {} rows folded, {} in full",
        folded.len(),
        full.len()
    );
}
