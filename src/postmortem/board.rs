//! The snapshots a draft reads, by what they are: the dashboard's panels (by title and by
//! role) and the fact queries taken beside them (`fact-snapshots/`).

use super::signals::{self, Role};
use crate::config::Unit;
use crate::incident::snapshot::PanelSnapshot;
use chrono::{DateTime, Utc};

/// Unix seconds of an instant, as snapshots hold them.
pub fn secs(at: DateTime<Utc>) -> f64 {
    at.timestamp_millis() as f64 / 1000.0
}

/// The instant of Unix seconds `t`.
pub fn instant(t: f64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis((t * 1000.0).round() as i64).unwrap_or_default()
}

/// The panels and fact queries of one incident.
#[derive(Debug, Clone, Copy)]
pub struct Board<'a> {
    /// Every panel snapshot, with data or not.
    pub all: &'a [PanelSnapshot],
    /// The fact queries' snapshots.
    pub facts: &'a [PanelSnapshot],
}

impl<'a> Board<'a> {
    pub fn new(all: &'a [PanelSnapshot], facts: &'a [PanelSnapshot]) -> Board<'a> {
        Board { all, facts }
    }

    /// The panels with data, in dashboard order.
    pub fn panels(&self) -> impl Iterator<Item = &'a PanelSnapshot> + Clone + 'a {
        self.all.iter().filter(|s| !s.series.is_empty())
    }

    /// The panel with data that speaks for `role` ([`signals::pick`]).
    pub fn role(&self, role: Role) -> Option<&'a PanelSnapshot> {
        signals::pick(self.panels(), role)
    }

    /// The panel titled `title`, with data.
    pub fn panel(&self, title: &str) -> Option<&'a PanelSnapshot> {
        self.panels().find(|s| s.title == title)
    }

    /// The fact query titled `title`, with data.
    pub fn fact(&self, title: &str) -> Option<&'a PanelSnapshot> {
        self.facts
            .iter()
            .find(|s| s.title == title && !s.series.is_empty())
    }

    /// A panel's unit as its snapshot says (`Count` when no snapshot names the panel).
    pub fn unit(&self, title: &str) -> Unit {
        self.all.iter().find(|s| s.title == title).map_or(
            Unit::Count,
            super::super::incident::snapshot::PanelSnapshot::unit,
        )
    }

    /// Whether high values of the panel are the bad ones, when a snapshot says.
    pub fn bad_above(&self, title: &str) -> Option<bool> {
        self.all
            .iter()
            .find(|s| s.title == title)
            .map(|s| !s.bad_below())
    }

    /// The role of the panel titled `title`.
    pub fn role_of(&self, title: &str) -> Option<Role> {
        self.all
            .iter()
            .find(|s| s.title == title)
            .and_then(signals::role)
    }

    /// How a panel is named mid-sentence: "attempts per request" for retry amplification,
    /// else its title with a lower-case first letter (unless it is an acronym).
    pub fn name(&self, title: &str) -> String {
        match self.role_of(title) {
            Some(Role::RetryAmplification) => "attempts per request".into(),
            _ => lower_first(title),
        }
    }

    /// How the value [`super::effects::value_at`] reads from a panel is named: by its
    /// statistic for a latency panel ("median query latency", "mean query latency"), else as
    /// [`Board::name`].
    pub fn value_name(&self, title: &str) -> String {
        match self.role_of(title) {
            Some(Role::Latency) => match self.panel(title).and_then(signals::central_series) {
                // A mean beside a wait it leaves out is told by its own title ("… (wait
                // excluded)"): it is not the latency the clients saw.
                Some((_, signals::Statistic::Mean))
                    if signals::client_wait(self.panels()).is_some() =>
                {
                    self.name(title)
                }
                Some((_, stat)) => format!("{} query latency", stat.word()),
                None => self.name(title),
            },
            _ => self.name(title),
        }
    }
}

/// `Pool saturation` → `pool saturation`; `DB pool` stays.
pub fn lower_first(text: &str) -> String {
    let mut c = text.chars();
    match (c.next(), c.next()) {
        (Some(a), Some(b)) if a.is_uppercase() && !b.is_uppercase() => {
            a.to_lowercase().chain(text.chars().skip(1)).collect()
        }
        _ => text.to_string(),
    }
}
