//! `C` and the changes feed's reports.

use crate::app::model::Model;
use crate::github::ChangesReport;

/// `C`: show or hide the pane.
pub fn toggle(model: &mut Model) {
    model.changes.shown = !model.changes.shown;
    model.dirty = true;
}

/// A report of the changes intake.
pub fn report(model: &mut Model, report: ChangesReport) {
    match report {
        ChangesReport::Recorded(record) => model.add_record(record),
        ChangesReport::NotRecorded { change, error } => {
            model.journal_error = Some(crate::sanitize::line(&error).into_owned());
            model.notify(
                format!("change not recorded (tried again next poll): {change}: {error}"),
                true,
                Some(15),
            );
        }
        ChangesReport::Down { error, retry_in } => {
            model.changes.trouble = Some(
                crate::sanitize::line(&format!("{error}; next try in {}s", retry_in.as_secs()))
                    .into_owned(),
            );
        }
        ChangesReport::Up => model.changes.trouble = None,
    }
    model.dirty = true;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::panes::changes::{change, rows};
    use crate::config::Config;
    use crate::github::changes::ChangeKind;

    #[test]
    fn reports_reach_the_timeline_and_the_pane() {
        let config = Config::parse("w.toml", "[github]\nwatch = [\"acme/api\"]\n").unwrap();
        let now = "2026-11-29T10:30:00Z".parse().unwrap();
        let mut m = Model::new(&config, crate::theme::Theme::fallback(), "x".into(), now);
        assert_eq!(m.changes.watching, Some(vec!["acme/api".to_string()]));
        report(
            &mut m,
            ChangesReport::Down {
                error: "GitHub could not be reached \u{1b}[2J".into(),
                retry_in: std::time::Duration::from_secs(75),
            },
        );
        let trouble = m.changes.trouble.clone().unwrap();
        assert!(trouble.ends_with("next try in 75s"), "{trouble}");
        assert!(crate::sanitize::is_clean(&trouble, false), "{trouble}");
        report(&mut m, ChangesReport::Recorded(change(7, "#42", None)));
        report(&mut m, ChangesReport::Up);
        assert!(m.changes.trouble.is_none());
        assert_eq!(m.timeline.len(), 1);
        assert_eq!(rows(&m.timeline)[0].kind, ChangeKind::PullRequest);
    }
}
