//! When customers were affected: the impact window a person set in the journal, else the one
//! the threshold crossings give. Customers are affected until their work is done: a backlog
//! still past its level when the errors stop keeps the impact open until it is back under it.
//! The errors' own end is kept beside it: the recovery a step is credited with is the errors'
//! (the step that ended them), not the backlog's drain, which is a fact of its own.

use super::timeline::Crossing;
use crate::incident::event::Level;
use crate::incident::summary::Summary;
use chrono::{DateTime, Utc};
use std::collections::BTreeSet;

/// When the signals came back, and on which panel.
pub type Back = (DateTime<Utc>, String);

/// The impact window and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub start: Option<DateTime<Utc>>,
    pub end: Option<DateTime<Utc>>,
    /// `journal`, `signals` or `journal and signals`.
    pub source: &'static str,
    /// What the crossings alone give.
    pub signal_start: Option<DateTime<Utc>>,
    /// The panel whose crossing gave the signals' start.
    pub start_panel: Option<String>,
    /// When the errors' crossings came back for good (the recovery).
    pub signal_end: Option<Back>,
    /// When the errors ended: a person's end, else the crossings' (the window a step's
    /// credit is read in).
    pub errors_end: Option<DateTime<Utc>>,
    /// The crossing that ended the impact: the errors' return, or the backlog's when it was
    /// still past its level then.
    pub end_back: Option<Back>,
}

/// The crossings that define the impact: the error-ratio panel's critical ones if it has any,
/// else every critical crossing, else all of them. Without a known error-ratio panel, a panel
/// whose title says "error" stands in.
fn impact_crossings<'a>(all: &'a [Crossing], error_panel: Option<&str>) -> Vec<&'a Crossing> {
    let is_error = |c: &Crossing| match error_panel {
        Some(p) => c.panel == p,
        None => c.panel.to_lowercase().contains("error"),
    };
    let pick = |f: &dyn Fn(&Crossing) -> bool| all.iter().filter(|c| f(c)).collect::<Vec<_>>();
    let e = pick(&|c| is_error(c) && c.level == Level::Crit);
    if !e.is_empty() {
        return e;
    }
    let c = pick(&|c| c.level == Level::Crit);
    if !c.is_empty() {
        return c;
    }
    pick(&|_| true)
}

/// (start, end) from crossings: the first bad one, and the back crossing after which every
/// one of them stayed back (none while any is still bad).
fn signal_window(set: &[&Crossing]) -> (Option<(DateTime<Utc>, String)>, Option<Back>) {
    let start = set.iter().find(|c| c.bad).map(|c| (c.at, c.panel.clone()));
    let mut bad: BTreeSet<(&str, bool)> = BTreeSet::new();
    let mut end = None;
    for c in set {
        let key = (c.panel.as_str(), c.level == Level::Crit);
        if c.bad {
            bad.insert(key);
            end = None;
        } else {
            bad.remove(&key);
            if bad.is_empty() {
                end = Some((c.at, c.panel.clone()));
            }
        }
    }
    (start, end)
}

/// When `panel` (a backlog) was back for good after `after`, having been past a level then:
/// `Some(Some(back))` when it drained, `Some(None)` when it never did, `None` when it was not
/// past a level at `after`.
fn drained_after(
    crossings: &[Crossing],
    panel: &str,
    after: DateTime<Utc>,
) -> Option<Option<Back>> {
    let mine: Vec<&Crossing> = crossings.iter().filter(|c| c.panel == panel).collect();
    let until: Vec<&Crossing> = mine.iter().copied().filter(|c| c.at <= after).collect();
    // Past a level at `after`: it went bad by then and had not come back.
    match signal_window(&until) {
        (Some(_), None) => Some(signal_window(&mine).1),
        _ => None,
    }
}

