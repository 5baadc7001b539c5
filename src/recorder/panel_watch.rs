//! Threshold crossings without a screen: every panel's newest value, asked one query at a time
//! each refresh, fed to the same [`Detector`] rule the console uses; each crossing is recorded
//! through the journal writer.
//!
//! A panel's value is the worst of its series (the highest when higher is worse), as the
//! console's panel shows it. On a restart each detector starts where the journal left it, so a
//! value that was already past a threshold is not recorded as crossing it again.

use crate::config::{BadWhen, PanelConfig};
use crate::incident::crossing::{Detector, Rule, Worse};
use crate::incident::event::{Direction, Event, Level};
use crate::incident::{JournalWriter, Record, Source as RecordSource};
use crate::metrics::health::SOURCE_BACKOFF;
use crate::metrics::{InstantQuery, QueryAnswer, Source, SourceError};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;

/// The crossing rule of a panel: its thresholds, a hysteresis of 5 % of the threshold and a
/// minute to settle, so a flapping value does not flood the timeline (the console's rule).
pub fn rule(p: &PanelConfig) -> Rule {
    Rule {
        warn: p.warn,
        crit: p.crit,
        worse: match p.bad_when {
            BadWhen::Above => Worse::Above,
            BadWhen::Below => Worse::Below,
        },
        hysteresis: None,
        min_duration: Duration::from_secs(60),
    }
}

/// A detector for `panel` in the state the journal's crossings left it: a level whose last
/// crossing went the bad way is bad.
pub fn detector_from_journal(panel: &PanelConfig, records: &[Record]) -> Detector {
    let rule = rule(panel);
    let mut d = Detector::new(rule);
    let bad_way = match rule.worse {
        Worse::Above => Direction::Up,
        Worse::Below => Direction::Down,
    };
    let mut last = [None, None];
    for r in records {
        if let Event::ThresholdCrossed {
            panel: p,
            level,
            direction,
            at,
            ..
        } = &r.kind
            && *p == panel.title
        {
            let i = usize::from(*level == Level::Crit);
            last[i] = Some((*direction == bad_way, *at));
        }
    }
    // Feed the worst bad level its own threshold: past it (and so past warn too when crit is
    // bad), and not past crit when only warn is bad. Its crossings are already journaled.
    let worst_bad = [(1, rule.crit), (0, rule.warn)]
        .into_iter()
        .find_map(|(i, t)| match (last[i], t) {
            (Some((true, at)), Some(t)) => Some((at, t)),
            _ => None,
        });
    if let Some((at, t)) = worst_bad {
        let _ = d.feed(at, t);
    }
    d
}

/// The worst value of an answer, as the console's panel shows it.
pub fn worst(answer: &QueryAnswer, bad_when: BadWhen) -> Option<f64> {
    answer
        .series
        .iter()
        .filter_map(super::super::metrics::series::Series::last)
        .map(|p| p.v)
        .filter(|v| !v.is_nan())
        .reduce(|a, b| match bad_when {
            BadWhen::Above => a.max(b),
            BadWhen::Below => a.min(b),
        })
}

/// What the panel watch tells whoever spawned it.
#[derive(Debug, Clone)]
pub enum PanelReport {
    Recorded(Record),
    NotRecorded {
        event: String,
        error: String,
    },
    /// The journal refused the event itself (it can never be recorded, so it was dropped);
    /// the journal is as durable as before.
    Refused {
        event: String,
        error: String,
    },
    /// The metrics source did not answer; the next round is in `retry_in`.
    SourceDown {
        error: String,
        retry_in: Duration,
    },
    SourceUp,
    /// One panel's query is refused (its PromQL is at fault, not the source).
    PanelFailed {
        panel: String,
        error: String,
    },
}

/// Polls panels for crossings.
pub struct PanelWatch {
    pub source: Arc<dyn Source>,
    pub panels: Vec<PanelConfig>,
    pub refresh: Duration,
    /// The time readings are asked for and crossings are dated at: the wall clock, or a
    /// rehearsal's simulated clock.
    pub clock: crate::clock::SharedClock,
}

/// No query outlives this, whatever the source's own timeout says.
const HARD_DEADLINE: Duration = Duration::from_secs(35);

