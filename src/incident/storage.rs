//! Where journal bytes go: a small trait over the file, so tests (and rehearsals) can make a
//! write or a sync fail, plus the one safe way to replace a whole file.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// The journal's file, as the journal uses it: append with one write call, sync, cut back.
pub trait Storage: Send + std::fmt::Debug {
    /// Appends `buf` at the end of the file with ONE write call; returns the bytes written,
    /// which may be fewer than asked (the journal treats that as a failure).
    fn write_once(&mut self, buf: &[u8]) -> io::Result<usize>;
    /// Makes what was written durable (`fdatasync`).
    fn sync_data(&mut self) -> io::Result<()>;
    /// Cuts the file back to `len` bytes (after a failed append).
    fn truncate(&mut self, len: u64) -> io::Result<()>;
}

/// The real journal file, opened for appending.
#[derive(Debug)]
pub struct FileStorage {
    file: File,
}

impl FileStorage {
    /// Opens (creating if needed) `path` for appending.
    pub fn open(path: &Path) -> io::Result<FileStorage> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(path)?;
        Ok(FileStorage { file })
    }
}

impl Storage for FileStorage {
    fn write_once(&mut self, buf: &[u8]) -> io::Result<usize> {
        // O_APPEND: the kernel places the write at the current end, even after a truncate.
        self.file.write(buf)
    }

    fn sync_data(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }
}

/// Faults to inject into a [`FaultyStorage`], shared with whoever holds a clone: a test arms
/// them while the journal runs.
#[derive(Debug, Clone, Default)]
pub struct Faults(Arc<FaultCounts>);

#[derive(Debug, Default)]
struct FaultCounts {
    syncs: AtomicU32,
    writes: AtomicU32,
    short_writes: AtomicU32,
    truncates: AtomicU32,
    /// While true, a sync waits (a disk that stalls); `waiting` counts the syncs that do.
    held: Mutex<bool>,
    released: Condvar,
    waiting: AtomicU32,
}

fn take(counter: &AtomicU32) -> bool {
    counter
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

impl Faults {
    /// The next `n` syncs fail (as `fdatasync` does on EIO or a full thin volume).
    pub fn fail_syncs(&self, n: u32) {
        self.0.syncs.store(n, Ordering::SeqCst);
    }
    /// The next `n` writes fail without writing anything.
    pub fn fail_writes(&self, n: u32) {
        self.0.writes.store(n, Ordering::SeqCst);
    }
    /// The next `n` writes write only half their bytes (ENOSPC mid-write).
    pub fn short_writes(&self, n: u32) {
        self.0.short_writes.store(n, Ordering::SeqCst);
    }
    /// The next `n` truncates fail.
    pub fn fail_truncates(&self, n: u32) {
        self.0.truncates.store(n, Ordering::SeqCst);
    }
    /// Every sync from now on waits until [`Faults::release_syncs`], as on a stalled disk.
    pub fn hold_syncs(&self) {
        *self
            .0
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = true;
    }
    /// The held syncs go on.
    pub fn release_syncs(&self) {
        *self
            .0
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = false;
        self.0.released.notify_all();
    }
    /// How many syncs are waiting for [`Faults::release_syncs`] now.
    pub fn syncs_waiting(&self) -> u32 {
        self.0.waiting.load(Ordering::SeqCst)
    }
    fn wait_while_held(&self) {
        let mut held = self
            .0
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *held {
            self.0.waiting.fetch_add(1, Ordering::SeqCst);
            while *held {
                held = self
                    .0
                    .released
                    .wait(held)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            self.0.waiting.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// A storage that fails when its [`Faults`] say so and otherwise passes through.
#[derive(Debug)]
pub struct FaultyStorage<S> {
    inner: S,
    faults: Faults,
}

impl<S: Storage> FaultyStorage<S> {
    pub fn new(inner: S, faults: Faults) -> Self {
        FaultyStorage { inner, faults }
    }
}

impl<S: Storage> Storage for FaultyStorage<S> {
    fn write_once(&mut self, buf: &[u8]) -> io::Result<usize> {
        if take(&self.faults.0.writes) {
            return Err(io::Error::other("injected write failure"));
        }
        if take(&self.faults.0.short_writes) {
            return self.inner.write_once(&buf[..buf.len() / 2]);
        }
        self.inner.write_once(buf)
    }

    fn sync_data(&mut self) -> io::Result<()> {
        self.faults.wait_while_held();
        if take(&self.faults.0.syncs) {
            return Err(io::Error::other("injected sync failure"));
        }
        self.inner.sync_data()
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        if take(&self.faults.0.truncates) {
            return Err(io::Error::other("injected truncate failure"));
        }
        self.inner.truncate(len)
    }
}

/// Syncs a directory, so a file created, renamed or removed in it survives a crash.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Replaces `path` with `bytes` so that a crash leaves either the old file or the new one,
/// never a mix: write a temporary file beside it, sync it, rename it over, sync the directory.
pub fn replace_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other(format!("\"{}\" is not a file path", path.display())))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = dir.join(tmp_name);
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_file_leaves_the_new_content_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("export.md");
        std::fs::write(&path, "old").unwrap();
        replace_file(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn faults_fire_exactly_as_often_as_armed() {
        let dir = tempfile::tempdir().unwrap();
        let faults = Faults::default();
        let mut s = FaultyStorage::new(
            FileStorage::open(&dir.path().join("j")).unwrap(),
            faults.clone(),
        );
        faults.fail_syncs(2);
        assert!(s.sync_data().is_err());
        assert!(s.sync_data().is_err());
        assert!(s.sync_data().is_ok());
        faults.short_writes(1);
        assert_eq!(s.write_once(b"abcd").unwrap(), 2);
        assert_eq!(s.write_once(b"abcd").unwrap(), 4);
    }
}
