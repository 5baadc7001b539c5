//! Where warroom keeps its files when not told otherwise (XDG directories).

use std::path::PathBuf;

const APP: &str = "warroom";

/// The default configuration file: `$XDG_CONFIG_HOME/warroom/warroom.toml`.
pub fn default_config_file() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join(APP).join("warroom.toml"))
}

/// The user's own runbooks: `$XDG_CONFIG_HOME/warroom/runbooks/`.
pub fn default_runbook_dir() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join(APP).join("runbooks"))
}

/// The user's own signal presets: `$XDG_CONFIG_HOME/warroom/presets/`.
pub fn default_presets_dir() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join(APP).join("presets"))
}

/// The default data directory, where incidents live.
pub fn default_data_dir() -> PathBuf {
    dirs::data_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join(APP)
}

/// The default log file.
pub fn default_log_file() -> PathBuf {
    dirs::state_dir()
        .or_else(dirs::cache_dir)
        .unwrap_or_else(std::env::temp_dir)
        .join(APP)
        .join("warroom.log")
}

/// Why [`read_capped`] gave nothing.
#[derive(Debug, thiserror::Error)]
pub enum CappedReadError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Over the limit: `size` when the file said so before anything was read, else `None`
    /// (a pipe, a device such as `/dev/zero`, a file that grew while read).
    #[error(
        "{} bytes, over the {limit} bytes read from such a file",
        size.map_or_else(|| format!("more than {limit}"), |s| s.to_string())
    )]
    TooLarge { size: Option<u64>, limit: usize },
}

/// Read at most `limit` bytes of `path` (`-` is standard input): a file that says it is larger
/// is refused before any of it is read, and a stream that never ends (`/dev/zero`, a pipe) is
/// refused once it passes the limit, so memory stays bounded by `limit` whatever is named.
pub fn read_capped(path: &std::path::Path, limit: usize) -> Result<Vec<u8>, CappedReadError> {
    use std::io::Read;
    let reader: Box<dyn Read> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(path)?;
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(std::io::Error::other("it is a directory").into());
        }
        if meta.is_file() && meta.len() > limit as u64 {
            return Err(CappedReadError::TooLarge {
                size: Some(meta.len()),
                limit,
            });
        }
        Box::new(file)
    };
    let mut bytes = Vec::new();
    reader.take(limit as u64 + 1).read_to_end(&mut bytes)?;
    if bytes.len() > limit {
        return Err(CappedReadError::TooLarge { size: None, limit });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_file_is_refused_before_it_is_read_and_a_stream_at_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        let f = std::fs::File::create(&path).unwrap();
        // Sparse: a gigabyte said, nothing written; reading it would take a gigabyte.
        f.set_len(1 << 30).unwrap();
        match read_capped(&path, 1024) {
            Err(CappedReadError::TooLarge { size, limit }) => {
                assert_eq!((size, limit), (Some(1 << 30), 1024));
            }
            other => panic!("{other:?}"),
        }
        // A device that never ends is cut at the limit, not read to the end.
        match read_capped(std::path::Path::new("/dev/zero"), 4096) {
            Err(e @ CappedReadError::TooLarge { size: None, .. }) => {
                assert_eq!(
                    e.to_string(),
                    "more than 4096 bytes, over the 4096 bytes read from such a file"
                );
            }
            other => panic!("{other:?}"),
        }
        std::fs::write(&path, b"{}").unwrap();
        assert_eq!(read_capped(&path, 2).unwrap(), b"{}");
        assert!(matches!(
            read_capped(dir.path(), 2),
            Err(CappedReadError::Io(_))
        ));
    }
}
