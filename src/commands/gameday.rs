//! `warroom gameday SCENARIO`: the console on a rehearsal (as the demo, or on a real Prometheus
//! that scrapes the stage), or with `--headless` a rehearsal with no one at the console, its
//! score printed (as JSON with `--json`).

use super::Context;
use crate::cli::GamedayArgs;
use crate::rehearsal::headless::{self, Report};
use crate::rehearsal::score::score_text;
use std::process::ExitCode;

/// Run `warroom gameday`.
pub async fn run(ctx: &Context, args: GamedayArgs) -> color_eyre::Result<ExitCode> {
    let config = ctx.config()?.clone();
    if !args.headless {
        crate::tui::require_terminal("warroom gameday (without --headless)")?;
        let metrics = crate::app::demo::Metrics {
            prometheus: args.prometheus,
            listen: args.listen,
        };
        return crate::app::demo::run(
            config,
            &ctx.data_dir,
            &args.scenario,
            args.speed,
            args.seed,
            metrics,
        )
        .await;
    }
    let json = args.json;
    let options = headless::Options {
        scenario: args.scenario,
        seed: args.seed,
        speed: args.speed,
        plays: args.plays,
        run_for: args.run_for,
        listen: args.listen,
        retention: args.retention,
        incident: args.incident,
        prometheus: args.prometheus,
    };
    let report = headless::run(&config, &ctx.data_dir, options).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    let failed = (report.plays.iter()).any(|p| p.started_at_s.is_some() && p.exit_code != Some(0));
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_report(report: &Report) {
    println!(
        "warroom gameday: {}\n{}",
        report.scenario,
        score_text(&report.score)
    );
    println!(
        "  incident {} ({} panel snapshots): warroom export {}",
        report.incident, report.snapshots, report.incident
    );
    for p in &report.plays {
        println!(
            "  play {:<22} {}",
            p.runbook,
            match (p.started_at_s, &p.outcome) {
                (None, _) => "did not run".to_string(),
                (Some(_), Some(outcome)) => outcome.clone(),
                (Some(_), None) => "stopped".to_string(),
            }
        );
    }
}
