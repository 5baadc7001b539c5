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
