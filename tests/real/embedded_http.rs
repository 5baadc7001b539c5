//! The embedded store's Prometheus-compatible API: warroom's own Prometheus client, pointed at
//! it over loopback, gets the answers the store gives in process, for every default-dashboard
//! query, and errors in Prometheus's envelope.

use warroom::metrics::embedded::EmbeddedSource;
use warroom::metrics::prometheus::{ClientOptions, PrometheusClient};
use warroom::metrics::{InstantQuery, RangeQuery, Source, SourceError};
use warroom::sim::exposition::samples;
use warroom::sim::{Scenario, Sim};

const BASE: f64 = 1_780_000_000.0;

fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || ((a - b) / a.abs().max(b.abs())).abs() < 1e-12
}

#[tokio::test]
async fn the_http_api_answers_as_the_store_does() {
    let store = EmbeddedSource::new(std::time::Duration::from_secs(3600));
    let mut sim = Sim::new(Scenario::load("planner-peak").expect("planner-peak"), 1);
    sim.run_until(1000.0);
    for _ in 0..120 {
        sim.run_until(sim.now() + 5.0);
        store.ingest(BASE + sim.now(), &samples(&sim));
    }
    let now = BASE + sim.now();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = warroom::metrics::embedded::http::router(store.clone());
    let server = tokio::spawn(async move { axum::serve(listener, router).await });
    let client = PrometheusClient::new(ClientOptions::new(format!("http://{addr}"))).unwrap();
    client.ready().await.expect("the API says it is ready");

    let mut compared = 0;
    for p in warroom::metrics::presets::sim_panels() {
        let q = RangeQuery {
            query: p.query.clone(),
            start: now - 600.0,
            end: now,
            step: 15.0,
        };
        let direct = store.range_now(&q).unwrap();
        let wire = client
            .query_range(q)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", p.query));
        assert_eq!(direct.series.len(), wire.series.len(), "{}", p.query);
        assert!(!wire.series.is_empty(), "{}: no series", p.query);
        for (d, w) in direct.series.iter().zip(&wire.series) {
            assert_eq!(d.labels, w.labels, "{}", p.query);
            assert_eq!(d.points.len(), w.points.len(), "{}", p.query);
            for (a, b) in d.points.iter().zip(&w.points) {
                assert!(
                    (a.t - b.t).abs() < 1e-6,
                    "{}: time {} vs {}",
                    p.query,
                    a.t,
                    b.t
                );
                assert!(same(a.v, b.v), "{}: {} vs {}", p.query, a.v, b.v);
                compared += 1;
            }
        }
        let i = InstantQuery {
            query: p.query.clone(),
            time: None,
        };
        let direct = store.instant_now(&i).unwrap();
        let wire = client.query(i).await.unwrap();
        assert_eq!(direct.series.len(), wire.series.len(), "{}", p.query);
        for (d, w) in direct.series.iter().zip(&wire.series) {
            assert!(same(d.points[0].v, w.points[0].v), "{}", p.query);
        }
    }
    assert!(compared > 8 * 40, "only {compared} points compared");

    // A bad query comes back in Prometheus's error envelope, as bad_data.
    match client
        .query(InstantQuery {
            query: "sum(rate(app_requests_total[1m])".into(),
            time: None,
        })
        .await
    {
        Err(SourceError::Api { error_type, .. }) => assert_eq!(error_type, "bad_data"),
        other => panic!("expected bad_data, got {other:?}"),
    }
    server.abort();
}
