//! Everything a rehearsal records is on its clock: a note typed during it (through the
//! holder's own writer, which the holder's socket of issue 18 will call for notes from another
//! shell) lands between the records it was typed between, stamped in simulated time; the fault
//! is dated at its simulated second at every speed, however late the recorder saw it; the
//! rehearsal's end is recorded and what comes after is stamped at it.

use std::time::Duration;
use warroom::config::Config;
use warroom::incident::{Event, Source, Store};
use warroom::rehearsal::recording::Recording;
use warroom::rehearsal::{Stage, StageSpec};
use warroom::sim::Scenario;

fn epoch() -> chrono::DateTime<chrono::Utc> {
    "2026-02-11T22:30:00Z".parse().unwrap()
}

async fn stage(speed: f64) -> Stage {
    Stage::start(StageSpec {
        scenario: Scenario::load("crash-loop").unwrap(),
        seed: 1,
        speed,
        epoch: epoch(),
        listen: Some("127.0.0.1:0"),
        retention: Duration::from_secs(3600),
    })
    .await
    .expect("the stage starts")
}

/// Wait (bounded in wall time) until the stage's simulated time reaches `t`.
async fn reach(stage: &Stage, t: f64) {
    tokio::time::timeout(Duration::from_secs(60), stage.time.sleep_until(t))
        .await
        .unwrap_or_else(|_| panic!("simulated second {t} not reached; now {}", stage.now()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_note_during_a_rehearsal_lands_between_the_records_it_was_typed_between() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::default();
    let stage = stage(60.0).await;
    let rec = Recording::start(dir.path(), None, &config, &stage, "crash-loop")
        .await
        .unwrap();
    let fault = 600.0;
    reach(&stage, fault + 60.0).await;
    let typed_at = stage.now();
    let note = rec
        .writer
        .append(
            Source::Operator,
            "ana",
            Event::note("pools look full #impact"),
        )
        .await
        .expect("recorded");
    let after = stage.now();
    reach(&stage, after + 120.0).await;
    let id = rec.id.clone();
    rec.finish(&config, &stage).await.unwrap();

    let records = Store::new(dir.path()).read(&id).unwrap().records;
    let i = records.iter().position(|r| r.seq == note.seq).unwrap();
    let sim = |t: chrono::DateTime<chrono::Utc>| (t - epoch()).num_milliseconds() as f64 / 1000.0;
    assert!(
        // The journal keeps milliseconds: the stamp may be up to one below the exact instant.
        (typed_at - 0.001..=after).contains(&sim(note.time)),
        "the note is stamped in simulated time: {} not in {typed_at}..={after}",
        sim(note.time)
    );
    let (before, next) = (&records[i - 1], &records[i + 1]);
    assert!(
        before.time <= note.time && note.time <= next.time,
        "#{} {} / note {} / #{} {}",
        before.seq,
        before.time,
        note.time,
        next.seq,
        next.time
    );
    // And the end is the last thing the rehearsal recorded.
    assert!(matches!(
        records.last().unwrap().kind,
        Event::RehearsalEnded { .. }
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fault_is_dated_at_its_simulated_second_at_every_speed() {
    for speed in [60.0, 1000.0] {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::default();
        let stage = stage(speed).await;
        let rec = Recording::start(dir.path(), None, &config, &stage, "crash-loop")
            .await
            .unwrap();
        // The panel watch polls at most every 100 ms of wall time, 100 simulated seconds at
        // 1000x: five minutes past the fault leave it several polls to see the first effect.
        reach(&stage, 900.0).await;
        let id = rec.id.clone();
        rec.finish(&config, &stage).await.unwrap();
        let records = Store::new(dir.path()).read(&id).unwrap().records;
        let fault = records
            .iter()
            .find(|r| matches!(r.kind, Event::SimFault { .. }))
            .unwrap_or_else(|| panic!("no fault at {speed}x: {records:#?}"));
        assert_eq!(
            fault.time,
            epoch() + chrono::Duration::seconds(600),
            "at {speed}x"
        );
        let first_effect = records
            .iter()
            .find_map(|r| match &r.kind {
                Event::ThresholdCrossed { at, .. } => Some(*at),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no crossing at {speed}x"));
        assert!(fault.time < first_effect, "at {speed}x");
    }
}
