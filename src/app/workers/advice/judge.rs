//! The pure half of the advice: a symptom or a precondition judged on a window of readings read
//! back at once, a runbook's verdict from its parts, and the one suggestion (or the one runbook
//! held back) the headline shows. Nothing here queries; [`super`] reads and calls these.

use crate::metrics::{QueryAnswer, RangeQuery, SourceError};
use crate::runbook::gate::{Condition, Expect, GateSpec};
use crate::runbook::label::{Scale, Words};
use chrono::{DateTime, Utc};

/// How long an evaluation is worth showing, on the console's clock: past two rounds of
/// [`EVERY`] and a margin, the advice is stale and the headline says nothing.
pub const FRESH_FOR: std::time::Duration = std::time::Duration::from_secs(90);

/// The least time between two evaluations of the same runbook, on the console's clock.
pub const EVERY: std::time::Duration = std::time::Duration::from_secs(30);
/// How often a runbook whose symptom's query answered no series is judged again: this
/// Prometheus has none of its metrics (a node-only Prometheus and the PgBouncer runbooks), and
/// asking every [`EVERY`] would add reads Grafana never sends for the same dashboard.
pub const ABSENT_EVERY: std::time::Duration = std::time::Duration::from_secs(300);

/// A judgement of a symptom or a precondition: the reading that decided it, or why it is not
/// known.
#[derive(Debug, Clone, PartialEq)]
pub enum Judged {
    Holds(Reading),
    Fails(Reading),
    /// Not known: no data, not enough readings, a query error, a reading that cannot be judged.
    Unknown(String),
    /// The query answered no series at all: the source has none of its metrics (or none now).
    NoSeries,
}

/// The reading that decided a judgement.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// The number, when there is one: the newest (the failing one when it fails).
    pub value: Option<f64>,
    /// What it had to satisfy, when that is a number's condition.
    pub condition: Option<Condition>,
    /// The reading as the gate or step says it, for a part without a label:
    /// "30 (> 0 for 50s)", "0.89 (needs < 0.8)".
    pub said: String,
}

impl Reading {
    /// A reading of `spec`'s condition said as the gate says it.
    fn of(spec: &GateSpec, value: f64, said: String) -> Reading {
        Reading {
            value: Some(value),
            condition: Some(spec.condition),
            said,
        }
    }
}

/// A symptom or a precondition as the verdict says it: what it is and its label's words.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// "symptom", or the precondition's title: said before a reading without a label.
    pub name: String,
    /// Its label with the runbook's variables filled in, when it has one.
    pub words: Option<Words>,
    pub judged: Judged,
}

impl Part {
    /// `reading` in the part's words: its label's ("PostgreSQL at 89 % of max_connections,
    /// needs < 80 %" when it failed), else its name and the reading as the gate says it.
    fn say(&self, r: &Reading, holds: bool) -> String {
        match (&self.words, r.value, r.condition) {
            (Some(w), Some(v), Some(c)) if !holds => w.short_of(v, c),
            (Some(w), Some(v), _) => w.reading(v),
            _ => format!("{}: {}", self.name, r.said),
        }
    }
}

/// The readings of `spec`'s rule ("`consecutive` readings `interval` apart") as one range query
/// ending at `now` (Unix seconds): judged at once instead of over minutes of waiting.
pub fn window(spec: &GateSpec, query: String, now: f64) -> RangeQuery {
    let step = spec.interval.as_secs_f64().max(1.0);
    let n = readings(spec);
    RangeQuery {
        query,
        start: now - step * f64::from(n - 1),
        end: now,
        step,
    }
}

/// How many readings in a row the rule needs.
fn readings(spec: &GateSpec) -> u32 {
    spec.consecutive.max(spec.min_samples).max(1)
}

/// A value in words, as a reading shows it.
fn number(v: f64) -> String {
    Scale::Value.say(v)
}

/// A condition in a few characters: `> 0`, `< 0.8`, `in [1, 2]`.
pub fn needs(c: Condition) -> String {
    Scale::Value.condition(c)
}

