//! Takeover without loss (issue 18, point 4): a recorder leaves beside the journal how to start
//! it again (`recorder.json`: its program, arguments, working directory and warroom's own path
//! variables, never a secret), so a console that takes the incident over from it can hand the
//! incident back when it quits: it waits for its own lock to go and starts the same
//! `warroom record` again, detached, with its output in `recorder.log`. The recorder's watch
//! (its Prometheus, Alertmanager and GitHub, as it was started) then goes on as before.

use crate::incident::store::{IncidentId, Role, Store};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The file a recorder leaves in the incident directory.
pub const RESTART_FILE: &str = "recorder.json";
/// Where a restarted recorder's status lines go.
pub const LOG_FILE: &str = "recorder.log";
/// The environment a restart keeps: warroom's own paths and the actor, nothing else (tokens
/// come from the environment of whoever restarts it, as they did for the first one).
const KEPT_ENV: [&str; 4] = [
    "WARROOM_CONFIG",
    "WARROOM_DATA_DIR",
    "WARROOM_LOG",
    "WARROOM_ACTOR",
];

/// How to start a recorder again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Restart {
    pub exe: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
}

impl Restart {
    /// This process's invocation, when it can be written down (arguments that are not UTF-8
    /// cannot, and then no restart is offered).
    pub fn of_this_process() -> Option<Restart> {
        let args = std::env::args_os()
            .skip(1)
            .map(|a| a.into_string().ok())
            .collect::<Option<Vec<_>>>()?;
        Some(Restart {
            exe: std::env::current_exe().ok()?,
            args,
            cwd: std::env::current_dir().ok()?,
            env: KEPT_ENV
                .iter()
                .filter_map(|k| Some((k.to_string(), std::env::var(k).ok()?)))
                .collect(),
        })
    }

    /// Writes it into the incident directory, owner-only.
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let text = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        let path = dir.join(RESTART_FILE);
        let staging = dir.join(format!(".{RESTART_FILE}.{}", std::process::id()));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&staging)?;
        std::io::Write::write_all(&mut f, &text)?;
        f.sync_all()?;
        std::fs::rename(&staging, &path)
    }

    /// The restart a recorder left in `dir`, if any.
    pub fn load(dir: &Path) -> Option<Restart> {
        let text = std::fs::read(dir.join(RESTART_FILE)).ok()?;
        serde_json::from_slice(&text).ok()
    }
}

/// How the hand-back went.
#[derive(Debug, Clone, PartialEq)]
pub enum HandBack {
    /// The restarted recorder holds the incident.
    Recording { pid: u32 },
    /// It could not be done; the message says why and what to do.
    Failed(String),
}

/// Waits (up to `wait`) for the incident to be free, starts `restart` detached and waits for it
/// to hold the incident. Someone else taking the incident in between is not overridden.
pub fn hand_back(store: &Store, id: &IncidentId, restart: &Restart, wait: Duration) -> HandBack {
    let deadline = Instant::now() + wait;
    loop {
        match store.holder(id) {
            Ok(None) => break,
            Ok(Some(h)) if h.pid != std::process::id() && h.pid != 0 => {
                return HandBack::Failed(format!(
                    "{h} took the incident first; the recorder was not restarted"
                ));
            }
            Ok(Some(_)) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(Some(_)) => {
                return HandBack::Failed("this console still held the incident".into());
            }
            Err(e) => return HandBack::Failed(e.to_string()),
        }
    }
    let log = store.dir(id).join(LOG_FILE);
    let out = match std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
    {
        Ok(f) => f,
        Err(e) => return HandBack::Failed(format!("cannot open \"{}\": {e}", log.display())),
    };
    let err = match out.try_clone() {
        Ok(f) => f,
        Err(e) => return HandBack::Failed(e.to_string()),
    };
    let mut cmd = std::process::Command::new(&restart.exe);
    cmd.args(&restart.args)
        .current_dir(&restart.cwd)
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .stderr(err);
    for (k, v) in &restart.env {
        cmd.env(k, v);
    }
    // Its own process group: Ctrl-C or a hang-up in this terminal is not its business.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return HandBack::Failed(format!("cannot start \"{}\": {e}", restart.exe.display()));
        }
    };
    let pid = child.id();
    let deadline = Instant::now() + wait;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return HandBack::Failed(format!(
                "the restarted recorder exited ({status}); see \"{}\"",
                log.display()
            ));
        }
        if let Ok(Some(h)) = store.holder(id)
            && h.pid == pid
            && h.role == Role::Recorder
        {
            // Not waited for: it outlives this console (the kernel re-parents it).
            return HandBack::Recording { pid };
        }
        if Instant::now() >= deadline {
            return HandBack::Failed(format!(
                "the restarted recorder (pid {pid}) did not take the incident within {wait:?}; \
                 see \"{}\"",
                log.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restart_round_trips_owner_only_and_keeps_no_secret() {
        let dir = tempfile::tempdir().unwrap();
        let r = Restart::of_this_process().expect("a test's arguments are UTF-8");
        assert!(r.env.iter().all(|(k, _)| k.starts_with("WARROOM_")));
        r.save(dir.path()).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join(RESTART_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(Restart::load(dir.path()), Some(r));
        assert_eq!(Restart::load(&dir.path().join("nowhere")), None);
    }
}
