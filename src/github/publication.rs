//! What `warroom publish` puts on GitHub, as one value: the postmortem Markdown and charts that
//! `warroom export` wrote, and the title, date, severity and action items from the journal.
//! The publish logic works on this value alone, so it is tested without files.

use super::marker::Marker;
use crate::incident::event::Severity;
use crate::incident::store::{IncidentId, Store, StoreError};
use crate::incident::summary::{ActionItem, summarize};
use chrono::NaiveDate;
use std::path::PathBuf;

/// The export's Markdown file inside `<incident dir>/exports/`.
pub const POSTMORTEM_FILE: &str = "postmortem.md";
/// The export's charts folder inside `<incident dir>/exports/`.
pub const CHARTS_DIR: &str = "charts";

/// One chart of the postmortem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chart {
    /// File name as the Markdown links it (`charts/<name>`), e.g. `pool-saturation.svg`.
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Everything one publication needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Publication {
    /// The incident id (`2026-11-29-1`).
    pub incident: String,
    /// The incident's globally unique id, which its markers and branch carry (`None` only for
    /// a journal older than the id that has not been published yet: a dry run of it).
    pub uid: Option<String>,
    pub title: String,
    pub severity: Option<Severity>,
    /// The day the incident was opened (UTC): the file name's date.
    pub date: NaiveDate,
    /// The postmortem Markdown as exported.
    pub markdown: String,
    pub charts: Vec<Chart>,
    /// Action items as they stand after corrections.
    pub actions: Vec<ActionItem>,
}

/// Why a publication could not be assembled.
#[derive(Debug, thiserror::Error)]
pub enum PublicationError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "incident \"{id}\" has no exported postmortem at \"{}\"; run `warroom export {id}` \
         first, then publish",
        .path.display()
    )]
    NotExported { id: String, path: PathBuf },
    #[error("cannot read \"{}\": {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Publication {
    /// Reads the incident's journal and its export.
    pub fn load(store: &Store, id: &IncidentId) -> Result<Publication, PublicationError> {
        let summary = summarize(&store.read(id)?.records);
        let exports = store.exports_dir(id);
        let md_path = exports.join(POSTMORTEM_FILE);
        let markdown = match std::fs::read(&md_path) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(PublicationError::NotExported {
                    id: id.to_string(),
                    path: md_path,
                });
            }
            Err(source) => {
                return Err(PublicationError::Read {
                    path: md_path,
                    source,
                });
            }
        };
        let charts_dir = exports.join(CHARTS_DIR);
        let mut charts = Vec::new();
        match std::fs::read_dir(&charts_dir) {
            Ok(entries) => {
                for entry in entries.filter_map(Result::ok) {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if !name.ends_with(".svg") || !safe_file_name(&name) {
                        continue;
                    }
                    let path = entry.path();
                    let bytes = std::fs::read(&path)
                        .map_err(|source| PublicationError::Read { path, source })?;
                    charts.push(Chart { name, bytes });
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(PublicationError::Read {
                    path: charts_dir,
                    source,
                });
            }
        }
        charts.sort_by(|a, b| a.name.cmp(&b.name));
        let id_text = id.to_string();
        let date = summary
            .opened_at
            .map(|t| t.date_naive())
            .or_else(|| NaiveDate::parse_from_str(id_text.get(..10)?, "%Y-%m-%d").ok())
            .unwrap_or_default();
        let uid = summary
            .uid
            .clone()
            .or(
                super::identity::kept(&store.dir(id)).map_err(|e| PublicationError::Read {
                    path: e.path.clone(),
                    source: e.source,
                })?,
            );
        Ok(Publication {
            incident: id_text,
            uid,
            title: if summary.title.trim().is_empty() {
                "Untitled incident".into()
            } else {
                summary.title
            },
            severity: summary.severity,
            date,
            markdown,
            charts,
            actions: summary.actions,
        })
    }

    /// The title as a file-name slug: `Journey planner outage` → `journey-planner-outage`.
    pub fn slug(&self) -> String {
        slug(&self.title)
    }

    /// `postmortems/<date>-<slug>.md` in the receiving repository.
    pub fn file_path(&self) -> String {
        format!(
            "postmortems/{}-{}.md",
            self.date.format("%Y-%m-%d"),
            self.slug()
        )
    }

    /// Where the charts go: `postmortems/<date>-<slug>/<chart>.svg`.
    pub fn chart_path(&self, chart: &Chart) -> String {
        format!(
            "postmortems/{}-{}/{}",
            self.date.format("%Y-%m-%d"),
            self.slug(),
            chart.name
        )
    }

    /// The branch that carries the files: one per incident (its local id, for people, and
    /// the start of its global id, so two incidents with one local id never share a branch),
    /// so publishing again reuses it.
    pub fn branch(&self) -> String {
        match &self.uid {
            Some(u) => format!(
                "warroom/postmortem-{}-{}",
                self.incident,
                u.get(..12).unwrap_or(u)
            ),
            None => format!("warroom/postmortem-{}", self.incident),
        }
    }

    /// The marker of the postmortem issue.
    pub fn postmortem_marker(&self) -> Marker {
        Marker::postmortem(&self.incident, self.uid.as_deref())
    }

    /// The marker of the postmortem pull request.
    pub fn pr_marker(&self) -> Marker {
        Marker::postmortem_pr(&self.incident, self.uid.as_deref())
    }

    /// The marker of action item `item`'s issue.
    pub fn action_marker(&self, item: &str) -> Marker {
        Marker::action(&self.incident, self.uid.as_deref(), item)
    }
}

/// The incident title's [`crate::sanitize::slug`] (`incident` when it has no letters).
pub fn slug(title: &str) -> String {
    crate::sanitize::slug(title, "incident")
}

/// A chart file name that is safe in a repository path and a URL.
fn safe_file_name(name: &str) -> bool {
    !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_safe_paths() {
        assert_eq!(
            slug("Journey planner: outage (SEV-1)"),
            "journey-planner-outage-sev-1"
        );
        assert_eq!(slug("../../etc/passwd"), "etc-passwd");
        assert_eq!(slug("\u{1b}[2J ünïcode"), "2j-n-code");
        assert_eq!(slug("!!!"), "incident");
        assert!(slug(&"x".repeat(500)).len() <= 60);
    }
}
