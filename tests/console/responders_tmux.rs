//! Two consoles on one incident, in real terminals (issue 18): the first holds it, the second
//! follows. A note typed in the follower appears in the holder's timeline and one typed in the
//! holder in the follower's, each with its author; the status bars say who holds it and how
//! many follow; a third follows through a socket path outside the incident directory (what
//! `ssh -L` gives a laptop). When the holder quits the follower stays, offers to take over, and on a yes
//! holds the incident: a shell's note then goes through it.

use crate::support::tmux::Tmux;
use std::path::Path;
use std::time::{Duration, Instant};
use warroom::incident::event::{Event, Severity};
use warroom::incident::serve::{Client, SOCKET_FILE};
use warroom::incident::store::Role;
use warroom::incident::{IncidentId, Source, Store};

/// Nothing listens on port 1: the panels say so; the incident is what is tested.
const NOWHERE: &str = "http://127.0.0.1:1";

fn console(data: &Path, id: &IncidentId, actor: &str, log: &str) -> String {
    format!(
        "WARROOM_ACTOR={actor} NO_COLOR=1 {} --data-dir {} --config {} --log-file {} open \
         --incident {id} --prometheus {NOWHERE}",
        env!("CARGO_BIN_EXE_warroom"),
        data.display(),
        data.join("warroom.toml").display(),
        data.join(log).display(),
    )
}

fn type_note(term: &Tmux, text: &str) {
    term.send(&["n"]);
    term.type_text(text);
    term.send(&["Enter"]);
}

