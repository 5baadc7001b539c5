//! The command line (clap definitions only; `main.rs` dispatches).

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

pub mod complete;

use clap_complete::engine::ArgValueCandidates;

/// warroom: a terminal incident-response console for database-bound outages.
///
/// Live signals from Prometheus, runbooks with plans, gates and confirmation, a durable incident
/// timeline, and a postmortem draft afterwards. `warroom demo` rehearses a simulated outage with
/// nothing to install.
#[derive(Debug, Parser)]
#[command(name = "warroom", version, about, long_about, propagate_version = true)]
pub struct Cli {
    /// Configuration file (default: $WARROOM_CONFIG, then the XDG config dir's warroom/warroom.toml).
    #[arg(long, global = true, env = "WARROOM_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Where incidents are kept (default: the XDG data dir's warroom/).
    #[arg(long, global = true, env = "WARROOM_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Log file (default: the XDG state dir's warroom/warroom.log). Logs never go to the screen.
    #[arg(long, global = true, env = "WARROOM_LOG", value_name = "FILE")]
    pub log_file: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Rehearse a simulated outage on the embedded metrics store: nothing to install.
    Demo(DemoArgs),
    /// Open the console on a live Prometheus.
    Open(OpenArgs),
    /// Run a game-day scenario against the simulator and score the team.
    Gameday(GamedayArgs),
    /// The outage simulator.
    #[command(subcommand)]
    Sim(SimCmd),
    /// List, check, plan and run runbooks.
    #[command(subcommand)]
    Runbook(RunbookCmd),
    /// Create and feed incidents without the console.
    #[command(subcommand)]
    Incident(IncidentCmd),
    /// Alertmanager silences that belong to an incident: made, listed and expired.
    #[command(subcommand)]
    Silence(SilenceCmd),
    /// Record an incident headlessly: polling, threshold crossings, alerts.
    Record(RecordArgs),
    /// Export the postmortem draft of an incident.
    Export(ExportArgs),
    /// Publish the postmortem and its action items to GitHub.
    Publish(PublishArgs),
    /// Replay an incident's dashboard and timeline.
    Replay(ReplayArgs),
    /// Find which exporters a Prometheus holds and the dashboard warroom builds from them.
    Discover(DiscoverArgs),
    /// Serve an incident to an AI assistant over MCP (stdio): read-only tools, and proposals
    /// the holder's operator accepts or declines.
    Mcp(McpArgs),
    /// Turn another tool's dashboard into warroom panels.
    #[command(subcommand)]
    Import(ImportCmd),
    /// Print the man page (roff): every command, option and key. Install it with
    /// `warroom man > ~/.local/share/man/man1/warroom.1`; `--dir DIR` writes one page per command.
    Man(ManArgs),
    /// The configuration file: `warroom config example` prints a commented example.
    #[command(subcommand)]
    Config(ConfigCmd),
    /// Print the shell's completion script (it asks warroom for scenario names, runbook
    /// names and incident ids as you type): `source <(warroom completions bash)`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Args, Clone)]
pub struct DemoArgs {
    /// Scenario to rehearse (a file under runbooks/gameday/ or a built-in name).
    #[arg(long, default_value = "planner-peak", add = ArgValueCandidates::new(complete::scenarios))]
    pub scenario: String,
    /// Simulated seconds per wall-clock second.
    #[arg(long, default_value_t = 30.0)]
    pub speed: f64,
    /// Seed for the simulator's noise.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Theme name or file (overrides the config file): auto (for the terminal's background), default, light, mono, high-contrast.
    #[arg(long)]
    pub theme: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct OpenArgs {
    /// Prometheus base URL (overrides the config file), e.g. http://127.0.0.1:9090
    #[arg(long, value_name = "URL")]
    pub prometheus: Option<String>,
    /// Continue an existing incident.
    #[arg(long, value_name = "ID", add = ArgValueCandidates::new(complete::incidents))]
    pub incident: Option<String>,
    /// Title of a new incident.
    #[arg(long)]
    pub title: Option<String>,
    /// Severity of a new incident (SEV-1 .. SEV-4).
    #[arg(long)]
    pub severity: Option<String>,
    /// Theme name or file (overrides the config file): auto (for the terminal's background), default, light, mono, high-contrast.
    #[arg(long)]
    pub theme: Option<String>,
    /// When a headless recorder (`warroom record`) holds the incident, stop it and take over
    /// without asking (without it, the console asks, or follows the holder).
    #[arg(long)]
    pub take_over: bool,
    /// Follow the incident held behind this socket (its incident.sock, or a path that reaches
    /// it, e.g. one forwarded with `ssh -L` from the host that holds it).
    #[arg(long, value_name = "PATH", conflicts_with = "take_over")]
    pub socket: Option<PathBuf>,
    #[command(flatten)]
    pub share: ShareArgs,
}

/// The engine an incident is shared through across machines (a NATS JetStream server or
/// cluster): over `$WARROOM_SHARE`, over the config's `[share]`. Files only, never secrets.
#[derive(Debug, Args, Clone, Default)]
pub struct ShareArgs {
    /// Share the incident through this NATS JetStream engine, e.g. nats://127.0.0.1:4222
    /// (several servers separated by commas; default: $WARROOM_SHARE, then the config's
    /// [share] url). Each responder keeps its own journal and the engine carries its records
    /// to the others; with the engine unreachable, writing goes on locally and is shared later.
    #[arg(long = "share", value_name = "URL")]
    pub share: Option<String>,
    /// The CA certificate (PEM) that signed the engine's servers: TLS is then required.
    #[arg(long = "share-ca", value_name = "PATH")]
    pub share_ca: Option<PathBuf>,
    /// A NATS credentials file (.creds, its JWT and nkey seed): the path, never the secret.
    #[arg(long = "share-creds", value_name = "PATH")]
    pub share_creds: Option<PathBuf>,
    /// A file holding an nkey seed (SU…): the path, never the seed.
    #[arg(
        long = "share-nkey",
        value_name = "PATH",
        conflicts_with = "share_creds"
    )]
    pub share_nkey: Option<PathBuf>,
}

