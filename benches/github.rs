//! GitHub benchmarks (issue 8, RELIABILITY.md "GitHub"), on the wall clock against a loopback
//! mock: the real gaps between writes when publishing (target: none under 1 s), and how late a
//! 10 ms ticker on the same runtime runs while publishing against a GitHub that never answers
//! (the console's loop and runbook steps must not be slowed), next to the same ticker alone.
//!
//! A plain main. Run: `cargo bench --bench github`. Figure lines for `benches/all.sh`: the
//! smallest gap between writes, the most requests in flight, the ticker's p99 lateness while
//! publishing to a hung GitHub, and how long publishing took to give up.

#[path = "support/figure.rs"]
mod figure;
#[path = "../tests/support/github_mock.rs"]
mod github_mock;

use std::sync::Arc;
use std::time::{Duration, Instant};
use warroom::github::deliver::queue_and_deliver;
use warroom::github::publish::Target;
use warroom::github::{Github, WallTimer};
use warroom::secret::Secret;

/// Ticks every 10 ms for `n` ticks; the lateness of each tick, sorted.
async fn ticker(n: usize) -> Vec<Duration> {
    let mut late = Vec::with_capacity(n);
    let period = Duration::from_millis(10);
    let start = Instant::now();
    for i in 1..=n {
        let due = start + period * i as u32;
        tokio::time::sleep_until(due.into()).await;
        late.push(Instant::now().saturating_duration_since(due));
    }
    late.sort();
    late
}

fn pct(v: &[Duration], p: f64) -> f64 {
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i].as_secs_f64() * 1000.0
}

fn main() {
    let rt = tokio::runtime::Runtime::new().expect("a tokio runtime");
    rt.block_on(async {
        let dir = tempfile::tempdir().expect("a temp dir");
        let (store, id) = github_mock::incident_fixture(dir.path());
        let repo = "acme/pm".parse().expect("a repo name");

        // Pacing on the wall clock.
        let mock = github_mock::GithubMock::start(None).await;
        let gh = Github::new(
            &mock.url,
            Some(&Secret::new("bench")),
            Duration::from_secs(5),
            Arc::new(WallTimer),
        )
        .expect("a client");
        let started = Instant::now();
        let d = queue_and_deliver(&store, &id, &gh, &repo, Target::Pr, None)
            .await
            .expect("the outbox");
        assert!(d[0].result.is_ok(), "{:?}", d[0].result);
        let took = started.elapsed();
        let log = mock.log();
        let writes: Vec<_> = log.iter().filter(|l| l.is_write()).collect();
        let gaps: Vec<i64> = writes
            .windows(2)
            .map(|w| (w[1].at - w[0].at).num_milliseconds())
            .collect();
        println!(
            "publish as PR, 3 action items: {} requests, {} writes in {:.2} s; gaps between \
             writes min {} ms, max {} ms; most in flight {}",
            log.len(),
            writes.len(),
            took.as_secs_f64(),
            gaps.iter().min().copied().unwrap_or(0),
            gaps.iter().max().copied().unwrap_or(0),
            mock.state.lock().map(|s| s.max_in_flight).unwrap_or(0)
        );
        figure::report(
            "smallest gap between writes",
            gaps.iter().min().copied().unwrap_or(0) as f64,
            "ms",
            figure::Target::AtLeast(1000.0),
        );
        figure::report(
            "most requests in flight",
            mock.state.lock().map(|s| s.max_in_flight).unwrap_or(0) as f64,
            "requests",
            figure::Target::Under(2.0),
        );

        // The loop while GitHub hangs.
        let alone = ticker(300).await;
        let (url, server) = github_mock::never_answers().await;
        let hung = Github::new(
            &url,
            Some(&Secret::new("bench")),
            Duration::from_secs(2),
            Arc::new(WallTimer),
        )
        .expect("a client");
        let (store2, id2) = {
            let d2 = tempfile::tempdir().expect("a temp dir");
            let r = github_mock::incident_fixture(d2.path());
            std::mem::forget(d2);
            r
        };
        let publishing = async {
            let t = Instant::now();
            let r = queue_and_deliver(&store2, &id2, &hung, &repo, Target::Pr, None).await;
            (t.elapsed(), r)
        };
        let (busy, (gave_up_after, result)) = tokio::join!(ticker(300), publishing);
        server.abort();
        let err = result
            .ok()
            .and_then(|mut d| d.pop())
            .and_then(|d| d.result.err())
            .map(|e| e.to_string())
            .unwrap_or_default();
        println!(
            "10 ms ticker lateness, alone: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            pct(&alone, 0.5),
            pct(&alone, 0.99),
            pct(&alone, 1.0)
        );
        println!(
            "... while publishing to a GitHub that never answers: p50 {:.2} ms, p99 {:.2} ms, \
             max {:.2} ms; publishing gave up after {:.2} s (2 s call timeout): {err}",
            pct(&busy, 0.5),
            pct(&busy, 0.99),
            pct(&busy, 1.0),
            gave_up_after.as_secs_f64()
        );
        figure::report(
            "10 ms ticker p99 lateness while GitHub hangs",
            pct(&busy, 0.99),
            "ms",
            figure::Target::Under((pct(&alone, 0.99) + 5.0).ceil()),
        );
        figure::report(
            "publishing to a hung GitHub gives up after",
            gave_up_after.as_secs_f64(),
            "s",
            figure::Target::Under(35.0),
        );
    });
}
