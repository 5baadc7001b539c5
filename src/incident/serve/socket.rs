//! The socket file: bound owner-only (0600) and put in place atomically, and checked by a
//! client before it speaks (a socket owned by another user is refused).

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The longest socket path the kernel takes (`sun_path` is 108 bytes with its NUL).
const MAX_PATH: usize = 107;

/// Why a socket cannot be served or used.
#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    #[error(
        "the socket path \"{path}\" is {len} bytes long; unix sockets take at most {MAX_PATH}, \
         and /proc/self/fd, which reaches longer ones, is not there. Use a shorter --data-dir \
         (the incident is still recorded; only sharing it is off)"
    )]
    TooLong { path: PathBuf, len: usize },
    #[error("cannot serve the incident on \"{path}\": {source}")]
    Bind {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "\"{path}\" belongs to user id {owner}, not to you ({me}); warroom only speaks to its own \
         user's sockets. Check who made it before you remove it"
    )]
    NotOurs { path: PathBuf, owner: u32, me: u32 },
    #[error("\"{path}\" is not a socket; pass the holder's incident.sock (or its forwarded path)")]
    NotASocket { path: PathBuf },
    #[error("cannot use \"{path}\": {source}")]
    Stat {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A path the kernel takes for a socket at `path`: `path` itself when it fits in `sun_path`,
/// else the same file reached through an open handle on its directory
/// (`/proc/self/fd/N/NAME`), which fits whatever the directory's length, as long as the handle
/// lives (keep the value until the bind or connect is done).
pub(super) struct KernelPath {
    _dir: Option<std::fs::File>,
    pub path: PathBuf,
}

pub(super) fn kernel_path(path: &Path) -> Result<KernelPath, SocketError> {
    let len = path.as_os_str().len();
    if len <= MAX_PATH {
        return Ok(KernelPath {
            _dir: None,
            path: path.to_path_buf(),
        });
    }
    let too_long = || SocketError::TooLong {
        path: path.to_path_buf(),
        len,
    };
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(too_long());
    };
    let dir = std::fs::File::open(dir).map_err(|_| too_long())?;
    let short =
        Path::new("/proc/self/fd").join(format!("{}", std::os::fd::AsRawFd::as_raw_fd(&dir)));
    let short = short.join(name);
    if short.as_os_str().len() > MAX_PATH || !Path::new("/proc/self/fd").is_dir() {
        return Err(too_long());
    }
    Ok(KernelPath {
        _dir: Some(dir),
        path: short,
    })
}

/// The socket file's device and inode, to know later whether it is still ours.
pub(super) fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

/// Bind a listener at a private name beside `path`, make it owner-only, then rename it into
/// place: nobody ever sees `path` with looser permissions, and a stale socket left by a killed
/// holder is replaced in one step.
pub(super) fn bind(path: &Path) -> Result<(tokio::net::UnixListener, (u64, u64)), SocketError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| super::SOCKET_FILE.into());
    let staging = path.with_file_name(format!(".{name}.{}", std::process::id()));
    let bind_err = |source| SocketError::Bind {
        path: path.to_path_buf(),
        source,
    };
    let _ = std::fs::remove_file(&staging);
    let at = kernel_path(&staging)?;
    let listener = std::os::unix::net::UnixListener::bind(&at.path).map_err(bind_err)?;
    drop(at);
    let placed = std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o600))
        .and_then(|()| std::fs::rename(&staging, path))
        .and_then(|()| listener.set_nonblocking(true));
    if let Err(e) = placed {
        let _ = std::fs::remove_file(&staging);
        return Err(bind_err(e));
    }
    let listener = tokio::net::UnixListener::from_std(listener).map_err(bind_err)?;
    let id = identity(path).unwrap_or_default();
    Ok((listener, id))
}

/// Checks that `path` (followed through symlinks, as `ssh -L` or a link may put it elsewhere)
/// is a socket owned by this user. `Ok(false)` when there is nothing there.
pub fn check_socket(path: &Path) -> Result<bool, SocketError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(source) => {
            return Err(SocketError::Stat {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    if !meta.file_type().is_socket() {
        return Err(SocketError::NotASocket {
            path: path.to_path_buf(),
        });
    }
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(SocketError::NotOurs {
            path: path.to_path_buf(),
            owner: meta.uid(),
            me,
        });
    }
    Ok(true)
}
