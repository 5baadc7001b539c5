//! Who holds an incident's lock: the lock file's text, written by each new holder, read by the
//! next one to say who is writing (and by a takeover, to know whom to ask to stop).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{Read, Seek};

/// What kind of process holds an incident's lock: the word written into the lock file, so the
/// next one can say who is writing and what to do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// `warroom open` (and `warroom demo`, a console on a rehearsal).
    Console,
    /// `warroom record`, the headless recorder.
    Recorder,
    /// `warroom gameday --headless`.
    Gameday,
    /// `warroom incident …`: holds it for milliseconds.
    Cli,
    /// `warroom runbook run --incident ID`.
    Runbook,
    /// `warroom publish` (and the console's `P`), recording a delivery.
    Publish,
    /// The crash test's writer (`warroom incident stress`).
    Stress,
    /// A role this version does not know (written by a newer one).
    #[serde(other)]
    Other,
}

impl Role {
    /// The word in the lock file.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Console => "console",
            Role::Recorder => "recorder",
            Role::Gameday => "gameday",
            Role::Cli => "cli",
            Role::Runbook => "runbook",
            Role::Publish => "publish",
            Role::Stress => "stress",
            Role::Other => "other",
        }
    }

    /// The holder's program as a person would type it.
    pub fn command(self) -> &'static str {
        match self {
            Role::Console => "warroom open",
            Role::Recorder => "warroom record",
            Role::Gameday => "warroom gameday",
            Role::Cli => "warroom incident",
            Role::Runbook => "warroom runbook",
            Role::Publish => "warroom publish",
            Role::Stress => "warroom incident stress",
            Role::Other => "another warroom",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who holds an incident's lock, as written into the lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    pub pid: u32,
    pub since: DateTime<Utc>,
    pub role: Role,
    /// The host the holder runs on (empty in lock files written before it was recorded): a
    /// pid means something only on its own host, and the data dir may be shared.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
}

impl Holder {
    /// A holder record for this process.
    pub fn me(role: Role) -> Holder {
        Holder {
            pid: std::process::id(),
            since: Utc::now(),
            role,
            host: this_host(),
        }
    }

    /// Whether the holder runs on this host (a record without a host is taken as local: it
    /// was written by a version that only ever ran locally).
    pub fn is_local(&self) -> bool {
        self.host.is_empty() || self.host == this_host()
    }

    /// The holder's program as a person would type it: `warroom record` for the recorder.
    pub fn command(&self) -> String {
        self.role.command().into()
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.pid == 0 {
            return f.write_str("another process (it has not written its details yet)");
        }
        write!(f, "warroom {} (pid {}", self.role, self.pid)?;
        if !self.is_local() {
            write!(f, " on host {}", crate::sanitize::line(&self.host))?;
        }
        write!(f, ") since {}", self.since.format("%Y-%m-%d %H:%M:%S UTC"))
    }
}

/// This machine's host name, or an empty string when it cannot be read.
pub fn this_host() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_default()
}

/// Reads who holds the lock. The text can be stale (the holder has the lock but has not written
/// yet, or a probe holds it for a moment): a local holder whose process is gone is reported as
/// unknown. A holder on another host is taken at its word.
pub(super) fn read_holder(file: &mut File) -> Holder {
    let unknown = Holder {
        pid: 0,
        since: DateTime::<Utc>::UNIX_EPOCH,
        role: Role::Other,
        host: String::new(),
    };
    let mut text = String::new();
    let _ = file.rewind().and_then(|()| file.read_to_string(&mut text));
    match serde_json::from_str::<Holder>(&text) {
        Ok(h) if !h.is_local() || process_exists(h.pid) => h,
        _ => unknown,
    }
}

/// Whether a local process `pid` exists.
pub fn process_exists(pid: u32) -> bool {
    use nix::errno::Errno;
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    if raw <= 0 {
        return false;
    }
    // Signal 0 checks existence only; EPERM means it exists but belongs to someone else.
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), None) {
        Ok(()) | Err(Errno::EPERM) => true,
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_lock_files_read_as_local_and_other_hosts_say_so() {
        let old: Holder =
            serde_json::from_str(r#"{"pid":7,"since":"2026-11-29T08:00:00Z","role":"recorder"}"#)
                .unwrap();
        assert!(old.is_local());
        assert_eq!(old.command(), "warroom record");
        let far = Holder {
            host: format!("{}-elsewhere", this_host()),
            ..old
        };
        assert!(!far.is_local());
        let shown = far.to_string();
        assert!(
            shown.contains("pid 7 on host") && shown.contains("since 2026-11-29 08:00:00 UTC"),
            "{shown}"
        );
    }
}
