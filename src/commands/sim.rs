//! `warroom sim serve SCENARIO`: the outage simulator over HTTP (`/metrics`, the control API,
//! `/state`, `/healthz`) for a real Prometheus to scrape and runbooks to act on.

use crate::cli::{SimCmd, SimServeArgs};
use crate::sim::{Scenario, Sim, SimService};
use std::process::ExitCode;

/// Run a `sim` subcommand.
pub async fn run(cmd: SimCmd) -> color_eyre::Result<ExitCode> {
    match cmd {
        SimCmd::Serve(args) => serve(args).await.map(|()| ExitCode::SUCCESS),
    }
}

/// Serve a scenario over HTTP: /metrics, the control API, /state, /healthz.
async fn serve(args: SimServeArgs) -> color_eyre::Result<()> {
    use color_eyre::eyre::{WrapErr, bail};
    crate::clock::check_speed(args.speed, crate::clock::SIMULATOR_SPEED)?;
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
    let clock = tokio::spawn(crate::sim::server::run_clock(
        service.clone(),
        args.start_at,
    ));
    let served = axum::serve(listener, crate::sim::server::router(service))
        .with_graceful_shutdown(async {
            crate::signals::Signals::new().next().await;
        })
        .await;
    clock.abort();
    served.wrap_err("the simulator's HTTP server failed")
}