#[derive(Debug, Args, Clone)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct GamedayArgs {
    #[command(subcommand)]
    pub command: Option<GamedayCmd>,
    /// Scenario name or file.
    #[arg(required = true, add = ArgValueCandidates::new(complete::scenarios))]
    pub scenario: Option<String>,
    /// Run against a real Prometheus scraping `warroom sim serve` instead of the embedded store.
    #[arg(long, value_name = "URL")]
    pub prometheus: Option<String>,
    #[arg(long, default_value_t = 30.0)]
    pub speed: f64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Run without the console and print the score.
    #[arg(long)]
    pub headless: bool,
    /// Theme name or file of the console (overrides the config file): default, light, mono,
    /// high-contrast.
    #[arg(long)]
    pub theme: Option<String>,
    /// Headless: run a runbook at a moment of the rehearsal, e.g. `pool-exhaustion@+3m` (three
    /// simulated minutes after the first fault) or `disable-retries@07:05` (on the scenario's
    /// clock). Repeatable. `seed` plays the seed incident's own response at its moments.
    #[arg(long = "play", value_name = "RUNBOOK@WHEN")]
    pub plays: Vec<String>,
    /// Headless: how much simulated time to run, from five minutes before the first fault
    /// (default: to the scenario's end).
    #[arg(long = "for", value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub run_for: Option<std::time::Duration>,
    /// Where the simulator's /metrics and control API listen (with --prometheus: the target
    /// your Prometheus scrapes; default 127.0.0.1:9187).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// How much simulated history the embedded store keeps; older samples are pruned.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration, default_value = "3h")]
    pub retention: std::time::Duration,
    /// Headless: print the score as JSON.
    #[arg(long)]
    pub json: bool,
    /// Headless: record the rehearsal in this incident (by default a new one, titled after
    /// the scenario), in simulated time.
    #[arg(long, value_name = "ID", add = ArgValueCandidates::new(complete::incidents))]
    pub incident: Option<String>,
}

#[derive(Debug, Subcommand, Clone)]
pub enum GamedayCmd {
    /// Past rehearsals side by side, each scored from its journal (all scenarios, or one).
    History {
        /// Only this scenario's rehearsals.
        #[arg(add = ArgValueCandidates::new(complete::scenarios))]
        scenario: Option<String>,
    },
}

#[derive(Debug, Subcommand, Clone)]
pub enum SimCmd {
    /// Serve the simulated fleet: /metrics, the control API, /state and /healthz.
    Serve(SimServeArgs),
}

#[derive(Debug, Args, Clone)]
pub struct SimServeArgs {
    /// Scenario name (planner-peak, bird-count, crash-loop) or a scenario file.
    #[arg(add = ArgValueCandidates::new(complete::scenarios))]
    pub scenario: String,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:9187")]
    pub listen: String,
    /// Simulated seconds per wall-clock second.
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Seed for the simulator's noise.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Begin this many simulated seconds into the scenario (simulated at once at startup).
    #[arg(long, default_value_t = 0.0, value_name = "SECONDS")]
    pub start_at: f64,
}

