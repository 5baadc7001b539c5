//! The test harness itself: a real Prometheus starts and answers.

use crate::support::prometheus;

#[test]
fn a_real_prometheus_starts_and_is_ready() {
    let Some(prom) = prometheus::start(prometheus::PromOptions::default()) else {
        return;
    };
    let (status, body) = prometheus::http_get(
        prom.port,
        "/api/v1/status/buildinfo",
        std::time::Duration::from_secs(5),
    )
    .expect("buildinfo answers");
    assert_eq!(status, 200);
    assert!(body.contains("\"version\""), "{body}");
}