impl PanelWatch {
    /// Runs until `tx` closes. `records`: the journal so far, to start the detectors from.
    pub async fn run<T: Send + 'static>(
        self,
        journal: JournalWriter,
        records: Vec<Record>,
        tx: UnboundedSender<T>,
        wrap: fn(PanelReport) -> Option<T>,
    ) {
        let report = |r: PanelReport| {
            if let Some(m) = wrap(r) {
                let _ = tx.send(m);
            }
        };
        let mut detectors: Vec<Detector> = self
            .panels
            .iter()
            .map(|p| detector_from_journal(p, &records))
            .collect();
        drop(records);
        let mut failures = 0u32;
        let mut up: Option<bool> = None;
        let mut failed_panels = vec![false; self.panels.len()];
        let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::from_os_rng();
        let mut next = Instant::now();
        // Crossings the journal could not take yet, oldest first: the detector has moved on,
        // so they are kept and retried in order rather than lost.
        let mut unrecorded: VecDeque<(String, Event)> = VecDeque::new();
        loop {
            tokio::select! {
                _ = tx.closed() => return,
                _ = tokio::time::sleep_until(next) => {}
            }
            next = Instant::now() + self.refresh;
            flush(&journal, &mut unrecorded, &report).await;
            for (i, panel) in self.panels.iter().enumerate() {
                let now = self.clock.now();
                let q = InstantQuery {
                    query: panel.query.clone(),
                    time: Some(now.timestamp_millis() as f64 / 1000.0),
                };
                let answer = tokio::select! {
                    _ = tx.closed() => return,
                    a = tokio::time::timeout(HARD_DEADLINE, self.source.query(q)) => {
                        a.unwrap_or(Err(SourceError::Timeout(HARD_DEADLINE)))
                    }
                };
                match answer {
                    Ok(answer) => {
                        failures = 0;
                        if up != Some(true) {
                            report(PanelReport::SourceUp);
                        }
                        up = Some(true);
                        failed_panels[i] = false;
                        let Some(value) = worst(&answer, panel.bad_when) else {
                            continue;
                        };
                        for c in detectors[i].feed(now, value) {
                            unrecorded.push_back((panel.title.clone(), c.event(&panel.title)));
                        }
                        flush(&journal, &mut unrecorded, &report).await;
                    }
                    Err(e) if e.is_transient() => {
                        let wait = self
                            .refresh
                            .max(SOURCE_BACKOFF.delay(failures, &mut rng))
                            .max(e.retry_after().unwrap_or_default());
                        failures = failures.saturating_add(1);
                        next = Instant::now() + wait;
                        tracing::warn!(error = %e, "metrics source failed; backing off");
                        up = Some(false);
                        report(PanelReport::SourceDown {
                            error: e.to_string(),
                            retry_in: wait,
                        });
                        break;
                    }
                    Err(e) => {
                        if !failed_panels[i] {
                            tracing::warn!(panel = %panel.title, error = %e, "panel query refused");
                            report(PanelReport::PanelFailed {
                                panel: crate::sanitize::line(&panel.title).into_owned(),
                                error: e.to_string(),
                            });
                        }
                        failed_panels[i] = true;
                    }
                }
            }
        }
    }
}

/// The most crossings kept while the journal cannot take them; older ones are dropped (and
/// said so in the log) rather than grow without bound.
const MAX_UNRECORDED: usize = 1000;

/// Appends the waiting crossings in order; stops at the first that fails (reported), which
/// stays first in line.
async fn flush(
    journal: &JournalWriter,
    unrecorded: &mut VecDeque<(String, Event)>,
    report: &impl Fn(PanelReport),
) {
    while unrecorded.len() > MAX_UNRECORDED {
        if let Some((_, e)) = unrecorded.pop_front() {
            tracing::error!(event = %crate::incident::timeline::describe(&e), "crossing dropped");
        }
    }
    while let Some((title, event)) = unrecorded.front() {
        match journal
            .append(RecordSource::Metric, title, event.clone())
            .await
        {
            Ok(r) => {
                tracing::info!(seq = r.seq, "crossing recorded");
                report(PanelReport::Recorded(r));
                unrecorded.pop_front();
            }
            Err(e) if e.is_refusal() => {
                // Retrying cannot help, and keeping it would hold back every later crossing.
                tracing::error!(error = %e, "crossing refused by the journal; dropped");
                report(PanelReport::Refused {
                    event: crate::incident::timeline::describe(event),
                    error: e.to_string(),
                });
                unrecorded.pop_front();
            }
            Err(e) => {
                tracing::error!(error = %e, "crossing not recorded; kept to retry");
                report(PanelReport::NotRecorded {
                    event: crate::incident::timeline::describe(event),
                    error: e.to_string(),
                });
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};

    fn panel() -> PanelConfig {
        PanelConfig {
            title: "Pool saturation".into(),
            query: "x".into(),
            unit: crate::config::Unit::Percent,
            warn: Some(0.8),
            crit: Some(0.95),
            bad_when: BadWhen::Above,
            legend: None,
            signal: None,
            shape: Default::default(),
        }
    }

    #[test]
    fn a_restarted_detector_does_not_cross_again_but_sees_the_recovery() {
        let p = panel();
        let t0: DateTime<Utc> = "2026-11-29T08:00:00Z".parse().unwrap();
        let mut d = Detector::new(rule(&p));
        let crossed = d.feed(t0, 0.9);
        assert_eq!(crossed.len(), 1, "warn only");
        let records = vec![Record {
            seq: 1,
            time: t0,
            source: RecordSource::Metric,
            actor: p.title.clone(),
            host: String::new(),
            kind: crossed[0].event(&p.title),
        }];
        let mut again = detector_from_journal(&p, &records);
        let t = |s| t0 + chrono::Duration::seconds(s);
        assert!(again.feed(t(5), 0.9).is_empty(), "already recorded");
        assert_eq!(again.feed(t(10), 0.99).len(), 1, "crit is new");
        assert!(again.feed(t(20), 0.1).is_empty(), "settling");
        let back = again.feed(t(90), 0.1);
        assert_eq!(back.len(), 2, "{back:?}");
        // A fresh detector (no journal) would record the warn crossing a second time.
        assert_eq!(Detector::new(rule(&p)).feed(t(5), 0.9).len(), 1);
    }

    #[test]
    fn the_worst_series_counts() {
        use crate::metrics::series::{Point, Series};
        let s = |v| Series {
            labels: Default::default(),
            points: vec![Point { t: 1.0, v }],
        };
        let a = QueryAnswer {
            series: vec![s(0.2), s(f64::NAN), s(0.7)],
            ..Default::default()
        };
        assert_eq!(worst(&a, BadWhen::Above), Some(0.7));
        assert_eq!(worst(&a, BadWhen::Below), Some(0.2));
        assert_eq!(worst(&QueryAnswer::default(), BadWhen::Above), None);
    }
}
