//! The facts of an incident, computed from its journal and snapshots (a pure function of them,
//! the alert rules when known, the timezone and the timeline mode). The house template, other
//! houses' templates, the status page and `--format json` all read this one structure;
//! nothing here is invented: what is not known is `None` or empty, and the templates put a
//! marked prompt for the author there.

use super::board::Board;
use super::customer::{self, Customer};
use super::detection::{self, Detection};
use super::effects::{self, Mitigation, Response};
use super::figures;
use super::impact;
use super::prose::{self, Prose};
use super::rules::AlertRule;
use super::signals::{self, Role};
use super::status::{self, StatusPage};
use super::steps::{self, StepRun};
use super::suggest::{self, Suggestion};
use super::timeline::{self, Crossing, ImpactMarks, Mode, Row};
use super::words;
use crate::incident::event::{Event, Status, Tag};
use crate::incident::record::Record;
use crate::incident::snapshot::PanelSnapshot;
use crate::incident::summary::{Summary, summarize};
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use serde::Serialize;

/// How far back a crossing's panel is read to tell a signal that was already past its
/// threshold when the record began.
const STANDING: Duration = Duration::minutes(5);

/// An instant, written every way the draft needs it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Moment {
    /// RFC 3339, UTC.
    pub utc: String,
    /// "07:18" local.
    pub clock: String,
    /// "July 17, 2026" local.
    pub date: String,
    /// "Jul 17, 2026, 7:18 AM BST".
    pub status: String,
}

impl Moment {
    pub fn new(at: DateTime<Utc>, tz: Tz) -> Moment {
        Moment {
            utc: at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            clock: words::clock(at, tz),
            date: words::date(at, tz),
            status: words::status_time(at, tz),
        }
    }
}

/// When customers were affected.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Impact {
    pub start: Moment,
    pub end: Option<Moment>,
    /// Between the minutes the start and end fall in, so it always agrees with the clocks.
    pub duration: Option<String>,
    /// Where start and end came from: `journal` (set by a person), `signals` (threshold
    /// crossings) or `journal and signals`.
    pub source: String,
    /// The window the crossings alone give, for comparison.
    pub signal_start: Option<Moment>,
    pub signal_end: Option<Moment>,
}

/// A peak read from a panel snapshot: the momentary maximum, and the level held for at
/// least [`super::figures::SUSTAINED`] (the figure the prose leads with).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Peak {
    pub panel: String,
    /// The momentary maximum.
    pub value: f64,
    /// The value as the draft writes it ("81%", "2.6").
    pub text: String,
    pub at: Moment,
    /// The highest level held for two minutes or more, when the window is that long.
    pub sustained: Option<f64>,
    pub sustained_text: Option<String>,
    /// It was still at its sustained level (past its warning threshold) when the window
    /// ends: it rose and stayed.
    pub stayed: bool,
    /// It went past its warning threshold and back again and again while the level it held
    /// stayed short of it: neither its maximum nor that level alone says what happened.
    pub swing: Option<Swing>,
}

/// A signal that swung between good and bad (a crash loop's instances up, its pool).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Swing {
    /// The least bad reading of the window, as the draft writes it.
    pub low_text: String,
    /// How many times it went past its warning threshold.
    pub times: usize,
}

/// Latency before the impact and at its peak.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Latency {
    pub panel: String,
    /// What the figures are: "median" (from quantiles or histogram buckets) or "mean".
    pub statistic: String,
    /// The panel of the mean wait for a server added to a mean that leaves it out (PgBouncer's
    /// query time "wait excluded"): the figures are then the mean the clients saw.
    pub with_wait: Option<String>,
    pub before: f64,
    pub before_text: String,
    pub peak: f64,
    pub peak_text: String,
    pub at: Moment,
}

/// The peaks read from the panel snapshots over the impact window.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Signals {
    pub error_ratio: Option<Peak>,
    pub pool_saturation: Option<Peak>,
    pub latency: Option<Latency>,
    pub retry_amplification: Option<Peak>,
}

