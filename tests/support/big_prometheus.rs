//! A hostile "Prometheus" on a loopback port: every query is answered with `series` series (an
//! instant vector, or a matrix of two points each), values rising with the pod's number so the
//! worst are the highest-numbered; anything else with an empty success. For the console's
//! big-answer test and benchmark (issue 28, point 3).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;

/// Writes a config of one panel to `dir` and returns the shell command that runs the console
/// `bin` on it against `url`, with its data and log in `dir`.
pub fn console_command(bin: &str, dir: &Path, url: &str) -> String {
    let config = dir.join("warroom.toml");
    std::fs::write(
        &config,
        "refresh = \"5s\"\n\n[[panel]]\ntitle = \"Pool in use\"\nquery = \"db_pool_in_use\"\n\
         unit = \"percent\"\nwarn = 0.8\ncrit = 0.95\n",
    )
    .unwrap();
    format!(
        "NO_COLOR=1 {bin} --data-dir {} --config {} --log-file {} open --prometheus {url}",
        dir.display(),
        config.display(),
        dir.join("w.log").display(),
    )
}

/// Starts the server (at most `max` connections, so its thread ends) and returns its URL.
pub fn start(series: usize, max: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || serve(listener, series, max));
    url
}

/// An instant vector (or a matrix of two points a series) of `series` series, values spread so
/// that the worst are the highest-numbered pods.
fn body(series: usize, matrix: bool, now: f64) -> Vec<u8> {
    let mut out = String::with_capacity(series * 80);
    out.push_str(if matrix {
        r#"{"status":"success","data":{"resultType":"matrix","result":["#
    } else {
        r#"{"status":"success","data":{"resultType":"vector","result":["#
    });
    for i in 0..series {
        if i > 0 {
            out.push(',');
        }
        let v = i as f64 / series as f64;
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
fn serve(listener: TcpListener, series: usize, max: usize) {
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
                body(series, true, now())
            } else if first.contains("/api/v1/query") {
                body(series, false, now())
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
