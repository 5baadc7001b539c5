//! Issue 28, point 3: a query that matches 100,000 series (a missing `sum by`, a label per
//! request) does not stop the console. A hostile loopback "Prometheus" answers every query with
//! 100,000 series; the panel keeps its worst 64 and says how many there were, keys are answered
//! and `q` quits. (How fast, and the memory it takes, is measured in `benches/console.rs`.)

use crate::support::tmux::Tmux;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::time::Duration;

/// Series in each answer.
const SERIES: usize = 100_000;

/// An instant vector (or a matrix of two points a series) of `SERIES` series, values spread so
/// that the worst are the highest-numbered pods.
fn body(matrix: bool, now: f64) -> Vec<u8> {
    let mut out = String::with_capacity(SERIES * 80);
    out.push_str(if matrix {
        r#"{"status":"success","data":{"resultType":"matrix","result":["#
    } else {
        r#"{"status":"success","data":{"resultType":"vector","result":["#
    });
    for i in 0..SERIES {
        if i > 0 {
            out.push(',');
        }
        let v = i as f64 / SERIES as f64;
        if matrix {
            out.push_str(&format!(
                r#"{{"metric":{{"pod":"api-{i}"}},"values":[[{},"{v}"],[{},"{v}"]]}}"#,
                now - 15.0,
                now
            ));
        } else {
            out.push_str(&format!(
                r#"{{"metric":{{"pod":"api-{i}"}},"value":[{now},"{v}"]}}"#
            ));
        }
    }
    out.push_str("]}}");
    out.into_bytes()
}

/// Answers each request on `listener`: queries with the big answers, anything else with an
/// empty success. At most `max` connections, so the thread ends with the test.
fn serve(listener: TcpListener, max: usize) {
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64()
    };
    for conn in listener.incoming().take(max) {
        let Ok(conn) = conn else { continue };
        std::thread::spawn(move || {
            let mut reader = BufReader::new(conn);
            let mut first = String::new();
            if reader.read_line(&mut first).is_err() {
                return;
            }
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut rest = vec![0u8; length.min(1 << 20)];
            let _ = reader.read_exact(&mut rest);
            let body = if first.contains("/api/v1/query_range") {
                body(true, now())
            } else if first.contains("/api/v1/query") {
                body(false, now())
            } else {
                br#"{"status":"success","data":{}}"#.to_vec()
            };
            let mut conn = reader.into_inner();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n",
                body.len()
            );
            let _ = conn.write_all(head.as_bytes());
            let _ = conn.write_all(&body);
        });
    }
}

#[test]
fn a_panel_of_100000_series_keeps_its_worst_and_the_console_answers_and_quits() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || serve(listener, 200));
    let data = tempfile::tempdir().unwrap();
    let config = data.path().join("warroom.toml");
    std::fs::write(
        &config,
        "refresh = \"5s\"\n\n[[panel]]\ntitle = \"Pool in use\"\nquery = \"db_pool_in_use\"\n\
         unit = \"percent\"\nwarn = 0.8\ncrit = 0.95\n",
    )
    .unwrap();
    let command = format!(
        "NO_COLOR=1 {} --data-dir {} --config {} --log-file {} open --prometheus {url}",
        env!("CARGO_BIN_EXE_warroom"),
        data.path().display(),
        config.display(),
        data.path().join("w.log").display(),
    );
    let Some(term) = Tmux::start(&command, 160, 30) else {
        return;
    };
    let screen = term.expect(
        &format!("worst 64 of {SERIES} series"),
        Duration::from_secs(90),
    );
    // The worst kept is the highest value sent: 99999 / 100000.
    assert!(
        screen.contains("100.0%") || screen.contains("99.9%"),
        "{screen}"
    );
    // A key is answered (the timeline pane opens) and `q` quits, with the answers still
    // coming every 5 s.
    term.send(&["t"]);
    term.expect("Timeline", Duration::from_secs(20));
    term.send(&["q"]);
    term.expect("[exited 0]", Duration::from_secs(20));
}
