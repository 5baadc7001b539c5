//! Secrets (passwords, bearer tokens): held in a [`Secret`] that never prints itself.
//!
//! A secret comes from the environment or from a file readable only by its owner, never from
//! the config text. `Debug` and `Display` print `***`, so a secret that reaches a log line, a
//! panic message or a `{:?}` of a whole config shows nothing.

use std::fmt;
use std::path::{Path, PathBuf};

/// What a secret's `Debug` and `Display` print.
pub const MASK: &str = "***";

/// `key=value` / `key: value` keys whose value is hidden.
const SECRET_KEYS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "access_key",
    "authorization",
    "bearer",
];

/// Prefixes of well-known tokens; the whole word after them is hidden.
const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghs_",
    "ghu_",
    "github_pat_",
    "xoxb-",
    "xoxp-",
    "AKIA",
    "glpat-",
];

fn is_word(c: char) -> bool {
    !(c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ';' | '&' | ')' | '(' | '<' | '>'))
}

/// `text` with every secret-looking value replaced by [`MASK`]: the value after a secret key
/// (`password=…`, `token = "…"`, `Authorization: Bearer …`), a well-known token (`ghp_…`) and
/// the password of a URL (`postgresql://app:…@db`). For text that may quote a secret back
/// (a runbook command's output, a file's line in an error message) where the value is unknown.
pub fn mask_patterns(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut hide: Vec<(usize, usize)> = Vec::new();
    for key in SECRET_KEYS {
        let mut from = 0;
        while let Some(i) = lower[from..].find(key) {
            let at = from + i;
            from = at + key.len();
            // key, optional closing quote and spaces, then '=' or ':' (or a space after
            // "bearer"), optional spaces/quote, then the value up to the end of the word.
            let rest = &text[from..];
            let mut skip = 0;
            let mut chars = rest.char_indices().peekable();
            let mut sep = false;
            while let Some(&(j, c)) = chars.peek() {
                match c {
                    '"' | '\'' if !sep => {}
                    '=' | ':' if !sep => sep = true,
                    // `password = x`, as TOML and YAML-ish text write it.
                    ' ' if !sep && *key != "bearer" => {}
                    ' ' if sep || *key == "bearer" => sep = true,
                    '"' | '\'' if sep => {}
                    _ => {
                        skip = j;
                        break;
                    }
                }
                chars.next();
                skip = j + c.len_utf8();
            }
            if !sep {
                continue;
            }
            let start = from + skip;
            let len: usize = text[start..]
                .chars()
                .take_while(|&c| is_word(c))
                .map(char::len_utf8)
                .sum();
            // "Authorization: Bearer x" hides the scheme word; the bearer rule hides the token.
            // A table, a list or a flag (`token = { env = … }`, `secret = true`) holds no secret.
            let value = &text[start..start + len];
            let structure = value.starts_with(['{', '[']) || value == "true" || value == "false";
            if len > 0 && value != MASK && !structure {
                hide.push((start, start + len));
            }
        }
    }
    for p in TOKEN_PREFIXES {
        let mut from = 0;
        while let Some(i) = text[from..].find(p) {
            let at = from + i;
            let len: usize = text[at..]
                .chars()
                .take_while(|&c| is_word(c))
                .map(char::len_utf8)
                .sum();
            if len > p.len() + 3 {
                hide.push((at, at + len));
            }
            from = at + p.len();
        }
    }
    hide.extend(url_passwords(text));
    if hide.is_empty() {
        return text.to_string();
    }
    hide.sort();
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for (s, e) in hide {
        if e <= pos {
            continue;
        }
        out.push_str(&text[pos..s.max(pos)]);
        out.push_str(MASK);
        pos = e;
    }
    out.push_str(&text[pos..]);
    out
}

/// The password of each URL with one (`postgresql://app:PASSWORD@host/db`).
fn url_passwords(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find("://") {
        let start = from + i + 3;
        let authority_len = text[start..]
            .find(|c: char| c == '/' || c.is_whitespace() || matches!(c, '"' | '\'' | '?' | '#'))
            .unwrap_or(text.len() - start);
        let authority = &text[start..start + authority_len];
        if let Some(at) = authority.rfind('@')
            && let Some(colon) = authority[..at].find(':')
            && colon + 1 < at
        {
            spans.push((start + colon + 1, start + at));
        }
        from = start;
    }
    spans
}

