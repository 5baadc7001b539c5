//! Fixture expositions (`tests/fixtures/expositions/*.prom`, see its README): parsed so a test
//! can compute what a query must give, and served on loopback with their own clock so a real
//! Prometheus scrapes half an hour of history in seconds.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

pub type Labels = BTreeMap<String, String>;

/// Seconds of the fixture clock between two scrapes.
pub const STEP: f64 = 30.0;
/// Scrapes until the clock stops (then the last frame is served again, which Prometheus
/// drops as duplicates): 62 × 30 s = 31 min of history, under the head's 1 h window.
pub const FRAMES: usize = 62;

/// A sample's value model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Val {
    Const(f64),
    /// A counter `1000 + r·t`.
    Rate(f64),
    /// A counter `1000 + r·t` up to second `at`, restarted from zero just after it:
    /// `r·(t − at)` from then on (every increase is scraped; only the value drops).
    Restart {
        at: f64,
        r: f64,
    },
    /// `a` before second `at`, `b` from then on.
    Step {
        at: f64,
        a: f64,
        b: f64,
    },
}

impl Val {
    pub fn at(&self, t: f64) -> f64 {
        match *self {
            Val::Const(v) => v,
            Val::Rate(r) => 1000.0 + r * t,
            Val::Restart { at, r } => {
                if t <= at {
                    1000.0 + r * t
                } else {
                    r * (t - at)
                }
            }
            Val::Step { at, a, b } => {
                if t < at {
                    a
                } else {
                    b
                }
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct Sample {
    pub name: String,
    pub labels: Labels,
    /// The label text as written (`{a="b"}`), for serving.
    pub raw_labels: String,
    pub val: Val,
}

/// One fixture file: comment/TYPE lines and samples, in order.
#[derive(Debug, Clone)]
pub struct Exposition {
    pub file: String,
    pub lines: Vec<Line>,
}

#[derive(Debug, Clone)]
pub enum Line {
    Text(String),
    Sample(Sample),
}

fn parse_labels(s: &str) -> Labels {
    // Fixture label values never contain `",` or escapes; a small reader is enough.
    let mut out = Labels::new();
    let inner = s.trim_start_matches('{').trim_end_matches('}');
    let mut rest = inner;
    while let Some(eq) = rest.find("=\"") {
        let name = rest[..eq].trim().trim_start_matches(',').trim().to_string();
        let after = &rest[eq + 2..];
        let end = after.find('"').expect("closing quote in a fixture label");
        out.insert(name, after[..end].to_string());
        rest = &after[end + 1..];
    }
    out
}

fn parse_val(s: &str, file: &str) -> Val {
    let num = |x: &str| -> f64 {
        match x {
            "+Inf" => f64::INFINITY,
            _ => x
                .parse()
                .unwrap_or_else(|_| panic!("{file}: \"{x}\" is not a number")),
        }
    };
    if let Some(r) = s.strip_prefix("rate:") {
        Val::Rate(num(r))
    } else if let Some(rest) = s.strip_prefix("restart:") {
        let (at, r) = rest
            .split_once(':')
            .unwrap_or_else(|| panic!("{file}: restart:AT:R, got {s}"));
        Val::Restart {
            at: num(at),
            r: num(r),
        }
    } else if let Some(rest) = s.strip_prefix("step:") {
        let p: Vec<&str> = rest.split(':').collect();
        assert_eq!(p.len(), 3, "{file}: step:AT:A:B, got {s}");
        Val::Step {
            at: num(p[0]),
            a: num(p[1]),
            b: num(p[2]),
        }
    } else {
        Val::Const(num(s))
    }
}

impl Exposition {
    pub fn parse(file: &str, text: &str) -> Exposition {
        let mut lines = Vec::new();
        for l in text.lines() {
            let t = l.trim();
            if t.is_empty() || t.starts_with('#') {
                lines.push(Line::Text(l.to_string()));
                continue;
            }
            let (series, value) = t
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("{file}: no value in {t:?}"));
            let (name, raw_labels) = match series.find('{') {
                Some(i) => (&series[..i], &series[i..]),
                None => (series, ""),
            };
            lines.push(Line::Sample(Sample {
                name: name.to_string(),
                labels: parse_labels(raw_labels),
                raw_labels: raw_labels.to_string(),
                val: parse_val(value, file),
            }));
        }
        Exposition {
            file: file.to_string(),
            lines,
        }
    }

    /// Read `tests/fixtures/expositions/NAME.prom`.
    pub fn load(name: &str) -> Exposition {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/expositions")
            .join(format!("{name}.prom"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        Exposition::parse(name, &text)
    }

    pub fn samples(&self) -> impl Iterator<Item = &Sample> {
        self.lines.iter().filter_map(|l| match l {
            Line::Sample(s) => Some(s),
            Line::Text(_) => None,
        })
    }

    /// The text of frame `k`: every sample at second `k·STEP`, stamped `t0_ms + k·STEP`.
    pub fn render(&self, k: usize, t0_ms: i64) -> String {
        let t = k as f64 * STEP;
        let ts = t0_ms + (t * 1000.0) as i64;
        let mut out = String::new();
        for l in &self.lines {
            match l {
                Line::Text(s) => {
                    out += s;
                    out.push('\n');
                }
                Line::Sample(s) => {
                    let v = s.val.at(t);
                    let v = if v.is_infinite() {
                        "+Inf".to_string()
                    } else {
                        format!("{v}")
                    };
                    out += &format!("{}{} {v} {ts}\n", s.name, s.raw_labels);
                }
            }
        }
        out
    }
}

/// A loopback server answering every request with the next frame of `exp`, until
/// [`FRAMES`]; then the last frame again. Returns `host:port` and the count of requests.
pub fn serve(exp: Exposition, t0_ms: i64) -> (String, Arc<AtomicUsize>) {
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    let addr = serve_with(move |n| {
        count.store(n + 1, Ordering::SeqCst);
        exp.render(n.min(FRAMES), t0_ms)
    });
    (addr, served)
}

/// A loopback server answering request `n` (from 0) with the exposition `body(n)`; returns
/// `host:port`.
pub fn serve_with(body: impl Fn(usize) -> String + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind fixture server");
    let addr = listener.local_addr().expect("fixture address").to_string();
    std::thread::spawn(move || {
        let mut n = 0;
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = [0u8; 4096];
            let mut got = Vec::new();
            while !got.windows(4).any(|w| w == b"\r\n\r\n") && got.len() < 64 * 1024 {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => got.extend_from_slice(&buf[..k]),
                }
            }
            let body = body(n);
            n += 1;
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    addr
}

/// A body of `n` gauges named `fixture_metric_<i>` (for the discovery benchmark).
pub fn many_names(n: usize) -> Exposition {
    let mut text = String::new();
    for i in 0..n {
        text +=
            &format!("# TYPE fixture_metric_{i} gauge\nfixture_metric_{i}{{shard=\"a\"}} {i}\n");
    }
    Exposition::parse("many", &text)
}
