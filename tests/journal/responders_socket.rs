//! Several responders on one incident (issue 18), with real processes: a recorder holds the
//! incident and serves it, and `warroom incident note` from other shells records through it.
//! Four shells × 50 notes: none lost, none twice, every author and host recorded, sequence
//! numbers contiguous. kill -9 of the holder while clients write: every acknowledged note is on
//! disk once, every other one at most once and reported failed by its client. The socket
//! reached through a symlink and through a forwarded path (what `ssh -L` makes) works. And
//! `warroom record` stops within a second of SIGTERM while its Prometheus hangs.

use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use warroom::incident::event::Event;
use warroom::incident::serve::{Answer, Client, SOCKET_FILE};
use warroom::incident::store::{Role, this_host};
use warroom::incident::{IncidentId, Store};

/// Nothing listens on port 1: the recorder runs, its source down, backing off.
const NOWHERE: &str = "http://127.0.0.1:1";

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn warroom(data: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warroom"));
    cmd.arg("--data-dir")
        .arg(data)
        .arg("--config")
        .arg(data.join("warroom.toml"))
        .arg("--log-file")
        .arg(data.join("warroom.log"))
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null());
    cmd
}

fn setup(config: &str) -> (tempfile::TempDir, Store, IncidentId) {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("warroom.toml"), config).unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let (mut incident, _) = store.open_incident(&id, Role::Cli).unwrap();
    incident
        .journal
        .append(
            warroom::incident::Source::Operator,
            "ana",
            Event::IncidentOpened {
                title: "Pools full".into(),
                severity: warroom::incident::event::Severity::Sev2,
            },
        )
        .unwrap();
    drop(incident);
    (data, store, id)
}

fn recorder(data: &Path, id: &IncidentId, args: &[&str], err: &str) -> Killed {
    Killed(
        warroom(data)
            .args(["record", &id.to_string()])
            .args(args)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(data.join(err)).unwrap())
            .spawn()
            .expect("start warroom record"),
    )
}

