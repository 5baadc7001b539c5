//! What Linux's /proc says about a process: CPU time, memory, and warroom's first-frame log
//! line. Shared by the benchmarks that measure the console as a process.
#![allow(dead_code)]

use std::path::Path;

/// USER_HZ on Linux: the unit of the CPU times in /proc/PID/stat.
pub const TICKS_PER_SEC: f64 = 100.0;

/// User plus system CPU ticks used by `pid` so far (0 when it is gone).
pub fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    f.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0)
}

/// A `kB` line of /proc/PID/status, e.g. `VmRSS:` or `VmHWM:` (0 when missing).
pub fn status_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// The first child of `pid` (the program a tmux pane's shell started).
pub fn first_child(pid: u32) -> Option<u32> {
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).ok()?;
    children.split_whitespace().next()?.parse().ok()
}

/// The console's "first frame drawn micros=N" log line, in milliseconds.
pub fn first_frame_ms(log: &Path) -> Option<f64> {
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
