//! The Changes pane's state: what is watched, whether the feed answers, and the changes on the
//! timeline (read from the journal's records, so the pane survives restarts and shows a
//! replayed incident as it was).

use crate::config::Config;
use crate::github::changes::ChangeKind;
use crate::incident::{Event, Record};
use chrono::{DateTime, Utc};

/// The Changes pane.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChangesPane {
    /// The pane is shown beside the panels (with the timeline when both are).
    pub shown: bool,
    /// The repositories watched; `None` when `[github]` is not configured.
    pub watching: Option<Vec<String>>,
    /// Why the last poll failed and when the next one is, while GitHub does not answer.
    pub trouble: Option<String>,
}

impl ChangesPane {
    /// What `config` watches.
    pub fn from_config(config: &Config) -> ChangesPane {
        ChangesPane {
            shown: false,
            watching: config.github.as_ref().map(|g| {
                g.watch
                    .iter()
                    .map(std::string::ToString::to_string)
                    .collect()
            }),
            trouble: None,
        }
    }
}

/// One change as the pane lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeRow<'a> {
    /// When it happened on GitHub (or was recorded, for records that do not say).
    pub at: DateTime<Utc>,
    pub kind: ChangeKind,
    pub repo: &'a str,
    pub reference: &'a str,
    pub title: &'a str,
    /// The record's actor: who made the change.
    pub who: &'a str,
    pub url: Option<&'a str>,
}

/// The changes on `timeline`, newest first.
pub fn rows(timeline: &[Record]) -> Vec<ChangeRow<'_>> {
    let mut rows: Vec<ChangeRow> = timeline
        .iter()
        .filter_map(|r| match &r.kind {
            Event::Change {
                repo,
                reference,
                title,
                url,
                at,
            } => Some(ChangeRow {
                at: at.unwrap_or(r.time),
                kind: ChangeKind::of(&r.kind)?,
                repo,
                reference,
                title,
                who: &r.actor,
                url: url.as_deref(),
            }),
            _ => None,
        })
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.at));
    rows
}

/// A link without its scheme, cut to `max` characters (an ellipsis marks the cut).
pub fn short_link(url: &str, max: usize) -> String {
    let bare = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .unwrap_or(url);
    if bare.chars().count() <= max {
        return bare.to_string();
    }
    let keep: String = bare.chars().take(max.saturating_sub(1)).collect();
    format!("{keep}…")
}

/// A change of `acme/api` recorded at 10:30 (for tests here and in `update`).
#[cfg(test)]
pub(crate) fn change(seq: u64, reference: &str, at: Option<&str>) -> Record {
    Record {
        seq,
        time: "2026-11-29T10:30:00Z".parse().unwrap(),
        source: crate::incident::Source::Github,
        actor: "ana".into(),
        host: String::new(),
        kind: Event::Change {
            repo: "acme/api".into(),
            reference: reference.into(),
            title: "t".into(),
            url: None,
            at: at.map(|a| a.parse().unwrap()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_listed_newest_first_by_when_they_happened() {
        let timeline = vec![
            change(1, "#42", Some("2026-11-29T09:30:00Z")),
            change(
                2,
                "deploy production main@abc",
                Some("2026-11-29T09:40:00Z"),
            ),
            change(3, "v2.3.1", Some("2026-11-29T09:35:00Z")),
            change(4, "v1", None),
        ];
        let got: Vec<(&str, ChangeKind)> = rows(&timeline)
            .iter()
            .map(|r| (r.reference, r.kind))
            .collect();
        assert_eq!(
            got,
            [
                ("v1", ChangeKind::Release),
                ("deploy production main@abc", ChangeKind::Deployment),
                ("v2.3.1", ChangeKind::Release),
                ("#42", ChangeKind::PullRequest),
            ]
        );
    }

    #[test]
    fn links_lose_their_scheme_and_are_cut() {
        assert_eq!(short_link("https://ci.example/d/11", 40), "ci.example/d/11");
        assert_eq!(short_link("http://abcdefghij", 5), "abcd…");
    }
}
