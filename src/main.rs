use clap::Parser;
use std::process::ExitCode;
use warroom::cli::{Cli, Command, SimCmd};

fn main() -> color_eyre::Result<ExitCode> {
    let _ = warroom::app::runtime::STARTED.set(std::time::Instant::now());
    color_eyre::install()?;
    let cli = Cli::parse();
    let data_dir = cli
        .data_dir
        .clone()
        .unwrap_or_else(warroom::paths::default_data_dir);
    let _log_guard = warroom::logging::init(cli.log_file.as_deref())?;
    let rt = tokio::runtime::Runtime::new()?;
    match cli.command {
        Command::Open(args) => {
            rt.block_on(warroom::app::open(cli.config.as_deref(), &data_dir, args))
        }
        Command::Demo(args) => rt.block_on(warroom::app::demo::run(
            cli.config.as_deref(),
            &data_dir,
            &args.scenario,
            args.speed,
            args.seed,
            Default::default(),
        )),
        Command::Gameday(args) if !args.headless => rt.block_on(warroom::app::demo::run(
            cli.config.as_deref(),
            &data_dir,
            &args.scenario,
            args.speed,
            args.seed,
            warroom::app::demo::Metrics {
                prometheus: args.prometheus,
                listen: args.listen,
            },
        )),
        Command::Gameday(args) if args.headless => rt.block_on(warroom::gameday::headless(
            cli.config.as_deref(),
            &data_dir,
            args,
        )),
        Command::Sim(SimCmd::Serve(args)) => rt
            .block_on(warroom::sim::serve(args))
            .map(|()| ExitCode::SUCCESS),
        Command::Incident(cmd) => warroom::incident::run_cli(cmd, cli.config.as_deref(), &data_dir)
            .map(|()| ExitCode::SUCCESS),
        Command::Record(args) => {
            rt.block_on(warroom::record::run(cli.config.as_deref(), &data_dir, args))
        }
        Command::Runbook(cmd) => rt.block_on(warroom::runbook::run_cli(
            cmd,
            cli.config.as_deref(),
            &data_dir,
        )),
        Command::Export(args) => rt.block_on(warroom::postmortem::cli::run(
            args,
            cli.config.as_deref(),
            &data_dir,
        )),
        Command::Publish(args) => rt.block_on(warroom::github::cli::run(
            args,
            cli.config.as_deref(),
            &data_dir,
        )),
        Command::Replay(args) => {
            rt.block_on(warroom::replay::run(cli.config.as_deref(), &data_dir, args))
        }
        Command::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "warroom",
                &mut std::io::stdout(),
            );
            Ok(ExitCode::SUCCESS)
        }
        other => {
            let name = format!("{other:?}");
            let name = name
                .split(['(', ' ', '{'])
                .next()
                .unwrap_or("")
                .to_lowercase();
            eprintln!("warroom {name}: not available in this build yet; see `warroom --help`.");
            Ok(ExitCode::from(2))
        }
    }
}
