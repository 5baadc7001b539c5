//! The executor lease across machines (issue 36): two responders (two data dirs) on one
//! incident shared through a real `nats-server`. Started at the same moment, a runbook that
//! changes something runs on exactly one of them; the other is told who holds the lease and
//! runs nothing. A runner killed with `kill -9` never gives the lease back: it lapses after
//! its timeout and the other responder's run goes ahead.

use crate::share_cli::warroom;
use crate::support::nats::Nats;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

fn ok(data: &Path, args: &[&str]) -> String {
    let out = warroom(data).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `who`'s copy of a runbook whose one step changes something: it appends `who` to `marker`,
/// then holds on for `hold_s` seconds.
fn runbook(dir: &Path, who: &str, marker: &Path, hold_s: u32) -> PathBuf {
    let runbooks = dir.join(format!("runbooks-{who}-{hold_s}"));
    std::fs::create_dir_all(&runbooks).unwrap();
    let text = format!(
        "name = \"hold\"\ndescription = \"Appends who ran it, then holds on.\"\n\n[[step]]\n\
         id = \"act\"\nkind = \"exec\"\nargv = [\"sh\", \"-c\", \"echo {who} >> {} && \
         sleep {hold_s}\"]\n",
        marker.display()
    );
    std::fs::write(runbooks.join("hold.toml"), text).unwrap();
    runbooks
}

fn start_run(data: &Path, runbooks: &Path, id: &str, url: &str) -> Child {
    warroom(data)
        .args(["runbook", "run", "hold", "--yes", "--incident", id])
        .arg("--runbooks")
        .arg(runbooks)
        .args(["--share", url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Two machines on one shared incident: ana made it, bo joined it.
fn shared_incident(url: &str) -> (tempfile::TempDir, PathBuf, PathBuf, String) {
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (root.path().join("ana"), root.path().join("bo"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let id = ok(&a, &["incident", "new", "--title", "Lease", "--share", url]);
    let id = id.trim().to_string();
    ok(&b, &["incident", "note", &id, "bo is here", "--share", url]);
    (root, a, b, id)
}

#[test]
fn two_responders_start_a_run_at_once_and_exactly_one_runs() {
    let Some(nats) = Nats::start() else { return };
    let url = nats.url();
    let (root, a, b, id) = shared_incident(&url);
    let marker = root.path().join("acted");
    let (ra, rb) = (
        start_run(&a, &runbook(root.path(), "ana", &marker, 10), &id, &url),
        start_run(&b, &runbook(root.path(), "bo", &marker, 10), &id, &url),
    );
    let (oa, ob) = (
        ra.wait_with_output().unwrap(),
        rb.wait_with_output().unwrap(),
    );
    let codes = (oa.status.code(), ob.status.code());
    let (ran, refused) = match codes {
        (Some(0), Some(3)) => (&oa, &ob),
        (Some(3), Some(0)) => (&ob, &oa),
        _ => panic!(
            "one run and one refusal expected, got {codes:?}:\n{}\n{}",
            text(&oa),
            text(&ob)
        ),
    };
    let acted = std::fs::read_to_string(&marker).unwrap();
    assert_eq!(acted.lines().count(), 1, "acted: {acted}");
    let runner = acted.trim();
    assert!(
        text(ran).contains(&format!("held by {runner} on")),
        "{}",
        text(ran)
    );
    let said = text(refused);
    assert!(
        said.contains(&format!("not run: {runner} on"))
            && said.contains("holds the executor lease"),
        "{said}"
    );
    // The run is on the other machine's timeline too, from the engine.
    let other = if runner == "ana" { &b } else { &a };
    let timeline = ok(other, &["incident", "timeline", &id, "--share", &url]);
    assert!(timeline.contains("hold"), "{timeline}");
}

#[test]
fn a_runner_killed_holding_the_lease_hands_it_over_after_the_timeout() {
    let Some(nats) = Nats::start() else { return };
    let url = nats.url();
    let (root, a, b, id) = shared_incident(&url);
    let marker = root.path().join("acted");
    let mut ana = start_run(&a, &runbook(root.path(), "ana", &marker, 40), &id, &url);
    let quick = runbook(root.path(), "bo", &marker, 0);
    // Ana holds the lease once her step has acted (bounded: 30 s).
    let until = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&marker).is_ok_and(|t| t.contains("ana")) {
        assert!(Instant::now() < until, "ana's run never acted");
        std::thread::sleep(Duration::from_millis(100));
    }
    ana.kill().unwrap();
    let _ = ana.wait();
    let killed = Instant::now();
    // Bo asks again every 2 s (bounded: 60 s); refused until the lease lapses.
    let mut refusals = 0;
    loop {
        let out = start_run(&b, &quick, &id, &url).wait_with_output().unwrap();
        if std::fs::read_to_string(&marker).is_ok_and(|t| t.contains("bo")) {
            break;
        }
        assert_eq!(out.status.code(), Some(3), "{}", text(&out));
        assert!(text(&out).contains("ana on"), "{}", text(&out));
        refusals += 1;
        assert!(
            killed.elapsed() < Duration::from_secs(60),
            "the lease never lapsed"
        );
        std::thread::sleep(Duration::from_secs(2));
    }
    let waited = killed.elapsed();
    eprintln!("bo ran {waited:?} after ana was killed, refused {refusals} times before");
    assert!(refusals >= 1, "bo ran at once: the lease was not held");
    assert!(
        waited >= Duration::from_secs(15),
        "the lease lapsed after {waited:?}, well before its 30 s"
    );
}