fn wait_until(what: &str, within: Duration, done: impl Fn() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn two_consoles_share_one_incident_and_the_follower_takes_over() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("warroom.toml"), "").unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    {
        let (mut incident, _) = store.open_incident(&id, Role::Cli).unwrap();
        let opened = Event::IncidentOpened {
            title: "Pools full".into(),
            severity: Severity::Sev2,
        };
        incident
            .journal
            .append(Source::Operator, "ana", opened)
            .unwrap();
    }
    let Some(holder) = Tmux::start(&console(data.path(), &id, "ana", "a.log"), 220, 34) else {
        return;
    };
    let socket = store.dir(&id).join(SOCKET_FILE);
    wait_until("the holder console serves", Duration::from_secs(15), || {
        store
            .holder(&id)
            .unwrap()
            .is_some_and(|h| h.role == Role::Console)
            && Client::new(&socket, "probe").hello().is_ok()
    });
    let first = store.holder(&id).unwrap().unwrap();
    let follower = Tmux::start(&console(data.path(), &id, "bo", "b.log"), 220, 34).unwrap();
    follower.expect(
        &format!("following warroom open pid {}", first.pid),
        Duration::from_secs(15),
    );
    holder.expect("held here, 1 following", Duration::from_secs(10));

    // Follower to holder.
    follower.send(&["t"]);
    holder.send(&["t"]);
    type_note(&follower, "from the follower");
    holder.expect("from the follower", Duration::from_secs(10));
    let screen = holder.expect("bo: from the follower", Duration::from_secs(5));
    assert!(screen.contains("Timeline"), "{screen}");
    // Holder to follower.
    type_note(&holder, "from the holder");
    follower.expect("ana: from the holder", Duration::from_secs(10));
    let records = store.read(&id).unwrap().records;
    let author = |text: &str| {
        records
            .iter()
            .find(|r| matches!(&r.kind, Event::Note { text: t, .. } if t == text))
            .map(|r| r.actor.clone())
    };
    assert_eq!(author("from the follower").as_deref(), Some("bo"));
    assert_eq!(author("from the holder").as_deref(), Some("ana"));

    // A third responder follows through another path to the socket (as `ssh -L` gives a
    // laptop): it sees the timeline and records through it.
    let elsewhere = tempfile::tempdir().unwrap();
    let link = elsewhere.path().join("wr.sock");
    std::os::unix::fs::symlink(&socket, &link).unwrap();
    let remote = format!(
        "WARROOM_ACTOR=cy NO_COLOR=1 {} --data-dir {} --config {} --log-file {} open --socket {} \
         --prometheus {NOWHERE}",
        env!("CARGO_BIN_EXE_warroom"),
        elsewhere.path().display(),
        data.path().join("warroom.toml").display(),
        data.path().join("c.log").display(),
        link.display(),
    );
    let laptop = Tmux::start(&remote, 220, 34).unwrap();
    laptop.expect(
        &format!("following warroom open pid {}", first.pid),
        Duration::from_secs(15),
    );
    holder.expect("held here, 2 following", Duration::from_secs(10));
    laptop.send(&["t"]);
    laptop.expect("ana: from the holder", Duration::from_secs(10));
    type_note(&laptop, "from the laptop");
    holder.expect("cy: from the laptop", Duration::from_secs(10));
    laptop.send(&["q"]);
    laptop.expect("[exited 0]", Duration::from_secs(10));
    holder.expect("held here, 1 following", Duration::from_secs(10));

    // The holder leaves; the follower stays and offers to take over.
    holder.send(&["q"]);
    holder.expect("[exited 0]", Duration::from_secs(10));
    follower.expect("holder gone", Duration::from_secs(10));
    follower.expect("Take over the incident", Duration::from_secs(5));
    follower.send(&["Enter"]);
    follower.expect("held here", Duration::from_secs(15));
    let now = store.holder(&id).unwrap().expect("the follower holds it");
    assert_eq!(now.role, Role::Console);
    assert_ne!(now.pid, first.pid);
    // A shell's note now goes through the console that took over.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_warroom"))
        .arg("--data-dir")
        .arg(data.path())
        .arg("--config")
        .arg(data.path().join("warroom.toml"))
        .arg("--log-file")
        .arg(data.path().join("cli.log"))
        .env("WARROOM_ACTOR", "dee")
        .args(["incident", "note", &id.to_string(), "after the takeover"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("through warroom console (pid {}", now.pid)),
        "{stdout}"
    );
    follower.expect("dee: after the takeover", Duration::from_secs(10));
    follower.send(&["q"]);
    follower.expect("[exited 0]", Duration::from_secs(10));
    let records = store.read(&id).unwrap().records;
    assert!(
        records.iter().any(|r| matches!(&r.kind,
            Event::JournalNotice { message } if message.contains("the console of bo"))),
        "the takeover is on the timeline: {records:#?}"
    );
    assert_eq!(store.holder(&id).unwrap(), None);
    assert!(!socket.exists(), "the last holder removed its socket");
}

/// Issue 28, point 4: a dropped ssh session sends the console SIGHUP. It stops as on SIGTERM:
/// the interruption on the timeline, the socket file removed, the incident released, the
/// terminal out of the alternate screen; it once died at once and left all of them behind.
#[test]
fn a_hangup_stops_the_console_cleanly() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("warroom.toml"), "").unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let Some(term) = Tmux::start(&console(data.path(), &id, "ana", "a.log"), 160, 30) else {
        return;
    };
    let socket = store.dir(&id).join(SOCKET_FILE);
    wait_until("the console serves", Duration::from_secs(15), || {
        store
            .holder(&id)
            .unwrap()
            .is_some_and(|h| h.role == Role::Console)
            && Client::new(&socket, "probe").hello().is_ok()
    });
    assert_eq!(term.format("#{alternate_on}"), "1", "the console is drawn");
    let pid = store.holder(&id).unwrap().unwrap().pid;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGHUP,
    )
    .unwrap();
    term.expect("[exited 129]", Duration::from_secs(10));
    assert_eq!(
        term.format("#{alternate_on}"),
        "0",
        "the terminal is restored"
    );
    assert!(!socket.exists(), "the socket file was removed");
    assert_eq!(store.holder(&id).unwrap(), None, "the incident is released");
    let last = store.read(&id).unwrap().records.pop().unwrap();
    assert_eq!(
        last.kind,
        Event::Interrupted {
            signal: "SIGHUP".into()
        }
    );
}
