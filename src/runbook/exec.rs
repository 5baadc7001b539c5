//! `exec` steps: a program from an argv list (never a shell), in its own process group, with a
//! timeout. On timeout or cancel the whole group gets SIGTERM, then SIGKILL after the grace
//! period, so a child that forks or ignores SIGTERM cannot outlive its step. Output is streamed
//! line by line, bounded (only a tail is kept; very long lines are cut), sanitized and masked.
//!
//! A descendant can leave the group (`setsid`, `setpgid`) and its parent can exit, so the group
//! alone does not hold. Two more things do: warroom is the child subreaper
//! (`PR_SET_CHILD_SUBREAPER`), so an orphaned descendant becomes warroom's child rather than
//! init's and can be reaped; and every child carries a step scope in its environment
//! ([`SCOPE_ENV`]), inherited by its descendants. When the step ends, every process of the
//! scope, or descending from the child, gets SIGTERM, then SIGKILL after the grace, and is
//! reaped. Where warroom can make a cgroup (v2, as root or in a delegated subtree) each step
//! also runs in its own ([`cgroup`]), which nothing in it can leave: a descendant that leaves
//! the group, clears its environment and is orphaned (`env -i setsid …`) is found there too.
//! Without one, such a descendant is out of reach. A service meant to outlive the step is
//! started through the service manager, e.g. `systemctl restart`, which runs it outside
//! warroom's tree.

pub mod cgroup;

use super::mask::Masker;
use cgroup::StepGroup;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::collections::VecDeque;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::sync::watch;

/// Longest line kept, in bytes; the rest of the line is dropped and the line marked.
pub const MAX_LINE: usize = 4096;
/// Lines kept in the tail.
pub const TAIL_LINES: usize = 200;
/// After the program exits, how long its pipes may stay open (a background grandchild).
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(500);
/// The environment variable that marks the processes of one step.
pub const SCOPE_ENV: &str = "WARROOM_EXEC_SCOPE";

/// Make warroom the subreaper of its descendants, once per process.
fn become_subreaper() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
            tracing::warn!("cannot become the child subreaper ({e}); a child that calls setsid may outlive its step");
        }
    });
}

/// The processes of `scope`: those whose environment carries it, and their descendants and
/// those of `root`, from /proc. Zombies are left out (they are reaped, not killed).
pub fn scope_processes(scope: &str, root: i32) -> Vec<i32> {
    let marker = format!("{SCOPE_ENV}={scope}");
    let me = std::process::id() as i32;
    let mut parent: std::collections::HashMap<i32, i32> = std::collections::HashMap::new();
    let mut marked: std::collections::HashSet<i32> = std::collections::HashSet::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "pid (comm) S ppid ...": the command may hold spaces and parentheses.
        let mut after = stat
            .rsplit_once(')')
            .map(|x| x.1)
            .unwrap_or("")
            .split_whitespace();
        let state = after.next().unwrap_or("");
        let ppid: i32 = after.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        if state == "Z" || state == "X" {
            continue;
        }
        parent.insert(pid, ppid);
        if let Ok(env) = std::fs::read(format!("/proc/{pid}/environ"))
            && env.split(|&b| b == 0).any(|v| v == marker.as_bytes())
        {
            marked.insert(pid);
        }
    }
    let mut out: Vec<i32> = parent
        .keys()
        .copied()
        .filter(|&p| {
            let mut cur = p;
            for _ in 0..64 {
                if marked.contains(&cur) || (root > 0 && cur == root) {
                    return true;
                }
                match parent.get(&cur) {
                    Some(&pp) if pp > 1 && pp != me => cur = pp,
                    _ => return false,
                }
            }
            false
        })
        .collect();
    out.sort_unstable();
    out
}

/// Reap every zombie child of warroom among `pids` (orphans it adopted as the subreaper).
fn reap(pids: &[i32]) {
    use nix::sys::wait::{WaitPidFlag, waitpid};
    for &p in pids {
        let _ = waitpid(Pid::from_raw(p), Some(WaitPidFlag::WNOHANG));
    }
}

/// The processes of a step: its scope's ([`scope_processes`]) and its cgroup's, if it has one.
fn step_processes(scope: &str, root: i32, group: Option<&StepGroup>) -> Vec<i32> {
    let mut all = scope_processes(scope, root);
    if let Some(g) = group {
        let me = std::process::id() as i32;
        all.extend(g.pids().into_iter().filter(|&p| p != me));
        all.sort_unstable();
        all.dedup();
    }
    all
}

