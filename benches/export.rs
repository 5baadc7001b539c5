//! Export benchmark (issues 7 and 17): the postmortem draft of a 10,000-event journal with 8
//! panel snapshots and the fact queries' snapshots, charts included (target under 100 ms). Two
//! figures: `draft` (facts with each step's effect and the customer impact, template and the
//! SVG charts of the panels that moved, in memory) and `export` (reading and checking the
//! journal and the snapshots from disk, then writing every file atomically, syncs included).
//!
//! A plain main (percentiles, not criterion's means). Run: `cargo bench --bench export`.
//! Files go under `$WARROOM_BENCH_DIR` (default `target/`), so the syncs are the disk's.

#[path = "support/figure.rs"]
mod figure;

#[path = "../tests/fixtures/export/incident.rs"]
mod incident;

use std::io::Write;
use std::time::{Duration, Instant};
use warroom::incident::event::{AlertSource, Direction, Event, Level, RunRef, StepState};
use warroom::incident::snapshot;
use warroom::incident::{Record, Source};
use warroom::postmortem::{self, ExportOptions, Format};

const EVENTS: usize = 10_000;
const RUNS: usize = 30;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Filler in the proportions of a noisy incident: flapping crossings, alerts per pod, notes,
/// runbook steps with intents and acknowledgements.
fn filler(i: usize) -> (Source, Event) {
    let pod = format!("planner-api-{}", i % 10);
    match i % 8 {
        0 | 1 => (
            Source::Metric,
            Event::ThresholdCrossed {
                panel: ["Error ratio", "Pool saturation", "Queue depth"][i % 3].into(),
                level: if i % 16 < 8 { Level::Warn } else { Level::Crit },
                direction: if i.is_multiple_of(2) {
                    Direction::Up
                } else {
                    Direction::Down
                },
                value: 0.5,
                threshold: 0.4,
                at: incident::at("07:20"),
            },
        ),
        2 | 3 => (
            Source::Alert,
            if i.is_multiple_of(2) {
                Event::AlertFiring {
                    name: "PlannerHigh503".into(),
                    labels: [("pod".to_string(), pod)].into(),
                    source: AlertSource::Prometheus,
                }
            } else {
                Event::AlertResolved {
                    name: "PlannerHigh503".into(),
                    labels: [("pod".to_string(), pod)].into(),
                    source: AlertSource::Prometheus,
                }
            },
        ),
        4 => (
            Source::Operator,
            Event::note(format!(
                "observation {i}: pools still full on {pod} #impact"
            )),
        ),
        5 => (
            Source::Runbook,
            Event::RunbookStep {
                run: RunRef {
                    run_id: "batch-restart-1".into(),
                    runbook: "batch-restart".into(),
                    hash: "0123abcd".into(),
                },
                step: format!("restart-{pod}"),
                state: if i % 16 < 8 {
                    StepState::Started
                } else {
                    StepState::Succeeded
                },
                detail: None,
            },
        ),
        6 => (
            Source::Runbook,
            Event::RunbookIntent {
                run_id: "batch-restart-1".into(),
                step: format!("restart-{pod}"),
                idempotency_key: format!("k-{i}"),
                request: format!("POST /control/restart {{\"pod\":\"{pod}\"}}"),
            },
        ),
        _ => (
            Source::Runbook,
            Event::RunbookAck {
                run_id: "batch-restart-1".into(),
                step: format!("restart-{pod}"),
                idempotency_key: format!("k-{i}"),
                outcome: "200 OK".into(),
            },
        ),
    }
}

fn main() {
    let base = std::env::var_os("WARROOM_BENCH_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    std::fs::create_dir_all(&base).expect("bench dir");
    let dir = tempfile::tempdir_in(&base).expect("temp dir");

    // The fixed incident, then filler up to 10,000 records spread over the window.
    let (store, id) = incident::build(dir.path(), &[], false);
    let mut records = store.read(&id).expect("journal").records;
    let (from, to) = (incident::at("07:00"), incident::at("09:20"));
    let span = (to - from).num_milliseconds();
    for i in 0..EVENTS - records.len() {
        let (source, kind) = filler(i);
        records.push(Record {
            seq: 0, // numbered below, after sorting by time
            time: from + chrono::Duration::milliseconds(span * i as i64 / EVENTS as i64),
            source,
            actor: "bench".into(),
            host: String::new(),
            kind: kind.sanitized(),
        });
    }
    records.sort_by_key(|r| r.time);
    for (i, r) in records.iter_mut().enumerate() {
        r.seq = i as u64 + 1;
    }
    let mut file = std::fs::File::create(store.journal_path(&id)).expect("journal file");
    for r in &records {
        file.write_all(&r.encode().expect("encode")).expect("write");
    }
    drop(file);
    let snaps = incident::snapshots(false);
    snapshot::write_all(&store.snapshots_dir(&id), &snaps).expect("snapshots");
    let fact_snaps = incident::fact_snapshots();
    let facts_dir = snapshot::facts_dir(&store.snapshots_dir(&id));
    snapshot::write_all(&facts_dir, &fact_snaps).expect("fact snapshots");
    let opts = ExportOptions::new(Format::Markdown, incident::TZ);
    println!(
        "export: {} records, {} panel snapshots of {} points each",
        records.len(),
        snaps.len(),
        snaps[0].series[0].points.len()
    );

    let mut drafts = Vec::with_capacity(RUNS);
    let mut exports = Vec::with_capacity(RUNS);
    let (mut bytes, mut written) = (0, 0);
    for _ in 0..RUNS {
        let start = Instant::now();
        let d = postmortem::draft_with(&id.to_string(), &records, &snaps, &fact_snaps, &opts)
            .expect("draft");
        drafts.push(start.elapsed());
        bytes = d.files.iter().map(|f| f.1.len()).sum::<usize>();
        let start = Instant::now();
        let report = postmortem::export(&store, &id, &opts).expect("export");
        exports.push(start.elapsed());
        written = report.written.len();
        assert_eq!(written, d.files.len());
    }
    drafts.sort();
    exports.sort();
    println!(
        "draft   ({} files, {} KiB): median {:.1} ms, p99 {:.1} ms",
        written,
        bytes / 1024,
        percentile(&drafts, 0.5).as_secs_f64() * 1e3,
        percentile(&drafts, 0.99).as_secs_f64() * 1e3
    );
    println!(
        "export  (read, check, render, write with syncs): median {:.1} ms, p99 {:.1} ms (target < 100 ms)",
        percentile(&exports, 0.5).as_secs_f64() * 1e3,
        percentile(&exports, 0.99).as_secs_f64() * 1e3
    );
    figure::report(
        "export of a 10,000-event journal with 8 snapshots and charts, median",
        percentile(&exports, 0.5).as_secs_f64() * 1e3,
        "ms",
        figure::Target::Under(100.0),
    );
}
