//! A cgroup (v2) for each exec step, where warroom may make one (as root, or in a subtree
//! delegated to its user): every process the step starts is in it and cannot leave it, however
//! it detaches (a new session, a cleared environment, a double fork with its parent gone). The
//! step's end then finds them all in `cgroup.procs`. Where no cgroup can be made, the step runs
//! without one and the process group, the subreaper and the scope variable hold as before.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// One step's cgroup; removed when the step is over.
#[derive(Debug)]
pub struct StepGroup {
    dir: PathBuf,
    /// `<dir>/cgroup.procs`, ready for the child to open between fork and exec.
    procs: CString,
}

/// The cgroup v2 directory warroom itself is in, when there is one (from `/proc/self/cgroup`
/// and the cgroup2 mount in `/proc/self/mountinfo`).
fn own_dir() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let own = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        // "... mount-point options - cgroup2 source super-options"
        let mount = mounts.lines().find_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            right
                .starts_with("cgroup2 ")
                .then(|| left.split(' ').nth(4))
                .flatten()
        })?;
        Some(Path::new(mount).join(own.trim_start_matches('/')))
    })
    .as_deref()
}

impl StepGroup {
    /// A new cgroup named after the step's `scope`, or `None` where warroom cannot make one.
    pub fn create(scope: &str) -> Option<StepGroup> {
        let dir = own_dir()?.join(format!("warroom-step-{scope}"));
        if let Err(e) = std::fs::create_dir(&dir) {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                tracing::info!(
                    error = %e,
                    "no cgroup for exec steps; a process that leaves its step's group, clears \
                     its environment and is orphaned may outlive the step"
                );
            });
            return None;
        }
        let procs = CString::new(dir.join("cgroup.procs").as_os_str().as_bytes()).ok()?;
        Some(StepGroup { dir, procs })
    }

    /// What the child runs between fork and exec to join the group: open, write "0" (this
    /// process), close, all async-signal-safe and without allocating. A failure leaves the
    /// child where it was: the step still runs, found by its scope instead.
    #[allow(unsafe_code)] // libc between fork and exec: nothing safe allocates nothing there.
    pub fn joiner(&self) -> impl FnMut() -> std::io::Result<()> + Send + Sync + 'static {
        let procs = self.procs.clone();
        move || {
            // SAFETY: `procs` is a valid NUL-terminated path; the buffer is one static byte.
            unsafe {
                let fd =
                    nix::libc::open(procs.as_ptr(), nix::libc::O_WRONLY | nix::libc::O_CLOEXEC);
                if fd >= 0 {
                    nix::libc::write(fd, b"0".as_ptr().cast(), 1);
                    nix::libc::close(fd);
                }
            }
            Ok(())
        }
    }

    /// Every process in the group now.
    pub fn pids(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// Removes the group once it is empty (waiting a little for the last exits to be seen).
    pub async fn remove(self) {
        for _ in 0..25 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tracing::warn!(dir = %self.dir.display(), "a step's cgroup could not be removed");
    }
}

impl Drop for StepGroup {
    /// Best effort, for a step that never started (the program could not be spawned).
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Whether exec steps get a cgroup here (for tests and `warroom runbook check`'s notes).
pub fn available() -> bool {
    StepGroup::create(&format!("probe-{}", std::process::id())).is_some()
}