/// The impact window: what a person set wins; the crossings fill in the rest, a backlog
/// (`backlog_panel`) still past its level when the errors stop included.
pub fn window(
    summary: &Summary,
    crossings: &[Crossing],
    error_panel: Option<&str>,
    backlog_panel: Option<&str>,
) -> Window {
    let set = impact_crossings(crossings, error_panel);
    let (sig, sig_end) = signal_window(&set);
    let sig_start = sig.as_ref().map(|s| s.0);
    let start = summary.impact_start.or(sig_start);
    let in_window = |e: &DateTime<Utc>| start.is_none_or(|s| *e >= s);
    let errors_end = summary
        .impact_end
        .or(sig_end.as_ref().map(|e| e.0))
        .filter(in_window);
    // The errors stopped with work still queued: the impact lasts until the queue drained.
    let end_back = match (&sig_end, backlog_panel) {
        (Some((at, _)), Some(queue)) => {
            drained_after(crossings, queue, *at).unwrap_or(sig_end.clone())
        }
        _ => sig_end.clone(),
    };
    let end = match summary.impact_end {
        Some(e) => Some(e),
        None => end_back.as_ref().map(|e| e.0),
    }
    .filter(in_window);
    let by_hand = (summary.impact_start.is_some(), summary.impact_end.is_some());
    let source = match by_hand {
        (true, true) => "journal",
        (false, false) => "signals",
        _ if sig_start.is_some() => "journal and signals",
        _ => "journal",
    };
    Window {
        start,
        end,
        source,
        signal_start: sig_start,
        start_panel: sig.map(|s| s.1),
        signal_end: sig_end,
        errors_end,
        end_back,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(min: i64, panel: &str, level: Level, bad: bool) -> Crossing {
        Crossing {
            at: DateTime::from_timestamp(min * 60, 0).unwrap(),
            panel: panel.into(),
            level,
            bad,
            bad_above: true,
            value: 0.0,
            threshold: 0.0,
        }
    }

    #[test]
    fn the_error_ratio_defines_the_window_and_a_person_overrides_it() {
        let all = [
            c(1, "Pool saturation", Level::Crit, true),
            c(3, "Error ratio", Level::Warn, true),
            c(5, "Error ratio", Level::Crit, true),
            c(9, "Error ratio", Level::Crit, false),
            c(11, "Error ratio", Level::Crit, true),
            c(20, "Error ratio", Level::Crit, false),
            c(25, "Pool saturation", Level::Crit, false),
        ];
        let w = window(&Summary::default(), &all, Some("Error ratio"), None);
        let at = |m: i64| DateTime::from_timestamp(m * 60, 0).unwrap();
        assert_eq!(
            (w.start, w.end, w.source),
            (Some(at(5)), Some(at(20)), "signals")
        );
        let still_bad = window(&Summary::default(), &all[..5], Some("Error ratio"), None);
        assert_eq!(still_bad.end, None);
        let by_hand = Summary {
            impact_start: Some(at(2)),
            ..Summary::default()
        };
        let w = window(&by_hand, &all, None, None);
        assert_eq!(
            (w.start, w.end, w.source),
            (Some(at(2)), Some(at(20)), "journal and signals")
        );
        assert_eq!(w.signal_start, Some(at(5)));
    }

    #[test]
    fn a_backlog_left_when_the_errors_stop_keeps_the_impact_open_until_it_drains() {
        let at = |m: i64| DateTime::from_timestamp(m * 60, 0).unwrap();
        let q = "Queue depth";
        let errors = [
            c(5, "Error ratio", Level::Crit, true),
            c(20, "Error ratio", Level::Crit, false),
        ];
        let with = |queue: &[Crossing]| {
            let mut all: Vec<Crossing> = errors.iter().chain(queue).cloned().collect();
            all.sort_by_key(|c| c.at);
            window(&Summary::default(), &all, Some("Error ratio"), Some(q))
        };
        // Still queued at 20, drained (warn and crit both back) at 45: the impact ends at 45,
        // the errors (and the recovery a step is credited with) at 20.
        let w = with(&[
            c(8, q, Level::Warn, true),
            c(10, q, Level::Crit, true),
            c(40, q, Level::Crit, false),
            c(45, q, Level::Warn, false),
        ]);
        assert_eq!(w.end, Some(at(45)));
        assert_eq!(w.end_back, Some((at(45), q.to_string())));
        assert_eq!(w.errors_end, Some(at(20)));
        assert_eq!(w.signal_end, Some((at(20), "Error ratio".to_string())));
        // Never drained: no end, the errors' end kept.
        let w = with(&[c(8, q, Level::Warn, true)]);
        assert_eq!((w.end, w.errors_end), (None, Some(at(20))));
        // Drained before the errors stopped: the errors' end.
        let w = with(&[c(8, q, Level::Warn, true), c(15, q, Level::Warn, false)]);
        assert_eq!(w.end, Some(at(20)));
        // A person's end wins.
        let by_hand = Summary {
            impact_end: Some(at(30)),
            ..Summary::default()
        };
        let all: Vec<Crossing> = errors
            .iter()
            .cloned()
            .chain([c(8, q, Level::Warn, true)])
            .collect();
        let w = window(&by_hand, &all, Some("Error ratio"), Some(q));
        assert_eq!((w.end, w.errors_end), (Some(at(30)), Some(at(30))));
    }
}
