//! One sanitizer for all text that comes from outside (metric labels, error bodies, command
//! output, API bodies, runbook text). It runs once, where the text enters, so nothing after it
//! has to think about terminal escapes.
//!
//! Control characters (C0, DEL, C1), escape sequences, bidi overrides and zero-width characters
//! are shown escaped as `\u{..}` / `\x..`, never passed through. Invalid UTF-8 becomes U+FFFD.
//! Very long input is cut at [`MAX_LEN`] characters and marked with `…`.

use std::borrow::Cow;

/// Longest sanitized string kept, in characters; longer input is cut and marked.
pub const MAX_LEN: usize = 4096;

/// A name safe in a file name, a repository path and a URL, from any title: lowercase ASCII
/// letters and digits, runs of anything else as one `-`, at most 60 characters, no dash at
/// either end, and `fallback` when nothing is left (`Query latency p50/p99` →
/// `query-latency-p50-p99`; `../../etc/passwd` → `etc-passwd`).
pub fn slug(title: &str, fallback: &str) -> String {
    let mut out = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
        if out.len() >= 60 {
            break;
        }
    }
    let out = out.trim_matches('-');
    if out.is_empty() {
        fallback.into()
    } else {
        out.into()
    }
}

/// True for characters that must never reach a terminal, export or log raw.
pub fn is_hostile(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        // bidi embeddings, overrides and isolates
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}'
        // zero-width and invisible formatting characters
        | '\u{200b}'..='\u{200d}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{ad}' | '\u{180e}'
        // line and paragraph separators
        | '\u{2028}' | '\u{2029}')
}

/// Sanitize one line of text: every hostile character is escaped, tabs and newlines included.
pub fn line(s: &str) -> Cow<'_, str> {
    sanitize(s, false, MAX_LEN)
}

/// Sanitize text that may span lines: `\n` and `\t` are kept, everything else hostile escaped.
pub fn multiline(s: &str) -> Cow<'_, str> {
    sanitize(s, true, MAX_LEN * 16)
}

/// Sanitize bytes that may not be UTF-8 (command output, HTTP bodies).
pub fn bytes(b: &[u8]) -> String {
    multiline(&String::from_utf8_lossy(b)).into_owned()
}

/// Sanitize with an explicit length limit in characters.
pub fn sanitize(s: &str, keep_newlines: bool, max_chars: usize) -> Cow<'_, str> {
    let clean = s.chars().count() <= max_chars
        && !s
            .chars()
            .any(|c| is_hostile(c) && !(keep_newlines && (c == '\n' || c == '\t')));
    if clean {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len().min(max_chars * 2) + 8);
    for (n, c) in s.chars().enumerate() {
        if n >= max_chars {
            out.push('…');
            break;
        }
        if keep_newlines && (c == '\n' || c == '\t') {
            out.push(c);
        } else if is_hostile(c) {
            escape_into(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn escape_into(out: &mut String, c: char) {
    use std::fmt::Write;
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{1b}' => out.push_str("\\e"),
        c if (c as u32) < 0x100 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// True when `s` holds no character that [`is_hostile`] rejects (newlines and tabs allowed when
/// `allow_newlines`). Tests use it to prove a rendered buffer or file is clean.
pub fn is_clean(s: &str, allow_newlines: bool) -> bool {
    !s.chars()
        .any(|c| is_hostile(c) && !(allow_newlines && (c == '\n' || c == '\t')))
}

/// Hostile strings every input path is tested with (RELIABILITY.md, "Bad input").
pub const HOSTILE_SAMPLES: &[&str] = &[
    "\u{1b}]0;pwned title\u{7}",
    "\u{1b}]8;;https://evil.example/\u{1b}\\click\u{1b}]8;;\u{1b}\\",
    "\u{1b}]52;c;cm0gLXJmIH4=\u{7}",
    "\u{1b}[2J\u{1b}[H",
    "\u{1b}[10;10H",
    "\u{1b}[31mred\u{1b}[0m",
    "\u{1b}[?1049l",
    "\u{1b}[6n",
    "\u{1b}P1$r\u{1b}\\",
    "line\roverwrite",
    "tab\there",
    "new\nline",
    "\u{9b}31m",
    "\u{90}dcs\u{9c}",
    "\u{85}next line",
    "nul\u{0}byte",
    "del\u{7f}char",
    "bell\u{7}",
    "back\u{8}space",
    "\u{202e}txt.exe",
    "\u{202d}override",
    "\u{2066}isolate\u{2069}",
    "zero\u{200b}width",
    "joiner\u{200d}",
    "\u{feff}bom",
    "soft\u{ad}hyphen",
    "\u{2028}sep",
    "\u{fffd}invalid utf8 replacement",
    "@everyone @octocat",
    "<script>alert(1)</script>",
    "`code` | pipe | ![img](x)",
    "$(touch /tmp/x)",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hostile_sample_comes_out_clean() {
        for s in HOSTILE_SAMPLES {
            let out = line(s);
            assert!(is_clean(&out, false), "{s:?} -> {out:?}");
            assert!(!out.contains('\u{1b}'));
        }
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        assert!(matches!(line("pod=api-7 ✓"), Cow::Borrowed(_)));
    }

    #[test]
    fn escapes_are_visible() {
        assert_eq!(line("a\u{1b}[2Jb"), "a\\e[2Jb");
        assert_eq!(line("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(multiline("a\nb\rc"), "a\nb\\rc");
    }

    #[test]
    fn long_input_is_cut_and_marked() {
        let long = "x".repeat(MAX_LEN + 10);
        let out = line(&long);
        assert_eq!(out.chars().count(), MAX_LEN + 1);
        assert!(out.ends_with('…'));
    }

    #[test]
    fn invalid_utf8_becomes_replacement() {
        assert_eq!(bytes(b"ok\xff\x1b"), "ok\u{fffd}\\e");
    }
}