/// Waits (bounded) until `pid` holds the incident and its socket answers.
fn serving(store: &Store, id: &IncidentId, pid: u32) -> PathBuf {
    let path = store.dir(id).join(SOCKET_FILE);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let held = store.holder(id).unwrap().is_some_and(|h| h.pid == pid);
        if held && Client::new(&path, "probe").hello().is_ok() {
            return path;
        }
        assert!(Instant::now() < deadline, "the recorder never served");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn exited(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(Instant::now() < deadline, "the process did not exit");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn stop(child: &mut Killed) -> Duration {
    let started = Instant::now();
    let pid = nix::unistd::Pid::from_raw(child.0.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    assert!(exited(&mut child.0, Duration::from_secs(15)).success());
    started.elapsed()
}

/// One `warroom incident note`, as a shell runs it: (acknowledged, stdout, stderr).
fn note(
    data: &Path,
    id: &IncidentId,
    actor: &str,
    text: &str,
    socket: Option<&Path>,
) -> (bool, String, String) {
    let mut cmd = warroom(data);
    cmd.env("WARROOM_ACTOR", actor)
        .args(["incident", "note", &id.to_string()]);
    if let Some(p) = socket {
        cmd.arg("--socket").arg(p);
    }
    let out = cmd.arg(text).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Each note text on disk with how often it is there, its actor and host.
fn notes_on_disk(store: &Store, id: &IncidentId) -> BTreeMap<String, (usize, String, String)> {
    let mut seen: BTreeMap<String, (usize, String, String)> = BTreeMap::new();
    for r in store.read(id).unwrap().records {
        if let Event::Note { text, .. } = r.kind {
            let e = seen
                .entry(text)
                .or_insert((0, r.actor.clone(), r.host.clone()));
            e.0 += 1;
        }
    }
    seen
}

#[test]
fn four_shells_add_fifty_notes_each_through_the_recorder() {
    let (data, store, id) = setup("");
    let mut rec = recorder(data.path(), &id, &["--alertmanager", NOWHERE], "rec.err");
    serving(&store, &id, rec.0.id());
    let started = Instant::now();
    let shells: Vec<_> = (0..4)
        .map(|s| {
            let (data, id) = (data.path().to_path_buf(), id.clone());
            std::thread::spawn(move || {
                let mut through = 0;
                for n in 0..50 {
                    let (ok, out, err) = note(
                        &data,
                        &id,
                        &format!("shell-{s}"),
                        &format!("shell {s} note {n}"),
                        None,
                    );
                    assert!(ok, "shell {s} note {n} was not acknowledged: {err}");
                    assert!(out.starts_with("recorded #"), "{out}");
                    through += usize::from(out.contains("through warroom recorder"));
                }
                through
            })
        })
        .collect();
    let through: usize = shells.into_iter().map(|t| t.join().unwrap()).sum();
    let took = started.elapsed();
    assert_eq!(through, 200, "every note went through the holder");
    assert!(
        rec.0.try_wait().unwrap().is_none(),
        "the recorder kept holding"
    );
    stop(&mut rec);
    // Reading checks the sequence: 1, 2, 3, … with no gap, or it is an error.
    let records = store.read(&id).unwrap().records;
    let seqs: Vec<u64> = records.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, (1..=records.len() as u64).collect::<Vec<_>>());
    let notes = notes_on_disk(&store, &id);
    let host = this_host();
    let (mut lost, mut twice, mut wrong_author) = (0, 0, 0);
    for s in 0..4 {
        for n in 0..50 {
            match notes.get(&format!("shell {s} note {n}")) {
                None => lost += 1,
                Some((count, actor, h)) => {
                    twice += usize::from(*count > 1);
                    wrong_author += usize::from(*actor != format!("shell-{s}") || *h != host);
                }
            }
        }
    }
    println!(
        "4 shells x 50 notes through the recorder in {took:?}: {lost} lost, {twice} duplicated, \
         {wrong_author} with a wrong author or host, {} records contiguous",
        records.len()
    );
    assert_eq!((lost, twice, wrong_author), (0, 0, 0));
}

#[test]
fn kill_9_of_the_holder_loses_no_acknowledged_note() {
    let (data, store, id) = setup("");
    let seed = rand::random::<u64>();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let writing = Arc::new(AtomicBool::new(true));
    let clients: Vec<_> = (0..4)
        .map(|c| {
            let (data, id, writing) = (data.path().to_path_buf(), id.clone(), writing.clone());
            std::thread::spawn(move || {
                let mut outcomes = Vec::new();
                let deadline = Instant::now() + Duration::from_secs(60);
                let mut n = 0;
                while writing.load(Ordering::SeqCst) && Instant::now() < deadline {
                    let text = format!("client {c} note {n}");
                    let (ok, _, err) = note(&data, &id, &format!("client-{c}"), &text, None);
                    outcomes.push((text, ok, err));
                    n += 1;
                }
                outcomes
            })
        })
        .collect();
    let rounds = 8;
    for round in 0..rounds {
        let mut rec = recorder(
            data.path(),
            &id,
            &["--alertmanager", NOWHERE],
            &format!("rec-{round}.err"),
        );
        // It may be killed before it ever serves: that is one of the moments too.
        let life = Duration::from_millis(rng.random_range(50..700));
        std::thread::sleep(life);
        rec.0.kill().unwrap();
        rec.0.wait().unwrap();
        // Clients write directly while nobody holds it.
        std::thread::sleep(Duration::from_millis(rng.random_range(0..150)));
    }
    writing.store(false, Ordering::SeqCst);
    let outcomes: Vec<_> = clients
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let notes = notes_on_disk(&store, &id);
    let (mut acked, mut lost, mut failed, mut failed_on_disk, mut twice) = (0, 0, 0, 0, 0);
    for (text, ok, err) in &outcomes {
        let count = notes.get(text).map_or(0, |n| n.0);
        twice += usize::from(count > 1);
        if *ok {
            acked += 1;
            lost += usize::from(count == 0);
        } else {
            failed += 1;
            failed_on_disk += usize::from(count == 1);
            assert!(!err.trim().is_empty(), "a failed client says why");
        }
    }
    println!(
        "{rounds} kill -9 of the holder (seed {seed}): {} notes sent, {acked} acknowledged, \
         {lost} acknowledged and lost, {failed} reported failed ({failed_on_disk} of them on disk \
         anyway), {twice} duplicated",
        outcomes.len()
    );
    assert!(acked > 0, "some notes were acknowledged (seed {seed})");
    assert_eq!((lost, twice), (0, 0), "seed {seed}");
    // Every line on disk is one a client sent.
    let sent: BTreeSet<&String> = outcomes.iter().map(|(t, _, _)| t).collect();
    assert!(notes.keys().all(|t| sent.contains(t)), "seed {seed}");
}

/// Forwards every connection at `from` to the socket at `to`, byte for byte both ways, as
/// `ssh -L from:to` does (for the test's lifetime, bounded by its listener's drop).
fn forward(from: &Path, to: &Path) -> std::thread::JoinHandle<()> {
    let listener = std::os::unix::net::UnixListener::bind(from).unwrap();
    let to = to.to_path_buf();
    std::thread::spawn(move || {
        for conn in listener.incoming().take(16) {
            let Ok(a) = conn else { return };
            let Ok(b) = std::os::unix::net::UnixStream::connect(&to) else {
                return;
            };
            let (mut a2, mut b2) = (a.try_clone().unwrap(), b.try_clone().unwrap());
            let (mut a, mut b) = (a, b);
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut a, &mut b);
                let _ = b.shutdown(std::net::Shutdown::Write);
            });
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut b2, &mut a2);
                let _ = a2.shutdown(std::net::Shutdown::Write);
            });
        }
    })
}