/// The recovery as the signals show it, and the response it followed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recovery {
    pub panel: String,
    pub at: Moment,
    /// "Error ratio returned below its critical threshold of 5% at 07:05 and stayed there, 2
    /// minutes after Roll back the deploy and Disable retries in every layer."
    pub text: String,
    /// The titles of the response credited with it.
    pub after: Vec<String>,
}

/// An action item row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Action {
    pub id: String,
    pub action: String,
    pub owner: Option<String>,
    pub priority: Option<String>,
    /// "August 14, 2026".
    pub due: Option<String>,
}

/// Tagged notes, the seeds of the judgement sections (tags removed from the text).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Notes {
    pub summary: Vec<String>,
    pub impact: Vec<String>,
    pub root_cause: Vec<String>,
    pub factor: Vec<String>,
    pub detection: Vec<String>,
    pub went_well: Vec<String>,
    pub went_poorly: Vec<String>,
    pub lesson: Vec<String>,
}

/// A chart written beside the draft.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChartRef {
    pub title: String,
    pub slug: String,
    /// Relative to the draft: `charts/<slug>.svg`.
    pub path: String,
}

/// Everything the draft knows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Facts {
    pub incident: String,
    pub title: String,
    pub severity: Option<String>,
    /// The severity the impact reads as ("SEV-1" at most requests failing).
    pub impact_severity: Option<String>,
    /// "Resolved", "Investigating", …
    pub status: Option<String>,
    pub services: Vec<String>,
    /// The IANA name of the timezone the draft is written in.
    pub timezone: String,
    /// "All times are local." or "All times are in UTC."
    pub times_note: String,
    /// "local time" or "UTC", after a time range.
    pub time_words: String,
    pub date: Option<String>,
    pub duration: Option<String>,
    pub opened: Option<Moment>,
    pub resolved: Option<Moment>,
    pub impact: Option<Impact>,
    pub signals: Signals,
    pub customer: Customer,
    pub timeline: Vec<Row>,
    pub timeline_mode: Mode,
    pub detection: Detection,
    /// The steps taken (acting and manual), in the order they started.
    pub resolution: Vec<Mitigation>,
    /// The steps grouped by when they started, with what each group did.
    pub responses: Vec<Response>,
    pub recovery: Option<Recovery>,
    pub actions: Vec<Action>,
    /// Corrective actions the data points to, for the author to keep or delete.
    pub suggestions: Vec<Suggestion>,
    pub notes: Notes,
    pub charts: Vec<ChartRef>,
    pub status_page: StatusPage,
    /// Facts that could not be computed, and why (missing snapshots, …).
    pub missing: Vec<String>,
    /// The judgement sections' sentences, built from the facts above.
    pub prose: Prose,
}

