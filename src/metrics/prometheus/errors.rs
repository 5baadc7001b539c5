//! Answers that are not a success: the API's JSON error envelope, text/plain errors, HTML pages
//! from a proxy, 429 and 503 with `Retry-After`. Each becomes one [`SourceError`] whose text is
//! sanitized and short.

use super::parse::{Envelope, api_error};
use crate::metrics::source::SourceError;
use crate::sanitize;
use serde::de::IgnoredAny;
use std::time::Duration;

/// Longest summary of a non-JSON error body, in characters.
pub const MAX_SUMMARY: usize = 160;

/// The error a non-2xx reply stands for.
pub fn error_from_reply(
    status: u16,
    content_type: Option<&str>,
    retry_after: Option<Duration>,
    body: &[u8],
) -> SourceError {
    if status == 429 || (status == 503 && retry_after.is_some()) {
        return SourceError::RateLimited { retry_after };
    }
    // Prometheus answers bad_data with 400, execution with 422, timeout/canceled/unavailable
    // with 503, internal with 500, all as JSON; other servers use other codes. The envelope
    // wins whatever the status and content type say.
    if let Ok(env) = serde_json::from_slice::<Envelope<IgnoredAny>>(body)
        && (env.error_type.is_some() || env.error.is_some())
    {
        return api_error(env.error_type, env.error, env.status);
    }
    let mut summary = summarize_error_body(content_type, body);
    if let Some(hint) = hint(status) {
        summary = format!("{summary} ({hint})");
    }
    SourceError::Http { status, summary }
}

/// What to check for the statuses a person can fix.
fn hint(status: u16) -> Option<&'static str> {
    match status {
        401 => Some("check the credentials for this source"),
        403 => Some("the credentials are not allowed to query"),
        404 => Some("check the URL and its path prefix"),
        407 => Some("a proxy wants credentials"),
        _ => None,
    }
}

/// A short, sanitized line for an error body: an HTML page's `<title>`, the first lines of a
/// text body, or the status's reason when the body is empty.
pub fn summarize_error_body(content_type: Option<&str>, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(64 * 1024)]);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return "empty body".to_string();
    }
    let is_html = content_type.is_some_and(|c| c.to_ascii_lowercase().contains("html"))
        || trimmed.starts_with('<') && {
            // By characters: a byte offset could fall inside one (the fuzzer found that).
            let head = trimmed
                .chars()
                .take(512)
                .collect::<String>()
                .to_ascii_lowercase();
            head.contains("<html") || head.contains("<!doctype") || head.contains("<head")
        };
    if is_html {
        return match html_title(trimmed) {
            Some(title) if !title.is_empty() => format!("HTML page \"{title}\""),
            _ => "an HTML page without a title".to_string(),
        };
    }
    shorten(trimmed)
}

/// The text of the first `<title>` element, whitespace collapsed, sanitized and short.
fn html_title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start
        + lower[start..]
            .find("</title")
            .unwrap_or(lower.len() - start);
    // `to_ascii_lowercase` keeps byte offsets, but guard the slice anyway.
    let raw = html.get(start..end)?;
    Some(shorten(&decode_entities(raw)))
}

fn decode_entities(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Collapse whitespace (newlines included), sanitize and cut to [`MAX_SUMMARY`].
fn shorten(s: &str) -> String {
    let collapsed: String = s
        .split_whitespace()
        .take(MAX_SUMMARY)
        .collect::<Vec<_>>()
        .join(" ");
    sanitize::sanitize(&collapsed, false, MAX_SUMMARY).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn html_is_summarized_by_its_title() {
        let page = b"<!DOCTYPE html><html><head><TITLE>\n 502 Bad\x1b[31m Gateway &amp; co\n</TITLE></head><body>nginx</body></html>";
        let s = summarize_error_body(Some("text/html"), page);
        assert_eq!(s, "HTML page \"502 Bad\\e[31m Gateway & co\"");
        let untitled = summarize_error_body(None, b"<html><body>x</body></html>");
        assert_eq!(untitled, "an HTML page without a title");
    }

    #[test]
    fn text_bodies_are_one_short_line() {
        let s = summarize_error_body(Some("text/plain"), b"Unauthorized\n\nmore\r\n");
        assert_eq!(s, "Unauthorized more");
        let long = "word ".repeat(200);
        let s = summarize_error_body(Some("text/plain"), long.as_bytes());
        assert!(s.chars().count() <= MAX_SUMMARY + 1, "{}", s.len());
        assert_eq!(summarize_error_body(None, b"  "), "empty body");
    }

    #[test]
    fn statuses_map_to_errors() {
        let e = error_from_reply(401, Some("text/plain"), None, b"Unauthorized\n");
        assert_eq!(
            e,
            SourceError::Http {
                status: 401,
                summary: "Unauthorized (check the credentials for this source)".into()
            }
        );
        let e = error_from_reply(503, None, Some(Duration::from_secs(3)), b"busy");
        assert_eq!(
            e,
            SourceError::RateLimited {
                retry_after: Some(Duration::from_secs(3))
            }
        );
        let e = error_from_reply(
            422,
            Some("application/json"),
            None,
            br#"{"status":"error","errorType":"422","error":"too many series"}"#,
        );
        assert_eq!(
            e,
            SourceError::Api {
                error_type: "422".into(),
                message: "too many series".into()
            }
        );
    }
}
