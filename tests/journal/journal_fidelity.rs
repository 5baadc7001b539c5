//! RELIABILITY.md, "The journal" (issue 18, point 5): values read back are the values written.
//! Random finite floats of every magnitude go into threshold crossings; the journal read back
//! holds the same bits, and `warroom incident timeline --json` (a real process) prints the
//! journal's own bytes, byte for byte, so no checksum changes. Records without a host (written
//! before it was recorded) read and re-encode unchanged.

use rand::{Rng, SeedableRng};
use std::process::Command;
use warroom::incident::event::{Direction, Level};
use warroom::incident::record::Record;
use warroom::incident::store::Role;
use warroom::incident::{Event, Source, Store};

/// A finite f64 from random bits (every exponent, subnormals included), or a "nice" decimal
/// like a panel reading.
fn random_float(rng: &mut impl Rng) -> f64 {
    loop {
        let v = match rng.random_range(0..3) {
            0 => f64::from_bits(rng.random::<u64>()),
            1 => rng.random_range(0.0..1.0),
            _ => rng.random_range(0..100_000) as f64 / 1000.0,
        };
        if v.is_finite() {
            return v;
        }
    }
}

#[test]
fn floats_and_lines_read_back_exactly_as_written() {
    let data = tempfile::tempdir().unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let seed = rand::random::<u64>();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut written = Vec::new();
    {
        let (mut incident, _) = store.open_incident(&id, Role::Cli).unwrap();
        for i in 0..700 {
            let (value, threshold) = (random_float(&mut rng), random_float(&mut rng));
            let record = incident
                .journal
                .append(
                    Source::Metric,
                    "DB pool in use",
                    Event::ThresholdCrossed {
                        panel: format!("panel {i}"),
                        level: Level::Warn,
                        direction: Direction::Up,
                        value,
                        threshold,
                        at: chrono::DateTime::UNIX_EPOCH,
                    },
                )
                .unwrap();
            written.push((value, threshold, record));
        }
    }
    let journal = std::fs::read(store.journal_path(&id)).unwrap();
    let read = store.read(&id).unwrap().records;
    assert_eq!(read.len(), written.len());
    let mut drifted = 0;
    for ((value, threshold, record), back) in written.iter().zip(&read) {
        let Event::ThresholdCrossed {
            value: v,
            threshold: t,
            ..
        } = &back.kind
        else {
            panic!("{back:?}")
        };
        drifted += usize::from(v.to_bits() != value.to_bits())
            + usize::from(t.to_bits() != threshold.to_bits());
        assert_eq!(back, record, "seed {seed}");
    }
    assert_eq!(drifted, 0, "{drifted} of 1400 floats drifted (seed {seed})");
    // Re-encoding what was read gives the journal's bytes, checksums and all.
    let reencoded: Vec<u8> = read.iter().flat_map(|r| r.encode().unwrap()).collect();
    assert!(
        reencoded == journal,
        "re-encoded bytes differ (seed {seed})"
    );

    let out = Command::new(env!("CARGO_BIN_EXE_warroom"))
        .arg("--data-dir")
        .arg(data.path())
        .arg("--log-file")
        .arg(data.path().join("warroom.log"))
        .args(["incident", "timeline", "--json", &id.to_string()])
        .env("WARROOM_CONFIG", data.path().join("none.toml"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout == journal,
        "`timeline --json` differs from the journal's bytes (seed {seed})"
    );
    println!(
        "fidelity: 1400 floats, 0 drifted, {} bytes identical",
        journal.len()
    );
}

#[test]
fn records_written_before_the_host_field_read_and_re_encode_unchanged() {
    let old = Record {
        seq: 1,
        time: "2026-11-29T14:55:02.125Z".parse().unwrap(),
        source: Source::Operator,
        actor: "ana".into(),
        host: String::new(),
        kind: Event::note("from an older warroom"),
    };
    let line = old.encode().unwrap();
    assert!(!String::from_utf8_lossy(&line).contains("\"host\""));
    let back = Record::decode(&line).unwrap();
    assert_eq!(back.host, "");
    assert_eq!(back.encode().unwrap(), line);

    let new = Record {
        host: "bastion-1".into(),
        ..old
    };
    let line = new.encode().unwrap();
    assert!(
        String::from_utf8_lossy(&line).contains("\"actor\":\"ana\",\"host\":\"bastion-1\""),
        "{}",
        String::from_utf8_lossy(&line)
    );
    assert_eq!(Record::decode(&line).unwrap(), new);
}

/// Issue 28, point 2: ±Inf and NaN are readings (an error ratio over zero requests). They are
/// recorded as `"+Inf"`, `"-Inf"` and `"NaN"`, read back with the same bits' meaning, printed
/// by `incident timeline --json` as the journal's own bytes, shown as such in the text
/// timeline, and the journal stays durable: it once refused them, and the console showed
/// "NOT DURABLE" and refused every destructive step.
#[test]
fn non_finite_readings_are_recorded_exactly_and_the_journal_stays_durable() {
    let data = tempfile::tempdir().unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let readings = [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 0.25];
    {
        let (mut incident, _) = store.open_incident(&id, Role::Cli).unwrap();
        for (i, value) in readings.into_iter().enumerate() {
            incident
                .journal
                .append(
                    Source::Metric,
                    "Error ratio",
                    Event::ThresholdCrossed {
                        panel: format!("Error ratio {i}"),
                        level: Level::Crit,
                        direction: Direction::Up,
                        value,
                        threshold: 0.1,
                        at: chrono::DateTime::UNIX_EPOCH,
                    },
                )
                .unwrap();
            assert!(incident.journal.is_durable());
        }
    }
    let journal = std::fs::read(store.journal_path(&id)).unwrap();
    let text = String::from_utf8(journal.clone()).unwrap();
    for shown in [
        "\"value\":\"+Inf\"",
        "\"value\":\"-Inf\"",
        "\"value\":\"NaN\"",
        "\"value\":0.25",
    ] {
        assert_eq!(text.matches(shown).count(), 1, "{shown} in {text}");
    }
    let read = store.read(&id).unwrap().records;
    let back: Vec<f64> = read
        .iter()
        .map(|r| match &r.kind {
            Event::ThresholdCrossed { value, .. } => *value,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(back[0], f64::INFINITY);
    assert_eq!(back[1], f64::NEG_INFINITY);
    assert!(back[2].is_nan());
    assert_eq!(back[3], 0.25);
    let reencoded: Vec<u8> = read.iter().flat_map(|r| r.encode().unwrap()).collect();
    assert!(reencoded == journal, "re-encoding changed the bytes");
    let timeline = |json: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_warroom"));
        c.arg("--data-dir")
            .arg(data.path())
            .arg("--log-file")
            .arg(data.path().join("warroom.log"))
            .args(["incident", "timeline"]);
        if json {
            c.arg("--json");
        }
        let out = c
            .arg(id.to_string())
            .env("WARROOM_CONFIG", data.path().join("none.toml"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    assert!(
        timeline(true) == journal,
        "`timeline --json` differs from the journal"
    );
    let shown = String::from_utf8(timeline(false)).unwrap();
    for v in ["+Inf", "-Inf", "NaN"] {
        assert!(shown.contains(v), "{v} not shown in:\n{shown}");
    }
}
