//! RELIABILITY.md, "The journal", while a runbook runs: 100 `kill -9` at random moments of
//! `warroom runbook run --incident` lose 0 acknowledged records and leave 0 gaps. A step's
//! progress line is its acknowledgement: it is printed only after the journal synced the
//! step's record, so every step printed as done must be in the journal afterwards.

use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use warroom::incident::event::{Event, StepState};
use warroom::incident::store::Store;

const KILLS: usize = 100;

#[test]
fn kill_9_while_a_runbook_runs_loses_no_acknowledged_step() {
    let data = tempfile::tempdir().unwrap();
    let runbooks = tempfile::tempdir().unwrap();
    let mut src = String::from("name = \"notes\"\n");
    for i in 0..200 {
        src += &format!("[[step]]\nid = \"n{i}\"\nkind = \"note\"\ntext = \"step {i}\"\n");
    }
    std::fs::write(runbooks.path().join("notes.toml"), src).unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap().to_string();
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let journal = data
        .path()
        .join("incidents")
        .join(&id)
        .join("journal.jsonl");
    // (run id, step) printed as succeeded.
    let mut acknowledged: BTreeSet<(String, String)> = BTreeSet::new();
    let started = Instant::now();
    for kill in 0..KILLS {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "only {kill} kills in 60 s"
        );
        let len_before = std::fs::metadata(&journal).map_or(0, |m| m.len());
        let mut child = Command::new(env!("CARGO_BIN_EXE_warroom"))
            .args(["runbook", "run", "notes", "--yes", "--incident", &id])
            .arg("--runbooks")
            .arg(runbooks.path())
            .arg("--data-dir")
            .arg(data.path())
            .arg("--log-file")
            .arg(data.path().join("warroom.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Kill while the run writes: once the journal grew (bounded), after a random pause.
        let grew = Instant::now();
        while std::fs::metadata(&journal).map_or(0, |m| m.len()) <= len_before
            && grew.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(rng.random_range(0..60)));
        let _ = child.kill();
        let _ = child.wait();
        let mut out = String::new();
        let _ = child.stdout.take().unwrap().read_to_string(&mut out);
        let run_id = out.lines().find_map(|l| {
            let (_, rest) = l.split_once(" run ")?;
            Some(rest.split_once(" of \"notes\"")?.0.to_string())
        });
        for l in out.lines() {
            // "HH:MM:SSZ ✓ n12: succeeded ", a whole line (the kill may cut the last one).
            if let (Some(run), Some(rest)) = (&run_id, l.split("✓ ").nth(1))
                && let Some((step, _)) = rest.split_once(": succeeded")
            {
                acknowledged.insert((run.clone(), step.to_string()));
            }
        }
    }
    // The next writer recovers any torn tail; reading checks every checksum.
    let (incident, _) = store
        .open_incident(
            &store.find(&id).unwrap(),
            warroom::incident::store::Role::Cli,
        )
        .unwrap();
    drop(incident);
    let records = store.read(&store.find(&id).unwrap()).unwrap().records;
    let seqs: Vec<u64> = records.iter().map(|r| r.seq).collect();
    assert_eq!(
        seqs,
        (1..=records.len() as u64).collect::<Vec<_>>(),
        "0 gaps"
    );
    let recorded: BTreeSet<(String, String)> = records
        .iter()
        .filter_map(|r| match &r.kind {
            Event::RunbookStep {
                run,
                step,
                state: StepState::Succeeded,
                ..
            } => Some((run.run_id.clone(), step.clone())),
            _ => None,
        })
        .collect();
    let lost: Vec<_> = acknowledged.difference(&recorded).collect();
    eprintln!(
        "{KILLS} kills: {} steps acknowledged, {} records, 0 expected lost, {} lost",
        acknowledged.len(),
        records.len(),
        lost.len()
    );
    assert!(
        acknowledged.len() > KILLS,
        "too few steps acknowledged for the test to mean anything"
    );
    assert!(
        lost.is_empty(),
        "acknowledged but not in the journal: {lost:?}"
    );
}
