//! All state of the console, in one place.

use super::panes::panel::{Panel, PanelState};
use crate::config::Config;
use crate::keymap::{Keymap, Mode};
use crate::metrics::fetch::Window;
use crate::metrics::health::{Health, HealthState};
use crate::theme::Theme;
use chrono::{DateTime, Utc};
use rand::SeedableRng;
use rand::rngs::StdRng;
use std::time::Duration;

/// The ranges a panel can show, shortest first.
pub const RANGES: [Duration; 7] = [
    Duration::from_secs(300),
    Duration::from_secs(900),
    Duration::from_secs(3600),
    Duration::from_secs(3 * 3600),
    Duration::from_secs(6 * 3600),
    Duration::from_secs(12 * 3600),
    Duration::from_secs(24 * 3600),
];

/// Most requests in flight to the metrics source at once.
pub const MAX_IN_FLIGHT: usize = 4;

/// The metrics source as the status bar shows it.
#[derive(Debug, Clone, Default)]
pub struct SourceStatus {
    pub name: String,
    /// Up, down (with backoff and one probe at a time) or not yet known.
    pub health: Health,
    /// Requests sent since start (counted by tests and the benchmark).
    pub requests_sent: u64,
}

/// Building the dashboard from what the Prometheus exports (no `[[panel]]` in the config).
/// Discovery never holds the first frame: the dashboard says it is looking, and says so again
/// with the reason and the next try when it fails.
#[derive(Debug, Clone, PartialEq)]
pub enum Discovery {
    /// To be asked at `at` (`None`: at the next tick).
    Due {
        at: Option<DateTime<Utc>>,
        attempts: u32,
        last_error: Option<String>,
    },
    /// A discovery is under way.
    Running { attempts: u32 },
    /// The dashboard is the presets of these stacks. While signals of a stack found are absent
    /// (`missing`, by title: PgBouncer before its first pool, say), discovery looks again at
    /// `next` and adds what appeared.
    Found {
        summary: String,
        missing: Vec<String>,
        next: Option<DateTime<Utc>>,
    },
    /// The Prometheus answers, but none of its metric names is a known exporter's; asked
    /// again at `next`.
    Nothing { line: String, next: DateTime<Utc> },
}

impl Discovery {
    /// What the status bar and the empty dashboard say about it.
    pub fn line(&self, now: DateTime<Utc>) -> String {
        match self {
            Discovery::Due {
                at: Some(at),
                last_error: Some(e),
                ..
            } => format!(
                "discovery failed: {e}; next try in {}s",
                crate::backoff::shown_wait((*at - now).num_seconds())
            ),
            Discovery::Due { .. } | Discovery::Running { .. } => {
                "discovering what this Prometheus exports…".into()
            }
            Discovery::Found {
                summary, missing, ..
            } => match missing.len() {
                0 => format!("found {summary}"),
                n => format!("found {summary} ({n} signals absent, looking again)"),
            },
            Discovery::Nothing { line, .. } => line.clone(),
        }
    }
}

/// The incident the console records into.
#[derive(Debug, Clone, PartialEq)]
pub struct IncidentHeader {
    pub id: String,
    pub title: String,
}

/// A line for the status bar that stays until it expires (a warning: until dismissed, or a
/// newer message takes its place); every one is kept in the message log.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub text: String,
    pub warning: bool,
    /// When it goes, on the model's clock (`None`: until dismissed).
    pub until: Option<DateTime<Utc>>,
    /// When it was given, on the model's clock.
    pub at: DateTime<Utc>,
}

/// Shortest time a message stays, in wall-clock seconds.
pub const MESSAGE_MIN_SECS: f64 = 5.0;
/// Messages kept in the log.
pub const MESSAGE_LOG: usize = 200;

/// What the help overlay shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HelpPage {
    /// The key bindings of every mode.
    #[default]
    Keys,
    /// The message log, newest first.
    Messages,
    /// The last export's lint findings.
    Lint,
}

