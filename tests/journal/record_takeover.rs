//! One writer per incident, with the headless recorder: two recorders cannot hold one incident;
//! a console refuses to open it without asking and says who holds it; a takeover stops the
//! recorder (SIGTERM), waits for its lock and leaves the journal intact; a console or a
//! runbook run is never stopped that way. The last part answers the real prompt in tmux.

use crate::support::tmux;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use warroom::incident::store::{Holder, TakeOverError};
use warroom::incident::{Event, IncidentId, Source, Store};

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
        .env("RUST_BACKTRACE", "0");
    cmd
}

fn setup() -> (tempfile::TempDir, Store, IncidentId) {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("warroom.toml"), "").unwrap();
    let store = Store::new(data.path());
    let id = store.create(chrono::Utc::now()).unwrap();
    let (mut incident, _) = store
        .open_incident(&id, warroom::incident::store::Role::Cli)
        .unwrap();
    for text in ["before the recorder", "pool at 100% #impact"] {
        incident
            .journal
            .append(Source::Operator, "ana", Event::note(text))
            .unwrap();
    }
    drop(incident);
    (data, store, id)
}

fn recorder(data: &Path, id: &IncidentId, err: &str) -> Killed {
    Killed(
        warroom(data)
            .args(["record", &id.to_string(), "--alertmanager", NOWHERE])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(data.join(err)).unwrap())
            .spawn()
            .expect("start warroom record"),
    )
}

/// The holder once it has written its details (bounded).
fn holder(store: &Store, id: &IncidentId) -> Holder {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(h) = store.holder(id).unwrap().filter(|h| h.pid != 0) {
            return h;
        }
        assert!(Instant::now() < deadline, "nobody took the lock");
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
        std::thread::sleep(Duration::from_millis(20));
    }
}

// The scenarios run in turn in one test: a child spawned by a concurrent test would hold a copy
// of this process's lock descriptor between its fork and its exec, and make a lock look held.
#[test]
fn one_writer_per_incident_and_a_clean_takeover() {
    two_recorders_cannot_hold_one_incident();
    a_console_without_a_terminal_is_told_who_holds_it();
    a_takeover_stops_the_recorder_and_keeps_the_journal();
    a_console_or_a_runbook_is_never_stopped();
    the_console_prompt_takes_over_in_a_real_terminal();
    incident_commands_show_times_in_the_configured_timezone();
}

