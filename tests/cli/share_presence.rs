//! Who works a shared incident (issue 36): a timeline entry when a responder joins or leaves.
//! Through the binary and one real nats-server: ana's console (in tmux) and the recorders of
//! bo, cy and dee join; bo's recorder is stopped (SIGTERM) and records that it left; cy's is
//! frozen (SIGSTOP: a laptop asleep) until it is recorded silent, once though ana and dee both
//! watch, and thawed it records that it is back; ana quits her console and records that she
//! left. Every responder's view ends with the same entries, each once.

use crate::share_cluster::{ok, recorder, responder};
use crate::support::child::Reaped;
use crate::support::nats::Nats;
use crate::support::tmux::Tmux;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Nothing listens on port 1: the console's panels say so; its presence is what is tested.
const NOWHERE: &str = "http://127.0.0.1:1";

fn signal(child: &Reaped, name: &str) {
    let pid = child.0.id().to_string();
    let sent = Command::new("kill").args([name, &pid]).status().unwrap();
    assert!(sent.success(), "kill {name} {pid}");
}

/// One presence entry as a view shows it: who recorded it, whose presence (the first word of
/// "ana on host"), and the change.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    by: String,
    whose: String,
    change: String,
}

/// The presence entries of `id` as `data`'s responder sees the incident (its journal merged
/// with the engine's), in the view's order.
fn presence(data: &Path, id: &str) -> Vec<Entry> {
    let json = ok(data, &["incident", "timeline", id, "--json"]);
    let mut out = Vec::new();
    for line in json.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v["kind"]["type"] != "responder" {
            continue;
        }
        let change = match &v["kind"]["change"] {
            Value::String(s) => s.clone(),
            Value::Object(o) => o.keys().next().cloned().unwrap_or_default(),
            other => panic!("a change that is neither: {other}"),
        };
        let who = v["kind"]["who"].as_str().unwrap_or_default();
        out.push(Entry {
            by: v["actor"].as_str().unwrap_or_default().to_string(),
            whose: who.split(' ').next().unwrap_or_default().to_string(),
            change,
        });
    }
    out
}

fn has(entries: &[Entry], whose: &str, change: &str) -> usize {
    (entries.iter())
        .filter(|e| e.whose == whose && e.change == change)
        .count()
}

/// The last lines of every responder's logs under `root`, to tell why a view fell short.
fn logs(root: &Path) -> String {
    let mut said = String::new();
    for name in ["ana", "bo", "cy", "dee"] {
        for file in ["warroom.log", "console.log", "recorder.err"] {
            let path = root.join(name).join(file);
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = &lines[lines.len().saturating_sub(15)..];
            if !tail.is_empty() {
                said += &format!("--- {name}/{file}\n{}\n", tail.join("\n"));
            }
        }
    }
    said
}

/// Polls `data`'s view until `done` holds (bounded); returns the last view.
fn until(
    data: &Path,
    id: &str,
    what: &str,
    within: Duration,
    done: impl Fn(&[Entry]) -> bool,
) -> Vec<Entry> {
    let deadline = Instant::now() + within;
    loop {
        let seen = presence(data, id);
        if done(&seen) {
            return seen;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: the view holds {seen:#?}\n{}",
            logs(data.parent().unwrap())
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn joining_leaving_and_going_silent_are_on_every_responders_timeline_once() {
    let Some(nats) = Nats::start() else { return };
    let url = nats.url();
    let root = tempfile::tempdir().unwrap();
    let [ana, bo, cy, dee] = ["ana", "bo", "cy", "dee"].map(|n| responder(root.path(), n, &url, 1));
    let id = ok(&ana, &["incident", "new", "--title", "Pool exhausted"])
        .trim()
        .to_string();
    // The others take the incident from the engine with their first note.
    for data in [&bo, &cy, &dee] {
        ok(data, &["incident", "note", &id, "here"]);
    }
    let console = format!(
        "WARROOM_ACTOR=ana NO_COLOR=1 {} --data-dir {} --config {} --log-file {} open \
         --incident {id} --prometheus {NOWHERE}",
        env!("CARGO_BIN_EXE_warroom"),
        ana.display(),
        ana.join("warroom.toml").display(),
        ana.join("console.log").display(),
    );
    let Some(term) = Tmux::start(&console, 160, 48) else {
        return;
    };
    let log = |data: &Path| data.join("recorder.err");
    let (b, c, _d) = (
        recorder(&bo, &id, &log(&bo)),
        recorder(&cy, &id, &log(&cy)),
        recorder(&dee, &id, &log(&dee)),
    );
    let everyone = ["ana", "bo", "cy", "dee"];
    until(&dee, &id, "all four join", Duration::from_secs(30), |s| {
        everyone.iter().all(|w| has(s, w, "joined") == 1)
    });

    // bo stops his recorder: he says he left, at once.
    signal(&b, "-TERM");
    until(&ana, &id, "bo leaves", Duration::from_secs(15), |s| {
        has(s, "bo", "left") == 1
    });

    // cy's laptop sleeps: after 30 s without a word, one of ana and dee records it.
    signal(&c, "-STOP");
    let frozen = Instant::now();
    let seen = until(&dee, &id, "cy goes silent", Duration::from_secs(75), |s| {
        has(s, "cy", "silent") == 1
    });
    let silent = seen.iter().find(|e| e.change == "silent").unwrap();
    assert!(["ana", "dee"].contains(&silent.by.as_str()), "{silent:?}");
    assert!(
        frozen.elapsed() >= Duration::from_secs(28),
        "recorded silent after {:?}",
        frozen.elapsed()
    );
    // It wakes: it says it is back.
    signal(&c, "-CONT");
    until(&ana, &id, "cy is back", Duration::from_secs(30), |s| {
        has(s, "cy", "back") == 1
    });

    // ana closes her console: she says she left.
    term.send(&["q"]);
    term.expect("[exited 0]", Duration::from_secs(15));
    until(&dee, &id, "ana leaves", Duration::from_secs(15), |s| {
        has(s, "ana", "left") == 1
    });

    // Every view, once all has arrived: the same eight entries, each once.
    let want = |s: &[Entry]| s.len() >= 8;
    let views: Vec<Vec<Entry>> = [&ana, &bo, &cy, &dee]
        .iter()
        .map(|data| {
            until(
                data,
                &id,
                "every entry arrives",
                Duration::from_secs(30),
                want,
            )
        })
        .collect();
    for view in &views {
        assert_eq!(view, &views[0], "views differ");
        for w in everyone {
            assert_eq!(has(view, w, "joined"), 1, "{w} joined: {view:#?}");
        }
        for (w, change) in [
            ("bo", "left"),
            ("cy", "silent"),
            ("cy", "back"),
            ("ana", "left"),
        ] {
            assert_eq!(has(view, w, change), 1, "{w} {change}: {view:#?}");
        }
        assert_eq!(view.len(), 8, "{view:#?}");
    }
}