#[test]
fn the_socket_works_through_a_symlink_and_a_forwarded_path() {
    let (data, store, id) = setup("");
    let mut rec = recorder(data.path(), &id, &["--alertmanager", NOWHERE], "rec.err");
    let real = serving(&store, &id, rec.0.id());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&real).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the socket is owner-only");

    let elsewhere = tempfile::tempdir().unwrap();
    let link = elsewhere.path().join("wr-link.sock");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let (ok, out, err) = note(data.path(), &id, "ana", "through a link", Some(&link));
    assert!(ok && out.starts_with("recorded #"), "{out}{err}");

    let forwarded = elsewhere.path().join("wr.sock");
    let _fwd = forward(&forwarded, &real);
    let (ok, out, err) = note(data.path(), &id, "bo", "from the laptop", Some(&forwarded));
    assert!(ok && out.starts_with("recorded #"), "{out}{err}");
    // A forwarded socket answers for its own incident only.
    let other = IncidentId::parse("2001-01-01-1").unwrap();
    let (ok, _, err) = note(
        data.path(),
        &other,
        "bo",
        "wrong incident",
        Some(&forwarded),
    );
    assert!(!ok && err.contains("serves incident"), "{err}");
    // Following through the forwarded path: the past, then what is appended.
    let mut following = Client::new(&forwarded, "bo")
        .follow(Some(&id.to_string()), 0)
        .unwrap();
    assert_eq!(following.welcome.incident, id.to_string());
    assert_eq!(following.welcome.holder.pid, rec.0.id());
    let mut texts = Vec::new();
    while texts.len() < 2 {
        match following.next_answer() {
            Some(Ok(Answer::Record { record })) => {
                if let Event::Note { text, .. } = record.kind {
                    texts.push(text);
                }
            }
            Some(Ok(_)) => {}
            other => panic!("the stream ended: {other:?}"),
        }
    }
    assert_eq!(texts, vec!["through a link", "from the laptop"]);
    let (ok, _, err) = note(data.path(), &id, "cy", "seen live", None);
    assert!(ok, "{err}");
    let live = loop {
        match following.next_answer() {
            Some(Ok(Answer::Record { record })) => break record,
            Some(Ok(_)) => {}
            other => panic!("the stream ended: {other:?}"),
        }
    };
    assert_eq!(
        (live.actor.as_str(), live.host.as_str()),
        ("cy", this_host().as_str())
    );
    // The holder's exit ends the stream: a follower sees it go.
    stop(&mut rec);
    let ended = (0..100).find_map(|_| match following.next_answer() {
        None => Some(true),
        Some(Err(_)) => Some(true),
        Some(Ok(_)) => None,
    });
    assert_eq!(ended, Some(true));
    assert!(!real.exists(), "the holder removed its socket");
    // Nobody holds it now: the explicit socket is refused, nothing is written behind it.
    let (ok, _, err) = note(data.path(), &id, "bo", "nobody there", Some(&forwarded));
    assert!(!ok, "{err}");
    assert!(!notes_on_disk(&store, &id).contains_key("nobody there"));
}

#[test]
fn record_stops_within_a_second_of_sigterm_while_prometheus_hangs() {
    // A "Prometheus" that accepts every connection and never answers.
    let hung = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", hung.local_addr().unwrap());
    let held = Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = held.clone();
    std::thread::spawn(move || {
        for conn in hung.incoming().take(64).flatten() {
            keep.lock().unwrap().push(conn);
        }
    });
    let config = "[[panel]]\ntitle = \"Pool saturation\"\nquery = \"db_pool\"\nunit = \"percent\"\n\
                  warn = 0.8\ncrit = 0.95\n\n[[panel]]\ntitle = \"Errors\"\nquery = \"errors\"\n\
                  unit = \"percent\"\nwarn = 0.01\ncrit = 0.05\n";
    let (data, store, id) = setup(config);
    let mut rec = recorder(data.path(), &id, &["--prometheus", &url], "rec.err");
    serving(&store, &id, rec.0.id());
    // Let the panel watch's queries reach the hung server and wait there.
    let deadline = Instant::now() + Duration::from_secs(10);
    while held.lock().unwrap().is_empty() {
        assert!(
            Instant::now() < deadline,
            "the recorder never asked Prometheus"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let took = stop(&mut rec);
    let log = std::fs::read_to_string(data.path().join("rec.err")).unwrap();
    println!("warroom record stopped {took:?} after SIGTERM with Prometheus hanging");
    assert!(
        took < Duration::from_millis(1500),
        "stopping took {took:?} (the bound is one second): {log}"
    );
    assert!(log.contains("stopped by SIGTERM"), "{log}");
    assert!(
        log.contains("snapshots"),
        "it says what became of the snapshots: {log}"
    );
    let last = store.read(&id).unwrap().records.pop().unwrap();
    assert_eq!(
        last.kind,
        Event::Interrupted {
            signal: "SIGTERM".into()
        }
    );
    assert_eq!(store.holder(&id).unwrap(), None);
    let _ = std::io::stdout().flush();
}
