//! `warroom gameday SCENARIO`: the console on a rehearsal (as the demo, or on a real Prometheus
//! that scrapes the stage), or with `--headless` a rehearsal with no one at the console, its
//! score printed (as JSON with `--json`); `warroom gameday history [SCENARIO]`: past
//! rehearsals side by side.

use super::Context;
use crate::cli::{GamedayArgs, GamedayCmd};
use crate::rehearsal::headless::{self, Report};
use std::process::ExitCode;

/// Run `warroom gameday`.
pub async fn run(ctx: &Context, args: GamedayArgs) -> color_eyre::Result<ExitCode> {
    if let Some(GamedayCmd::History { scenario }) = &args.command {
        return history(ctx, scenario.as_deref());
    }
    let mut config = ctx.config()?.clone();
    if let Some(theme) = args.theme.clone() {
        config.theme = theme;
    }
    let Some(scenario) = args.scenario.clone() else {
        color_eyre::eyre::bail!("give a scenario: warroom gameday planner-peak");
    };
    if !args.headless {
        crate::tui::require_terminal("warroom gameday (without --headless)")?;
        let metrics = crate::app::demo::Metrics {
            prometheus: args.prometheus,
            listen: args.listen,
        };
        return crate::app::demo::run(
            config,
            &ctx.data_dir,
            &scenario,
            args.speed,
            args.seed,
            metrics,
        )
        .await;
    }
    let json = args.json;
    let options = headless::Options {
        scenario,
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
        print_report(&report, config.timezone);
    }
    let failed = (report.plays.iter()).any(|p| p.started_at_s.is_some() && p.exit_code != Some(0));
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `warroom gameday history [SCENARIO]`.
fn history(ctx: &Context, scenario: Option<&str>) -> color_eyre::Result<ExitCode> {
    let tz = ctx.config().map(|c| c.timezone).unwrap_or(chrono_tz::UTC);
    let (past, unreadable) = crate::rehearsal::history::past(&ctx.store, scenario)?;
    print!("{}", crate::rehearsal::history::table(&past, tz));
    for (id, e) in unreadable {
        eprintln!("warning: incident {id} was skipped: {e}");
    }
    Ok(ExitCode::SUCCESS)
}

fn print_report(report: &Report, tz: chrono_tz::Tz) {
    println!(
        "warroom gameday: {}\n{}",
        report.scenario,
        crate::rehearsal::score::response_text(&report.response, tz)
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
