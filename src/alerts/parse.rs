//! The two alert APIs' answers, read into [`Alert`]s (no I/O). Every label name, value and
//! annotation is sanitized here, where it enters.
//!
//! - Prometheus `/api/v1/alerts`: `{"status":"success","data":{"alerts":[{"labels":{…},
//!   "annotations":{…},"state":"firing"|"pending",…}]}}`. Only `firing` counts: a pending
//!   alert has not yet held for its `for:` duration.
//! - Alertmanager `/api/v2/alerts`: `[{"labels":{…},"annotations":{…},"endsAt":"…",
//!   "status":{"state":"active"|"suppressed"|"unprocessed"},…}]`. A silenced or inhibited
//!   alert still fires (only its notifications are held back); an alert whose `endsAt` has
//!   passed has ended.

use super::Alert;
use crate::metrics::SourceError;
use crate::sanitize;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The label that names an alert.
pub const ALERTNAME: &str = "alertname";

#[derive(Debug, Deserialize)]
struct PromEnvelope {
    status: Option<String>,
    data: Option<PromData>,
    #[serde(rename = "errorType")]
    error_type: Option<String>,
    error: Option<String>,
}

#[derive(Debug, Deserialize)]
struct PromData {
    #[serde(default)]
    alerts: Vec<PromAlert>,
}

#[derive(Debug, Deserialize)]
struct PromAlert {
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    annotations: BTreeMap<String, String>,
    #[serde(default)]
    state: String,
}

#[derive(Debug, Deserialize)]
struct ManagerAlert {
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    annotations: BTreeMap<String, String>,
    #[serde(rename = "endsAt")]
    ends_at: Option<String>,
}

fn malformed(what: &str, e: impl std::fmt::Display) -> SourceError {
    SourceError::Malformed(sanitize::line(&format!("{what}: {e}")).into_owned())
}

/// Builds a sanitized alert from its labels and annotations.
fn alert(
    mut labels: BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
    ended: bool,
) -> Alert {
    let name = labels
        .remove(ALERTNAME)
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "(unnamed alert)".into());
    let labels = labels
        .into_iter()
        .map(|(k, v)| {
            (
                sanitize::line(&k).into_owned(),
                sanitize::line(&v).into_owned(),
            )
        })
        .collect();
    let summary = ["summary", "description", "message"]
        .iter()
        .find_map(|k| annotations.get(*k))
        .map(|s| sanitize::line(s).into_owned());
    Alert {
        name: sanitize::line(&name).into_owned(),
        labels,
        summary,
        ended,
    }
}

/// The firing alerts in a 2xx answer of Prometheus's `/api/v1/alerts`.
pub fn prometheus(body: &[u8]) -> Result<Vec<Alert>, SourceError> {
    let env: PromEnvelope =
        serde_json::from_slice(body).map_err(|e| malformed("not a Prometheus alerts answer", e))?;
    if env.status.as_deref() != Some("success") {
        return Err(SourceError::Api {
            error_type: sanitize::line(env.error_type.as_deref().unwrap_or("unknown")).into(),
            message: sanitize::line(env.error.as_deref().unwrap_or("no message")).into(),
        });
    }
    let data = env
        .data
        .ok_or_else(|| malformed("Prometheus alerts answer", "no \"data\""))?;
    Ok(data
        .alerts
        .into_iter()
        .filter(|a| a.state == "firing")
        .map(|a| alert(a.labels, &a.annotations, false))
        .collect())
}

/// The alerts in a 2xx answer of Alertmanager's `/api/v2/alerts`; `now` decides which have
/// ended.
pub fn alertmanager(body: &[u8], now: DateTime<Utc>) -> Result<Vec<Alert>, SourceError> {
    let alerts: Vec<ManagerAlert> = serde_json::from_slice(body)
        .map_err(|e| malformed("not an Alertmanager alerts answer", e))?;
    Ok(alerts
        .into_iter()
        .map(|a| {
            let ended = a
                .ends_at
                .as_deref()
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                // Alertmanager writes the zero time for "no end".
                .is_some_and(|t| t.timestamp() > 0 && t < now);
            alert(a.labels, &a.annotations, ended)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_counts_firing_only_and_escapes_hostile_text() {
        let body = br#"{"status":"success","data":{"alerts":[
            {"labels":{"alertname":"PoolSaturated","pod":"api-1\u001b[2J"},
             "annotations":{"summary":"pool \u0007full"},"state":"firing","value":"1"},
            {"labels":{"alertname":"Slow"},"annotations":{},"state":"pending"}]}}"#;
        let alerts = prometheus(body).unwrap();
        assert_eq!(alerts.len(), 1);
        let a = &alerts[0];
        assert_eq!(a.name, "PoolSaturated");
        assert!(!a.labels.contains_key(ALERTNAME));
        assert_eq!(a.labels["pod"], "api-1\\e[2J");
        assert_eq!(a.summary.as_deref(), Some("pool \\x07full"));
    }

    #[test]
    fn prometheus_errors_and_garbage_are_errors() {
        let e = prometheus(br#"{"status":"error","errorType":"internal","error":"boom"}"#);
        assert!(matches!(e, Err(SourceError::Api { .. })), "{e:?}");
        assert!(matches!(
            prometheus(b"<html>"),
            Err(SourceError::Malformed(_))
        ));
    }

    #[test]
    fn alertmanager_marks_alerts_whose_end_has_passed() {
        let now: DateTime<Utc> = "2026-11-29T10:00:00Z".parse().unwrap();
        let body = br#"[
            {"labels":{"alertname":"A"},"annotations":{},"endsAt":"2026-11-29T10:05:00Z",
             "status":{"state":"suppressed"},"fingerprint":"1"},
            {"labels":{"alertname":"B"},"annotations":{},"endsAt":"2026-11-29T09:59:00Z",
             "status":{"state":"active"},"fingerprint":"2"},
            {"labels":{},"endsAt":"0001-01-01T00:00:00Z"}]"#;
        let alerts = alertmanager(body, now).unwrap();
        let ended: Vec<(&str, bool)> = alerts.iter().map(|a| (&*a.name, a.ended)).collect();
        assert_eq!(
            ended,
            vec![("A", false), ("B", true), ("(unnamed alert)", false)]
        );
        assert!(alertmanager(br#"{"code":500}"#, now).is_err());
    }
}
