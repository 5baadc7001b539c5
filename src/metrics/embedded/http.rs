//! The embedded store behind a Prometheus-compatible HTTP API on loopback.
//!
//! The demo and the headless game day serve it next to the simulator's control API, so
//! everything that speaks to a Prometheus (a second `warroom open`, `warroom runbook run`,
//! `warroom record`, `curl`) works against a rehearsal exactly as it would in production.
//! Only the query endpoints and the readiness probes are served: it is a window on the
//! rehearsal, not a Prometheus.

use super::EmbeddedSource;
use crate::metrics::series::Series;
use crate::metrics::source::{InstantQuery, QueryAnswer, RangeQuery, SourceError};
use axum::extract::{Form, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

/// The API's routes over `source`. GET takes the parameters from the query string, POST from
/// a form body, as Prometheus does.
pub fn router(source: EmbeddedSource) -> Router {
    Router::new()
        .route("/api/v1/query", get(instant).post(instant))
        .route("/api/v1/query_range", get(range).post(range))
        .route("/api/v1/status/buildinfo", get(buildinfo))
        .route("/-/ready", get(ready))
        .route("/-/healthy", get(ready))
        .with_state(source)
}

#[derive(Debug, Deserialize)]
struct InstantParams {
    query: String,
    time: Option<String>,
}

#[derive(Debug, Deserialize)]
struct RangeParams {
    query: String,
    start: String,
    end: String,
    step: String,
}

async fn instant(State(source): State<EmbeddedSource>, Form(p): Form<InstantParams>) -> Response {
    let time = match p.time.as_deref().map(parse_time).transpose() {
        Ok(t) => t,
        Err(e) => return bad_data(&e),
    };
    let q = InstantQuery {
        query: p.query,
        time,
    };
    let answer = tokio::task::spawn_blocking(move || source.instant_now(&q)).await;
    respond(answer, "vector")
}

async fn range(State(source): State<EmbeddedSource>, Form(p): Form<RangeParams>) -> Response {
    let parsed = (|| {
        Ok::<_, String>(RangeQuery {
            query: p.query,
            start: parse_time(&p.start)?,
            end: parse_time(&p.end)?,
            step: parse_duration(&p.step)?,
        })
    })();
    let q = match parsed {
        Ok(q) => q,
        Err(e) => return bad_data(&e),
    };
    if q.end < q.start {
        return bad_data("end timestamp must not be before start time");
    }
    let answer = tokio::task::spawn_blocking(move || source.range_now(&q)).await;
    respond(answer, "matrix")
}

async fn buildinfo() -> Json<Value> {
    Json(json!({
        "status": "success",
        "data": {"version": concat!("warroom-embedded-", env!("CARGO_PKG_VERSION"))}
    }))
}

async fn ready() -> &'static str {
    "warroom embedded store is Ready.\n"
}

fn respond(
    answer: Result<Result<QueryAnswer, SourceError>, tokio::task::JoinError>,
    kind: &str,
) -> Response {
    match answer {
        Ok(Ok(a)) => {
            let result: Vec<Value> = a.series.iter().map(|s| encode(s, kind)).collect();
            let mut body = json!({
                "status": "success",
                "data": {"resultType": kind, "result": result}
            });
            if !a.warnings.is_empty() {
                body["warnings"] = json!(a.warnings);
            }
            Json(body).into_response()
        }
        Ok(Err(SourceError::Api {
            error_type,
            message,
        })) => {
            let status = if error_type == "bad_data" {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::UNPROCESSABLE_ENTITY
            };
            error(status, &error_type, &message)
        }
        Ok(Err(other)) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            &other.to_string(),
        ),
        Err(e) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            &format!("the query stopped: {e}"),
        ),
    }
}

/// One series in Prometheus's JSON: values as strings, times as seconds.
fn encode(s: &Series, kind: &str) -> Value {
    let pair = |t: f64, v: f64| json!([t, value_text(v)]);
    if kind == "vector" {
        let p = s.points.last().copied();
        json!({"metric": s.labels, "value": p.map(|p| pair(p.t, p.v))})
    } else {
        let values: Vec<Value> = s.points.iter().map(|p| pair(p.t, p.v)).collect();
        json!({"metric": s.labels, "values": values})
    }
}

/// A float as Prometheus writes it: shortest round-trip digits, `NaN`, `+Inf`, `-Inf`.
pub fn value_text(v: f64) -> String {
    crate::strings::non_finite(v).map_or_else(|| format!("{v}"), str::to_string)
}

fn bad_data(message: &str) -> Response {
    error(StatusCode::BAD_REQUEST, "bad_data", message)
}

fn error(status: StatusCode, error_type: &str, message: &str) -> Response {
    let body = json!({"status": "error", "errorType": error_type, "error": message});
    (status, Json(body)).into_response()
}

/// A time parameter: Unix seconds (fractional) or RFC 3339.
fn parse_time(text: &str) -> Result<f64, String> {
    if let Ok(t) = text.parse::<f64>()
        && t.is_finite()
    {
        return Ok(t);
    }
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|d| d.timestamp_millis() as f64 / 1000.0)
        .map_err(|_| format!("cannot parse \"{text}\" to a valid timestamp"))
}

/// A step parameter: seconds (fractional) or a duration such as `15s` or `1m30s`.
fn parse_duration(text: &str) -> Result<f64, String> {
    let secs = match text.parse::<f64>() {
        Ok(s) => s,
        Err(_) => humantime::parse_duration(text)
            .map(|d| d.as_secs_f64())
            .map_err(|_| format!("cannot parse \"{text}\" to a valid duration"))?,
    };
    if secs.is_finite() && secs > 0.0 {
        Ok(secs)
    } else {
        Err(
            "zero or negative query resolution step widths are not accepted. Try a positive integer"
                .into(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_as_prometheus_writes_them() {
        assert_eq!(value_text(f64::NAN), "NaN");
        assert_eq!(value_text(f64::INFINITY), "+Inf");
        assert_eq!(value_text(f64::NEG_INFINITY), "-Inf");
        assert_eq!(value_text(0.1), "0.1");
        assert_eq!(value_text(1e-7).parse::<f64>().unwrap(), 1e-7);
    }

    #[test]
    fn times_and_steps_parse_in_both_forms() {
        assert_eq!(parse_time("1700000000.5").unwrap(), 1_700_000_000.5);
        assert_eq!(parse_time("2026-07-17T06:00:00Z").unwrap(), 1_784_268_000.0);
        assert!(parse_time("yesterday").is_err());
        assert_eq!(parse_duration("15").unwrap(), 15.0);
        assert_eq!(parse_duration("1m30s").unwrap(), 90.0);
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("-5").is_err());
    }
}