/// The text of a note without its `#tags`, lines joined.
pub fn strip_tags(text: &str) -> String {
    text.split_whitespace()
        .filter(|w| !w.starts_with('#') || Tag::parse_all(w).is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the facts are computed from.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// The journal, in sequence order.
    pub records: &'a [Record],
    /// The dashboard's panel snapshots.
    pub panels: &'a [PanelSnapshot],
    /// The fact queries' snapshots (`fact-snapshots/`).
    pub facts: &'a [PanelSnapshot],
    /// The alerting rules, when they were read.
    pub rules: Option<&'a [AlertRule]>,
    /// The status page's name for each service id; a service without one is not named there.
    pub public_names: &'a std::collections::BTreeMap<String, String>,
}

/// Computes the facts of incident `id` from its records and panel snapshots alone (no fact
/// queries, no alert rules, the folded timeline).
pub fn compute(id: &str, records: &[Record], snaps: &[PanelSnapshot], tz: Tz) -> Facts {
    compute_from(
        id,
        &Evidence {
            records,
            panels: snaps,
            facts: &[],
            rules: None,
            public_names: &std::collections::BTreeMap::new(),
        },
        tz,
        Mode::Folded,
    )
}

fn seeded_notes(summary: &crate::incident::summary::Summary) -> Notes {
    let mut notes = Notes::default();
    for n in &summary.notes {
        let text = strip_tags(&n.text);
        if text.is_empty() {
            continue;
        }
        // Every note is a sentence in the draft, whatever the shorthand it was typed in.
        let text = words::as_sentence(&text);
        for tag in &n.tags {
            let list = match tag {
                Tag::Summary => &mut notes.summary,
                Tag::Impact => &mut notes.impact,
                Tag::RootCause => &mut notes.root_cause,
                Tag::Factor => &mut notes.factor,
                Tag::Detection => &mut notes.detection,
                Tag::WentWell => &mut notes.went_well,
                Tag::WentPoorly => &mut notes.went_poorly,
                Tag::Lesson => &mut notes.lesson,
            };
            list.push(text.clone());
        }
    }
    notes
}

/// Whether crossing `c` only shows that its panel was already past the threshold when the
/// record began: the snapshot has readings in the minutes before it, all past it already.
fn standing(board: &Board, c: &Crossing) -> bool {
    let Some(snap) = board.panel(&c.panel) else {
        return false;
    };
    let to = super::board::secs(c.at);
    let from = super::board::secs(c.at - STANDING);
    let before: Vec<f64> = signals::instants(snap, from, to - 1e-3);
    before.len() >= 3
        && before.iter().all(|t| {
            signals::worst_at(snap, *t).is_some_and(|v| signals::is_bad(snap, v, c.threshold))
        })
}

/// Computes the facts of incident `id` from `evidence`, the timeline in `mode`.
pub fn compute_from(id: &str, evidence: &Evidence, tz: Tz, mode: Mode) -> Facts {
    let cx = Context::new(*evidence, tz);
    let summary = &cx.summary;
    let impact = cx.impact();
    let (peaks, missing) = cx.figures();
    let notes = seeded_notes(summary);
    let detection = cx.detection();
    let (resolution, responses) = cx.steps_taken();
    let customer = cx.customer(&peaks, &notes.impact);
    let recovery = cx.signal_recovery(&responses);
    let suggestions = cx.suggestions(&peaks, &customer, &detection);
    let actions = cx.actions();
    let charts = cx.charts(&suggestions);
    let time_words = time_words(tz);
    let status_page = status::compute(&status::Input {
        stages: &status_stages(summary, &cx.events, cx.window.start, &cx.crossings, tz),
        severity: summary.severity,
        services: &status::public(&summary.services, evidence.public_names),
        impact: impact.as_ref(),
        time_words: &time_words,
        customer: &customer,
        mitigations: &resolution,
        responses: &responses,
        notes: &notes,
        actions: &actions,
    });
    let mut facts = Facts {
        incident: id.to_string(),
        title: summary.title.clone(),
        severity: summary.severity.map(|s| s.to_string()),
        impact_severity: customer.headline.map(|h| h.severity().to_string()),
        status: summary.status.map(title_case),
        services: summary.services.clone(),
        timezone: tz.name().to_string(),
        times_note: times_note(tz),
        time_words,
        date: cx.date(),
        duration: cx.duration(),
        opened: summary.opened_at.map(|t| Moment::new(t, tz)),
        resolved: summary.resolved_at.map(|t| Moment::new(t, tz)),
        impact,
        signals: peaks,
        customer,
        timeline: cx.timeline(mode),
        timeline_mode: mode,
        detection,
        resolution,
        responses,
        recovery,
        actions,
        suggestions,
        notes,
        charts,
        status_page,
        missing,
        prose: Prose::default(),
    };
    facts.prose = cx.prose(&facts);
    facts
}

/// "UTC" or "local time": what follows a time range in the draft.
fn time_words(tz: Tz) -> String {
    let words = if tz == chrono_tz::UTC {
        "UTC"
    } else {
        "local time"
    };
    words.to_string()
}

/// "All times are in UTC." or "All times are local (Europe/London).": the draft's note on
/// its times.
fn times_note(tz: Tz) -> String {
    if tz == chrono_tz::UTC {
        "All times are in UTC.".into()
    } else {
        format!("All times are local ({}).", tz.name())
    }
}

/// What every part of the facts is read from, computed once: the journal's summary and its
/// events as corrected, the snapshots, the threshold crossings, the steps and the impact
/// window.
struct Context<'a> {
    evidence: Evidence<'a>,
    tz: Tz,
    summary: Summary,
    events: Vec<(&'a Record, &'a Event)>,
    board: Board<'a>,
    crossings: Vec<Crossing>,
    /// The journal's last record: where a step that never ended stops.
    last: DateTime<Utc>,
    steps: Vec<StepRun>,
    /// What our own steps did to the signals by plan.
    planned: Vec<timeline::Planned>,
    /// While our own batch restarts ran (and 90 s after), capacity was down by plan.
    planned_windows: Vec<(DateTime<Utc>, DateTime<Utc>)>,
    window: impact::Window,
}

