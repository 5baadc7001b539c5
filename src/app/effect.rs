//! What `update` asks the runtime to do. The runtime turns each effect into a task.

use crate::incident::Source as RecordSource;
use crate::incident::event::Event;
use crate::metrics::fetch::Ticket;
use crate::metrics::health::Pass;
use crate::metrics::{InstantQuery, RangeQuery};

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Query the metrics source for a panel; the answer returns as `Msg::Answer` with the same
    /// ticket and pass.
    Fetch {
        panel: usize,
        ticket: Ticket,
        pass: Pass,
        query: RangeQuery,
        /// The series the panel keeps of the answer (chosen off the loop).
        keep: crate::metrics::series::KeepWorst,
    },
    /// Ask for a panel's value now: sent instead of a range query when the panel already holds
    /// the newest point of its step grid, so the headline value is never a step old. Answers
    /// as `Msg::Latest`.
    FetchLatest {
        panel: usize,
        pass: Pass,
        query: InstantQuery,
        keep: crate::metrics::series::KeepWorst,
    },
    /// Read the latest values of panels not on screen in one instant query (issue 34); answers
    /// as `Msg::Group`, split back per panel (off the loop).
    FetchGroup {
        pass: Pass,
        members: Vec<crate::metrics::group::Member>,
        query: InstantQuery,
    },
    /// Append to the incident's journal (off the loop); acknowledged by `Msg::Recorded` only
    /// once it is synced.
    Record {
        source: RecordSource,
        actor: String,
        event: Event,
    },
    /// (Re)load the runbook list; answers as `Msg::RunbooksLoaded`.
    LoadRunbooks,
    /// Prepare a runbook's plan (variables, targets) with `vars` over every other source (an
    /// accepted proposal's); answers as `Msg::Planned`.
    PlanRunbook {
        runbook: Box<crate::runbook::model::Runbook>,
        vars: Vec<(String, String)>,
    },
    /// Start a run off the loop; its events arrive as `Msg::Run`, its end as `Msg::RunEnded`.
    StartRun {
        runbook: Box<crate::runbook::model::Runbook>,
        run_id: String,
        /// Variables set in the run dialog, over every other source.
        vars: Vec<(String, String)>,
        /// Secrets typed in the run dialog, by the environment variable each stands for:
        /// read for this run only, before the process's environment, and never recorded.
        secrets: Vec<(String, crate::secret::Secret)>,
        /// Resuming: the step index to go on from, and the incident's records (the run's
        /// idempotency keys are reused).
        resume: Option<Resume>,
    },
    /// Pause, resume or abort a run (it takes effect between actions).
    ControlRun {
        run_id: String,
        control: crate::runbook::executor::Control,
    },
    /// Answer the executor's question.
    Answer {
        reply: super::workers::operator::Reply,
        answer: super::workers::operator::Answer,
    },
    /// Suspend the terminal and write a note in `$VISUAL`/`$EDITOR`; answers as
    /// `Msg::EditorClosed`.
    EditNote,
    /// Put this text on the terminal's clipboard (OSC 52). The loop writes it itself, between
    /// frames, so it never lands inside one.
    Copy(String),
    /// Take the snapshots of these panels (the dashboard as it is now) over the incident so
    /// far and export the postmortem draft, off the loop; answers as `Msg::Exported`.
    Export(Vec<crate::config::PanelConfig>),
    /// Resolve the dashboard's variables (with the values chosen) against the Prometheus, by
    /// Grafana's rules; answers as `Msg::VariablesResolved`.
    ResolveVariables(Vec<crate::variables::Variable>),
    /// Ask the Prometheus which exporters it holds and build the dashboard from the presets;
    /// answers as `Msg::Discovered`.
    Discover,
    /// Declare the incident: create it (with this title and severity, else the defaults) and
    /// start recording; answers as `Msg::Declared`. The loop does it itself, before the next
    /// message, so the records that follow have their journal.
    Declare {
        title: Option<String>,
        severity: Option<crate::incident::event::Severity>,
    },
    /// Run or pause a rehearsal's simulated time (the briefing dismissed, `p`).
    Pace { running: bool },
    /// Publish the exported draft to GitHub in this form, through the outbox, in its own task;
    /// answers as `Msg::Published` (and `Msg::Journaled` for the timeline record).
    Publish(crate::github::publish::Target),
    /// A follower asks the holder to run a runbook (only the holder runs them); answers as
    /// `Msg::Share(ShareMsg::Proposed)`.
    Propose { runbook: String },
    /// Take the incident over after its holder went away; answers as
    /// `Msg::Share(ShareMsg::TookOver)`.
    TakeOver,
    /// Evaluate these runbooks' symptoms and preconditions against live data, read-only, off
    /// the loop; answers as `Msg::Advised`.
    Advise(Vec<crate::runbook::model::Runbook>),
    /// Ask Alertmanager about the incident's silences, off the loop (issue 35); answers as
    /// `Msg::SilenceCounted` or `Msg::Silenced`.
    Silence(super::workers::silence::Order),
}

/// Where a resumed run goes on.
#[derive(Debug, Clone, PartialEq)]
pub struct Resume {
    pub from: usize,
    pub records: Vec<crate::incident::Record>,
}
