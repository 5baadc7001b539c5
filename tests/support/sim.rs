//! The simulator's control API from tests.

#![allow(dead_code)]

use std::time::Duration;

/// POST a control call to a simulator on `port`: a tiny HTTP/1.0 request on loopback that
/// must answer 200.
pub fn control(port: u16, action: &str, body: &str) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).ok();
    write!(
        s,
        "POST /control/{action} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("write");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    assert!(
        out.starts_with("HTTP/1.0 200") || out.starts_with("HTTP/1.1 200"),
        "{out}"
    );
}

/// `warroom sim serve` running as a child process on a loopback port, stopped when dropped.
pub struct SimServer {
    child: std::process::Child,
    _logs: tempfile::TempDir,
}

impl Drop for SimServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `warroom sim serve SCENARIO --listen 127.0.0.1:PORT ARGS...` (its log in a temp dir)
/// and wait, at most 15 s, until its `/healthz` answers.
pub fn serve(port: u16, scenario: &str, args: &[&str]) -> SimServer {
    use std::io::{Read, Write};
    let logs = tempfile::tempdir().expect("temp dir");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_warroom"))
        .args(["sim", "serve", scenario])
        .args(args)
        .arg("--listen")
        .arg(format!("127.0.0.1:{port}"))
        .arg("--log-file")
        .arg(logs.path().join("sim.log"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start warroom sim serve");
    let server = SimServer { child, _logs: logs };
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while std::time::Instant::now() < deadline {
        if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            s.set_read_timeout(Some(Duration::from_secs(2))).ok();
            let _ = write!(s, "GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
            let mut out = String::new();
            let _ = s.read_to_string(&mut out);
            if out.contains(" 200") {
                return server;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("warroom sim serve did not answer /healthz on port {port} within 15 s");
}