impl<'a> Context<'a> {
    /// Reads the journal and the snapshots once, for every part of the facts.
    fn new(evidence: Evidence<'a>, tz: Tz) -> Context<'a> {
        let records = evidence.records;
        let summary = summarize(records);
        let events = timeline::effective(records);
        let board = Board::new(evidence.panels, evidence.facts);
        let crossings = timeline::crossings(&events, &|p| board.bad_above(p));
        let last = records.last().map_or(DateTime::<Utc>::MIN_UTC, |r| r.time);
        let steps = steps::runs(&events);
        let planned = effects::planned(&steps, &crossings, &board, last);
        // While our own batch restarts ran, capacity was down by plan.
        let planned_windows = steps
            .iter()
            .filter(|s| s.batch() && !s.acted_on.is_empty())
            .map(|s| (s.started, s.until(last) + Duration::seconds(90)))
            .collect();
        let window = impact::window(
            &summary,
            &crossings,
            board.role(Role::ErrorRatio).map(|s| s.title.as_str()),
            board.role(Role::QueueDepth).map(|s| s.title.as_str()),
        );
        Context {
            evidence,
            tz,
            summary,
            events,
            board,
            crossings,
            last,
            steps,
            planned,
            planned_windows,
            window,
        }
    }

    /// The impact window as the draft writes it, when it has a start.
    fn impact(&self) -> Option<Impact> {
        let (w, tz) = (&self.window, self.tz);
        w.start.map(|s| Impact {
            start: Moment::new(s, tz),
            end: w.end.map(|e| Moment::new(e, tz)),
            duration: w.end.map(|e| words::between_minutes(s, e)),
            source: w.source.into(),
            signal_start: w.signal_start.map(|t| Moment::new(t, tz)),
            signal_end: w.signal_end.as_ref().map(|e| Moment::new(e.0, tz)),
        })
    }

    /// The peaks over the impact window, and what could not be computed (no impact window, no
    /// user-request counter), so the draft says so rather than guess.
    fn figures(&self) -> (Signals, Vec<String>) {
        let (panels, board, w) = (self.evidence.panels, &self.board, &self.window);
        let with_data: Vec<&PanelSnapshot> = board.panels().collect();
        let (peaks, mut missing) = figures::compute(panels, &with_data, w.start, w.end, self.tz);
        if w.start.is_none() {
            missing.push(
                "the impact window (no threshold crossing and no impact start in the journal)"
                    .into(),
            );
        }
        if !panels.is_empty()
            && board
                .fact(crate::incident::snapshot::fact::USER_REQUESTS)
                .is_none()
        {
            missing.push(
                "failed and total user requests (no snapshot of the user-request counter \
                 `app_logical_requests_total`): the impact counts attempts, retries included"
                    .into(),
            );
        }
        (peaks, missing)
    }

    /// The panel whose crossing began the impact, when the signals set its start (a person's
    /// start names no panel).
    fn start_panel(&self) -> Option<&str> {
        if self.summary.impact_start.is_none() {
            self.window.start_panel.as_deref()
        } else {
            None
        }
    }

    /// The timeline rows in `mode`, the impact's start and end marked on them (by the
    /// crossings that set them, when the signals did).
    fn timeline(&self, mode: Mode) -> Vec<Row> {
        let w = &self.window;
        let end_crossing = w
            .end_back
            .as_ref()
            .filter(|_| self.summary.impact_end.is_none())
            .and_then(|b| back_crossing(&self.crossings, b));
        timeline::rows(
            &timeline::Input {
                events: &self.events,
                crossings: &self.crossings,
                steps: &self.steps,
                planned: &self.planned,
                impact: w.start.map(|s| ImpactMarks {
                    start: s,
                    start_panel: self.start_panel().map(str::to_string),
                    end: w.end,
                    end_crossing,
                }),
                unit: &|p: &str| self.board.unit(p),
                standing: &|c: &Crossing| standing(&self.board, c),
                last: self.last,
                tz: self.tz,
            },
            mode,
        )
    }

    /// How the incident was noticed: the leading signal, the first alert and the first person
    /// to act, a signal a step made bad told apart from a cause.
    fn detection(&self) -> Detection {
        // The steps that acted, for telling a signal a step made bad from a cause.
        let acted: Vec<(DateTime<Utc>, String)> = self
            .steps
            .iter()
            .filter(|s| s.acting() && !s.manual() && !s.did_nothing())
            .map(|s| (s.started, s.title.clone()))
            .collect();
        detection::compute(&detection::Input {
            events: &self.events,
            crossings: &self.crossings,
            planned: &self.planned,
            standing: &|c: &Crossing| standing(&self.board, c),
            impact_start: self.window.start,
            impact_panel: self.start_panel(),
            opened: self.summary.opened_at,
            acted: &acted,
            panels: self.evidence.panels,
            rules: self.evidence.rules,
            name: &|p: &str| self.board.name(p),
            tz: self.tz,
        })
    }

    /// The steps taken (everything that acts, and manual steps: a person's check) in the order
    /// they started, and the responses they form with what each did.
    fn steps_taken(&self) -> (Vec<Mitigation>, Vec<Response>) {
        let (steps, w) = (&self.steps, &self.window);
        let chosen: Vec<usize> = (0..steps.len())
            .filter(|i| steps[*i].acting() || steps[*i].manual())
            .collect();
        let responses = effects::responses(&effects::Input {
            steps,
            chosen: &chosen,
            planned: &self.planned,
            board: &self.board,
            // The recovery a step is credited with is the errors' end, not a backlog's drain.
            impact: w.start.map(|s| (s, w.errors_end, w.start_panel.as_deref())),
            events: &self.events,
            last: self.last,
            tz: self.tz,
        });
        let resolution = chosen
            .iter()
            .enumerate()
            .map(|(n, &i)| {
                mitigation(
                    &steps[i],
                    i,
                    n,
                    &self.planned,
                    &responses,
                    self.last,
                    self.tz,
                )
            })
            .collect();
        (resolution, responses)
    }

    /// The customer impact over the impact window (none without a start), the backlog's drain
    /// dated as the record saw it when that ended the impact.
    fn customer(&self, peaks: &Signals, notes: &[String]) -> Customer {
        let w = &self.window;
        // The record's moment the backlog was back under its level, when that ended the impact.
        let backlog_back = w
            .end_back
            .as_ref()
            .filter(|b| {
                self.board
                    .role(Role::QueueDepth)
                    .is_some_and(|q| q.title == b.1)
            })
            .map(|b| b.0);
        match w.start {
            Some(s) => customer::compute(
                &self.board,
                peaks,
                (s, w.end),
                backlog_back,
                &self.planned_windows,
                notes,
                self.tz,
            ),
            None => Customer::default(),
        }
    }

    /// The recovery as the signals show it, when they came back, and the response credited
    /// with it.
    fn signal_recovery(&self, responses: &[Response]) -> Option<Recovery> {
        self.window.signal_end.as_ref().map(|back| {
            let crossing =
                back_crossing(&self.crossings, back).filter(|_| self.summary.impact_end.is_none());
            recovery(&self.board, crossing.as_ref(), responses, back, self.tz)
        })
    }

    /// The corrective actions the data points to, less those an action item already filed
    /// covers.
    fn suggestions(
        &self,
        peaks: &Signals,
        customer: &Customer,
        detection: &Detection,
    ) -> Vec<Suggestion> {
        let filed: Vec<String> = self
            .summary
            .actions
            .iter()
            .map(|a| a.action.clone())
            .collect();
        let any_alert = self
            .events
            .iter()
            .any(|(_, e)| matches!(e, Event::AlertFiring { .. }));
        suggest::compute(&suggest::Input {
            board: &self.board,
            peaks,
            customer,
            detection,
            steps: &self.steps,
            crossings: &self.crossings,
            planned: &self.planned,
            planned_windows: &self.planned_windows,
            rules_known: self.evidence.rules.is_some(),
            any_alert,
            actions: &filed,
            tz: self.tz,
        })
    }

    /// The action items filed in the journal, as the draft's table rows.
    fn actions(&self) -> Vec<Action> {
        self.summary
            .actions
            .iter()
            .map(|a| Action {
                id: a.id.clone(),
                action: a.action.clone(),
                owner: a.owner.clone(),
                priority: a.priority.map(|p| p.to_string()),
                due: a.due.map(|d| d.format("%B %-d, %Y").to_string()),
            })
            .collect()
    }

    /// The charts written beside the draft: the panels that moved, and memory per instance
    /// when a restart loop is suggested.
    fn charts(&self, suggestions: &[Suggestion]) -> Vec<ChartRef> {
        let restart_loop = suggestions.iter().any(|s| s.pattern == "restart-loop");
        super::chart::chosen(&self.board, restart_loop)
            .into_iter()
            .map(|s| ChartRef {
                title: s.title.clone(),
                slug: s.slug.clone(),
                path: format!("charts/{}.svg", s.slug),
            })
            .collect()
    }

    /// The incident's date: the impact's start, else its opening, else the first record.
    fn date(&self) -> Option<String> {
        let date_at = self.window.start.or(self.summary.opened_at).or(self
            .evidence
            .records
            .first()
            .map(|r| r.time));
        date_at.map(|d| words::date(d, self.tz))
    }

    /// How long it lasted: the impact window when it has both ends, else opened to resolved.
    fn duration(&self) -> Option<String> {
        match (self.window.start, self.window.end) {
            (Some(s), Some(e)) => Some(words::between_minutes(s, e)),
            _ => self
                .summary
                .opened_at
                .zip(self.summary.resolved_at)
                .map(|(o, r)| words::between_minutes(o, r)),
        }
    }

    /// The judgement sections' sentences, built from `facts`, the causes the journal recorded
    /// and what the recovery came after.
    fn prose(&self, facts: &Facts) -> Prose {
        let causes: Vec<prose::Cause> = timeline::causes(&self.events)
            .into_iter()
            .map(|c| prose::Cause {
                at: Moment::new(c.at, self.tz),
                what: c.what,
                before_impact: None,
            })
            .collect();
        let after = self
            .window
            .signal_end
            .as_ref()
            .and_then(|(at, _)| recovered_after(&self.board, &facts.responses, *at));
        prose::compute(facts, &causes, after)
    }
}

/// The crossing that brought `back`'s panel back at its instant (the critical level's, else
/// the warning's).
fn back_crossing(crossings: &[Crossing], back: &impact::Back) -> Option<Crossing> {
    let (at, panel) = back;
    let find = |l: crate::incident::event::Level| {
        crossings
            .iter()
            .rfind(|c| c.at == *at && &c.panel == panel && !c.bad && c.level == l)
    };
    find(crate::incident::event::Level::Crit)
        .or_else(|| find(crate::incident::event::Level::Warn))
        .cloned()
}

/// The recovery: the errors' return (`back`, by `crossing` when the signals ended the impact)
/// and the response credited with it, or how long after the last one it came.
fn recovery(
    board: &Board,
    crossing: Option<&Crossing>,
    responses: &[Response],
    back: &impact::Back,
    tz: Tz,
) -> Recovery {
    let (at, panel) = back;
    let mut text = match crossing {
        Some(c) => format!(
            "{} {} at {} and stayed there",
            c.panel,
            super::phrases::threshold_phrase(board.unit(&c.panel), c.bad_above, false, c.crossed()),
            words::clock(*at, tz)
        ),
        None => format!(
            "{panel} came back within its thresholds at {} and stayed there",
            words::clock(*at, tz)
        ),
    };
    if let Some(a) = recovered_after(board, responses, *at) {
        text.push_str(&format!(", {a}"));
    }
    text.push('.');
    Recovery {
        panel: panel.clone(),
        at: Moment::new(*at, tz),
        text,
        after: responses
            .iter()
            .find(|r| r.credited)
            .map(|r| r.titles.clone())
            .unwrap_or_default(),
    }
}

/// After which steps, and how long, the recovery at `at` came: "2 minutes after Roll the
/// deploy back", or "52 minutes after Disable retries, as traffic fell; no step is credited
/// with it".
fn recovered_after(board: &Board, responses: &[Response], at: DateTime<Utc>) -> Option<String> {
    match responses.iter().find(|r| r.credited) {
        Some(r) => Some(format!(
            "{} after {}",
            words::delay((at - r.start).num_seconds()),
            words::and_list(&r.titles)
        )),
        None => effects::uncredited(responses, board, at),
    }
}

fn title_case(s: Status) -> String {
    let w = s.as_str();
    let mut c = w.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect::<String>())
        .unwrap_or_default()
}