/// Why the console is closing.
#[derive(Debug, Clone, PartialEq)]
pub enum Quit {
    User,
    Signal(&'static str),
}

/// The console's state.
#[derive(Debug)]
pub struct Model {
    pub panels: Vec<Panel>,
    /// The rows collapsed now (an imported dashboard's): their panels are neither drawn nor
    /// queried until opened (`:row NAME`).
    pub collapsed: std::collections::BTreeSet<String>,
    pub selected: usize,
    pub zoomed: bool,
    pub mode: Mode,
    pub range_idx: usize,
    pub paused: bool,
    pub now: DateTime<Utc>,
    pub width: u16,
    pub height: u16,
    pub refresh: Duration,
    pub tz: chrono_tz::Tz,
    pub theme: Theme,
    pub keymap: Keymap,
    /// Clicks and the wheel act (`mouse = true` in the config; off by default).
    pub mouse: bool,
    /// Who is at the keyboard: the actor of the records this console writes.
    pub actor: String,
    /// The dashboard by discovery, when no `[[panel]]` is configured (`None`: the panels are
    /// the config's, or a rehearsal's).
    pub discovery: Option<Discovery>,
    pub source: SourceStatus,
    pub notice: Option<Notice>,
    /// A rehearsal's briefing, shown over the dashboard until dismissed.
    pub briefing: Option<String>,
    /// The console is on a rehearsal: its time is the operator's (it starts when the briefing
    /// is dismissed, and pausing pauses the simulation too).
    pub rehearsal: bool,
    /// The Prometheus the panels query, for `o`'s graph URL (`None`: an embedded engine).
    pub graph_base: Option<String>,
    /// The last exported draft's path, for `y`.
    pub exported: Option<String>,
    /// The help overlay paused the rehearsal as it opened: closing it lets time run again.
    pub help_paused: bool,
    /// The rehearsal's end, announced over the dashboard until dismissed: the score, the
    /// incident and what to do next.
    pub ended: Option<String>,
    /// The wall clock when the model's clock is not it (a rehearsal): notices expire on it.
    pub wall: Option<DateTime<Utc>>,
    /// The incident being recorded, if any.
    pub incident: Option<IncidentHeader>,
    /// No incident yet, and one can be declared (`warroom open` watching): `D`, or the first
    /// note, status or action, creates it.
    pub declarable: bool,
    /// A declaration is under way (asked once).
    pub declaring: bool,
    /// What was seen while watching, to record once the incident is declared: (source, actor,
    /// event), each event carrying the time it happened.
    pub pending: Vec<(crate::incident::Source, String, crate::incident::Event)>,
    /// Records acknowledged as durable, oldest first.
    pub timeline: Vec<crate::incident::Record>,
    /// Records sent to the journal and not yet acknowledged.
    pub recording: usize,
    /// The last append failed: the journal is not durable (shown, and destructive steps refused).
    pub journal_error: Option<String>,
    /// The timeline pane is shown beside the panels.
    pub show_timeline: bool,
    /// The note being typed (in `Mode::Note`).
    pub note: String,
    pub note_caret: super::panes::text::Caret,
    /// Every message given, oldest first (at most [`MESSAGE_LOG`]).
    pub messages: std::collections::VecDeque<Notice>,
    /// What the help overlay shows when open.
    pub help_page: HelpPage,
    /// The last export's lint findings, as lines.
    pub lint: Vec<String>,
    /// The timeline pane's scroll and search.
    pub timeline_pane: super::panes::timeline::TimelinePane,
    /// A timeline search being typed (`/`): keys are its text until enter or esc.
    pub search: Option<Search>,
    /// Threshold detectors, one per panel.
    pub detectors: Vec<crate::incident::crossing::Detector>,
    /// Something changed since the last frame.
    pub dirty: bool,
    pub quit: Option<Quit>,
    /// Jitter comes from here so `update` stays deterministic under test.
    pub rng: StdRng,
    /// The runbook pane: the list, the plan shown, the run.
    pub runbooks: RunbookPane,
    /// Runbook advice: the last round evaluated against live data, and when to ask again.
    pub advice: super::workers::advice::judge::Board,
    /// The dialog shown over everything, which gets keys first.
    pub dialog: Option<super::panes::dialog::Dialog>,
    /// The dashboard's `[[variable]]`s and their values (`V` sets one).
    pub variables: super::panes::variables::Variables,
    /// Dialogs waiting for the one shown to close (the executor may ask while a form is open).
    pub dialogs_waiting: std::collections::VecDeque<super::panes::dialog::Dialog>,
    /// How many times what keys go to (a dialog, a mode) changed by something other than a key:
    /// keys typed before such a change were not meant for what is there now
    /// ([`crate::app::typing`]).
    pub targets_changed: u64,
    /// The timeline pane shows only this source, when set.
    pub timeline_filter: Option<crate::incident::Source>,
    /// The timeline pane lists the oldest record first.
    pub oldest_first: bool,
    /// The threshold crossing jumped to with `g` (its sequence number), marked in the pane.
    pub jumped: Option<u64>,
    /// Lines the help overlay is scrolled down by.
    pub help_scroll: u16,
    /// The mode help was opened from (it returns there).
    pub help_from: Mode,
    /// The Changes pane (GitHub's deployments, releases, merged pull requests).
    pub changes: super::panes::changes::ChangesPane,
    /// Publishing to GitHub (`P`).
    pub publish: super::panes::publish::PublishPane,
    /// Set while replaying an incident (read-only): the status bar shows this instead of the
    /// source, the incident and the console's key hints.
    pub replay: Option<ReplayBar>,
    /// Whether this console holds its incident and serves it, or follows the one that does.
    pub sharing: super::sharing::Sharing,
    /// Shared through an engine: what the sync last said of it (`None`: not shared so).
    pub engine: Option<crate::share::session::News>,
    /// The other responders' records from the engine, by time (this console's own journal
    /// is `timeline`).
    pub others: Vec<crate::incident::Record>,
    /// The incident's Alertmanager silences made from here (issue 35).
    pub silences: SilenceDesk,
    /// What is on screen, as fetching follows it (issue 34).
    pub cost: super::cost::Cost,
}

/// What the console knows of silences beyond the journal.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SilenceDesk {
    /// The longest silence (`[alertmanager] silence_ceiling`); `None`: no Alertmanager is
    /// configured, so nothing can be silenced from here.
    pub ceiling: Option<Duration>,
    /// The lapses already warned of (silence id, end): each is warned of once.
    pub warned: Vec<(String, DateTime<Utc>)>,
}

