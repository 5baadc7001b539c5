//! Answers of the label endpoints (`/api/v1/labels`, `/api/v1/label/<name>/values`): a list of
//! strings, with the server's warnings and infos. Pure, like [`super::parse`]; every string is
//! sanitized where it enters.

use super::errors::error_from_reply;
use super::parse::{Envelope, api_error, clean_message, malformed_2xx};
use crate::metrics::source::SourceError;
use crate::sanitize;

/// A list of label names or values.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LabelList {
    pub values: Vec<String>,
    /// Warnings from the server (e.g. "results truncated due to limit", a partial answer).
    pub warnings: Vec<String>,
    pub infos: Vec<String>,
    /// Bytes of the response body.
    pub bytes: usize,
}

/// Parse one answer of a label endpoint.
pub fn parse_label_list(
    status: u16,
    content_type: Option<&str>,
    retry_after: Option<std::time::Duration>,
    body: &[u8],
) -> Result<LabelList, SourceError> {
    if !(200..300).contains(&status) {
        return Err(error_from_reply(status, content_type, retry_after, body));
    }
    let env: Envelope<Vec<String>> =
        serde_json::from_slice(body).map_err(|e| malformed_2xx(content_type, body, &e))?;
    if env.status.as_deref() != Some("success") {
        return Err(api_error(env.error_type, env.error, env.status));
    }
    let clean = |v: Option<Vec<String>>| -> Vec<String> {
        v.unwrap_or_default()
            .iter()
            .take(20)
            .map(|s| clean_message(s))
            .collect()
    };
    Ok(LabelList {
        values: env
            .data
            .unwrap_or_default()
            .iter()
            .map(|v| sanitize::line(v).into_owned())
            .collect(),
        warnings: clean(env.warnings),
        infos: clean(env.infos),
        bytes: body.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_warnings_and_errors() {
        let ok = br#"{"status":"success","data":["pg_up","a\u001b[2Jb"],"warnings":["results truncated due to limit"]}"#;
        let l = parse_label_list(200, Some("application/json"), None, ok).unwrap();
        assert_eq!(l.values[0], "pg_up");
        assert!(!l.values[1].contains('\u{1b}'), "{:?}", l.values[1]);
        assert_eq!(l.warnings, vec!["results truncated due to limit"]);
        assert_eq!(l.bytes, ok.len());
        let bad =
            br#"{"status":"error","errorType":"bad_data","error":"invalid parameter \"match[]\""}"#;
        match parse_label_list(400, Some("application/json"), None, bad) {
            Err(SourceError::Api { error_type, .. }) => assert_eq!(error_type, "bad_data"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_label_list(200, Some("text/html"), None, b"<html>login</html>"),
            Err(SourceError::Malformed(_))
        ));
        // A null data list is an empty list, as some engines send it.
        let l = parse_label_list(200, None, None, br#"{"status":"success","data":null}"#).unwrap();
        assert!(l.values.is_empty());
    }
}
