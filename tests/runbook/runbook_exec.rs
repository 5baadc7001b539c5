//! exec steps: a hung child that forks and ignores SIGTERM ends within timeout + grace + 1 s
//! with nothing of its group left; timeouts, failures and cancels are told apart; floods keep
//! memory bounded; secrets are masked; argv is never a shell.

use std::time::{Duration, Instant};
use tokio::sync::watch;
use warroom::runbook::exec::{Command, ExecStatus, MAX_LINE, TAIL_LINES, run};
use warroom::runbook::mask::Masker;

fn cmd(argv: &[&str], timeout_ms: u64, grace_ms: u64) -> Command {
    Command {
        argv: argv.iter().map(std::string::ToString::to_string).collect(),
        timeout: Duration::from_millis(timeout_ms),
        grace: Duration::from_millis(grace_ms),
    }
}

/// Live (non-zombie) processes whose process group is `pgid`.
fn live_in_group(pgid: i32) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let f: Vec<&str> = after.split_whitespace().collect();
        if f.len() > 2 && f[2] == pgid.to_string() && f[0] != "Z" {
            n += 1;
        }
    }
    n
}

#[tokio::test]
async fn a_hung_child_with_a_stubborn_grandchild_is_gone_in_time() {
    let (_tx, rx) = watch::channel(false);
    let c = cmd(
        &[
            "sh",
            "-c",
            "trap '' TERM; (trap '' TERM; sleep 300) & (sleep 300) & echo started; sleep 300",
        ],
        1000,
        1000,
    );
    let t = Instant::now();
    let r = run(&c, &Masker::new(), rx, |_| {}).await.unwrap();
    let took = t.elapsed();
    assert_eq!(r.status, ExecStatus::TimedOut);
    assert!(took <= Duration::from_secs(3), "took {took:?}");
    assert_eq!(r.tail, vec!["started".to_string()]);
    // Give the kernel a moment to finish tearing down; count what is left.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(live_in_group(r.pgid), 0);
}

#[tokio::test]
async fn outcomes_are_told_apart() {
    let m = Masker::new();
    let (_tx, rx) = watch::channel(false);
    let ok = run(&cmd(&["true"], 5000, 100), &m, rx.clone(), |_| {})
        .await
        .unwrap();
    assert_eq!(ok.status, ExecStatus::Succeeded);
    let failed = run(&cmd(&["sh", "-c", "exit 3"], 5000, 100), &m, rx, |_| {})
        .await
        .unwrap();
    assert_eq!(failed.status, ExecStatus::Failed { code: Some(3) });

    let (tx, rx) = watch::channel(false);
    let handle = tokio::spawn(async move {
        run(
            &cmd(&["sleep", "30"], 20_000, 200),
            &Masker::new(),
            rx,
            |_| {},
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    tx.send(true).unwrap();
    let cancelled = handle.await.unwrap().unwrap();
    assert_eq!(cancelled.status, ExecStatus::Cancelled);

    let missing = run(
        &cmd(&["/nonexistent/program"], 1000, 100),
        &Masker::new(),
        watch::channel(false).1,
        |_| {},
    )
    .await;
    assert!(missing.unwrap_err().to_string().contains("cannot start"));
}

#[tokio::test]
async fn argv_is_never_a_shell() {
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("pwned");
    let hostile = format!("$(touch {})", canary.display());
    let r = run(
        &cmd(&["echo", &hostile, "; touch", "`id`"], 5000, 100),
        &Masker::new(),
        watch::channel(false).1,
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(r.tail, vec![format!("{hostile} ; touch `id`")]);
    assert!(!canary.exists());
}

fn rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[tokio::test]
async fn floods_keep_memory_bounded_and_only_the_tail() {
    let before = rss_kib();
    let mut lines = 0u64;
    let r = run(
        &cmd(&["yes"], 2000, 200),
        &Masker::new(),
        watch::channel(false).1,
        |_| lines += 1,
    )
    .await
    .unwrap();
    assert_eq!(r.status, ExecStatus::TimedOut);
    assert_eq!(r.tail.len(), TAIL_LINES);
    assert!(r.truncated);
    assert!(lines > TAIL_LINES as u64);

    // One 100 MB line.
    let r = run(
        &cmd(&["head", "-c", "100000000", "/dev/zero"], 30_000, 200),
        &Masker::new(),
        watch::channel(false).1,
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(r.status, ExecStatus::Succeeded);
    assert_eq!(r.bytes, 100_000_000);
    assert_eq!(r.tail.len(), 1);
    assert!(r.tail[0].len() < MAX_LINE * 5 + 32, "{}", r.tail[0].len());
    assert!(r.truncated);
    let growth_mib = rss_kib().saturating_sub(before) / 1024;
    eprintln!("memory growth over both floods: {growth_mib} MiB");
    assert!(growth_mib < 64, "{growth_mib} MiB");
}

#[tokio::test]
async fn secrets_in_output_are_masked() {
    let mut m = Masker::new();
    m.add("canary-7f3a9");
    let mut seen = Vec::new();
    let r = run(
        &cmd(
            &[
                "sh",
                "-c",
                "echo value canary-7f3a9; echo password=hunter22",
            ],
            5000,
            100,
        ),
        &m,
        watch::channel(false).1,
        |l| seen.push(l.to_string()),
    )
    .await
    .unwrap();
    let all = format!("{seen:?}{:?}", r.tail);
    assert!(
        !all.contains("canary-7f3a9") && !all.contains("hunter22"),
        "{all}"
    );
    assert_eq!(seen, vec!["value ***", "password=***"]);
}
