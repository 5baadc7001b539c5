//! The journal's tail marker: a small file beside the journal (`journal.tail` beside
//! `journal.jsonl`) naming the last record acknowledged: its sequence number and the journal's
//! length after it.
//!
//! A journal cut exactly at a record boundary, or to nothing, is still a valid journal: every
//! line checks and the sequence has no gap, so the journal alone cannot tell. The marker can:
//! it is written and synced after the record and before the record is acknowledged, so a
//! journal that ends before the marker's record lost records that were acknowledged. Opening
//! and reading then stop with an error ([`Tail::check`]) instead of trusting what is left.
//!
//! The marker may lag the journal (a crash between the two syncs) but never lead it. It is one
//! fixed-width line rewritten in place with one `pwrite`, so it is never longer or shorter than
//! before. A journal without a marker (one written before markers existed) is checked once the
//! next writer has written one.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// What a marker says: the journal held `seq` records, `len` bytes, when it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tail {
    pub seq: u64,
    pub len: u64,
}

/// How the journal's end compares with its marker.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the journal ends at record {found} ({found_len} bytes), but record {seq} was written and \
     synced (the journal was {len} bytes then, says \"{marker}\"): the file was cut or replaced \
     by an older copy, and acknowledged records are missing. Nothing was changed; restore the \
     journal from a backup, or, to accept it as it is, remove \"{marker}\""
)]
pub struct Cut {
    pub marker: String,
    pub seq: u64,
    pub len: u64,
    pub found: u64,
    pub found_len: u64,
}

const HEAD: &str = "warroom-journal-tail 1";
/// `HEAD seq=<20 digits> len=<20 digits>\n`: always this many bytes.
const WIDTH: usize = HEAD.len() + 5 + 20 + 5 + 20 + 1;

impl Tail {
    fn encode(self) -> Vec<u8> {
        let line = format!("{HEAD} seq={:020} len={:020}\n", self.seq, self.len);
        debug_assert_eq!(line.len(), WIDTH);
        line.into_bytes()
    }

    fn decode(bytes: &[u8]) -> Option<Tail> {
        let text = std::str::from_utf8(bytes).ok()?;
        let rest = text.strip_suffix('\n')?.strip_prefix(HEAD)?;
        let (seq, len) = rest.strip_prefix(" seq=")?.split_once(" len=")?;
        let number = |s: &str| {
            (s.len() == 20 && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse().ok())
                .flatten()
        };
        Some(Tail {
            seq: number(seq)?,
            len: number(len)?,
        })
    }

    /// Whether a journal of `found` records and `found_len` good bytes holds every record this
    /// marker says was acknowledged (when it holds exactly them, its length must agree too).
    pub fn check(self, marker: &Path, found: u64, found_len: u64) -> Result<(), Cut> {
        let cut = found < self.seq || (found == self.seq && found_len != self.len);
        if !cut {
            return Ok(());
        }
        Err(Cut {
            marker: marker.display().to_string(),
            seq: self.seq,
            len: self.len,
            found,
            found_len,
        })
    }
}

/// The marker's path for the journal at `journal` (`journal.jsonl` → `journal.tail`).
pub fn path_for(journal: &Path) -> PathBuf {
    journal.with_extension("tail")
}

/// The marker beside `journal`: `None` when there is none, `Err` with why when it cannot be
/// read or does not parse.
pub fn read(journal: &Path) -> Option<Result<Tail, String>> {
    let path = path_for(journal);
    match std::fs::read(&path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => Some(Err(format!("cannot read \"{}\": {e}", path.display()))),
        Ok(bytes) => Some(Tail::decode(&bytes).ok_or_else(|| {
            format!(
                "\"{}\" is not a tail marker ({} bytes)",
                path.display(),
                bytes.len()
            )
        })),
    }
}

/// The writer's handle on the marker.
#[derive(Debug)]
pub struct TailFile {
    file: File,
    path: PathBuf,
}

impl TailFile {
    /// Opens (creating if needed) the marker beside `journal`.
    pub fn open(journal: &Path) -> io::Result<TailFile> {
        let path = path_for(journal);
        let existed = path.exists();
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)?;
        if !existed {
            super::storage::sync_dir(path.parent().unwrap_or(Path::new(".")))?;
        }
        Ok(TailFile { file, path })
    }

    /// Says `tail` durably: one write in place, then `fdatasync`.
    pub fn write(&mut self, tail: Tail) -> io::Result<()> {
        let bytes = tail.encode();
        self.file.write_all_at(&bytes, 0)?;
        self.file.set_len(bytes.len() as u64)?;
        self.file.sync_data()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_reads_back_and_other_bytes_do_not() {
        let t = Tail {
            seq: 57,
            len: 12_345,
        };
        assert_eq!(t.encode().len(), WIDTH);
        assert_eq!(Tail::decode(&t.encode()), Some(t));
        let max = Tail {
            seq: u64::MAX,
            len: u64::MAX,
        };
        assert_eq!(Tail::decode(&max.encode()), Some(max));
        let mut flipped = t.encode();
        flipped[HEAD.len() + 6] = b'x';
        assert_eq!(Tail::decode(&flipped), None);
        assert_eq!(Tail::decode(b""), None);
        assert_eq!(Tail::decode(&t.encode()[..WIDTH - 1]), None);
    }

    #[test]
    fn a_journal_short_of_its_marker_is_cut() {
        let m = Path::new("journal.tail");
        let t = Tail { seq: 3, len: 300 };
        assert!(t.check(m, 3, 300).is_ok(), "exactly the marker's records");
        assert!(
            t.check(m, 4, 400).is_ok(),
            "a record past it (a crash between syncs)"
        );
        let cut = t.check(m, 2, 200).unwrap_err();
        assert_eq!((cut.found, cut.seq), (2, 3));
        assert!(cut.to_string().contains("record 3 was written"), "{cut}");
        assert!(t.check(m, 0, 0).is_err(), "cut to nothing");
        assert!(
            t.check(m, 3, 299).is_err(),
            "the same count, another length"
        );
    }
}