#[derive(Debug, Subcommand, Clone)]
pub enum RunbookCmd {
    /// List the runbooks found, with any that failed to load.
    List(RunbookDirArgs),
    /// Check runbook files and report every problem with file:line:col.
    Check {
        /// Files to check (default: every runbook in the runbook directory).
        files: Vec<PathBuf>,
        #[command(flatten)]
        dir: RunbookDirArgs,
    },
    /// Show the plan of a runbook: every request and command as it would be sent.
    Plan(RunbookNamed),
    /// Run a runbook.
    Run {
        #[command(flatten)]
        runbook: RunbookNamed,
        /// Show the plan and do nothing.
        #[arg(long)]
        dry_run: bool,
        /// Confirm every step without asking (for rehearsals and automation).
        #[arg(long)]
        yes: bool,
        /// Incident to record the run in.
        #[arg(long, add = ArgValueCandidates::new(complete::incidents))]
        incident: Option<String>,
        /// Prometheus base URL for gates and target queries.
        #[arg(long, value_name = "URL")]
        prometheus: Option<String>,
        /// Continue a run that stopped (a crash): completed steps are not re-run. Without
        /// RUN_ID, the last unfinished run of this runbook in the incident (--incident).
        #[arg(long, value_name = "RUN_ID", num_args = 0..=1, default_missing_value = "")]
        resume: Option<String>,
        /// With --incident: run only while holding the incident's executor lease on this
        /// engine (one responder runs at a time across machines) and share the run's records.
        #[command(flatten)]
        share: ShareArgs,
    },
}

/// A runbook named on the command line, where to look for it, and its variables.
#[derive(Debug, Args, Clone)]
pub struct RunbookNamed {
    #[arg(add = ArgValueCandidates::new(complete::runbooks))]
    pub name: String,
    #[command(flatten)]
    pub dir: RunbookDirArgs,
    /// Set a variable: --var key=value (over the config's [runbooks.vars])
    #[arg(long = "var", value_name = "KEY=VALUE")]
    pub vars: Vec<String>,
}

/// Where runbooks are found, beside the shipped ones.
#[derive(Debug, Args, Clone)]
pub struct RunbookDirArgs {
    /// Directory of runbooks (default: ./runbooks, then the config's [runbooks] dir).
    #[arg(long, value_name = "DIR")]
    pub runbooks: Option<PathBuf>,
}

#[derive(Debug, Subcommand, Clone)]
pub enum IncidentCmd {
    /// Start a new incident and print its id.
    New {
        #[arg(long)]
        title: Option<String>,
        #[arg(long)]
        severity: Option<String>,
        #[command(flatten)]
        share: ShareArgs,
    },
    /// List incidents (with --share: those on the engine, and whether each is on this machine).
    List {
        #[command(flatten)]
        share: ShareArgs,
    },
    /// Show an incident's summary.
    Show {
        #[arg(add = ArgValueCandidates::new(complete::incidents))]
        id: String,
    },
    /// Add a note (tags such as #root-cause are kept for the postmortem).
    Note {
        #[arg(add = ArgValueCandidates::new(complete::incidents))]
        id: String,
        text: Vec<String>,
        #[command(flatten)]
        via: Via,
    },
    /// Set the status: investigating, identified, monitoring, resolved. Resolving lists the
    /// incident's silences still in force.
    Status {
        #[arg(add = ArgValueCandidates::new(complete::incidents))]
        id: String,
        status: String,
        /// With `resolved`: expire the incident's silences still in force too.
        #[arg(long)]
        expire_silences: bool,
        #[command(flatten)]
        via: Via,
        #[command(flatten)]
        alertmanager: AlertmanagerArg,
    },
    /// Set the severity: SEV-1 .. SEV-4.
    Severity {
        #[arg(add = ArgValueCandidates::new(complete::incidents))]
        id: String,
        severity: String,
        #[command(flatten)]
        via: Via,
    },
    /// Set the services affected (replaces the list).
    Services {
        #[arg(add = ArgValueCandidates::new(complete::incidents))]
        id: String,
        #[arg(required = true)]
        services: Vec<String>,
        #[command(flatten)]
        via: Via,
    },
    /// Add an action item.
    Action {
        #[arg(add = ArgValueCandidates::new(complete::incidents))]
        id: String,
        /// What must be done.
        text: Vec<String>,
        #[arg(long)]
        owner: Option<String>,
        #[arg(long)]
        priority: Option<String>,
        /// Due date, YYYY-MM-DD.
        #[arg(long)]
        due: Option<String>,
        #[command(flatten)]
        via: Via,
    },
    /// Mark when the impact started or ended (when it differs from the first crossing or the
    /// recovery).
    Impact {
        #[arg(add = ArgValueCandidates::new(complete::incidents))]
        id: String,
        /// `start` or `end`.
        edge: String,
        /// When, in the configured timezone: "YYYY-MM-DD HH:MM:SS", or HH:MM for today
        /// (default: now).
        #[arg(long)]
        at: Option<String>,
        #[command(flatten)]
        via: Via,
    },
    /// Correct a record: it stays in the journal, superseded; TEXT replaces a note, none
    /// retracts the record.
    Correct {
        #[arg(add = ArgValueCandidates::new(complete::incidents))]
        id: String,
        /// The record's sequence number (`#N` in the timeline).
        seq: u64,
        /// Why it was wrong.
        #[arg(long)]
        reason: String,
        /// The note's new text (none: retract it).
        text: Vec<String>,
        #[command(flatten)]
        via: Via,
    },
    /// Print the timeline.
    Timeline {
        #[arg(add = ArgValueCandidates::new(complete::incidents))]
        id: String,
        /// One JSON record a line.
        #[arg(long)]
        json: bool,
        /// With the engine (--share): every responder's records, merged.
        #[command(flatten)]
        share: ShareArgs,
    },
    /// Append COUNT records as fast as the journal allows, printing each sequence number only
    /// once it is synced (the writer of the kill -9 test).
    #[command(hide = true)]
    Stress {
        id: String,
        #[arg(long, default_value_t = 1000)]
        count: u64,
    },
}