/// Judge the window `q` answered by `answer` by `spec`'s condition: it holds only when every
/// series has a finite reading at each of the window's steps, the last at its end, and every
/// one satisfies the condition. One reading that does not is a failure (the newest such value
/// is said); a missing, NaN or infinite reading, or an error, is not known.
pub fn judge_window(
    spec: &GateSpec,
    q: &RangeQuery,
    answer: &Result<QueryAnswer, SourceError>,
) -> Judged {
    let answer = match answer {
        Ok(a) => a,
        Err(e) => return Judged::Unknown(format!("the query failed: {e}")),
    };
    match (answer.series.len(), spec.expect) {
        (0, _) => return Judged::NoSeries,
        (n, Expect::One) if n > 1 => {
            return Judged::Unknown(format!("{n} series where one was expected"));
        }
        _ => {}
    }
    let want = readings(spec) as usize;
    let mut last = None;
    for s in &answer.series {
        let inside: Vec<f64> = (s.points.iter())
            .filter(|p| p.t >= q.start - q.step / 2.0 && p.t <= q.end + q.step / 2.0)
            .map(|p| p.v)
            .collect();
        if let Some(v) = inside
            .iter()
            .rev()
            .find(|v| v.is_finite() && !spec.condition.holds(**v))
        {
            let said = format!("{} (needs {})", number(*v), needs(spec.condition));
            return Judged::Fails(Reading::of(spec, *v, said));
        }
        if inside.iter().any(|v| !v.is_finite()) {
            return Judged::Unknown(format!("a reading of {} is not a number", s.label_text()));
        }
        let fresh = s.points.last().is_some_and(|p| p.t >= q.end - q.step / 2.0);
        if inside.len() < want || !fresh {
            return Judged::Unknown(format!(
                "{} of {want} readings so far: not yet known",
                inside.len()
            ));
        }
        last.get_or_insert(inside[inside.len() - 1]);
    }
    let Some(last) = last else {
        return Judged::Unknown("no series".into());
    };
    let over = spec.interval * (want as u32).saturating_sub(1);
    let said = match want {
        1 => format!("{} ({})", number(last), needs(spec.condition)),
        _ => format!(
            "{} ({} for {})",
            number(last),
            needs(spec.condition),
            humantime::format_duration(over)
        ),
    };
    Judged::Holds(Reading::of(spec, last, said))
}

/// What the evaluation says of one runbook.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Its symptom holds and every precondition holds: the readings that say so.
    Suggest(String),
    /// Its symptom holds and a precondition does not: which, and its reading.
    HeldBack(String),
    /// Not suggested, and why (no symptom, not known, variables unresolved, a wrong move).
    Not(String),
}

/// One runbook's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub runbook: String,
    pub verdict: Verdict,
    /// Its symptom's query answered no series: judged again only [`ABSENT_EVERY`].
    pub absent: bool,
}

/// A runbook's verdict from its symptom and its preconditions (in order): a failed
/// precondition holds it back, one not known keeps it quiet. The parts are said in their
/// labels' words, joined by ", " (by "; " when one has no label and says its name).
pub fn verdict(symptom: &Part, preconditions: &[Part]) -> Verdict {
    let said = match &symptom.judged {
        Judged::Holds(r) => symptom.say(r, true),
        Judged::Fails(r) => {
            return Verdict::Not(format!(
                "its symptom does not hold: {}",
                symptom.say(r, false)
            ));
        }
        Judged::Unknown(s) => return Verdict::Not(format!("its symptom is not known: {s}")),
        Judged::NoSeries => return Verdict::Not("its symptom is not known: no series".into()),
    };
    if let Some(held) = preconditions.iter().find_map(|p| match &p.judged {
        Judged::Fails(r) => Some(p.say(r, false)),
        _ => None,
    }) {
        return Verdict::HeldBack(held);
    }
    if let Some((title, why)) = preconditions.iter().find_map(|p| match &p.judged {
        Judged::Unknown(w) => Some((&p.name, w.as_str())),
        Judged::NoSeries => Some((&p.name, "no series")),
        _ => None,
    }) {
        return Verdict::Not(format!("precondition \"{title}\" is not known: {why}"));
    }
    let mut parts = vec![said];
    parts.extend(preconditions.iter().filter_map(|p| match &p.judged {
        Judged::Holds(r) => Some(p.say(r, true)),
        _ => None,
    }));
    let all_labelled = std::iter::once(symptom)
        .chain(preconditions)
        .all(|p| p.words.is_some());
    Verdict::Suggest(parts.join(if all_labelled { ", " } else { "; " }))
}