fn incident_commands_show_times_in_the_configured_timezone() {
    let (data, store, id) = setup();
    let first = store.read(&id).unwrap().records[0].time;
    let run = |args: &[&str]| {
        let out = warroom(data.path()).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let utc = run(&["incident", "timeline", &id.to_string()]);
    assert!(
        utc.contains(&first.format("%H:%M:%S UTC").to_string()),
        "{utc}"
    );
    std::fs::write(
        data.path().join("warroom.toml"),
        "timezone = \"Asia/Kolkata\"\n",
    )
    .unwrap();
    let local = first.with_timezone(&chrono_tz::Asia::Kolkata);
    let shown = local.format("%H:%M:%S IST").to_string();
    let timeline = run(&["incident", "timeline", &id.to_string()]);
    assert!(timeline.contains(&shown), "{timeline}");
    let show = run(&["incident", "show", &id.to_string()]);
    assert!(
        show.contains(&format!("Records:   2 (last {}", local.format("%Y-%m-%d"))),
        "{show}"
    );
    assert!(show.contains(" IST"), "{show}");
    let ack = run(&["incident", "note", &id.to_string(), "in IST"]);
    assert!(ack.contains(" IST"), "{ack}");
    // A broken config does not stop a note: it is reported and times are in UTC.
    std::fs::write(
        data.path().join("warroom.toml"),
        "timezone = \"Mars/Base\"\n",
    )
    .unwrap();
    let out = warroom(data.path())
        .args(["incident", "note", &id.to_string(), "still recorded"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains(" UTC"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Mars/Base"));
}

fn two_recorders_cannot_hold_one_incident() {
    let (data, store, id) = setup();
    let mut first = recorder(data.path(), &id, "first.err");
    let h = holder(&store, &id);
    assert_eq!((h.role.as_str(), h.pid), ("recorder", first.0.id()));
    let out = warroom(data.path())
        .args(["record", &id.to_string(), "--alertmanager", NOWHERE])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the second recorder ran: {stderr}");
    assert!(
        stderr.contains(&format!("warroom recorder (pid {})", first.0.id())),
        "{stderr}"
    );
    assert_eq!(holder(&store, &id).pid, first.0.id(), "the first keeps it");
    assert!(
        first.0.try_wait().unwrap().is_none(),
        "the first still runs"
    );
    // SIGINT (Ctrl-C) stops it as cleanly as SIGTERM.
    let pid = nix::unistd::Pid::from_raw(first.0.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    assert!(exited(&mut first.0, Duration::from_secs(10)).success());
    assert_eq!(store.holder(&id).unwrap(), None);
    let last = store.read(&id).unwrap().records.pop().unwrap();
    assert_eq!(
        last.kind,
        Event::Interrupted {
            signal: "SIGINT".into()
        }
    );
}

fn a_console_without_a_terminal_is_told_who_holds_it() {
    let (data, store, id) = setup();
    let mut rec = recorder(data.path(), &id, "rec.err");
    let h = holder(&store, &id);
    let out = warroom(data.path())
        .args([
            "open",
            "--incident",
            &id.to_string(),
            "--prometheus",
            NOWHERE,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    let held = format!(
        "held by warroom record (pid {}, since {})",
        h.pid,
        h.since.format("%Y-%m-%d %H:%M:%S UTC")
    );
    assert!(
        stderr.contains(&held) && stderr.contains("--take-over"),
        "{stderr}"
    );
    assert!(
        rec.0.try_wait().unwrap().is_none(),
        "the recorder still runs"
    );
    assert_eq!(holder(&store, &id).pid, rec.0.id());
}

fn a_takeover_stops_the_recorder_and_keeps_the_journal() {
    let (data, store, id) = setup();
    let mut rec = recorder(data.path(), &id, "rec.err");
    let h = holder(&store, &id);
    let before = store.read(&id).unwrap().records;
    let (mut incident, recovery, stopped) = store
        .take_over(
            &id,
            warroom::incident::store::Role::Console,
            Duration::from_secs(10),
        )
        .expect("the takeover");
    assert_eq!(stopped.map(|s| s.pid), Some(h.pid));
    assert!(exited(&mut rec.0, Duration::from_secs(10)).success());
    assert!(recovery.torn.is_none(), "the recorder left no torn record");
    assert_eq!(
        recovery.records[..before.len()],
        before[..],
        "everything before is intact"
    );
    assert_eq!(
        recovery.records.last().map(|r| &r.kind),
        Some(&Event::Interrupted {
            signal: "SIGTERM".into()
        }),
        "the recorder recorded its stop"
    );
    let r = incident
        .journal
        .append(Source::Operator, "ana", Event::note("console here"))
        .unwrap();
    assert_eq!(r.seq, recovery.records.len() as u64 + 1, "no gap");
    assert_eq!(
        store.holder(&id).unwrap().map(|h| h.role),
        Some(warroom::incident::store::Role::Console)
    );
    drop(incident);
    let log = std::fs::read_to_string(data.path().join("rec.err")).unwrap();
    assert!(log.contains("stopped by SIGTERM"), "{log}");
}

fn a_console_or_a_runbook_is_never_stopped() {
    use warroom::incident::store::Role;
    for role in [Role::Console, Role::Runbook] {
        let (_data, store, id) = setup();
        let held = store.open_incident(&id, role).unwrap();
        let e = store
            .take_over(
                &id,
                warroom::incident::store::Role::Console,
                Duration::from_millis(200),
            )
            .map(|_| ())
            .unwrap_err();
        assert!(matches!(e, TakeOverError::NotAllowed { .. }), "{e}");
        assert!(e.to_string().contains("only a headless recorder"), "{e}");
        assert_eq!(store.holder(&id).unwrap().map(|h| h.role), Some(role));
        drop(held);
    }
}

fn the_console_prompt_takes_over_in_a_real_terminal() {
    let (data, store, id) = setup();
    let mut rec = recorder(data.path(), &id, "rec.err");
    let h = holder(&store, &id);
    let cmd = format!(
        "{} --data-dir {} --config {} --log-file {} open --incident {id} --prometheus {NOWHERE}",
        env!("CARGO_BIN_EXE_warroom"),
        data.path().display(),
        data.path().join("warroom.toml").display(),
        data.path().join("console.log").display(),
    );
    let Some(term) = tmux::Tmux::start(&cmd, 200, 30) else {
        return;
    };
    term.expect(
        &format!("held by warroom record (pid {}", h.pid),
        Duration::from_secs(10),
    );
    term.expect("take over? [y/N]", Duration::from_secs(2));
    term.type_text("y");
    term.send(&["Enter"]);
    assert!(exited(&mut rec.0, Duration::from_secs(10)).success());
    let console = holder(&store, &id);
    assert_eq!(console.role, warroom::incident::store::Role::Console);
    // The console draws and its timeline holds the takeover.
    term.wait_for(Duration::from_secs(10), |s| s.contains(&id.to_string()))
        .expect("the console shows the incident");
    term.send(&["q"]);
    let screen = term.expect("[exited 0]", Duration::from_secs(15));
    let records = store.read(&id).unwrap().records;
    assert!(
        records.iter().any(|r| matches!(&r.kind,
            Event::JournalNotice { message } if message.contains(&format!("took over from warroom record (pid {})", h.pid)))),
        "{records:#?}"
    );
    // Takeover without loss: the console handed the incident back to a recorder started as
    // the first one was, which goes on recording after the console has gone.
    assert!(screen.contains("handed back to warroom record"), "{screen}");
    let again = holder(&store, &id);
    assert_eq!(again.role, warroom::incident::store::Role::Recorder);
    assert_ne!(again.pid, h.pid);
    let log = store.dir(&id).join("recorder.log");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(&log).is_ok_and(|l| l.contains("recording incident")) {
        assert!(
            Instant::now() < deadline,
            "the restarted recorder says nothing in {log:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let restarted = nix::unistd::Pid::from_raw(again.pid as i32);
    nix::sys::signal::kill(restarted, nix::sys::signal::Signal::SIGTERM).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while store.holder(&id).unwrap().is_some() {
        assert!(
            Instant::now() < deadline,
            "the restarted recorder did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let last = store.read(&id).unwrap().records.pop().unwrap();
    assert_eq!(
        last.kind,
        Event::Interrupted {
            signal: "SIGTERM".into()
        }
    );
}