/// What the status bar shows during a replay.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayBar {
    /// `REPLAY ▶ playing 60×`.
    pub state: String,
    /// The incident's id and title.
    pub incident: String,
    /// The replay's own key hints.
    pub hints: String,
}

/// A search or filter being typed (`/`): its text, where the caret is, and what it looks in.
#[derive(Debug, Clone, PartialEq)]
pub struct Search {
    pub text: String,
    pub caret: super::panes::text::Caret,
    /// The runbook list's filter (it follows the text as it is typed) or the timeline's search.
    pub runbooks: bool,
    /// The filter before it was typed, restored by esc.
    pub before: Option<String>,
}

/// The runbook pane's state.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RunbookPane {
    /// Shipped and configured runbooks, broken ones with their error; `None` until loaded.
    pub entries: Option<Vec<crate::runbook::catalog::Entry>>,
    /// The runbooks whose variables do not resolve here, with why (dimmed in the list).
    pub unresolved: crate::runbook::catalog::Unresolved,
    pub selected: usize,
    /// What `/` filters the list by (names containing it, any case); `None`: every runbook.
    pub filter: Option<String>,
    /// The plan being shown.
    pub plan: Option<PlanPane>,
    /// The run (the running one, or the last one).
    pub run: Option<super::panes::run::RunPane>,
    /// The pane is on screen (beside the panels when both fit; it has the keys in
    /// `Mode::Runbooks`, the dashboard has them otherwise).
    pub shown: bool,
    /// A responder's proposed run the operator accepted, until it starts or is dropped.
    pub accepted: Option<super::sharing::AcceptedRun>,
}

impl RunbookPane {
    /// The run in progress, if any.
    pub fn active(&self) -> Option<&super::panes::run::RunPane> {
        self.run.as_ref().filter(|r| !r.finished())
    }

    /// The entries the filter lets through (every one without a filter), by index.
    pub fn visible(&self) -> Vec<usize> {
        let want = self.filter.as_deref().map(str::to_lowercase);
        (self.entries.iter().flatten().enumerate())
            .filter(|(_, e)| (want.as_ref()).is_none_or(|w| e.name().to_lowercase().contains(w)))
            .map(|(i, _)| i)
            .collect()
    }

