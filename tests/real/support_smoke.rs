//! The test harness itself: a real Prometheus starts and answers; a skip is counted, and is a
//! failure in CI.

use crate::support::prometheus;
use crate::support::skip::Skips;

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

#[test]
fn a_skip_outside_ci_is_a_counted_line() {
    let skips = Skips::new();
    assert_eq!(skips.summary(), None);
    let line = skips.judge(
        false,
        "a::t",
        "`haproxy` is not installed",
        "apt-get install haproxy",
    );
    assert_eq!(
        line,
        "SKIPPED a::t: `haproxy` is not installed (apt-get install haproxy)"
    );
    skips.judge(false, "b::u", "no cgroup", "run as root");
    // The same test skipping for a second reason is still one test.
    skips.judge(false, "a::t", "no cgroup", "run as root");
    assert_eq!(skips.count(), 2);
    assert_eq!(
        skips.summary().as_deref(),
        Some("2 tests skipped in this binary:\n  a::t\n  b::u")
    );
}

#[test]
#[should_panic(expected = "a::t: `haproxy` is not installed, and CI must run this test")]
fn a_skip_in_ci_is_a_failure() {
    Skips::new().judge(
        true,
        "a::t",
        "`haproxy` is not installed",
        "apt-get install haproxy",
    );
}

#[test]
fn a_failure_in_ci_counts_nothing() {
    let skips = Skips::new();
    let panicked = std::panic::catch_unwind(|| skips.judge(true, "a::t", "x", "y"));
    assert!(panicked.is_err());
    assert_eq!(skips.count(), 0);
}
