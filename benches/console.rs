//! The console as a process: start to first frame (with Prometheus up and with nothing
//! listening), idle CPU while 8 panels refresh every 5 s, and resident memory.
//! Needs `prometheus` and `tmux`. Run: `cargo bench --bench console` (about 90 s).

#[path = "support/figure.rs"]
mod figure;

#[path = "../tests/support/prometheus.rs"]
mod prometheus;
#[path = "../tests/support/tmux.rs"]
mod tmux;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

fn exporter() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut body = String::new();
    for pod in 0..10 {
        body += &format!(
            "db_pool_connections_in_use{{pod=\"api-{pod}\"}} {}\n",
            20 + pod
        );
        body += &format!("db_pool_connections_max{{pod=\"api-{pod}\"}} 40\n");
        body += &format!("app_instance_up{{pod=\"api-{pod}\"}} 1\n");
        body += &format!("queue_depth{{queue=\"q{pod}\"}} {}\n", pod * 10);
    }
    std::thread::spawn(move || {
        for conn in listener.incoming().take(100_000) {
            let Ok(mut conn) = conn else { continue };
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                body.len(),
                body
            );
        }
    });
    port
}

fn first_frame_ms(log: &Path) -> Option<f64> {
    let text = std::fs::read_to_string(log).ok()?;
    let line = text.lines().find(|l| l.contains("first frame drawn"))?;
    let micros: f64 = line
        .split("micros=")
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(micros / 1000.0)
}

fn pid_of_console(term: &tmux::Tmux) -> Option<u32> {
    let shell: u32 = term.format("#{pane_pid}").parse().ok()?;
    let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).ok()?;
    children.split_whitespace().next()?.parse().ok()
}

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    f.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0)
}

fn status_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// `shows`: what is on screen once the console is up (a panel title, or with nothing listening,
/// the status bar).
fn run(url: &str, label: &str, idle_secs: u64, shows: &str) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    std::fs::write(dir.path().join("w.toml"), "refresh = \"5s\"\n").unwrap();
    let cmd = format!(
        "{} --config {} --log-file {} open --prometheus {url}",
        figure::warroom_bin(),
        dir.path().join("w.toml").display(),
        log.display()
    );
    let Some(term) = tmux::Tmux::start(&cmd, 200, 60) else {
        return;
    };
    term.expect(shows, Duration::from_secs(10));
    std::thread::sleep(Duration::from_secs(2));
    let first = first_frame_ms(&log).unwrap_or(f64::NAN);
    let Some(pid) = pid_of_console(&term) else {
        println!("{label}: console pid not found");
        return;
    };
    let ticks_per_sec = 100.0; // USER_HZ on Linux
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(idle_secs));
    let after = cpu_ticks(pid);
    let cpu_pct = (after - before) as f64 / ticks_per_sec / idle_secs as f64 * 100.0;
    println!(
        "{label:<28} first frame {first:>7.2} ms | idle CPU {cpu_pct:>5.2} % of a core over {idle_secs} s | RSS {:>6.1} MiB (peak {:.1} MiB)",
        status_kib(pid, "VmRSS:") as f64 / 1024.0,
        status_kib(pid, "VmHWM:") as f64 / 1024.0
    );
    figure::report(
        &format!("console start to first frame, {label}"),
        first,
        "ms",
        figure::Target::Under(30.0),
    );
    figure::report(
        &format!("console idle CPU, 8 panels every 5 s, {label}"),
        cpu_pct,
        "% of a core",
        figure::Target::Under(0.2),
    );
    figure::report(
        &format!("console resident memory, {label}"),
        status_kib(pid, "VmRSS:") as f64 / 1024.0,
        "MiB",
        figure::Target::Under(15.0),
    );
    term.send(&["q"]);
    term.expect("[exited 0]", Duration::from_secs(10));
}

fn main() {
    let port = exporter();
    let Some(prom) = prometheus::start(prometheus::PromOptions {
        targets: vec![format!("127.0.0.1:{port}")],
        ..Default::default()
    }) else {
        return;
    };
    // The console discovers its dashboard from the names Prometheus holds: wait for the first
    // scrape (Prometheus's start can take several seconds), at most 30 s.
    let scraped = (0..60).any(|_| {
        let names = prometheus::http_get(
            prom.port,
            "/api/v1/label/__name__/values",
            Duration::from_secs(2),
        );
        if names.is_some_and(|(_, b)| b.contains("db_pool_connections_in_use")) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(500));
        false
    });
    if !scraped {
        eprintln!("console bench: Prometheus has not scraped the exporter within 30 s");
        return;
    }
    run(&prom.url, "prometheus up", 60, "Pool saturation");
    let closed = prometheus::free_port();
    run(
        &format!("http://127.0.0.1:{closed}"),
        "nothing listening",
        20,
        "? help",
    );
}