/// One round of evaluation: every runbook that can act here, judged at `at`.
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    pub at: DateTime<Utc>,
    pub findings: Vec<Finding>,
}

impl Advice {
    fn with(&self, want: fn(&Verdict) -> Option<&String>) -> Vec<(&str, &str)> {
        (self.findings.iter())
            .filter_map(|f| want(&f.verdict).map(|w| (f.runbook.as_str(), w.as_str())))
            .collect()
    }

    /// The suggestion: the one runbook that applies, with its reason. Two or more that apply
    /// at once disagree on the cause: none is suggested (no suggestion beats a wrong one).
    pub fn suggestion(&self) -> Option<(&str, &str)> {
        match self.with(|v| match v {
            Verdict::Suggest(r) => Some(r),
            _ => None,
        })[..]
        {
            [one] => Some(one),
            _ => None,
        }
    }

    /// The first runbook whose symptom holds but which a precondition holds back, with why.
    pub fn held_back(&self) -> Option<(&str, &str)> {
        self.with(|v| match v {
            Verdict::HeldBack(r) => Some(r),
            _ => None,
        })
        .first()
        .copied()
    }

    /// What the headline says, when it is fresh at `now`: the suggestion first, else the
    /// runbook held back; `None` when neither, or when it is stale.
    pub fn headline(&self, now: DateTime<Utc>) -> Option<Headline> {
        let age = (now - self.at).to_std().unwrap_or_default();
        if age > FRESH_FOR {
            return None;
        }
        if let Some((name, why)) = self.suggestion() {
            return Some(Headline {
                full: format!("→ try {name}: {why}"),
                short: format!("→ try {name}"),
                suggests: true,
            });
        }
        self.held_back().map(|(name, why)| Headline {
            full: format!("{name} held back: {why}"),
            short: format!("{name} held back"),
            suggests: false,
        })
    }
}

/// The advice's part of the headline.
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
    pub full: String,
    pub short: String,
    /// A suggestion (else a runbook held back).
    pub suggests: bool,
}

/// The console's side of the advice: when it last asked, whether an evaluation is out, and the
/// last answer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Board {
    pub asked: Option<DateTime<Utc>>,
    pub in_flight: bool,
    pub latest: Option<Advice>,
    /// The runbooks whose symptom answered no series, and when.
    pub absent: std::collections::BTreeMap<String, DateTime<Utc>>,
}

impl Board {
    /// Whether a new round may start at `now`: none out, and the last asked [`EVERY`] ago.
    pub fn due(&self, now: DateTime<Utc>) -> bool {
        !self.in_flight
            && self
                .asked
                .is_none_or(|t| (now - t).to_std().unwrap_or_default() >= EVERY)
    }

    /// Whether runbook `name` is judged in a round at `now`: not while its symptom answered
    /// no series within the last [`ABSENT_EVERY`].
    pub fn judges(&self, name: &str, now: DateTime<Utc>) -> bool {
        self.absent
            .get(name)
            .is_none_or(|t| (now - *t).to_std().unwrap_or_default() >= ABSENT_EVERY)
    }

