//! Errors in files people write (warroom.toml, runbooks, scenarios, themes) rendered the same
//! way everywhere: `file:line:col: message`, the offending line, and a caret under the spot.
//! A secret in the quoted line or the message (`token = "ghp_…"`, a DSN's password) is masked:
//! an error message is pasted into chats and tickets.

use std::fmt;
use std::ops::Range;

/// One problem at one place in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    /// 1-based line and column (column in characters).
    pub line: usize,
    pub col: usize,
    pub message: String,
    /// The text of the offending line (sanitized), if the source was available.
    pub source_line: Option<String>,
    /// How many characters to underline.
    pub width: usize,
}

impl Diagnostic {
    /// A diagnostic at byte `span` of `source`.
    pub fn at(
        file: impl Into<String>,
        source: &str,
        span: Option<Range<usize>>,
        message: impl Into<String>,
    ) -> Self {
        let message =
            crate::secret::mask_patterns(&crate::sanitize::multiline(message.into().trim()));
        let file = file.into();
        let Some(span) = span else {
            return Diagnostic {
                file,
                line: 1,
                col: 1,
                message,
                source_line: None,
                width: 0,
            };
        };
        let start = floor_char_boundary(source, span.start.min(source.len()));
        let end = floor_char_boundary(source, span.end.min(source.len())).max(start);
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[start..]
            .find('\n')
            .map_or(source.len(), |i| start + i);
        let line = source[..start].matches('\n').count() + 1;
        let col = source[line_start..start].chars().count() + 1;
        let text = source[line_start..line_end].trim_end_matches('\r');
        let width = source[start..end.min(line_end)].chars().count().max(1);
        Diagnostic {
            file,
            line,
            col,
            message,
            source_line: Some(crate::secret::mask_patterns(&crate::sanitize::line(text))),
            width,
        }
    }

    /// From a `toml` parse or deserialize error, which carries its own span.
    pub fn from_toml(file: impl Into<String>, source: &str, err: &toml::de::Error) -> Self {
        Diagnostic::at(file, source, err.span(), err.message())
    }

    /// The first line only: `file:line:col: message`.
    pub fn headline(&self) -> String {
        let first = self.message.lines().next().unwrap_or("");
        format!("{}:{}:{}: {}", self.file, self.line, self.col, first)
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut lines = self.message.lines();
        writeln!(
            f,
            "{}:{}:{}: {}",
            self.file,
            self.line,
            self.col,
            lines.next().unwrap_or("")
        )?;
        if let Some(src) = &self.source_line {
            let num = self.line.to_string();
            let pad = " ".repeat(num.len());
            writeln!(f, "{pad} |")?;
            writeln!(f, "{num} | {src}")?;
            write!(
                f,
                "{pad} | {}{}",
                " ".repeat(self.col.saturating_sub(1)),
                "^".repeat(self.width.max(1))
            )?;
        }
        for rest in lines {
            write!(f, "\n{rest}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

/// Several diagnostics reported together (one broken file never hides the others' errors).
#[derive(Debug, Clone, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            writeln!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// An error and its causes in one line, each cause once (a cause whose text the line already
/// holds adds nothing), at most eight deep, sanitized and with secrets masked. TLS failures are
/// said in words: rustls names some by their Rust values (`Other(OtherError(CaUsedAsEndEntity))`).
/// The one way warroom says a transport error (HTTP clients, GitHub, the alert sources).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    for _ in 0..8 {
        let Some(s) = source else { break };
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    crate::secret::mask_patterns(&crate::sanitize::line(&tls_in_words(&text)))
}

/// rustls' certificate errors that print as Rust values, in words.
fn tls_in_words(text: &str) -> String {
    const WORDS: &[(&str, &str)] = &[
        (
            "CaUsedAsEndEntity",
            "the server presents a CA certificate as its own",
        ),
        (
            "UnknownIssuer",
            "signed by an authority this machine does not trust",
        ),
        ("NotValidForName", "not valid for this host name"),
        ("NotValidYet", "not valid yet"),
        ("Expired", "expired"),
        ("BadSignature", "its signature does not check"),
        ("BadEncoding", "it is not a well-formed certificate"),
        ("Revoked", "revoked"),
        ("InvalidPurpose", "not meant for a server"),
        (
            "UnhandledCriticalExtension",
            "it has a critical extension that is not understood",
        ),
    ];
    let mut out = text.to_string();
    for (name, words) in WORDS {
        for wrapped in [
            format!("Other(OtherError({name}))"),
            format!("InvalidCertificate({name})"),
            name.to_string(),
        ] {
            if out.contains(&wrapped) {
                out = out.replace(&wrapped, words);
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_at_line_and_column() {
        let src = "a = 1\nbad = [\n";
        let d = Diagnostic::at("x.toml", src, Some(8..11), "expected a value");
        assert_eq!((d.line, d.col), (2, 3));
        assert_eq!(
            d.to_string(),
            "x.toml:2:3: expected a value\n  |\n2 | bad = [\n  |   ^^^"
        );
    }

    #[test]
    fn toml_errors_keep_their_position() {
        let src = "title = \"x\"\nrefresh = \n";
        let err = toml::from_str::<toml::Table>(src).unwrap_err();
        let d = Diagnostic::from_toml("w.toml", src, &err);
        assert_eq!(d.line, 2);
        assert!(d.headline().starts_with("w.toml:2:"));
    }

    #[test]
    fn a_secret_on_the_line_or_in_the_message_is_masked() {
        let src = "[source]\nurl = \"postgres://app:hunter22@db/app\"\npassword = 'pa55word!'\n";
        let at = src.find("password").unwrap();
        let err = Diagnostic::at(
            "w.toml",
            src,
            Some(at..at + 8),
            "unknown field, found password = pa55word!",
        );
        let shown = err.to_string();
        assert!(!shown.contains("pa55word"), "{shown}");
        assert!(shown.contains("password = '***'"), "{shown}");
        let url = Diagnostic::at("w.toml", src, Some(15..20), "bad url").to_string();
        assert!(!url.contains("hunter22"), "{url}");
        assert!(url.contains("app:***@db"), "{url}");
    }

    #[test]
    fn an_error_chain_is_one_line_in_words_without_secrets() {
        #[derive(Debug)]
        struct E(&'static str, Option<Box<E>>);
        impl fmt::Display for E {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.0)
            }
        }
        impl std::error::Error for E {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                self.1.as_deref().map(|e| e as _)
            }
        }
        let tls = E(
            "error sending request",
            Some(Box::new(E(
                "invalid peer certificate: Other(OtherError(CaUsedAsEndEntity))",
                None,
            ))),
        );
        assert_eq!(
            error_chain(&tls),
            "error sending request: invalid peer certificate: the server presents a CA \
             certificate as its own"
        );
        let dsn = E(
            "cannot connect to postgresql://app:hunter22@db/app",
            Some(Box::new(E("connection refused\nretry", None))),
        );
        assert_eq!(
            error_chain(&dsn),
            "cannot connect to postgresql://app:***@db/app: connection refused\\nretry"
        );
    }

    #[test]
    fn spans_past_the_end_do_not_panic() {
        let d = Diagnostic::at("x", "héllo", Some(2..99), "m");
        assert_eq!(d.line, 1);
    }
}