/// End what is left of `scope` (and of `root`'s descendants, and of `group`): SIGTERM, then
/// SIGKILL after `grace`, reaping as it goes. Returns how many processes were left when the
/// step ended.
pub async fn end_scope(
    scope: &str,
    root: i32,
    group: Option<&StepGroup>,
    grace: Duration,
) -> usize {
    let scope_processes = |scope: &str, root: i32| step_processes(scope, root, group);
    let left = scope_processes(scope, root);
    if left.is_empty() {
        return 0;
    }
    for &p in &left {
        let _ = nix::sys::signal::kill(Pid::from_raw(p), Signal::SIGTERM);
    }
    let until = tokio::time::Instant::now() + grace;
    let mut seen = left.clone();
    loop {
        reap(&seen);
        let now = scope_processes(scope, root);
        if now.is_empty() {
            break;
        }
        seen.extend(now.iter().copied());
        if tokio::time::Instant::now() >= until {
            for _ in 0..10 {
                let now = scope_processes(scope, root);
                if now.is_empty() {
                    break;
                }
                for &p in &now {
                    let _ = nix::sys::signal::kill(Pid::from_raw(p), Signal::SIGKILL);
                }
                seen.extend(now);
                tokio::time::sleep(Duration::from_millis(20)).await;
                reap(&seen);
            }
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    seen.sort_unstable();
    seen.dedup();
    reap(&seen);
    left.len()
}

/// A command exactly as it will run.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    pub argv: Vec<String>,
    pub timeout: Duration,
    pub grace: Duration,
}

/// How the command ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ExecStatus {
    Succeeded,
    /// Exited non-zero or was killed by a signal it did not get from us.
    Failed {
        code: Option<i32>,
    },
    /// The timeout expired; the group was terminated.
    TimedOut,
    /// Cancelled by the operator; the group was terminated.
    Cancelled,
}

/// The result of a command.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecResult {
    pub status: ExecStatus,
    /// The last lines (sanitized, masked).
    pub tail: Vec<String>,
    /// Lines were dropped from the tail or cut.
    pub truncated: bool,
    /// Bytes of output read in all.
    pub bytes: u64,
    /// The process group id (= the child's pid).
    pub pgid: i32,
}

/// The program could not be started.
#[derive(Debug, thiserror::Error)]
#[error("cannot start \"{program}\": {source}; check that it is installed and on PATH")]
pub struct SpawnError {
    pub program: String,
    #[source]
    pub source: std::io::Error,
}

/// Splits a byte stream into bounded lines and keeps a bounded tail.
#[derive(Debug, Default)]
pub struct OutputTail {
    current: Vec<u8>,
    cut: bool,
    pub lines: VecDeque<String>,
    pub truncated: bool,
    pub bytes: u64,
}

impl OutputTail {
    /// Feed bytes; complete lines are returned (sanitized, masked) and kept in the tail.
    pub fn feed(&mut self, data: &[u8], masker: &Masker) -> Vec<String> {
        self.bytes += data.len() as u64;
        let mut done = Vec::new();
        for chunk in data.split_inclusive(|&b| b == b'\n') {
            let (body, ends) = match chunk.last() {
                Some(b'\n') => (&chunk[..chunk.len() - 1], true),
                _ => (chunk, false),
            };
            let room = MAX_LINE.saturating_sub(self.current.len());
            if body.len() > room {
                self.current.extend_from_slice(&body[..room]);
                self.cut = true;
            } else {
                self.current.extend_from_slice(body);
            }
            if ends {
                done.push(self.finish_line(masker));
            }
        }
        done
    }

    /// The unfinished last line, if any, at end of output.
    pub fn flush(&mut self, masker: &Masker) -> Option<String> {
        (!self.current.is_empty() || self.cut).then(|| self.finish_line(masker))
    }

    fn finish_line(&mut self, masker: &Masker) -> String {
        let mut line = masker.mask(&crate::sanitize::bytes(&self.current));
        if self.cut {
            line.push_str(" … (line cut)");
            self.truncated = true;
        }
        self.current.clear();
        self.cut = false;
        if self.lines.len() == TAIL_LINES {
            self.lines.pop_front();
            self.truncated = true;
        }
        self.lines.push_back(line.clone());
        line
    }
}

/// Run `cmd`; `on_line` gets each output line as it comes; `cancel` turning true stops it.
pub async fn run(
    cmd: &Command,
    masker: &Masker,
    cancel: watch::Receiver<bool>,
    on_line: impl FnMut(&str),
) -> Result<ExecResult, SpawnError> {
    run_on(&crate::clock::WallClock, cmd, masker, cancel, on_line).await
}

