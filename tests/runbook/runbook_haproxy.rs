//! `haproxy` steps against a real HAProxy started by the test in front of loopback backends:
//! state and weight changes that HAProxy reports back, a drain that waits for real sessions,
//! `show` results judged, both socket kinds, and bad input that fails with one line.

use crate::support::realstack;
use crate::support::runbook_run;

use realstack::*;
use runbook_run::run;
use std::time::{Duration, Instant};
use warroom::runbook::report::{RunOutcome, StepOutcome};

struct Stack {
    _triggers: tempfile::TempDir,
    _backends: Vec<Backend>,
    h: Haproxy,
}

fn stack() -> Option<Stack> {
    let triggers = tempfile::tempdir().unwrap();
    let backends: Vec<Backend> = ["web1", "web2"]
        .iter()
        .map(|n| Backend::start(n, triggers.path(), default_handler(n)))
        .collect();
    let servers: Vec<(&str, u16)> = backends.iter().map(|b| (b.name.as_str(), b.port)).collect();
    let h = Haproxy::start(&servers, HaproxyOptions::default())?;
    assert!(h.wait_status("web1", "UP", Duration::from_secs(10)));
    assert!(h.wait_status("web2", "UP", Duration::from_secs(10)));
    Some(Stack {
        _triggers: triggers,
        _backends: backends,
        h,
    })
}

fn runbook(socket: &str, steps: &str) -> String {
    format!("name = \"t\"\n[variables]\nsock = {{ default = \"{socket}\" }}\n\n{steps}")
}

