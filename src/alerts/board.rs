//! What is firing, and which source says so: the seen-set that makes each alert's firing and
//! resolution recorded once (pure, no I/O).
//!
//! Each firing alert is held by the sources that report it. A source's answer adds its hold on
//! every alert it reports and drops its hold on every alert it no longer reports (or reports as
//! ended). An alert is recorded as firing when it is first held and as resolved when the last
//! hold goes. A source that fails to answer changes nothing: what it said last stands.
//!
//! After a restart the board is rebuilt from the journal: an alert recorded as firing and not
//! yet resolved is held by every configured source until each has answered, so neither a
//! source that answers first nor one that is down can make it look resolved (or new) by mistake.

use super::Alert;
use crate::incident::Record;
use crate::incident::event::{AlertSource, Event};
use std::collections::{BTreeMap, BTreeSet};

/// An alert's identity: its name and labels, in the form the journal stores them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AlertKey {
    pub name: String,
    pub labels: BTreeMap<String, String>,
}

impl AlertKey {
    pub fn new(name: String, labels: BTreeMap<String, String>) -> AlertKey {
        AlertKey { name, labels }
    }

    /// The key of an `AlertFiring` or `AlertResolved` event.
    pub fn of(event: &Event) -> Option<AlertKey> {
        match event {
            Event::AlertFiring { name, labels, .. } | Event::AlertResolved { name, labels, .. } => {
                Some(AlertKey::new(name.clone(), labels.clone()))
            }
            _ => None,
        }
    }
}

fn slot(source: AlertSource) -> u8 {
    match source {
        AlertSource::Prometheus => 0,
        AlertSource::Alertmanager => 1,
    }
}

/// The firing alerts and their holders.
#[derive(Debug, Clone, Default)]
pub struct AlertBoard {
    firing: BTreeMap<AlertKey, BTreeSet<u8>>,
}

impl AlertBoard {
    pub fn new() -> AlertBoard {
        AlertBoard::default()
    }

    /// The board as the journal left it, for the configured `sources`.
    pub fn from_records(records: &[Record], sources: &[AlertSource]) -> AlertBoard {
        let all: BTreeSet<u8> = sources.iter().copied().map(slot).collect();
        let mut firing = BTreeMap::new();
        for r in records {
            match &r.kind {
                e @ Event::AlertFiring { .. } => {
                    if let Some(k) = AlertKey::of(e) {
                        firing.insert(k, all.clone());
                    }
                }
                e @ Event::AlertResolved { .. } => {
                    if let Some(k) = AlertKey::of(e) {
                        firing.remove(&k);
                    }
                }
                _ => {}
            }
        }
        AlertBoard { firing }
    }

    /// How many alerts are firing.
    pub fn len(&self) -> usize {
        self.firing.len()
    }

    pub fn is_empty(&self) -> bool {
        self.firing.is_empty()
    }

    pub fn is_firing(&self, key: &AlertKey) -> bool {
        self.firing.contains_key(key)
    }

    /// Takes in one successful answer of `source`; returns the events it completes: firings
    /// first, in key order, then resolutions.
    pub fn observe(&mut self, source: AlertSource, alerts: &[Alert]) -> Vec<Event> {
        let me = slot(source);
        let reported: BTreeSet<AlertKey> =
            alerts.iter().filter(|a| !a.ended).map(Alert::key).collect();
        let mut events = Vec::new();
        for key in &reported {
            let holders = self.firing.entry(key.clone()).or_default();
            if holders.is_empty() {
                events.push(Event::AlertFiring {
                    name: key.name.clone(),
                    labels: key.labels.clone(),
                    source,
                });
            }
            holders.insert(me);
        }
        let released: Vec<AlertKey> = self
            .firing
            .iter_mut()
            .filter(|(k, _)| !reported.contains(*k))
            .filter_map(|(k, holders)| {
                (holders.remove(&me) && holders.is_empty()).then(|| k.clone())
            })
            .collect();
        for key in released {
            self.firing.remove(&key);
            events.push(Event::AlertResolved {
                name: key.name,
                labels: key.labels,
                source,
            });
        }
        events
    }

