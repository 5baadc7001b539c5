//! Taking an incident over from the headless recorder: ask it to stop (SIGTERM to the pid in
//! the lock file, on this host only), wait a bounded time for it to record its stop and let go
//! of the lock, then take the lock. The lock is never taken from a live process: if the holder
//! does not let go in time, the takeover fails and says so, and the holder keeps writing.
//!
//! Only a recorder is stopped this way. A console has a person at it, a runbook run must not be
//! cut between a request and its answer, and a short `incident` command is done in milliseconds.

use super::{Holder, IncidentId, OpenIncident, Store, StoreError};
use crate::backoff::Backoff;
use crate::incident::journal::Recovery;
use std::time::{Duration, Instant};

/// How long a takeover waits for the recorder to let go.
pub const TAKEOVER_WAIT: Duration = Duration::from_secs(10);

/// Why an incident could not be taken over.
#[derive(Debug, thiserror::Error)]
pub enum TakeOverError {
    #[error("incident \"{id}\" is held by {holder}, which cannot be taken over: {why}")]
    NotAllowed {
        id: String,
        holder: Holder,
        why: &'static str,
    },
    #[error(
        "incident \"{id}\": {holder} was asked to stop (SIGTERM) but still holds the incident \
         after {waited:?}; nothing was taken from it. Check it (`kill -TERM {pid}`) and try \
         again",
        pid = holder.pid
    )]
    DidNotLetGo {
        id: String,
        holder: Holder,
        waited: Duration,
    },
    #[error("incident \"{id}\": cannot signal {holder}: {reason}")]
    Signal {
        id: String,
        holder: Holder,
        reason: String,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl TakeOverError {
    /// Who still holds the incident, when the error says.
    pub fn holder(&self) -> Option<&Holder> {
        match self {
            TakeOverError::NotAllowed { holder, .. }
            | TakeOverError::DidNotLetGo { holder, .. }
            | TakeOverError::Signal { holder, .. } => Some(holder),
            TakeOverError::Store(StoreError::Held { holder, .. }) => Some(holder),
            TakeOverError::Store(_) => None,
        }
    }
}

/// Why `holder` may not be asked to stop, if it may not.
fn refusal(holder: &Holder) -> Option<&'static str> {
    if holder.pid == 0 {
        return Some("its process is unknown (it has not written its details yet); try again");
    }
    if !holder.is_local() {
        return Some("it runs on another host; stop it there and try again");
    }
    if holder.role != super::Role::Recorder {
        return Some("only a headless recorder (`warroom record`) is asked to stop");
    }
    None
}

impl Store {
    /// Opens `id` for writing as `role`. When a recorder on this host holds it, asks the
    /// recorder to stop and waits up to `wait` for its lock. Returns the stopped holder too.
    pub fn take_over(
        &self,
        id: &IncidentId,
        role: super::Role,
        wait: Duration,
    ) -> Result<(OpenIncident, Recovery, Option<Holder>), TakeOverError> {
        let holder = match self.open_incident(id, role) {
            Ok((incident, recovery)) => return Ok((incident, recovery, None)),
            Err(StoreError::Held { holder, .. }) => holder,
            Err(e) => return Err(e.into()),
        };
        if let Some(why) = refusal(&holder) {
            return Err(TakeOverError::NotAllowed {
                id: id.to_string(),
                holder,
                why,
            });
        }
        let pid = nix::unistd::Pid::from_raw(i32::try_from(holder.pid).unwrap_or(0));
        match nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM) {
            // Gone already: its lock is being released by the kernel.
            Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
            Err(e) => {
                return Err(TakeOverError::Signal {
                    id: id.to_string(),
                    holder,
                    reason: e.desc().to_string(),
                });
            }
        }
        tracing::info!(pid = holder.pid, incident = %id, "asked the recorder to stop");
        let backoff = Backoff {
            base: Duration::from_millis(20),
            cap: Duration::from_millis(250),
            max_attempts: u32::MAX,
        };
        let started = Instant::now();
        let mut rng = rand::rng();
        let mut tries = 0;
        loop {
            match self.open_incident(id, role) {
                Ok((incident, recovery)) => return Ok((incident, recovery, Some(holder))),
                // Still the recorder (or not yet told who it is): keep waiting.
                Err(StoreError::Held { holder: now, .. })
                    if now.pid == holder.pid || now.pid == 0 => {}
                Err(e) => return Err(e.into()),
            }
            if started.elapsed() >= wait {
                return Err(TakeOverError::DidNotLetGo {
                    id: id.to_string(),
                    holder,
                    waited: wait,
                });
            }
            std::thread::sleep(backoff.delay(tries, &mut rng).max(Duration::from_millis(5)));
            tries += 1;
        }
    }
}