/// The status page's stages: investigating from when there was something to investigate,
/// each status change, and the postmortem when resolved.
fn status_stages(
    summary: &crate::incident::summary::Summary,
    events: &[(&Record, &Event)],
    impact_start: Option<DateTime<Utc>>,
    crossings: &[timeline::Crossing],
    tz: Tz,
) -> Vec<(String, Moment)> {
    let mut out: Vec<(String, Moment)> = Vec::new();
    if let Some(at) = investigating_since(summary, events, impact_start, crossings) {
        out.push((Status::Investigating.as_str().into(), Moment::new(at, tz)));
    }
    for (r, e) in events {
        if let Event::StatusChanged { status } = e
            && out.last().is_none_or(|u| u.0 != status.as_str())
        {
            out.push((status.as_str().into(), Moment::new(r.time, tz)));
        }
    }
    if summary.status == Some(Status::Resolved)
        && let Some(last) = summary.last_time
    {
        out.push(("postmortem".into(), Moment::new(last, tz)));
    }
    out
}

/// When the status page's "investigating" is dated: when customers began to be affected (the
/// impact's start; without one, the first signal that went bad) or the first thing a person
/// recorded after opening, whichever came first; never the opening itself, which may come
/// minutes before anything was wrong (a rehearsal opens before its fault, with signals that
/// already sit past a level). Without either, the opening.
fn investigating_since(
    summary: &crate::incident::summary::Summary,
    events: &[(&Record, &Event)],
    impact_start: Option<DateTime<Utc>>,
    crossings: &[timeline::Crossing],
) -> Option<DateTime<Utc>> {
    let opened = summary.opened_at?;
    let first_bad = impact_start.or_else(|| crossings.iter().filter(|c| c.bad).map(|c| c.at).min());
    let first_said = events
        .iter()
        .filter(|(r, e)| {
            r.source == crate::incident::Source::Operator
                && !matches!(e, Event::IncidentOpened { .. })
        })
        .map(|(r, _)| r.time)
        .min();
    let first = [first_bad, first_said].into_iter().flatten().min();
    Some(first.map_or(opened, |t| t.max(opened)))
}

fn mitigation(
    s: &StepRun,
    index: usize,
    position: usize,
    planned: &[timeline::Planned],
    responses: &[Response],
    last: DateTime<Utc>,
    tz: Tz,
) -> Mitigation {
    let until = s.until(last);
    Mitigation {
        title: s.title.clone(),
        runbook: s.runbook.clone(),
        step: s.id.clone(),
        kind: s.kind.clone(),
        started: Moment::new(s.started, tz),
        ended: (s.finished.is_some() || s.run_end.is_some()).then(|| Moment::new(until, tz)),
        outcome: s.outcome(),
        ok: s.ok(),
        progress: s.progress(),
        did_nothing: s.did_nothing(),
        stopped: s.stopped.clone(),
        manual: s.manual(),
        auto_confirmed: s.auto_confirmed,
        planned: planned
            .iter()
            .filter(|p| p.step == index)
            .map(|p| p.text.clone())
            .collect(),
        response: responses.iter().position(|r| r.steps.contains(&position)),
        at: s.started,
    }
}