#[derive(Debug, Subcommand, Clone)]
pub enum SilenceCmd {
    /// Silence alerts in Alertmanager for the incident: the comment carries the incident id,
    /// `createdBy` the author ($WARROOM_ACTOR), and the journal records it.
    Add {
        #[arg(add = ArgValueCandidates::new(complete::incidents))]
        id: String,
        /// A label matcher: name=value, name!=value, name=~regex or name!~regex. Repeatable;
        /// at least one.
        #[arg(long = "match", value_name = "MATCHER")]
        matchers: Vec<String>,
        /// How long (default: until the incident is resolved, at most the ceiling,
        /// [alertmanager] silence_ceiling, 12h unless set).
        #[arg(long = "for", value_name = "DURATION", value_parser = humantime::parse_duration)]
        length: Option<std::time::Duration>,
        /// Why: it follows the incident id in the silence's comment.
        #[arg(long)]
        comment: Option<String>,
        /// Accept a matcher that matches every value of its label (`job=~".*"`, `job!=""`).
        #[arg(long)]
        confirm_broad: bool,
        #[command(flatten)]
        via: Via,
        #[command(flatten)]
        alertmanager: AlertmanagerArg,
    },
    /// The incident's silences in Alertmanager; one the journal lacks (a record lost to a
    /// crash) is recorded.
    List {
        #[arg(add = ArgValueCandidates::new(complete::incidents))]
        id: String,
        #[command(flatten)]
        via: Via,
        #[command(flatten)]
        alertmanager: AlertmanagerArg,
    },
    /// Expire the incident's silences: those named (an id or its first characters), or every
    /// one still in force.
    Expire {
        #[arg(add = ArgValueCandidates::new(complete::incidents))]
        id: String,
        #[arg(value_name = "SILENCE")]
        silences: Vec<String>,
        #[command(flatten)]
        via: Via,
        #[command(flatten)]
        alertmanager: AlertmanagerArg,
    },
}

/// The Alertmanager to ask, over the config's.
#[derive(Debug, Args, Clone, Default)]
pub struct AlertmanagerArg {
    /// Alertmanager base URL (overrides the config file), e.g. http://127.0.0.1:9093
    #[arg(long = "alertmanager", value_name = "URL")]
    pub url: Option<String>,
}

/// Where an incident command records when another process holds the incident.
#[derive(Debug, Args, Clone, Default)]
pub struct Via {
    /// The holder's socket (its incident.sock, or a path that reaches it, e.g. one forwarded
    /// with `ssh -L`). Without it, the command writes directly when nobody holds the incident
    /// and through the holder's socket in the incident directory when someone does.
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    #[command(flatten)]
    pub share: ShareArgs,
}

#[derive(Debug, Args, Clone)]
pub struct RecordArgs {
    /// The incident to record (it must exist: `warroom incident new` starts one).
    #[arg(add = ArgValueCandidates::new(complete::incidents))]
    pub id: String,
    /// Prometheus base URL (overrides the config file): panels and its alerts are polled.
    #[arg(long, value_name = "URL")]
    pub prometheus: Option<String>,
    /// Alertmanager base URL (overrides the config file), e.g. http://127.0.0.1:9093
    #[arg(long, value_name = "URL")]
    pub alertmanager: Option<String>,
    #[command(flatten)]
    pub share: ShareArgs,
}

