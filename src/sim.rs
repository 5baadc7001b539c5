//! The outage simulator (issue 3).

/// Serve a scenario over HTTP: /metrics, the control API, /state, /healthz.
pub async fn serve(args: crate::cli::SimServeArgs) -> color_eyre::Result<()> {
    color_eyre::eyre::bail!(
        "the simulator is not part of this build yet (scenario \"{}\")",
        args.scenario
    )
}