/// A secret string. Read it with [`Secret::expose`], only where it is sent.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wrap a value already in hand (tests, values a caller read itself).
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The secret itself, for the one place that sends it (an HTTP header).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Read a secret from the environment variable `var`; a missing or empty variable is an error.
    pub fn from_env(var: &str) -> Result<Secret, SecretError> {
        from_var(var, std::env::var(var))
    }

    /// Read a secret from a file that only its owner may read or write (mode 0600 or 0400).
    /// Surrounding whitespace (the usual trailing newline) is dropped.
    pub fn from_file(path: &Path) -> Result<Secret, SecretError> {
        let unreadable = |e: std::io::Error| SecretError::FileUnreadable {
            path: path.to_path_buf(),
            reason: e.to_string(),
        };
        let meta = std::fs::metadata(path).map_err(unreadable)?;
        if !meta.is_file() {
            return Err(SecretError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        check_owner_only(path, &meta)?;
        let text = std::fs::read_to_string(path).map_err(unreadable)?;
        let value = text.trim();
        if value.is_empty() {
            return Err(SecretError::FileEmpty {
                path: path.to_path_buf(),
            });
        }
        Ok(Secret(value.to_string()))
    }
}

/// The checks of [`Secret::from_env`] on a value already read (tests need no `set_var`).
fn from_var(var: &str, value: Result<String, std::env::VarError>) -> Result<Secret, SecretError> {
    match value {
        Ok(v) if !v.trim().is_empty() => Ok(Secret(v.trim().to_string())),
        Ok(_) => Err(SecretError::EnvEmpty {
            var: var.to_string(),
        }),
        Err(std::env::VarError::NotPresent) => Err(SecretError::EnvMissing {
            var: var.to_string(),
        }),
        Err(std::env::VarError::NotUnicode(_)) => Err(SecretError::EnvNotUnicode {
            var: var.to_string(),
        }),
    }
}

#[cfg(unix)]
fn check_owner_only(path: &Path, meta: &std::fs::Metadata) -> Result<(), SecretError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(SecretError::FileTooOpen {
            path: path.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_owner_only(_path: &Path, _meta: &std::fs::Metadata) -> Result<(), SecretError> {
    Ok(())
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(MASK)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(MASK)
    }
}

/// Why a secret could not be loaded. Messages name the variable or file and the fix; they never
/// contain the secret.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SecretError {
    #[error("environment variable \"{var}\" is not set; export it with the secret as its value")]
    EnvMissing { var: String },
    #[error("environment variable \"{var}\" is empty; set it to the secret")]
    EnvEmpty { var: String },
    #[error("environment variable \"{var}\" is not valid UTF-8")]
    EnvNotUnicode { var: String },
    #[error("cannot read secret file \"{}\": {reason}", .path.display())]
    FileUnreadable { path: PathBuf, reason: String },
    #[error("secret file \"{}\" is not a regular file", .path.display())]
    NotAFile { path: PathBuf },
    #[error("secret file \"{}\" is empty", .path.display())]
    FileEmpty { path: PathBuf },
    #[error(
        "secret file \"{}\" has mode {mode:04o}, so other users can read or change it; \
         run `chmod 600 {}` and try again",
        .path.display(), .path.display()
    )]
    FileTooOpen { path: PathBuf, mode: u32 },
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;

    fn secret_file(mode: u32, text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        std::fs::set_permissions(f.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        f
    }

    #[test]
    fn debug_and_display_never_show_the_value() {
        let s = Secret::new("hunter2-canary");
        assert_eq!(format!("{s:?}"), "***");
        assert_eq!(format!("{s}"), "***");
        assert_eq!(format!("{:?}", Some(&s)), "Some(***)");
        assert_eq!(s.expose(), "hunter2-canary");
    }

    #[test]
    fn an_owner_only_file_is_read_and_trimmed() {
        for mode in [0o600, 0o400] {
            let f = secret_file(mode, "tok-123\n");
            assert_eq!(Secret::from_file(f.path()).unwrap().expose(), "tok-123");
        }
    }

    #[test]
    fn group_or_other_access_is_refused_with_the_fix() {
        for mode in [0o640, 0o604, 0o644, 0o660, 0o606] {
            let f = secret_file(mode, "tok-123\n");
            let err = Secret::from_file(f.path()).unwrap_err();
            assert!(matches!(err, SecretError::FileTooOpen { .. }), "{mode:o}");
            let msg = err.to_string();
            assert!(msg.contains(&f.path().display().to_string()), "{msg}");
            assert!(msg.contains("chmod 600"), "{msg}");
            assert!(!msg.contains("tok-123"), "{msg}");
        }
    }

    #[test]
    fn missing_and_empty_files_are_errors() {
        let f = secret_file(0o600, " \n");
        assert!(matches!(
            Secret::from_file(f.path()),
            Err(SecretError::FileEmpty { .. })
        ));
        let missing = f.path().with_extension("missing");
        assert!(matches!(
            Secret::from_file(&missing),
            Err(SecretError::FileUnreadable { .. })
        ));
    }

    #[test]
    fn environment_variables() {
        let var = "WARROOM_TEST_SECRET_THAT_IS_NEVER_SET";
        assert!(matches!(
            Secret::from_env(var),
            Err(SecretError::EnvMissing { .. })
        ));
        assert_eq!(
            from_var(var, Ok("  s3cret \n".into())).unwrap().expose(),
            "s3cret"
        );
        let empty = from_var(var, Ok(" ".into())).unwrap_err();
        assert!(matches!(empty, SecretError::EnvEmpty { .. }));
        assert!(empty.to_string().contains(var), "{empty}");
    }
}
