//! RELIABILITY.md, "The journal": 100 `kill -9` at random moments of a process appending to the
//! journal lose 0 acknowledged records and leave 0 gaps.
//!
//! The writer is `warroom incident stress ID`, which prints each sequence number only after its
//! record is synced. Every kill lands somewhere: starting up, recovering the previous torn tail,
//! mid-write, between write and sync, between sync and print. (A process kill leaves the page
//! cache intact; power loss is what the sync is for, and it cannot be simulated here.)

use rand::{Rng, SeedableRng};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use warroom::incident::{Event, Source, Store};

#[test]
fn kill_9_at_random_moments_loses_no_acknowledged_record() {
    let data = tempfile::tempdir().unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    {
        let (mut incident, _) = store
            .open_incident(&id, warroom::incident::store::Role::Cli)
            .unwrap();
        incident
            .journal
            .append(
                Source::Operator,
                "ana",
                Event::IncidentOpened {
                    title: "crash test".into(),
                    severity: warroom::incident::event::Severity::Sev3,
                },
            )
            .unwrap();
    }
    let path = store.journal_path(&id);
    let seed = rand::random::<u64>();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);

    let kills = 100;
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut acknowledged: Vec<u64> = Vec::new();
    let (mut lost, mut gaps, mut torn_tails, mut acked_in_run) = (0, 0, 0, Vec::new());
    for round in 0..kills {
        assert!(
            Instant::now() < deadline,
            "the test ran out of time at round {round} (seed {seed})"
        );
        let mut child = Command::new(env!("CARGO_BIN_EXE_warroom"))
            .arg("--data-dir")
            .arg(data.path())
            .arg("--log-file")
            .arg(data.path().join("warroom.log"))
            .args(["incident", "stress", &id.to_string(), "--count", "1000000"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            // Only complete lines count: a number cut off by the kill was never acknowledged.
            let mut seqs = Vec::new();
            let mut reader = BufReader::new(stdout);
            let mut line = Vec::new();
            while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                if line.ends_with(b"\n")
                    && let Some(n) = std::str::from_utf8(&line)
                        .ok()
                        .and_then(|s| s.trim_end().parse::<u64>().ok())
                {
                    seqs.push(n);
                }
                line.clear();
            }
            seqs
        });
        std::thread::sleep(Duration::from_micros(rng.random_range(0..60_000)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let seqs: Vec<u64> = reader.join().unwrap();
        acked_in_run.push(seqs.len());
        acknowledged.extend(&seqs);

        let recovery = warroom::incident::journal::read(&path)
            .unwrap_or_else(|e| panic!("round {round}: {e} (seed {seed})"));
        torn_tails += usize::from(recovery.torn.is_some());
        let present = recovery.records.len() as u64;
        for (i, r) in recovery.records.iter().enumerate() {
            gaps += usize::from(r.seq != i as u64 + 1);
        }
        // An acknowledged record must be there, and be the stress writer's.
        lost += acknowledged
            .iter()
            .filter(|s| **s > present || recovery.records[**s as usize - 1].source != Source::Sim)
            .count();
        // The next round's writer recovers the torn tail itself.
    }
    let total: usize = acked_in_run.iter().sum();
    let rounds_with_acks = acked_in_run.iter().filter(|n| **n > 0).count();
    println!(
        "kill -9: {kills} kills, {total} acknowledged records ({rounds_with_acks} rounds \
         acknowledged at least one), {torn_tails} torn tails seen, {lost} acknowledged records \
         lost, {gaps} gaps (seed {seed})"
    );
    assert_eq!(lost, 0, "seed {seed}");
    assert_eq!(gaps, 0, "seed {seed}");
    assert!(
        total > 0,
        "the writer acknowledged nothing in {kills} rounds"
    );
    // Acknowledged numbers only ever grow: no number was handed out twice.
    assert!(acknowledged.windows(2).all(|w| w[0] < w[1]), "seed {seed}");
}