    /// Takes a round's answer: the runbooks it found absent are set aside, the others back.
    pub fn take(&mut self, advice: Advice) {
        for f in &advice.findings {
            if f.absent {
                self.absent.insert(f.runbook.clone(), advice.at);
            } else {
                self.absent.remove(&f.runbook);
            }
        }
        self.in_flight = false;
        self.latest = Some(advice);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::series::{Point, Series};
    use crate::runbook::template::Template;
    use std::time::Duration;

    fn spec(condition: Condition, consecutive: u32) -> GateSpec {
        let mut g = GateSpec::new(Template::parse("q").unwrap(), condition);
        g.consecutive = consecutive;
        g.min_samples = consecutive;
        g.interval = Duration::from_secs(10);
        g
    }

    fn answer(points: &[(f64, f64)]) -> Result<QueryAnswer, SourceError> {
        Ok(QueryAnswer {
            series: vec![Series {
                labels: Default::default(),
                points: points.iter().map(|&(t, v)| Point { t, v }).collect(),
            }],
            ..Default::default()
        })
    }

    #[test]
    fn the_window_spans_the_readings_the_rule_needs() {
        let q = window(&spec(Condition::Above(0.0), 6), "q".into(), 1000.0);
        assert_eq!((q.start, q.end, q.step), (950.0, 1000.0, 10.0));
        let q = window(&spec(Condition::Above(0.0), 1), "q".into(), 1000.0);
        assert_eq!((q.start, q.end), (1000.0, 1000.0));
    }

    #[test]
    fn every_reading_past_the_level_holds_one_short_fails_missing_is_unknown() {
        let g = spec(Condition::Above(0.0), 3);
        let q = window(&g, "q".into(), 100.0);
        let all = answer(&[(80.0, 4.0), (90.0, 12.0), (100.0, 30.0)]);
        assert_eq!(
            judge_window(&g, &q, &all),
            Judged::Holds(Reading::of(&g, 30.0, "30 (> 0 for 20s)".into()))
        );
        let one_short = answer(&[(80.0, 0.0), (90.0, 12.0), (100.0, 30.0)]);
        assert_eq!(
            judge_window(&g, &q, &one_short),
            Judged::Fails(Reading::of(&g, 0.0, "0 (needs > 0)".into()))
        );
        // Only the last minute's worth: the rule's window is not yet known.
        let young = answer(&[(90.0, 12.0), (100.0, 30.0)]);
        assert!(matches!(judge_window(&g, &q, &young), Judged::Unknown(w) if w.contains("2 of 3")));
        // The newest reading is missing: a stale series says nothing now.
        let stale = answer(&[(70.0, 1.0), (80.0, 4.0), (90.0, 12.0)]);
        assert!(matches!(judge_window(&g, &q, &stale), Judged::Unknown(_)));
        let nan = answer(&[(80.0, 4.0), (90.0, f64::NAN), (100.0, 30.0)]);
        assert!(matches!(judge_window(&g, &q, &nan), Judged::Unknown(_)));
        let err = Err(SourceError::Timeout(Duration::from_secs(1)));
        assert!(matches!(judge_window(&g, &q, &err), Judged::Unknown(w) if w.contains("failed")));
        // No series at all: the source has none of its metrics (set aside for a while).
        assert_eq!(
            judge_window(&g, &q, &Ok(QueryAnswer::default())),
            Judged::NoSeries
        );
    }

    #[test]
    fn a_precondition_below_its_level_fails_with_its_reading() {
        let g = spec(Condition::Below(0.8), 1);
        let q = window(&g, "q".into(), 100.0);
        assert_eq!(
            judge_window(&g, &q, &answer(&[(100.0, 0.89)])),
            Judged::Fails(Reading::of(&g, 0.89, "0.89 (needs < 0.8)".into()))
        );
        assert_eq!(
            judge_window(&g, &q, &answer(&[(100.0, 0.2567891)])),
            Judged::Holds(Reading::of(&g, 0.2567891, "0.2568 (< 0.8)".into()))
        );
    }

    fn part(name: &str, label: Option<&str>, judged: Judged) -> Part {
        let words = label.map(|text| {
            let (before, scale, after) = crate::runbook::label::split(text).unwrap();
            let label = crate::runbook::label::Label {
                before: Template::parse(before).unwrap(),
                scale,
                after: Template::parse(after).unwrap(),
            };
            label.words(&Default::default()).unwrap()
        });
        Part {
            name: name.into(),
            words,
            judged,
        }
    }

    #[test]
    fn a_runbook_is_suggested_only_when_its_symptom_and_every_precondition_hold() {
        let waiting = spec(Condition::Above(0.0), 6);
        let below = spec(Condition::Below(0.8), 1);
        let holds = || Judged::Holds(Reading::of(&waiting, 30.0, "30 (> 0 for 50s)".into()));
        let room = |label: Option<&str>, j: Judged| vec![part("database has room", label, j)];
        let at = |v: f64, said: &str| Reading::of(&below, v, said.into());
        let symptom = part("symptom", None, holds());
        assert_eq!(
            verdict(
                &symptom,
                &room(None, Judged::Holds(at(0.26, "0.26 (< 0.8)")))
            ),
            Verdict::Suggest("symptom: 30 (> 0 for 50s); database has room: 0.26 (< 0.8)".into())
        );
        assert_eq!(
            verdict(
                &symptom,
                &room(None, Judged::Fails(at(0.89, "0.89 (needs < 0.8)")))
            ),
            Verdict::HeldBack("database has room: 0.89 (needs < 0.8)".into())
        );
        // In the labels' words.
        let symptom = part("symptom", Some("waiting clients {value}"), holds());
        let pg = Some("PostgreSQL at {percent} of max_connections");
        assert_eq!(
            verdict(&symptom, &room(pg, Judged::Holds(at(0.26, "")))),
            Verdict::Suggest("waiting clients 30, PostgreSQL at 26 % of max_connections".into())
        );
        assert_eq!(
            verdict(&symptom, &room(pg, Judged::Fails(at(0.89, "")))),
            Verdict::HeldBack("PostgreSQL at 89 % of max_connections, needs < 80 %".into())
        );
        assert!(matches!(
            verdict(&symptom, &room(pg, Judged::Unknown("no series".into()))),
            Verdict::Not(w) if w.contains("\"database has room\" is not known")
        ));
        assert!(matches!(
            verdict(&part("symptom", None, Judged::Unknown("1 of 6".into())), &[]),
            Verdict::Not(w) if w.contains("not known")
        ));
        let quiet = Judged::Fails(Reading::of(&waiting, 0.0, "0 (needs > 0)".into()));
        assert_eq!(
            verdict(
                &part("symptom", Some("waiting clients {value}"), quiet),
                &[]
            ),
            Verdict::Not("its symptom does not hold: waiting clients 0, needs > 0".into())
        );
    }

    fn advice(at: &str, verdicts: &[(&str, Verdict)]) -> Advice {
        Advice {
            at: at.parse().unwrap(),
            findings: (verdicts.iter())
                .map(|(n, v)| Finding {
                    runbook: n.to_string(),
                    verdict: v.clone(),
                    absent: false,
                })
                .collect(),
        }
    }

    #[test]
    fn the_headline_says_one_suggestion_or_what_is_held_back_and_nothing_stale() {
        let t = "2026-12-04T08:00:00Z";
        let now: DateTime<Utc> = t.parse().unwrap();
        let one = advice(
            t,
            &[
                ("a", Verdict::Not("quiet".into())),
                ("b", Verdict::Suggest("symptom 30".into())),
                ("c", Verdict::HeldBack("room: 0.89".into())),
            ],
        );
        let h = one.headline(now).unwrap();
        assert_eq!(
            (h.full.as_str(), h.short.as_str(), h.suggests),
            ("→ try b: symptom 30", "→ try b", true)
        );
        assert_eq!(one.headline(now + chrono::Duration::seconds(91)), None);
        let held = advice(t, &[("c", Verdict::HeldBack("room: 0.89".into()))]);
        assert_eq!(held.headline(now).unwrap().full, "c held back: room: 0.89");
        // Two that apply disagree: neither is suggested.
        let two = advice(
            t,
            &[
                ("a", Verdict::Suggest("x".into())),
                ("b", Verdict::Suggest("y".into())),
            ],
        );
        assert_eq!(two.headline(now), None);
        assert_eq!(advice(t, &[]).headline(now), None);
    }

    #[test]
    fn a_round_is_due_every_thirty_seconds_and_never_two_at_once() {
        let now: DateTime<Utc> = "2026-12-04T08:00:00Z".parse().unwrap();
        let mut b = Board::default();
        assert!(b.due(now));
        b.asked = Some(now);
        b.in_flight = true;
        assert!(!b.due(now + chrono::Duration::seconds(60)));
        b.in_flight = false;
        assert!(!b.due(now + chrono::Duration::seconds(29)));
        assert!(b.due(now + chrono::Duration::seconds(30)));
    }
}
