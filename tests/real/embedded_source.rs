//! The embedded source fed the way the demo feeds it: the simulator stepped in process and its
//! samples ingested once per simulated second. Answers are checked against figures computed
//! from the same samples; the retention bound and the error answers are checked too.

use warroom::metrics::embedded::EmbeddedSource;
use warroom::metrics::{InstantQuery, RangeQuery, Source, SourceError};
use warroom::sim::exposition::samples;
use warroom::sim::{Scenario, Sim};

/// The simulated clock's second 0 mapped to Unix time.
const BASE: f64 = 1_780_000_000.0;

fn value(a: &warroom::metrics::QueryAnswer) -> f64 {
    assert_eq!(a.series.len(), 1, "{a:?}");
    a.series[0].points[0].v
}

#[tokio::test]
async fn the_demo_feed_answers_the_dashboard_and_stays_bounded() {
    let store = EmbeddedSource::new(std::time::Duration::from_secs(120));
    // Kept: 120 s, and up to an eighth more until the next batch of pruning.
    assert!(store.ready().await.is_err(), "ready before any sample");

    let mut sim = Sim::new(Scenario::load("planner-peak").expect("planner-peak"), 1);
    sim.run_until(1100.0);
    let mut last = Vec::new();
    for _ in 0..600 {
        sim.step();
        sim.step();
        last = samples(&sim);
        store.ingest(BASE + sim.now(), &last);
    }
    store.ready().await.expect("ready after samples");
    let now = BASE + sim.now();

    // Every dashboard query answers over the last five minutes, with data.
    for p in warroom::metrics::presets::sim_panels() {
        let a = store
            .query_range(RangeQuery {
                query: p.query.clone(),
                start: now - 300.0,
                end: now,
                step: 5.0,
            })
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", p.query));
        assert!(!a.series.is_empty(), "{}: no series", p.query);
        assert!(a.series.iter().all(|s| s.points.len() <= 61), "{}", p.query);
    }

    // Figures computed from the last scrape itself.
    let sum_of = |name: &str| -> f64 {
        last.iter()
            .filter(|s| s.name == name)
            .map(|s| s.value)
            .sum()
    };
    let count_of = |name: &str| last.iter().filter(|s| s.name == name).count() as f64;
    let instant = |q: &str| {
        store.query(InstantQuery {
            query: q.into(),
            time: None,
        })
    };
    let up = value(
        &instant("sum(app_instance_up) / count(app_instance_up)")
            .await
            .unwrap(),
    );
    assert_eq!(up, sum_of("app_instance_up") / count_of("app_instance_up"));
    let depth = value(&instant("sum(queue_depth)").await.unwrap());
    assert_eq!(depth, sum_of("queue_depth"));
    let max_sat = value(
        &instant("max(db_pool_connections_in_use / db_pool_connections_max)")
            .await
            .unwrap(),
    );
    let expected = last
        .iter()
        .filter(|s| s.name == "db_pool_connections_in_use")
        .map(|u| {
            let max = last
                .iter()
                .find(|m| m.name == "db_pool_connections_max" && m.labels == u.labels)
                .expect("a max for every in_use");
            u.value / max.value
        })
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(max_sat, expected);

    // Retention: nothing older than 120 s is kept or answered.
    let (series, points) = store.size();
    assert!(
        points <= series * 137,
        "{points} points for {series} series"
    );
    let seen = value(
        &instant("max(count_over_time(app_instance_up[10m]))")
            .await
            .unwrap(),
    );
    assert!((120.0..=136.0).contains(&seen), "{seen} samples in 10m");

    // Errors are the API's kinds, with the reason.
    let bad = instant("sum(rate(x[1m])").await.unwrap_err();
    assert!(
        matches!(&bad, SourceError::Api { error_type, .. } if error_type == "bad_data"),
        "{bad:?}"
    );
    // Subqueries answer (issue 21); what the store cannot hold is refused with the reason.
    let sub = instant("max_over_time(sum by (queue) (queue_depth)[5m:1m])")
        .await
        .expect("a subquery answers");
    assert!(!sub.series.is_empty(), "{sub:?}");
    let native = instant("histogram_count(db_query_duration_seconds)")
        .await
        .unwrap_err();
    assert!(native.to_string().contains("native histograms"), "{native}");
    let many = instant("db_pool_connections_in_use / on (service) db_pool_connections_max")
        .await
        .unwrap_err();
    assert!(many.to_string().contains("many-to-many"), "{many}");
}