    /// Takes back an event [`AlertBoard::observe`] returned that could not be recorded, so the
    /// next answer of `source` returns it again.
    pub fn undo(&mut self, source: AlertSource, event: &Event) {
        let Some(key) = AlertKey::of(event) else {
            return;
        };
        match event {
            Event::AlertFiring { .. } => {
                self.firing.remove(&key);
            }
            _ => {
                self.firing.entry(key).or_default().insert(slot(source));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alert(name: &str, pod: &str) -> Alert {
        Alert {
            name: name.into(),
            labels: [("pod".to_string(), pod.to_string())].into(),
            summary: None,
            ended: false,
        }
    }

    fn kinds(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .map(|e| match e {
                Event::AlertFiring { name, labels, .. } => format!("+{name}/{}", labels["pod"]),
                Event::AlertResolved { name, labels, .. } => format!("-{name}/{}", labels["pod"]),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn each_alert_fires_and_resolves_once_across_polls() {
        let mut b = AlertBoard::new();
        let p = AlertSource::Prometheus;
        let a1 = alert("Pool", "api-1");
        let a2 = alert("Pool", "api-2");
        assert_eq!(
            kinds(&b.observe(p, std::slice::from_ref(&a1))),
            ["+Pool/api-1"]
        );
        assert!(
            b.observe(p, std::slice::from_ref(&a1)).is_empty(),
            "the same alert again"
        );
        assert_eq!(
            kinds(&b.observe(p, &[a1.clone(), a2.clone()])),
            ["+Pool/api-2"]
        );
        assert_eq!(
            kinds(&b.observe(p, std::slice::from_ref(&a2))),
            ["-Pool/api-1"]
        );
        let mut ended = a2.clone();
        ended.ended = true;
        assert_eq!(kinds(&b.observe(p, &[ended])), ["-Pool/api-2"]);
        assert!(b.observe(p, &[]).is_empty() && b.is_empty());
    }

    #[test]
    fn one_alert_seen_by_both_sources_is_one_alert() {
        let (p, m) = (AlertSource::Prometheus, AlertSource::Alertmanager);
        let mut b = AlertBoard::new();
        let a = alert("Pool", "api-1");
        assert_eq!(
            kinds(&b.observe(p, std::slice::from_ref(&a))),
            ["+Pool/api-1"]
        );
        assert!(b.observe(m, std::slice::from_ref(&a)).is_empty());
        assert!(b.observe(p, &[]).is_empty(), "Alertmanager still has it");
        assert_eq!(kinds(&b.observe(m, &[])), ["-Pool/api-1"]);
    }

    #[test]
    fn a_rebuilt_board_waits_for_every_source() {
        let (p, m) = (AlertSource::Prometheus, AlertSource::Alertmanager);
        let a = alert("Pool", "api-1");
        let mut first = AlertBoard::new();
        let fired = first.observe(p, std::slice::from_ref(&a));
        let rec = |seq, kind| Record {
            seq,
            time: chrono::DateTime::UNIX_EPOCH,
            source: crate::incident::Source::Alert,
            actor: "Prometheus".into(),
            host: String::new(),
            kind,
        };
        let records = vec![rec(1, fired[0].clone())];
        let mut b = AlertBoard::from_records(&records, &[p, m]);
        assert!(b.is_firing(&a.key()));
        assert!(
            b.observe(m, std::slice::from_ref(&a)).is_empty(),
            "not new after a restart"
        );
        assert!(
            b.observe(p, &[]).is_empty(),
            "Alertmanager still reports it"
        );
        assert_eq!(kinds(&b.observe(m, &[])), ["-Pool/api-1"]);
        // Once resolved in the journal, it is new again when it comes back.
        let resolved = Event::AlertResolved {
            name: "Pool".into(),
            labels: a.labels.clone(),
            source: m,
        };
        let records = vec![rec(1, fired[0].clone()), rec(2, resolved)];
        let mut b = AlertBoard::from_records(&records, &[p]);
        assert_eq!(kinds(&b.observe(p, &[a])), ["+Pool/api-1"]);
    }
}
