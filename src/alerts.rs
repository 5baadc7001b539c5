//! Alerts into the timeline: Prometheus's `/api/v1/alerts` and Alertmanager's `/api/v2/alerts`
//! polled one request at a time ([`endpoint`]), parsed with every label and annotation
//! sanitized where it enters ([`parse`]), and turned into `AlertFiring` / `AlertResolved`
//! events exactly once each ([`board`]), by one task that the console and `warroom record`
//! both spawn ([`intake`]).
//!
//! An alert is known by its name and label set (what Alertmanager's fingerprint hashes), so one
//! alert seen by both Prometheus and Alertmanager is one alert; a restart rebuilds what is
//! firing from the journal, so nothing is recorded twice.

pub mod board;
pub mod endpoint;
pub mod intake;
pub mod parse;
pub mod silence;

pub use board::{AlertBoard, AlertKey};
pub use endpoint::AlertEndpoint;
pub use intake::{AlertIntake, AlertReport};

use crate::incident::event::{AlertSource, Event};
use std::collections::BTreeMap;

/// One alert as a source reports it, sanitized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alert {
    /// The `alertname` label.
    pub name: String,
    /// Every other label.
    pub labels: BTreeMap<String, String>,
    /// The `summary` annotation (or `description`), for status lines; not journaled.
    pub summary: Option<String>,
    /// The source says the alert has ended (Alertmanager: `endsAt` in the past).
    pub ended: bool,
}

impl Alert {
    /// The alert's identity in the form the journal stores it, so a key rebuilt from the
    /// journal after a restart equals the key of the same alert polled again.
    pub fn key(&self) -> AlertKey {
        AlertKey::of(&self.firing(AlertSource::Prometheus))
            .unwrap_or_else(|| AlertKey::new(self.name.clone(), self.labels.clone()))
    }

    /// The `AlertFiring` event for this alert from `source`.
    pub fn firing(&self, source: AlertSource) -> Event {
        Event::AlertFiring {
            name: self.name.clone(),
            labels: self.labels.clone(),
            source,
        }
        .sanitized()
    }
}

/// A short name of a source for messages.
pub fn source_name(source: AlertSource) -> &'static str {
    match source {
        AlertSource::Prometheus => "Prometheus",
        AlertSource::Alertmanager => "Alertmanager",
    }
}
