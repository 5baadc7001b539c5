//! Who holds an incident's lock: the lock file's text, written by each new holder, read by the
//! next one to say who is writing (and by a takeover, to know whom to ask to stop).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{Read, Seek};

/// Who holds an incident's lock, as written into the lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    pub pid: u32,
    pub since: DateTime<Utc>,
    /// `console`, `recorder`, `cli`, `runbook`, …
    pub role: String,
    /// The host the holder runs on (empty in lock files written before it was recorded): a
    /// pid means something only on its own host, and the data dir may be shared.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
}

impl Holder {
    /// A holder record for this process.
    pub fn me(role: &str) -> Holder {
        Holder {
            pid: std::process::id(),
            since: Utc::now(),
            role: role.to_string(),
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
        match self.role.as_str() {
            "recorder" => "warroom record".into(),
            "console" => "warroom open".into(),
            other => format!("warroom {}", crate::sanitize::line(other)),
        }
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.pid == 0 {
            return f.write_str("another process (it has not written its details yet)");
        }
        write!(
            f,
            "warroom {} (pid {}",
            crate::sanitize::line(&self.role),
            self.pid
        )?;
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
        role: String::new(),
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
