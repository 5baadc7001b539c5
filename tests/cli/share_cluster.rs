//! One incident on a 3-node NATS JetStream cluster, its stream replicated 3 times (issue 36's
//! fault test): three responders (separate data dirs and processes) write 1,000 notes each
//! while one node is killed and restarted, and the third responder's recorder (through which
//! its notes go) is killed with `kill -9` and started again. Every responder's view ends with
//! exactly the 3,000 notes: none lost, none twice.

use crate::share_cli::warroom_with;
use crate::support::child::Reaped;
use crate::support::nats::Cluster;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const NOTES: usize = 1_000;

/// warroom on `data`'s machine, with its own config (`warroom.toml`, written by [`responder`]).
pub(crate) fn warroom(data: &Path) -> Command {
    warroom_with(data, &data.join("warroom.toml"))
}

fn run(data: &Path, args: &[&str]) -> Output {
    warroom(data).args(args).output().unwrap()
}

pub(crate) fn ok(data: &Path, args: &[&str]) -> String {
    let out = run(data, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A responder's machine: its data dir, with the engine at `url` keeping `replicas` copies.
pub(crate) fn responder(root: &Path, name: &str, url: &str, replicas: usize) -> PathBuf {
    let data = root.join(name);
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("warroom.toml"),
        format!("[share]\nurl = \"{url}\"\nreplicas = {replicas}\n"),
    )
    .unwrap();
    data
}

/// The notes of `id` as `data`'s responder sees the incident on the engine: text → count.
fn notes_seen(data: &Path, id: &str) -> BTreeMap<String, usize> {
    let out = run(data, &["incident", "timeline", id, "--json"]);
    let mut seen = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v["kind"]["type"] == "note"
            && let Some(t) = v["kind"]["text"].as_str()
        {
            *seen.entry(t.to_string()).or_insert(0) += 1;
        }
    }
    seen
}

/// Whether `text` is in `data`'s own journal (what a person checks before writing a note a
/// second time, when the first attempt's answer was lost).
fn recorded_here(data: &Path, id: &str, text: &str) -> bool {
    let store = warroom::incident::Store::new(data);
    let Ok(found) = store.find(id) else {
        return false;
    };
    store.read(&found).is_ok_and(|r| {
        r.records
            .iter()
            .any(|r| matches!(&r.kind, warroom::incident::Event::Note { text: t, .. } if t == text))
    })
}

/// Writes `who-1` … `who-NOTES`; a note whose command failed is written again only when it
/// is not in this machine's journal. Counts the notes written so far in `done`.
fn write_notes(data: PathBuf, id: String, who: &'static str, done: Arc<AtomicUsize>) {
    for n in 1..=NOTES {
        let text = format!("{who}-{n}");
        for attempt in 0..20 {
            if run(&data, &["incident", "note", &id, &text])
                .status
                .success()
                || recorded_here(&data, &id, &text)
            {
                break;
            }
            assert!(attempt < 19, "{text} was never recorded");
            std::thread::sleep(Duration::from_millis(200));
        }
        done.fetch_add(1, Ordering::SeqCst);
    }
}

/// A responder's recorder (`[share]` alone in its config: it serves the incident and shares it), its
/// stderr in `log`.
pub(crate) fn recorder(data: &Path, id: &str, log: &Path) -> Reaped {
    Reaped(
        warroom(data)
            .args(["record", id])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap(),
    )
}

/// Fails unless the recorder still runs and said it shares the incident (one with nothing to
/// record exits at once, and killing it would prove nothing).
fn still_sharing(recorder: &mut Reaped, log: &Path) {
    let said = std::fs::read_to_string(log).unwrap_or_default();
    assert!(
        recorder.0.try_wait().unwrap().is_none() && said.contains("sharing incident"),
        "C's recorder is not running: {said}"
    );
}

