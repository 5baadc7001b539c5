//! The console as a process: start to first frame (with Prometheus up and with nothing
//! listening), idle CPU while 8 panels refresh every 5 s, and resident memory.
//! Needs `prometheus` and `tmux`. Run: `cargo bench --bench console` (about 130 s).

#[path = "support/figure.rs"]
mod figure;

#[path = "../tests/support/prometheus.rs"]
mod prometheus;
#[path = "../tests/support/skip.rs"]
mod skip;
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

/// CPU time of every thread of `pid`, in nanoseconds (`/proc/PID/task/*/schedstat`, as
/// `benches/peers.sh` reads it): exact, where `/proc/PID/stat`'s 10 ms ticks made 0.2 % over
/// 20 s a count of four.
fn cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

fn status_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// The resident part of the console's own code: the executable mapping of its binary
/// (`/proc/PID/smaps`), in KiB. It grows back towards the whole 9 MiB of code when
/// `benches/support/startup-order.txt` goes stale or the build leaves it out (it is used with
/// `WARROOM_SYMBOL_ORDER=1`; `benches/startup-order.sh` writes it again).
fn code_resident_kib(pid: u32) -> u64 {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default();
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
    let exe = exe.to_string_lossy();
    let mut in_code = false;
    let mut kib = 0;
    for line in smaps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields
            .first()
            .is_some_and(|f| f.contains('-') && !f.ends_with(':'))
        {
            in_code = fields.get(1).is_some_and(|p| p.contains('x'))
                && fields.get(5).is_some_and(|path| *path == exe);
        } else if in_code && fields.first() == Some(&"Rss:") {
            kib += fields
                .get(1)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    kib
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
    let before = cpu_ns(pid);
    std::thread::sleep(Duration::from_secs(idle_secs));
    let after = cpu_ns(pid);
    let cpu_pct = after.saturating_sub(before) as f64 / 1e9 / idle_secs as f64 * 100.0;
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
    figure::report(
        &format!("console code resident, {label}"),
        code_resident_kib(pid) as f64 / 1024.0,
        "MiB",
        figure::Target::None,
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
        60,
        "? help",
    );
}