    /// Filter the list by `text` (empty: no filter); the selection moves to the first entry
    /// shown when the filter hides it.
    pub fn set_filter(&mut self, text: &str) {
        let text = text.trim();
        self.filter = (!text.is_empty()).then(|| text.to_string());
        let shown = self.visible();
        if let (false, Some(first)) = (shown.contains(&self.selected), shown.first()) {
            self.selected = *first;
        }
    }

    /// The selected entry.
    pub fn entry(&self) -> Option<&crate::runbook::catalog::Entry> {
        if self.filter.is_some() && !self.visible().contains(&self.selected) {
            return None;
        }
        self.entries.as_ref()?.get(self.selected)
    }
}

/// A runbook's plan as the pane shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanPane {
    pub name: String,
    /// The plan's lines; `None` while it is being prepared, `Err` when it cannot be.
    pub lines: Option<Result<Vec<String>, String>>,
    /// Batches per batch step, from the targets known when planning.
    pub batches: std::collections::BTreeMap<String, usize>,
    /// Step titles with the variables filled in, for the run's step list before each starts.
    pub titles: std::collections::BTreeMap<String, String>,
    /// The variables' values as resolved (secrets masked), prefilled in the run dialog.
    pub values: std::collections::BTreeMap<String, String>,
    pub scroll: u16,
}

/// The crossing detector of a panel: the console watches its panels by the recorder's rule
/// (thresholds, 5 % hysteresis, a minute to settle), so both record the same crossings.
fn detector(p: &crate::config::PanelConfig) -> crate::incident::crossing::Detector {
    crate::incident::crossing::Detector::new(crate::recorder::panel_watch::rule(p))
}

impl Model {
    /// What keys go to now: the dialog shown (by its title), the search, the mode.
    pub fn input_target(&self) -> (Option<String>, bool, crate::keymap::Mode) {
        let dialog = self.dialog.as_ref().map(|d| d.title.clone());
        (dialog, self.search.is_some(), self.mode)
    }

    /// A model for `config`, showing `source_name`, starting at `now`.
    pub fn new(config: &Config, theme: Theme, source_name: String, now: DateTime<Utc>) -> Model {
        let range_idx = RANGES
            .iter()
            .position(|r| *r >= config.range)
            .unwrap_or(RANGES.len() - 1);
        let variables = super::panes::variables::Variables::new(config.variables.clone());
        let mut model = Model {
            panels: (config.panels.iter().cloned())
                .map(|p| match variables.used_by(&p) {
                    true => Panel::templated(p),
                    false => Panel::new(p),
                })
                .collect(),
            collapsed: (config.panels.iter())
                .filter(|p| p.shape.collapsed)
                .filter_map(|p| p.shape.row.clone())
                .collect(),
            variables,
            selected: 0,
            zoomed: false,
            mode: Mode::Dashboard,
            range_idx,
            paused: false,
            now,
            width: 80,
            height: 24,
            refresh: config.refresh,
            tz: config.timezone,
            theme,
            mouse: config.mouse,
            // Checked when the config was loaded (`Context::load`).
            keymap: Keymap::from_config(&config.keys).unwrap_or_default(),
            actor: crate::incident::actor::current(),
            discovery: None,
            source: SourceStatus {
                name: source_name,
                ..Default::default()
            },
            notice: None,
            briefing: None,
            rehearsal: false,
            help_paused: false,
            graph_base: None,
            exported: None,
            ended: None,
            wall: None,
            incident: None,
            declarable: false,
            declaring: false,
            pending: Vec::new(),
            timeline: Vec::new(),
            recording: 0,
            journal_error: None,
            show_timeline: false,
            note: String::new(),
            note_caret: Default::default(),
            messages: Default::default(),
            help_page: HelpPage::Keys,
            lint: Vec::new(),
            timeline_pane: Default::default(),
            search: None,
            detectors: config.panels.iter().map(detector).collect(),
            dirty: true,
            quit: None,
            rng: StdRng::seed_from_u64(now.timestamp_millis() as u64),
            runbooks: RunbookPane::default(),
            advice: Default::default(),
            dialog: None,
            dialogs_waiting: std::collections::VecDeque::new(),
            targets_changed: 0,
            timeline_filter: None,
            oldest_first: false,
            jumped: None,
            help_scroll: 0,
            help_from: Mode::Dashboard,
            changes: super::panes::changes::ChangesPane::from_config(config),
            publish: super::panes::publish::PublishPane {
                repo: (config.github.as_ref())
                    .and_then(|g| g.postmortems.as_ref())
                    .map(std::string::ToString::to_string),
                in_flight: false,
            },
            replay: None,
            sharing: Default::default(),
            engine: None,
            others: Vec::new(),
            silences: SilenceDesk {
                ceiling: (config.alertmanager.is_some()).then_some(config.alerts.silence_ceiling),
                warned: Vec::new(),
            },
            cost: Default::default(),
        };
        // The first panel shown is selected (the first may be in a collapsed row).
        model.selected = model.panel_order().first().copied().unwrap_or(0);
        model
    }