/// The admin state and weight of `server` in `show servers state`.
fn admin_and_weight(h: &Haproxy, server: &str) -> (String, String) {
    let text = h.runtime("show servers state be_app").unwrap();
    let mut lines = text.lines().skip(1);
    let header: Vec<&str> = lines
        .next()
        .unwrap()
        .trim_start_matches("# ")
        .split(' ')
        .collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let row: Vec<&str> = lines
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .find(|f| f.get(col("srv_name")) == Some(&server))
        .unwrap();
    (
        row[col("srv_admin_state")].to_string(),
        row[col("srv_uweight")].to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_and_weight_reach_haproxy_on_both_sockets() {
    let Some(s) = stack() else { return };
    let h = &s.h;
    for socket in [h.socket.display().to_string(), h.stats_addr()] {
        let src = runbook(
            &socket,
            r#"
[[step]]
id = "drain"
kind = "haproxy"
socket = "{{sock}}"
server = "be_app/web1"
state = "drain"

[[step]]
id = "weight"
kind = "haproxy"
socket = "{{sock}}"
server = "be_app/web2"
weight = 42
"#,
        );
        let ran = run(&src, &[], &[], None).await;
        assert_eq!(
            ran.outcome,
            RunOutcome::Succeeded,
            "{socket}: {:#?}",
            ran.events
        );
        assert_eq!(
            ran.step("drain").unwrap().1,
            "set server be_app/web1 state drain: done"
        );
        // HAProxy reports what was asked: web1 draining (admin state 8), web2 at weight 42.
        assert_eq!(admin_and_weight(h, "web1").0, "8");
        assert_eq!(admin_and_weight(h, "web2").1, "42");
        assert_eq!(h.stat("web1", "status").as_deref(), Some("DRAIN"));
        h.runtime("set server be_app/web1 state ready").unwrap();
        h.runtime("set server be_app/web2 weight 1").unwrap();
        assert_eq!(admin_and_weight(h, "web1").0, "0");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_waits_for_the_servers_real_sessions() {
    let Some(s) = stack() else { return };
    let h = &s.h;
    // Only web1 takes traffic while three slow requests are in flight on it.
    h.runtime("set server be_app/web2 state maint").unwrap();
    let port = h.port;
    let slow: Vec<_> = (0..3)
        .map(|_| {
            std::thread::spawn(move || http_get(port, "/slow?ms=1500", Duration::from_secs(10)))
        })
        .collect();
    let until = Instant::now() + Duration::from_secs(5);
    while h.stat("web1", "scur").as_deref() != Some("3") && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(h.stat("web1", "scur").as_deref(), Some("3"));
    h.runtime("set server be_app/web2 state ready").unwrap();
    let src = runbook(
        &h.socket.display().to_string(),
        r#"
[[step]]
id = "drain"
kind = "haproxy"
socket = "{{sock}}"
server = "be_app/web1"
state = "drain"
drain_wait = "10s"
"#,
    );
    let started = Instant::now();
    let ran = run(&src, &[], &[], None).await;
    let took = started.elapsed();
    let (o, d) = ran.step("drain").unwrap();
    assert_eq!(o, StepOutcome::Succeeded, "{d}");
    assert!(
        d.contains("be_app/web1: 3 current session(s) at the start, 0 after"),
        "{d}"
    );
    assert!(took >= Duration::from_millis(900), "{took:?}");
    assert_eq!(h.stat("web1", "scur").as_deref(), Some("0"));
    for t in slow {
        assert_eq!(t.join().unwrap().map(|r| r.0), Some(200));
    }
    assert!(
        ran.output("drain")
            .iter()
            .any(|l| l == "be_app/web1: 3 current session(s)")
    );

    // A session that outlasts the wait: timed out, with the count left.
    h.runtime("set server be_app/web1 state ready").unwrap();
    h.runtime("set server be_app/web2 state maint").unwrap();
    let long = std::thread::spawn(move || http_get(port, "/slow?ms=4000", Duration::from_secs(10)));
    let until = Instant::now() + Duration::from_secs(5);
    while h.stat("web1", "scur").as_deref() != Some("1") && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let ran = run(&src.replace("\"10s\"", "\"1s\""), &[], &[], None).await;
    let (o, d) = ran.step("drain").unwrap();
    assert_eq!(o, StepOutcome::TimedOut, "{d}");
    assert!(
        d.contains("server \"be_app/web1\" still has 1 current session(s) after 1s"),
        "{d}"
    );
    let _ = long.join();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_results_are_judged_and_can_be_waited_for() {
    let Some(s) = stack() else { return };
    let h = &s.h;
    let src = runbook(
        &h.stats_addr(),
        r#"
[[step]]
id = "up"
kind = "haproxy"
socket = "{{sock}}"
show = "stat"
expect = { column = "status", where = { pxname = "be_app", svname = "web1" }, equals = "UP" }

[[step]]
id = "servers"
kind = "haproxy"
socket = "{{sock}}"
show = "servers state"
backend = "be_app"
expect = { equals = 2 }

[[step]]
id = "back"
kind = "haproxy"
socket = "{{sock}}"
show = "stat"
expect = { column = "status", where = { pxname = "be_app", svname = "web2" }, equals = "UP" }
wait = "10s"
interval = "100ms"
"#,
    );
    h.runtime("set server be_app/web2 state maint").unwrap();
    let sock = h.socket.clone();
    let readier = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(800));
        let mut s = std::os::unix::net::UnixStream::connect(sock).unwrap();
        use std::io::{Read, Write};
        s.write_all(b"set server be_app/web2 state ready\n")
            .unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
    });
    let ran = run(&src, &[], &[], None).await;
    readier.join().unwrap();
    assert_eq!(ran.outcome, RunOutcome::Succeeded, "{:#?}", ran.events);
    assert!(ran.step("up").unwrap().1.contains("\"status\" = \"UP\""));
    assert!(
        ran.step("servers")
            .unwrap()
            .1
            .contains("the number of rows = \"2\"")
    );
    let waited = ran.output("back");
    assert!(
        waited.iter().any(|l| l.contains("\"status\" = \"MAINT\"")),
        "{waited:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_fails_with_one_clear_line_and_touches_nothing() {
    let Some(s) = stack() else { return };
    let h = &s.h;
    let dir = tempfile::tempdir().unwrap();
    let http_backend = Backend::start("other", dir.path(), default_handler("other"));
    let sock = h.socket.display().to_string();
    // Something else on a TCP port: it greets, then closes.
    let greeter = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let banner = greeter.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        use std::io::Write;
        for c in greeter.incoming().take(1).flatten() {
            let mut c = c;
            let _ = c.write_all(b"SSH-2.0-OpenSSH_9.2\r\n");
        }
    });
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "no-such-server",
            sock.clone(),
            "server = \"be_app/web9\"\nstate = \"drain\"",
            "HAProxy refused \"set server be_app/web9 state drain\": No such server.",
        ),
        (
            "no-such-backend",
            sock.clone(),
            "server = \"be_nope/web1\"\nstate = \"maint\"",
            "No such backend.",
        ),
        (
            "silent-http",
            http_backend.addr(),
            "server = \"be_app/web1\"\nstate = \"drain\"\ntimeout = \"1s\"",
            "got no reply within 1s; is this HAProxy's stats socket?",
        ),
        (
            "ssh-banner",
            banner,
            "server = \"be_app/web1\"\nstate = \"drain\"",
            "the reply to \"set server be_app/web1 state drain\" is not HAProxy's: \"SSH-2.0-OpenSSH_9.2\"; is this HAProxy's stats socket?",
        ),
        (
            "no-socket",
            dir.path().join("none.sock").display().to_string(),
            "server = \"be_app/web1\"\nstate = \"drain\"",
            "cannot reach HAProxy's stats socket",
        ),
        (
            "nothing-listens",
            format!("127.0.0.1:{}", free_port()),
            "server = \"be_app/web1\"\nstate = \"drain\"",
            "Connection refused",
        ),
        (
            "user-level",
            h.user_socket.display().to_string(),
            "server = \"be_app/web1\"\nstate = \"drain\"",
            "Permission denied; the stats socket needs \"level admin\"",
        ),
        (
            "smuggled",
            sock.clone(),
            "server = \"be_app/{{who}}\"\nstate = \"maint\"",
            "is not a server name",
        ),
        (
            "not-drained-server",
            sock.clone(),
            "server = \"be_app/web9\"\ndrain_wait = \"1s\"",
            "server \"be_app/web9\" is not in \"show stat\"",
        ),
        (
            "condition",
            sock.clone(),
            "show = \"stat\"\nexpect = { column = \"status\", where = { svname = \"web1\" }, equals = \"DOWN\" }",
            "condition not met: \"status\" = \"UP\", expected \"DOWN\"",
        ),
    ];
    for (id, socket, body, needle) in cases {
        let src = format!(
            "name = \"t\"\n[variables]\nsock = {{ default = \"{socket}\" }}\nwho = {{ default = \"web1; shutdown sessions server be_app/web2\" }}\n\n[[step]]\nid = \"{id}\"\nkind = \"haproxy\"\nsocket = \"{{{{sock}}}}\"\n{body}\n\n[[step]]\nid = \"after\"\nkind = \"haproxy\"\nsocket = \"{sock}\"\nserver = \"be_app/web2\"\nstate = \"maint\"\n"
        );
        let ran = run(&src, &[], &[], None).await;
        let (o, d) = ran
            .step(id)
            .unwrap_or_else(|| panic!("{id} did not finish: {:#?}", ran.events));
        assert!(matches!(o, StepOutcome::Failed), "{id}: {o:?} {d}");
        assert!(!d.contains('\n'), "{id}: {d}");
        assert!(d.contains(needle), "{id}: expected {needle:?} in {d:?}");
        assert_eq!(ran.outcome, RunOutcome::Failed);
        assert!(
            !ran.started("after"),
            "{id}: the step after the failure ran"
        );
        eprintln!("{id}: {d}");
        // Nothing was touched: both servers ready and up.
        assert_eq!(admin_and_weight(h, "web1").0, "0", "{id}");
        assert_eq!(admin_and_weight(h, "web2").0, "0", "{id}");
    }
}

