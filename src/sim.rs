//! The outage simulator (issue 3): a deterministic model of a service fleet in front of a
//! database that fails the way the three house-format incidents did, served over HTTP for a
//! real Prometheus to scrape and for runbooks to act on.
//!
//! [`model::Sim`] is pure (no I/O, no clock): a function of the [`scenario::Scenario`] and a
//! seed, advanced in fixed steps. [`control`] parses and applies the team's actions,
//! [`exposition`] turns the model into metric samples and the Prometheus text format, and
//! [`server`] runs the model at `--speed`× wall time behind the control API.

pub mod backlog;
pub mod control;
pub mod exposition;
pub mod fleet;
pub mod histogram;
pub mod lifecycle;
pub mod model;
pub mod retry;
pub mod scenario;
pub mod score;
pub mod server;
pub mod service;
pub mod state;
pub mod stats;

pub use control::{Control, ControlError};
pub use model::{STEP_S, Sim};
pub use scenario::Scenario;
pub use service::{Reply, SimService};

/// Serve a scenario over HTTP: /metrics, the control API, /state, /healthz.
pub async fn serve(args: crate::cli::SimServeArgs) -> color_eyre::Result<()> {
    use color_eyre::eyre::{WrapErr, bail};
    if !(args.speed.is_finite() && args.speed > 0.0 && args.speed <= 10_000.0) {
        bail!(
            "--speed must be above 0 and at most 10000, not \"{}\"",
            args.speed
        );
    }
    if !(args.start_at.is_finite() && (0.0..=86_400.0).contains(&args.start_at)) {
        bail!(
            "--start-at must be 0 to 86400 seconds, not \"{}\"",
            args.start_at
        );
    }
    let scenario = Scenario::load(&args.scenario).map_err(|d| color_eyre::eyre::eyre!("{d}"))?;
    let mut sim = Sim::new(scenario, args.seed);
    sim.run_until(args.start_at);
    let name = sim.scenario().name.clone();
    let service = std::sync::Arc::new(SimService::new(sim, args.speed));
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .wrap_err_with(|| format!("cannot listen on \"{}\"", args.listen))?;
    let addr = listener.local_addr()?;
    println!(
        "warroom sim: scenario \"{name}\" on http://{addr} at {}x",
        args.speed
    );
    let clock = tokio::spawn(server::run_clock(service.clone(), args.start_at));
    let served = axum::serve(listener, server::router(service))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await;
    clock.abort();
    served.wrap_err("the simulator's HTTP server failed")
}
