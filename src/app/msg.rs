//! Everything that can happen to the console, as messages to `update`.

use crate::metrics::fetch::Ticket;
use crate::metrics::health::Pass;
use crate::metrics::{QueryAnswer, RangeQuery, SourceError};
use chrono::{DateTime, Utc};
use crossterm::event::KeyEvent;

#[derive(Debug, Clone)]
pub enum Msg {
    /// A key from the terminal.
    Key(KeyEvent),
    /// A key of a burst begun before a dialog came up by itself: typed for what was there
    /// before, so it is dropped ([`crate::app::typing`]).
    KeyAhead(KeyEvent),
    /// A click or the wheel (only with `mouse = true` in the config).
    Mouse(crossterm::event::MouseEvent),
    /// The terminal changed size.
    Resize { width: u16, height: u16 },
    /// The slow tick: clocks, staleness ages, refresh scheduling.
    Tick(DateTime<Utc>),
    /// The wall clock, when the console's clock is a rehearsal's (notices expire on it).
    Wall(DateTime<Utc>),
    /// The rehearsal reached its end: the announcement (score, incident, next commands).
    RehearsalEnded(String),
    /// A panel's query came back (or failed). Answers for an older range or width are dropped.
    Answer {
        panel: usize,
        ticket: Ticket,
        pass: Pass,
        query: RangeQuery,
        result: Result<QueryAnswer, SourceError>,
        at: DateTime<Utc>,
    },
    /// A panel's instant query came back (or failed).
    Latest {
        panel: usize,
        pass: Pass,
        result: Result<QueryAnswer, SourceError>,
        at: DateTime<Utc>,
    },
    /// The latest values of a group of panels not on screen came back (split per panel), or
    /// the group's query failed.
    Group {
        pass: Pass,
        panels: Vec<usize>,
        result: Result<Vec<(usize, QueryAnswer)>, SourceError>,
        at: DateTime<Utc>,
    },
    /// How each panel is on screen, reported after a frame that changed it (fetching follows).
    Showing(Vec<crate::ui::layout::Showing>),
    /// A journal append finished: the synced record, or why it is not durable.
    Recorded(Result<crate::incident::Record, String>),
    /// What became of a run's executor lease across machines (refused, lost, not given back):
    /// said on the message line.
    Lease(String),
    /// A run was not started: `by` holds the executor lease (it lapses `lapses_s` after its
    /// holder stops renewing it); the run of `runbook` can be proposed to them.
    LeaseBusy {
        by: String,
        runbook: String,
        lapses_s: u64,
    },
    /// The journal refused an event itself (see `JournalError::is_refusal`): said, but the
    /// journal is as durable as before.
    Refused(String),
    /// The export finished: where the draft is and the lint's findings, or why it failed.
    Exported(Result<(String, Vec<String>), String>),
    /// The dashboard's variables were resolved (at start, or after a choice).
    VariablesResolved(Box<crate::variables::Bindings>),
    /// Discovery answered: the dashboard it built, or why it could not.
    Discovered(Result<Discovered, DiscoverFailure>),
    /// The runbook list was (re)loaded.
    RunbooksLoaded(Vec<crate::runbook::catalog::Entry>),
    /// Which runbooks' variables do not resolve here (sent before `RunbooksLoaded`).
    RunbooksUnresolved(crate::runbook::catalog::Unresolved),
    /// A runbook's plan is ready (or cannot be made).
    Planned {
        name: String,
        result: Result<crate::runbook::setup::Plan, String>,
    },
    /// A run's transition, after the journal has it (when there is an incident).
    Run {
        record: Box<crate::runbook::report::RunRecord>,
        journaled: Option<Box<crate::incident::Record>>,
    },
    /// A run's task ended.
    RunEnded {
        run_id: String,
        outcome: crate::runbook::report::RunOutcome,
    },
    /// The executor asks the operator; the answer goes back through `reply`.
    Ask {
        run_id: String,
        question: super::workers::operator::Question,
        reply: super::workers::operator::Reply,
    },
    /// A record appended by someone else on the console's behalf (a run's intent), synced.
    Journaled(Box<crate::incident::Record>),
    /// The external editor closed: the note's text, or why there is none.
    EditorClosed(Result<String, String>),
    /// The changes intake recorded a change, or could not, or GitHub stopped or started
    /// answering.
    Changes(crate::github::ChangesReport),
    /// The publish task finished, gave up, or will try again.
    Published(super::workers::publish::PublishReport),
    /// The incident was declared and is being recorded, or why it could not be.
    Declared(Result<(), String>),
    /// The incident's socket: a synced record, followers, a proposal, the holder gone, a
    /// takeover.
    Share(super::sharing::ShareMsg),
    /// SIGINT or SIGTERM: stop starting work, restore the terminal, leave.
    Interrupted(&'static str),
    /// A round of runbook advice was evaluated (`Effect::Advise`).
    Advised(super::workers::advice::judge::Advice),
    /// How many alerts a silence's matchers select in Alertmanager now (`Effect::Silence`).
    SilenceCounted {
        spec: Box<crate::alerts::silence::SilenceSpec>,
        result: Result<usize, String>,
    },
    /// A silence made, extended or expired (`Effect::Silence`): the records to append.
    Silenced(super::workers::silence::Report),
}

/// A dashboard built by discovery.
#[derive(Debug, Clone, PartialEq)]
pub struct Discovered {
    /// The panels, the signals that matter first; empty when no known exporter was found.
    pub panels: Vec<crate::config::PanelConfig>,
    /// Each panel's hint when it has no series (the metric it needs).
    pub hints: Vec<String>,
    /// "postgres_exporter, HAProxy".
    pub summary: String,
    /// The line to show when nothing was found.
    pub status: String,
    /// Signals of the stacks found whose metrics are absent, by title.
    pub missing: Vec<String>,
}

impl Discovered {
    /// What the console takes from a discovery.
    pub fn from_discovery(d: &crate::metrics::discover::Discovery) -> Self {
        Discovered {
            status: d.status_line(),
            summary: d.dashboard.summary(),
            hints: (d.dashboard.panels.iter())
                .map(crate::metrics::discover::SignalPanel::empty_hint)
                .collect(),
            panels: d.dashboard.panel_configs(),
            missing: (d.found.iter())
                .flat_map(|f| f.missing.iter().map(|m| m.title.clone()))
                .collect(),
        }
    }
}

/// Why discovery did not answer, and when to ask again.
#[derive(Debug, Clone, PartialEq)]
pub struct DiscoverFailure {
    pub error: String,
    /// When the server asked to be left alone this long (429, 503 with Retry-After).
    pub retry_after: Option<std::time::Duration>,
    /// Whether asking again soon may help (a timeout, a refused connection) or not (a 401).
    pub transient: bool,
}
