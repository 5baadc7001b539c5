//! The command line's handlers: one thin file per subcommand (its arguments → one call into the
//! domain or a front end → what it prints and its exit code), all on one [`Context`] loaded once
//! with the command-line overrides applied once. Nothing below this layer sees a clap type;
//! errors come up as the domain's own types and only here become text for the user.

pub mod completions;
pub mod demo;
pub mod discover;
pub mod errors;
pub mod export;
pub mod gameday;
pub mod import;
pub mod incident;
pub mod man;
pub mod mcp;
pub mod open;
pub mod publish;
pub mod record;
pub mod replay;
pub mod runbook;
pub mod silence;
pub mod sim;

use crate::cli::{Cli, Command, GamedayArgs, ImportCmd, RunbookCmd};
use crate::config::{Config, ConfigError};
use crate::incident::Store;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit status when arguments or input files are wrong.
pub const EXIT_USAGE: u8 = 2;

/// What every handler starts from: the configuration with the command line's overrides applied,
/// the data directory and its incident store.
pub struct Context {
    config: Result<Config, ConfigError>,
    /// `--config` (or `$WARROOM_CONFIG`), when given.
    pub config_path: Option<PathBuf>,
    pub data_dir: PathBuf,
    pub store: Store,
}

impl Context {
    /// Load the config named on the command line (or the default one) and apply the
    /// subcommand's overrides (`--prometheus`, `--alertmanager`, `--theme`). A config that
    /// cannot be read is kept as its error: commands that need it fail with it, the others
    /// ([`Context::config_or_default`]) warn and go on.
    pub fn load(cli: &Cli) -> Context {
        let data_dir = (cli.data_dir.clone()).unwrap_or_else(crate::paths::default_data_dir);
        let config = Config::load(cli.config.as_deref()).and_then(|mut c| {
            overrides(&cli.command).apply(&mut c);
            // The key map is the console's, built from the config's `[keys]`: checked here so
            // every command refuses a bad one where it is written.
            crate::keymap::Keymap::from_config(&c.keys)
                .map_err(crate::config::ConfigError::Invalid)?;
            Ok(c)
        });
        Context {
            config,
            config_path: cli.config.clone(),
            store: Store::new(&data_dir),
            data_dir,
        }
    }

    /// A context over `config` itself (tests and benchmarks).
    pub fn with_config(config: Config, data_dir: &Path) -> Context {
        Context {
            config: Ok(config),
            config_path: None,
            data_dir: data_dir.to_path_buf(),
            store: Store::new(data_dir),
        }
    }

    /// The configuration, or why it cannot be used (as the user reads it).
    pub fn config(&self) -> color_eyre::Result<&Config> {
        self.config
            .as_ref()
            .map_err(|e| color_eyre::eyre::eyre!("{e}"))
    }

    /// The engine to share an incident through: `--share` (with its files), else
    /// `$WARROOM_SHARE`, else the config's `[share]`; `None` when none names one.
    pub fn engine(
        &self,
        args: &crate::cli::ShareArgs,
    ) -> color_eyre::Result<Option<crate::share::Engine>> {
        let env = std::env::var(crate::share::engine::ENV).ok();
        let config = self.config.as_ref().ok().and_then(|c| c.share.as_ref());
        let files = crate::share::Files {
            ca: args.share_ca.clone(),
            creds: args.share_creds.clone(),
            nkey: args.share_nkey.clone(),
        };
        Ok(crate::share::Engine::choose(
            args.share.as_deref(),
            env.as_deref(),
            config,
            &files,
        )?)
    }

    /// The configuration, or the defaults with a warning on stderr saying why (for commands
    /// that must work with a broken config: feeding an incident, listing runbooks).
    pub fn config_or_default(&self) -> std::borrow::Cow<'_, Config> {
        match &self.config {
            Ok(c) => std::borrow::Cow::Borrowed(c),
            Err(e) => {
                eprintln!("warning: {e}\nwarning: going on with the built-in defaults");
                std::borrow::Cow::Owned(Config::default())
            }
        }
    }
}

/// The configuration a subcommand's own flags override.
#[derive(Debug, Default)]
struct Overrides<'a> {
    prometheus: Option<&'a str>,
    alertmanager: Option<&'a str>,
    theme: Option<&'a str>,
}

impl Overrides<'_> {
    fn apply(&self, config: &mut Config) {
        if let Some(url) = self.prometheus {
            config.prometheus.url = Some(url.trim_end_matches('/').to_string());
        }
        if let Some(url) = self.alertmanager {
            config.alertmanager = Some(url.trim_end_matches('/').to_string());
        }
        if let Some(theme) = self.theme {
            config.theme = theme.to_string();
        }
    }
}