    /// Puts a synced record on the timeline in sequence order, once: the same record can
    /// arrive twice (the append's answer and the journal's feed).
    pub fn add_record(&mut self, record: crate::incident::Record) {
        match self.timeline.last() {
            Some(last) if last.seq >= record.seq => {
                if let Err(i) = self.timeline.binary_search_by_key(&record.seq, |r| r.seq) {
                    self.timeline.insert(i, record);
                }
            }
            _ => self.timeline.push(record),
        }
        self.dirty = true;
    }

    /// The range shown, in seconds.
    pub fn range_secs(&self) -> f64 {
        RANGES[self.range_idx].as_secs_f64()
    }

    /// Requests in flight across all panels (a group of hidden panels' values is one).
    pub fn in_flight(&self) -> usize {
        self.panels.iter().filter(|p| p.busy()).count() + self.cost.groups
    }

    /// How long until the next refresh is sent, when one is coming: not paused and the source
    /// up (`None` while it is down or unknown). Zero while a refresh is in flight or due.
    pub fn refresh_due_in(&self) -> Option<std::time::Duration> {
        if self.paused
            || !matches!(
                self.source.health.state(),
                crate::metrics::health::HealthState::Up { .. }
            )
        {
            return None;
        }
        if self.in_flight() > 0 {
            return Some(std::time::Duration::ZERO);
        }
        let due = (self.panels.iter()).map(|p| p.next_due).min()??;
        Some((due - self.now).to_std().unwrap_or_default())
    }

    /// What a panel shows: the range, its plot width and the finest step worth asking for.
    pub fn window(&self) -> Window {
        Window {
            range: RANGES[self.range_idx],
            columns: crate::ui::layout::plot_columns(
                self.panels_width(),
                self.panels.len(),
                self.zoomed,
            ),
            resolution: self.refresh,
        }
    }

    /// The age of panel `i`'s value when it is too old to be called current (see
    /// [`Panel::value_age`]).
    pub fn value_age(&self, i: usize) -> Option<i64> {
        (self.panels.get(i)).and_then(|p| p.value_age(self.now, self.cadence_secs(i)))
    }

    /// How often panel `i` is read now, in seconds: the refresh, its dashboard's own when that
    /// is slower, the hidden panels' cadence while it is off screen. A value is stale only
    /// past two of these.
    pub fn cadence_secs(&self, i: usize) -> i64 {
        let mut every = self.refresh;
        if let Some(own) = self.panels.get(i).and_then(|p| p.config.shape.every) {
            every = every.max(own);
        }
        if self.cost.of(i) == crate::ui::layout::Showing::Hidden {
            every = every.max(self.cost.hidden_every);
        }
        every.as_secs() as i64
    }

    /// What panel `i` honestly shows: its own state, or the source's failure when the source
    /// failed after the panel's last good answer (a panel waiting out the backoff is not fresh).
    pub fn panel_state(&self, i: usize) -> PanelState {
        let Some(p) = self.panels.get(i) else {
            return PanelState::Loading;
        };
        let own = p.state(self.now, self.cadence_secs(i));
        match (&own, self.source.health.state()) {
            (PanelState::Failing { .. }, _) => own,
            (_, HealthState::Down { since, reason, .. })
                if p.last_ok.is_none_or(|ok| ok < *since) =>
            {
                PanelState::Failing {
                    reason: reason.to_string(),
                }
            }
            _ => own,
        }
    }

