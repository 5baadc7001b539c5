//! `P`: a dialog asks where and in which form, then the publication runs off the UI loop
//! ([`crate::app::workers::publish`]); its report is a notice.

use crate::app::effect::Effect;
use crate::app::model::Model;
use crate::app::panes::dialog::{Dialog, Purpose};
use crate::app::panes::publish::TARGETS;
use crate::app::workers::publish::PublishReport;

/// `P`: ask where and how to publish.
pub fn ask(model: &mut Model) -> Vec<Effect> {
    if model.incident.is_none() {
        model.notify("no incident is open: nothing to publish", true, Some(5));
        return Vec::new();
    }
    let Some(repo) = model.publish.repo.clone() else {
        model.notify(
            "publishing is not configured: set postmortems = \"owner/name\" under [github] in warroom.toml",
            true,
            Some(10),
        );
        return Vec::new();
    };
    if model.publish.in_flight {
        model.notify("a publication is already under way", true, Some(5));
        return Vec::new();
    }
    model.dialog = Some(Dialog::choose(
        format!("Publish the postmortem to {repo}"),
        vec![
            "The exported draft (E) and the action items go to GitHub; publishing again".into(),
            "updates what exists. Enter publishes, esc cancels.".into(),
        ],
        TARGETS.iter().map(|(_, t)| t.to_string()).collect(),
        0,
        Purpose::Publish,
    ));
    model.dirty = true;
    Vec::new()
}

/// The dialog was answered yes: start the publication.
pub fn confirmed(model: &mut Model, d: &Dialog) -> Vec<Effect> {
    let target = TARGETS[d.selected().unwrap_or(0).min(TARGETS.len() - 1)].0;
    model.publish.in_flight = true;
    let repo = model.publish.repo.clone().unwrap_or_default();
    model.notify(format!("publishing to {repo}…"), false, None);
    vec![Effect::Publish(target)]
}

/// The publish task's report.
pub fn report(model: &mut Model, report: PublishReport) {
    match report {
        PublishReport::Done(lines) => {
            model.publish.in_flight = false;
            let text = match lines.as_slice() {
                [] => "nothing was waiting to be published".to_string(),
                [one] => format!("published: {one}"),
                many => format!("published {} times: {}", many.len(), many.join("; ")),
            };
            model.notify(text, false, Some(60));
        }
        PublishReport::Failed {
            error,
            retry_in: Some(wait),
        } => model.notify(
            format!(
                "publishing not finished: {error}; kept in the outbox, next try in {}s",
                wait.as_secs()
            ),
            true,
            None,
        ),
        PublishReport::Failed {
            error,
            retry_in: None,
        } => {
            model.publish.in_flight = false;
            model.notify(format!("publishing not finished: {error}"), true, Some(60));
        }
    }
    model.dirty = true;
}
