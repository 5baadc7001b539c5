//! `warroom sim serve`: the model advanced at `speed`× wall time in a tokio task, behind
//! `/metrics`, `/state`, `/healthz` and `POST /control/{action}` (axum).

use super::service::SimService;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the clock task advances the model.
const TICK: Duration = Duration::from_millis(50);

/// The HTTP routes over a shared service.
pub fn router(service: Arc<SimService>) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/state", get(state))
        .route("/healthz", get(healthz))
        .route("/control/{action}", post(control))
        .fallback(not_found)
        .with_state(service)
}

/// Advance the model from simulated second `start` at the service's speed, forever.
pub async fn run_clock(service: Arc<SimService>, start: f64) {
    let began = Instant::now();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tick.tick().await;
        let target = start + began.elapsed().as_secs_f64() * service.speed();
        service.advance_to(target);
    }
}

async fn metrics(State(s): State<Arc<SimService>>) -> Response {
    let text = s.metrics_text();
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(super::exposition::CONTENT_TYPE),
        )],
        text,
    )
        .into_response()
}

async fn state(State(s): State<Arc<SimService>>) -> Response {
    axum::Json(s.state()).into_response()
}

async fn healthz(State(s): State<Arc<SimService>>) -> Response {
    let now = s.with_sim(super::model::Sim::now);
    axum::Json(json!({ "status": "ok", "sim_time_s": now })).into_response()
}

async fn control(
    State(s): State<Arc<SimService>>,
    Path(action): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let key = match headers.get("idempotency-key").map(|v| v.to_str()) {
        None => None,
        Some(Ok(k)) => Some(k.to_string()),
        Some(Err(_)) => {
            return json_error(
                StatusCode::BAD_REQUEST,
                "the Idempotency-Key header is not printable ASCII",
                "Idempotency-Key",
            );
        }
    };
    let reply = s.control(&action, &body, key.as_deref());
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = (status, axum::Json(reply.body)).into_response();
    if reply.replayed {
        resp.headers_mut()
            .insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    resp
}

async fn not_found() -> Response {
    json_error(
        StatusCode::NOT_FOUND,
        "no such endpoint; see GET /state, /metrics, /healthz and POST /control/{action}",
        "",
    )
}

fn json_error(status: StatusCode, error: &str, field: &str) -> Response {
    (
        status,
        axum::Json(json!({ "error": error, "field": field })),
    )
        .into_response()
}