#[derive(Debug, Args, Clone)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["incident", "socket"])))]
pub struct McpArgs {
    /// Attach to the incident held behind this socket (its incident.sock, or a path that
    /// reaches it, e.g. one forwarded with `ssh -L`).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Prometheus base URL (overrides the config file), e.g. http://127.0.0.1:9090
    #[arg(long, value_name = "URL")]
    pub prometheus: Option<String>,
    /// The incident to serve (`warroom incident list` shows them).
    #[arg(long, value_name = "ID", add = ArgValueCandidates::new(complete::incidents))]
    pub incident: Option<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ExportFormat {
    Markdown,
    Status,
    Json,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum TimelineMode {
    Folded,
    Full,
}

#[derive(Debug, Args, Clone)]
pub struct ExportArgs {
    /// The incident to export (`warroom incident list` shows them).
    #[arg(add = ArgValueCandidates::new(complete::incidents))]
    pub id: String,
    /// `markdown`: the house-format postmortem draft; `status`: the status-page
    /// updates; `json`: the facts both are written from.
    #[arg(long, value_enum, default_value_t = ExportFormat::Markdown)]
    pub format: ExportFormat,
    /// Write the files into this directory (default: the incident's `exports/` directory).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// A minijinja template over the same facts.
    #[arg(long, value_name = "FILE")]
    pub template: Option<PathBuf>,
    /// Take the panel snapshots from this Prometheus when the incident has none (the config
    /// file's Prometheus URL is used otherwise, if it has one).
    #[arg(long, value_name = "URL")]
    pub prometheus: Option<String>,
    /// The timeline: one row per event that matters (`folded`, the default), or every record
    /// (`full`).
    #[arg(long, value_enum, default_value_t = TimelineMode::Folded)]
    pub timeline: TimelineMode,
    /// The longest quiet stretch of the timeline the lint accepts, e.g. "30m" (default: the
    /// config's `[export] gap_limit`, else 30 minutes).
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub gap_limit: Option<std::time::Duration>,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum PublishAs {
    Pr,
    Issue,
}

#[derive(Debug, Args, Clone)]
pub struct PublishArgs {
    #[arg(add = ArgValueCandidates::new(complete::incidents))]
    pub id: String,
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,
    #[arg(long = "as", value_enum, default_value_t = PublishAs::Pr)]
    pub publish_as: PublishAs,
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args, Clone)]
pub struct DiscoverArgs {
    /// Prometheus base URL (overrides the config file), e.g. http://127.0.0.1:9090
    #[arg(long, value_name = "URL")]
    pub prometheus: Option<String>,
    /// Print a warroom.toml with a `[[panel]]` entry for every signal found, to edit.
    #[arg(long)]
    pub toml: bool,
}

#[derive(Debug, Args, Clone)]
pub struct ManArgs {
    /// Write warroom.1 and a page per command (warroom-open.1, …) into DIR instead of printing
    /// warroom.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand, Clone)]
pub enum ConfigCmd {
    /// Print a commented example warroom.toml with every section (all settings commented out,
    /// at their defaults or typical values).
    Example,
}

#[derive(Debug, Subcommand, Clone)]
pub enum ImportCmd {
    /// A Grafana dashboard's JSON (the classic export, the V1 resource, V2 as far as it goes)
    /// into `[[panel]]` entries, with a report of every panel not converted and why.
    Grafana(GrafanaArgs),
}

#[derive(Debug, Args, Clone)]
pub struct GrafanaArgs {
    /// The dashboard's JSON file (`-` reads standard input).
    pub file: PathBuf,
    /// Print only the `[[panel]]` entries (the report goes to stderr).
    #[arg(long)]
    pub toml: bool,
    /// Look query variables (`label_values(...)` …) up in this Prometheus (overrides the
    /// config file); without one, queries that use them are not converted.
    #[arg(long, value_name = "URL")]
    pub prometheus: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct ReplayArgs {
    /// The incident to replay (`warroom incident list` shows them).
    #[arg(add = ArgValueCandidates::new(complete::incidents))]
    pub id: String,
    /// Replay seconds per wall-clock second (60: a two-hour incident plays in two minutes;
    /// `+`/`-` change it while playing).
    #[arg(long, default_value_t = 60.0)]
    pub speed: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_line_is_consistent() {
        Cli::command().debug_assert();
    }
}