/// [`run`] with the timeout on `clock` (a run's clock: simulated in a rehearsal). The grace
/// between SIGTERM and SIGKILL is about the process, not the run: it stays wall time.
pub async fn run_on(
    clock: &dyn crate::clock::Clock,
    cmd: &Command,
    masker: &Masker,
    mut cancel: watch::Receiver<bool>,
    mut on_line: impl FnMut(&str),
) -> Result<ExecResult, SpawnError> {
    let program = cmd.argv.first().cloned().unwrap_or_default();
    become_subreaper();
    let scope = super::report::new_key();
    let group = StepGroup::create(&scope);
    let mut command = tokio::process::Command::new(&program);
    command
        .args(&cmd.argv[1..])
        .env(SCOPE_ENV, &scope)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(g) = &group {
        // SAFETY: the joiner only calls open, write and close (async-signal-safe) on data
        // prepared before the fork, and allocates nothing.
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(g.joiner());
        }
    }
    let mut child = command.spawn().map_err(|source| SpawnError {
        program: crate::sanitize::line(&program).into_owned(),
        source,
    })?;
    let pgid = child.id().map_or(0, |p| p as i32);
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let mut tail = OutputTail::default();
    let (mut buf_o, mut buf_e) = (vec![0u8; 8192], vec![0u8; 8192]);
    let mut timeout = clock.sleep(cmd.timeout);
    let mut exited: Option<std::process::ExitStatus> = None;
    let mut drain_until: Option<tokio::time::Instant> = None;
    let status = loop {
        if exited.is_some() && out.is_none() && err.is_none() {
            break None;
        }
        let drain = async {
            match drain_until {
                Some(t) => tokio::time::sleep_until(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            n = read_some(&mut out, &mut buf_o) => match n {
                Some(n) => for l in tail.feed(&buf_o[..n], masker) { on_line(&l) },
                None => out = None,
            },
            n = read_some(&mut err, &mut buf_e) => match n {
                Some(n) => for l in tail.feed(&buf_e[..n], masker) { on_line(&l) },
                None => err = None,
            },
            st = child.wait(), if exited.is_none() => {
                exited = st.ok();
                drain_until = Some(tokio::time::Instant::now() + DRAIN_AFTER_EXIT);
            }
            _ = drain => break None,
            _ = &mut timeout, if exited.is_none() => break Some(ExecStatus::TimedOut),
            _ = wait_cancel(&mut cancel), if exited.is_none() => break Some(ExecStatus::Cancelled),
        }
    };
    if status.is_some() {
        // The whole scope hears SIGTERM with the group, so the grace is shared.
        for p in step_processes(&scope, pgid, group.as_ref()) {
            let _ = nix::sys::signal::kill(Pid::from_raw(p), Signal::SIGTERM);
        }
        terminate(&mut child, pgid, cmd.grace).await;
    }
    // Nothing of the group may outlive the step, whatever the outcome.
    if pgid > 0 {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
    // Nor anything that left the group (setsid) and was adopted by warroom. After a timeout
    // or a cancel the grace is spent: what is left is killed now.
    let grace = if status.is_some() {
        Duration::ZERO
    } else {
        cmd.grace
    };
    let _ = end_scope(&scope, pgid, group.as_ref(), grace).await;
    if let Some(g) = group {
        g.remove().await;
    }
    if let Some(l) = tail.flush(masker) {
        on_line(&l);
    }
    let status = status.unwrap_or_else(|| match exited {
        Some(s) if s.success() => ExecStatus::Succeeded,
        Some(s) => ExecStatus::Failed { code: s.code() },
        None => ExecStatus::Failed { code: None },
    });
    Ok(ExecResult {
        status,
        tail: tail.lines.into_iter().collect(),
        truncated: tail.truncated,
        bytes: tail.bytes,
        pgid,
    })
}

async fn read_some<R: AsyncReadExt + Unpin>(r: &mut Option<R>, buf: &mut [u8]) -> Option<usize> {
    match r {
        Some(r) => match r.read(buf).await {
            Ok(0) | Err(_) => None,
            Ok(n) => Some(n),
        },
        None => std::future::pending().await,
    }
}

async fn wait_cancel(rx: &mut watch::Receiver<bool>) {
    loop {
        if *rx.borrow_and_update() {
            return;
        }
        if rx.changed().await.is_err() {
            // The sender is gone: nobody can cancel any more.
            std::future::pending::<()>().await;
        }
    }
}

/// SIGTERM to the group; SIGKILL to what is left of it after `grace`; reap the child.
async fn terminate(child: &mut tokio::process::Child, pgid: i32, grace: Duration) {
    if pgid <= 0 {
        let _ = child.kill().await;
        return;
    }
    let group = Pid::from_raw(pgid);
    let _ = killpg(group, Signal::SIGTERM);
    let until = tokio::time::Instant::now() + grace;
    while tokio::time::Instant::now() < until {
        let _ = child.try_wait();
        // Signal 0 only checks: ESRCH means no process of the group is left.
        if killpg(group, None).is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = killpg(group, Signal::SIGKILL);
    let _ = child.wait().await;
}