fn overrides(command: &Command) -> Overrides<'_> {
    match command {
        Command::Open(a) => Overrides {
            prometheus: a.prometheus.as_deref(),
            theme: a.theme.as_deref(),
            ..Default::default()
        },
        Command::Gameday(GamedayArgs { prometheus, .. }) => Overrides {
            prometheus: prometheus.as_deref(),
            ..Default::default()
        },
        Command::Runbook(RunbookCmd::Run { prometheus, .. }) => Overrides {
            prometheus: prometheus.as_deref(),
            ..Default::default()
        },
        Command::Record(a) => Overrides {
            prometheus: a.prometheus.as_deref(),
            alertmanager: a.alertmanager.as_deref(),
            ..Default::default()
        },
        Command::Silence(
            crate::cli::SilenceCmd::Add { alertmanager, .. }
            | crate::cli::SilenceCmd::List { alertmanager, .. }
            | crate::cli::SilenceCmd::Expire { alertmanager, .. },
        )
        | Command::Incident(crate::cli::IncidentCmd::Status { alertmanager, .. }) => Overrides {
            alertmanager: alertmanager.url.as_deref(),
            ..Default::default()
        },
        Command::Export(a) => Overrides {
            prometheus: a.prometheus.as_deref(),
            ..Default::default()
        },
        Command::Discover(a) => Overrides {
            prometheus: a.prometheus.as_deref(),
            ..Default::default()
        },
        Command::Mcp(a) => Overrides {
            prometheus: a.prometheus.as_deref(),
            ..Default::default()
        },
        Command::Import(ImportCmd::Grafana(a)) => Overrides {
            prometheus: a.prometheus.as_deref(),
            ..Default::default()
        },
        _ => Overrides::default(),
    }
}

/// Run `command` on `ctx`.
pub async fn run(ctx: &Context, command: Command) -> color_eyre::Result<ExitCode> {
    match command {
        Command::Open(args) => open::run(ctx, args).await,
        Command::Demo(args) => demo::run(ctx, args).await,
        Command::Gameday(args) => gameday::run(ctx, args).await,
        Command::Sim(cmd) => sim::run(cmd).await,
        Command::Runbook(cmd) => runbook::run(ctx, cmd).await,
        Command::Incident(cmd) => incident::run(ctx, cmd).await,
        Command::Silence(cmd) => silence::run(ctx, cmd).await,
        Command::Record(args) => record::run(ctx, args).await,
        Command::Export(args) => export::run(ctx, args).await,
        Command::Publish(args) => publish::run(ctx, args).await,
        Command::Replay(args) => replay::run(ctx, args).await,
        Command::Discover(args) => discover::run(ctx, args).await,
        Command::Mcp(args) => mcp::run(ctx, args).await,
        Command::Import(ImportCmd::Grafana(args)) => import::grafana(ctx, args).await,
        Command::Man(args) => man::run(args),
        Command::Config(crate::cli::ConfigCmd::Example) => {
            print!("{}", crate::config::EXAMPLE);
            Ok(ExitCode::SUCCESS)
        }
        Command::Completions { shell } => completions::run(shell),
    }
}

/// The commands that sit idle for hours waiting on timers and a few small answers: the
/// console and a replay. They run on a current-thread runtime ([`idle_task`]).
pub fn idles(command: &Command) -> bool {
    matches!(command, Command::Open(_) | Command::Replay(_))
}

/// An idle command (see [`idles`]) as a future to run; any other command is handed back, to be
/// run with [`run`] on the calling thread.
#[allow(clippy::result_large_err)]
pub fn idle_task(
    ctx: Context,
    command: Command,
) -> Result<futures::future::BoxFuture<'static, color_eyre::Result<ExitCode>>, (Context, Command)> {
    use futures::FutureExt;
    match command {
        Command::Open(args) => Ok(async move { open::run(&ctx, args).await }.boxed()),
        Command::Replay(args) => Ok(async move { replay::run(&ctx, args).await }.boxed()),
        other => Err((ctx, other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn overrides_are_applied_once_and_trimmed() {
        let cli = Cli::parse_from([
            "warroom",
            "--config",
            "/nonexistent/warroom.toml",
            "record",
            "x",
            "--prometheus",
            "http://p:9090/",
            "--alertmanager",
            "http://a:9093/",
        ]);
        // A config that cannot be read is kept as its error.
        assert!(Context::load(&cli).config().is_err());
        let mut c = Config::default();
        overrides(&cli.command).apply(&mut c);
        assert_eq!(c.prometheus.url.as_deref(), Some("http://p:9090"));
        assert_eq!(c.alertmanager.as_deref(), Some("http://a:9093"));
        let cli = Cli::parse_from(["warroom", "open", "--theme", "light"]);
        let mut c = Config::default();
        overrides(&cli.command).apply(&mut c);
        assert_eq!(c.theme, "light");
    }
}