    /// What is on screen besides the panels.
    pub fn shown(&self) -> crate::ui::layout::Shown {
        let mode = if self.mode == Mode::Help {
            self.help_from
        } else {
            self.mode
        };
        crate::ui::layout::Shown {
            runbooks: self.runbooks.shown,
            focused: self.runbooks.shown && mode == Mode::Runbooks,
            timeline: self.show_timeline,
            changes: self.changes.shown,
        }
    }

    /// Where everything is on this terminal (the status bar's line taken off).
    pub fn areas(&self) -> crate::ui::layout::Areas {
        let main = ratatui::layout::Rect::new(0, 0, self.width, self.height.saturating_sub(1));
        crate::ui::layout::areas(main, self.shown())
    }

    /// The width the panels have now (the whole width when they are not on screen, so fetches
    /// keep their resolution while a pane covers them).
    pub fn panels_width(&self) -> u16 {
        self.areas().panels.map_or(self.width, |r| r.width)
    }

    /// Whether panel `i` is in a collapsed row: not drawn, not queried.
    pub fn folded(&self, i: usize) -> bool {
        (self.panels.get(i))
            .and_then(|p| p.config.shape.row.as_ref())
            .is_some_and(|r| self.collapsed.contains(r))
    }

    /// The dashboard's rows in order, each with its panels' count and whether it is collapsed.
    pub fn rows(&self) -> Vec<(String, usize, bool)> {
        let mut rows: Vec<(String, usize, bool)> = Vec::new();
        for row in self
            .panels
            .iter()
            .filter_map(|p| p.config.shape.row.as_ref())
        {
            match rows.iter_mut().find(|(r, ..)| r == row) {
                Some((_, n, _)) => *n += 1,
                None => rows.push((row.clone(), 1, self.collapsed.contains(row))),
            }
        }
        rows
    }

    /// The panels in the order the dashboard shows them (those of collapsed rows left out):
    /// while a run is in progress, the
    /// panels its running step's gates read first (then those of its other steps), so the
    /// signal a gate waits on is in view beside the pane.
    pub fn panel_order(&self) -> Vec<usize> {
        let all: Vec<usize> = (0..self.panels.len())
            .filter(|i| !self.folded(*i))
            .collect();
        let Some(run) = self.runbooks.active() else {
            return all;
        };
        let Some(rb) = (self.runbooks.entries.iter().flatten())
            .find_map(|e| e.runbook().filter(|r| r.name == run.runbook))
        else {
            return all;
        };
        let step = run.current().map(|i| run.steps[i].id.as_str());
        let now = super::gates::gate_words(rb, step);
        let later = super::gates::gate_words(rb, None);
        let rank = |i: &usize| {
            let q = &self.panels[*i].config.query;
            if super::gates::reads(&now, q) {
                0
            } else if super::gates::reads(&later, q) {
                1
            } else {
                2
            }
        };
        let mut order = all;
        order.sort_by_key(rank);
        order
    }

    /// The unit of the panel titled `title`, for values on the timeline.
    pub fn unit_of(&self, title: &str) -> Option<crate::config::Unit> {
        (self.panels.iter())
            .find(|p| p.config.title == title)
            .map(|p| p.config.unit)
    }

    /// Now for what the screen times (notices): the wall clock, whatever the model's clock.
    pub fn ui_now(&self) -> DateTime<Utc> {
        self.wall.unwrap_or(self.now)
    }

    /// Set a status-bar notice and log it. It stays at least [`MESSAGE_MIN_SECS`] of wall
    /// time (`for_secs` is wall time too); a warning stays until dismissed.
    pub fn notify(&mut self, text: impl Into<String>, warning: bool, for_secs: Option<i64>) {
        let wall = for_secs.map(|s| (s as f64).max(MESSAGE_MIN_SECS));
        let until = wall
            .filter(|_| !warning)
            .map(|s| self.ui_now() + chrono::Duration::milliseconds((s * 1000.0) as i64));
        let n = Notice {
            text: crate::sanitize::line(&text.into()).into_owned(),
            warning,
            until,
            at: self.now,
        };
        self.messages.push_back(n.clone());
        while self.messages.len() > MESSAGE_LOG {
            self.messages.pop_front();
        }
        self.notice = Some(n);
        self.dirty = true;
    }
}
