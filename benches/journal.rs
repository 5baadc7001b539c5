//! Journal benchmarks (issue 6, RELIABILITY.md "The journal"): appends per second with a sync
//! per record, the sync's p50/p99 (target p99 < 50 ms), and opening a 100,000-record journal.
//!
//! A plain main (percentiles, not criterion's means). Run: `cargo bench --bench journal`.
//! The journal is written under `$WARROOM_BENCH_DIR` (default `target/`), so the figure is the
//! disk's, not a tmpfs's.

#[path = "support/figure.rs"]
mod figure;

use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use warroom::clock::WallClock;
use warroom::incident::event::{Direction, Level};
use warroom::incident::storage::{FileStorage, Storage};
use warroom::incident::{Event, Journal, Record, Source};

/// Times every sync of the storage it wraps.
#[derive(Debug)]
struct TimedSyncs {
    inner: FileStorage,
    syncs: Arc<Mutex<Vec<Duration>>>,
}

impl Storage for TimedSyncs {
    fn write_once(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write_once(buf)
    }
    fn sync_data(&mut self) -> io::Result<()> {
        let start = Instant::now();
        let r = self.inner.sync_data();
        if let Ok(mut s) = self.syncs.lock() {
            s.push(start.elapsed());
        }
        r
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.inner.truncate(len)
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn event(i: u64) -> Event {
    if i.is_multiple_of(3) {
        Event::ThresholdCrossed {
            panel: "DB pool in use".into(),
            level: Level::Crit,
            direction: Direction::Up,
            value: 0.97,
            threshold: 0.95,
            at: chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
        }
    } else {
        Event::note(format!("record {i}: retries at three layers #factor"))
    }
}

fn main() {
    let base = std::env::var("WARROOM_BENCH_DIR").unwrap_or_else(|_| "target".into());
    std::fs::create_dir_all(&base).expect("bench dir");
    let dir = tempfile::tempdir_in(&base).expect("temp dir");

    // 1. Appends with a sync per record.
    let path = dir.path().join("appends.jsonl");
    let syncs = Arc::new(Mutex::new(Vec::new()));
    let s = syncs.clone();
    let (mut journal, _) = Journal::open_with(&path, Arc::new(WallClock), move |f| {
        Box::new(TimedSyncs { inner: f, syncs: s })
    })
    .expect("open");
    let (max_n, max_time) = (2000u64, Duration::from_secs(20));
    let mut appends = Vec::new();
    let start = Instant::now();
    for i in 0..max_n {
        let t = Instant::now();
        journal
            .append(Source::Operator, "bench", event(i))
            .expect("append");
        appends.push(t.elapsed());
        if start.elapsed() > max_time {
            break;
        }
    }
    let total = start.elapsed();
    let mut syncs = syncs.lock().expect("syncs").clone();
    syncs.sort();
    appends.sort();
    println!(
        "appends with a sync each: {} in {:.2} s = {:.0} appends/s",
        appends.len(),
        total.as_secs_f64(),
        appends.len() as f64 / total.as_secs_f64()
    );
    println!(
        "append (write+sync) p50 {:.2} ms, p99 {:.2} ms; sync p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms (target p99 < 50 ms)",
        ms(percentile(&appends, 0.5)),
        ms(percentile(&appends, 0.99)),
        ms(percentile(&syncs, 0.5)),
        ms(percentile(&syncs, 0.99)),
        ms(*syncs.last().expect("at least one sync"))
    );
    figure::report(
        "journal append (write+sync), p99",
        ms(percentile(&appends, 0.99)),
        "ms",
        figure::Target::Under(50.0),
    );

    // 2. Opening a 100,000-record journal (written without syncs: only reading is measured).
    let big = dir.path().join("big.jsonl");
    {
        let mut file = io::BufWriter::new(std::fs::File::create(&big).expect("create"));
        let t0: chrono::DateTime<chrono::Utc> = "2026-07-17T07:18:00Z".parse().expect("time");
        for seq in 1..=100_000u64 {
            let record = Record {
                seq,
                time: t0 + chrono::Duration::milliseconds(seq as i64 * 250),
                source: Source::Metric,
                actor: "bench".into(),
                host: String::new(),
                kind: event(seq),
            };
            file.write_all(&record.encode().expect("encode"))
                .expect("write");
        }
        file.flush().expect("flush");
    }
    let size = std::fs::metadata(&big).expect("size").len();
    for round in 1..=3 {
        let t = Instant::now();
        let (_j, recovery) = Journal::open(&big).expect("open big");
        let open = t.elapsed();
        let t = Instant::now();
        let summary = warroom::incident::summary::summarize(&recovery.records);
        let fold = t.elapsed();
        println!(
            "open 100,000 records ({:.1} MB), round {round}: open+verify {:.0} ms, summary {:.0} ms ({} notes)",
            size as f64 / 1e6,
            ms(open),
            ms(fold),
            summary.notes.len()
        );
        if round == 3 {
            figure::report(
                "open and verify a 100,000-record journal",
                ms(open),
                "ms",
                figure::Target::Under(1000.0),
            );
        }
    }
}