/// Waits until `done` reaches `n` (bounded).
fn until_written(done: &AtomicUsize, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(300);
    while done.load(Ordering::SeqCst) < n {
        assert!(Instant::now() < deadline, "the writers stalled");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_responders_lose_nothing_and_double_nothing_through_a_node_and_a_kill() {
    let Some(mut cluster) = tokio::task::spawn_blocking(|| Cluster::start(3))
        .await
        .unwrap()
    else {
        return;
    };
    let url = cluster.url();
    cluster.until_replicated_streams_are_taken().await;
    let root = tempfile::tempdir().unwrap();
    let [a, b, c] = ["ana", "bo", "cy"].map(|n| responder(root.path(), n, &url, 3));
    let id = ok(&a, &["incident", "new", "--title", "Pool exhausted"])
        .trim()
        .to_string();
    // B and C join it from the engine (their first write joins).
    for data in [&b, &c] {
        ok(data, &["incident", "note", &id, "joined"]);
    }
    // C's notes go through its recorder, which shares them.
    let logs = tempfile::tempdir().unwrap();
    let (first_log, second_log) = (logs.path().join("first"), logs.path().join("second"));
    let mut c_recorder = Some(recorder(&c, &id, &first_log));

    let counts: Vec<Arc<AtomicUsize>> = (0..3).map(|_| Arc::new(AtomicUsize::new(0))).collect();
    let writers: Vec<_> = [(&a, "ana"), (&b, "bo"), (&c, "cy")]
        .into_iter()
        .zip(&counts)
        .map(|((data, who), done)| {
            let (data, id, done) = (data.clone(), id.clone(), done.clone());
            std::thread::spawn(move || write_notes(data, id, who, done))
        })
        .collect();
    let faults = tokio::task::spawn_blocking({
        let counts = counts.clone();
        let (c, id) = (c.clone(), id.clone());
        let (first_log, second_log) = (first_log.clone(), second_log.clone());
        move || {
            // A third of the way: a node is killed; two thirds: it comes back.
            until_written(&counts[0], NOTES / 3);
            cluster.nodes[1].stop();
            // Meanwhile C's recorder dies without a word and is started again.
            until_written(&counts[2], NOTES / 2);
            let mut first = c_recorder.take().unwrap();
            still_sharing(&mut first, &first_log);
            drop(first);
            until_written(&counts[2], NOTES / 2 + 50);
            let mut again = recorder(&c, &id, &second_log);
            until_written(&counts[0], 2 * NOTES / 3);
            cluster.nodes[1].restart();
            until_written(&counts[2], NOTES);
            still_sharing(&mut again, &second_log);
            (cluster, again)
        }
    });
    for w in writers {
        w.join().expect("a writer failed");
    }
    let (_cluster, _recorder) = faults.await.unwrap();

    // Every view, once all has arrived: 3,000 notes (and the two "joined"), each once.
    let want: Vec<String> = ["ana", "bo", "cy"]
        .iter()
        .flat_map(|w| (1..=NOTES).map(move |n| format!("{w}-{n}")))
        .collect();
    for data in [&a, &b, &c] {
        let deadline = Instant::now() + Duration::from_secs(120);
        let seen = loop {
            let seen = notes_seen(data, &id);
            let all = want.iter().all(|t| seen.contains_key(t));
            if all || Instant::now() > deadline {
                break seen;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        let missing: Vec<&String> = want.iter().filter(|t| !seen.contains_key(*t)).collect();
        let twice: Vec<(&String, &usize)> = (seen.iter())
            .filter(|(t, n)| **n > 1 && t.as_str() != "joined")
            .collect();
        assert!(
            missing.is_empty() && twice.is_empty(),
            "{}: {} missing (first {:?}), {} twice (first {:?})",
            data.display(),
            missing.len(),
            missing.first(),
            twice.len(),
            twice.first()
        );
        assert_eq!(seen.get("joined"), Some(&2), "{}", data.display());
        assert_eq!(
            seen.values().sum::<usize>(),
            3 * NOTES + 2,
            "{}",
            data.display()
        );
    }
}