/// A `show stat` reply past `MAX_REPLY` (a stand-in for HAProxy's runtime socket answering
/// 60,000 servers, every one UP) fails the step: a reply cut at the limit was once judged as if
/// whole, and `each = true` "succeeded" on the rows that happened to fit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_past_the_limit_fails_instead_of_being_judged_on_a_part() {
    use std::io::{BufRead, BufReader, Write};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stats.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let header = "# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status,weight\n";
    let mut reply = String::from(header);
    let mut n = 0;
    while reply.len() <= warroom::runbook::haproxy::MAX_REPLY + 1024 * 1024 {
        reply.push_str(&format!("be_app,web{n},0,0,0,0,,0,0,0,,0,,0,0,0,0,UP,1\n"));
        n += 1;
    }
    reply.push('\n');
    let server = std::thread::spawn(move || {
        for conn in listener.incoming().take(1) {
            let mut conn = conn.unwrap();
            let mut line = String::new();
            BufReader::new(&conn).read_line(&mut line).unwrap();
            assert_eq!(line, "show stat\n");
            // The client stops reading at the limit and closes: a broken pipe is expected.
            let _ = conn.write_all(reply.as_bytes());
        }
    });
    let src = runbook(
        &path.display().to_string(),
        r#"
[[step]]
id = "all-up"
kind = "haproxy"
socket = "{{sock}}"
show = "stat"
expect = { column = "status", each = true, equals = "UP" }
"#,
    );
    let ran = run(&src, &[], &[], None).await;
    server.join().unwrap();
    assert_eq!(ran.outcome, RunOutcome::Failed, "{:#?}", ran.events);
    let (outcome, said) = ran.step("all-up").unwrap();
    assert_eq!(outcome, StepOutcome::Failed, "{said}");
    assert!(
        said.contains("is longer than 4194304 bytes"),
        "{said} ({n} rows sent)"
    );
}
