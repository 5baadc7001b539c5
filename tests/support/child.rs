//! A child process run to its end within a bounded time, its output in files (a game day's
//! report is larger than a pipe holds).

use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// Runs `cmd` to its end within `limit` (killed and failing the test past it); returns its
/// exit status, stdout and stderr.
pub fn run_to_end(cmd: &mut Command, limit: Duration) -> (ExitStatus, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let mut child = cmd
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if began.elapsed() > limit {
            let _ = child.kill();
            panic!("{cmd:?} did not finish within {limit:?}: {}", read(&err));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    (status, read(&out), read(&err))
}

/// A child killed and reaped when dropped, so a failing test leaves no process behind.
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
