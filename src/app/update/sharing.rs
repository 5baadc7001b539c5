//! Several responders on one incident: what the socket workers report (records synced by the
//! holder, followers, proposals, the holder gone, a takeover), a follower's proposal to run a
//! runbook, and the offer to take over when the holder goes.

use super::super::model::Model;
use super::super::panes::dialog::{Dialog, Purpose};
use super::super::sharing::{ShareMsg, Sharing};
use super::Effect;

/// The choices of the takeover dialog.
pub const TAKE_OVER: [&str; 2] = ["Take over the incident", "Keep watching"];

/// Apply what a socket worker reports.
pub fn report(model: &mut Model, msg: ShareMsg) -> Vec<Effect> {
    model.dirty = true;
    match msg {
        ShareMsg::Record(record) => {
            let retitled = matches!(
                record.kind,
                crate::incident::Event::IncidentOpened { .. }
                    | crate::incident::Event::TitleChanged { .. }
            );
            model.add_record(*record);
            if retitled && let Some(header) = model.incident.as_mut() {
                header.title = crate::incident::summary::summarize(&model.timeline).title;
            }
        }
        ShareMsg::Welcome { holder, followers } => {
            model.sharing = Sharing::Following {
                holder,
                followers,
                gone: None,
            };
        }
        ShareMsg::Followers(n) => match &mut model.sharing {
            Sharing::Holding { followers } | Sharing::Following { followers, .. } => *followers = n,
            Sharing::Alone => model.sharing = Sharing::Holding { followers: n },
        },
        ShareMsg::Proposal { runbook, record } => {
            let who = record.actor.clone();
            model.add_record(*record);
            // Only the holder runs runbooks, after its own typed confirmation: the proposal
            // selects the runbook; the operator opens its plan and runs it as ever.
            if let Some(i) = (model.runbooks.entries.as_ref())
                .and_then(|e| e.iter().position(|e| e.name() == runbook))
            {
                model.runbooks.selected = i;
            }
            model.notify(
                format!(
                    "{who} proposes running runbook \"{runbook}\": b opens the runbooks, x runs it"
                ),
                false,
                Some(30),
            );
        }
        ShareMsg::Proposed(Ok(record)) => {
            model.add_record(*record);
            model.notify(
                "proposed to the holder: it runs the runbook after its own confirmation",
                false,
                Some(15),
            );
        }
        ShareMsg::Proposed(Err(e)) => model.notify(format!("not proposed: {e}"), true, Some(15)),
        ShareMsg::HolderGone(why) => return holder_gone(model, why),
        ShareMsg::TookOver(Ok(took)) => {
            for r in took.records {
                model.add_record(r);
            }
            model.detectors = (model.panels.iter())
                .map(|p| {
                    crate::recorder::panel_watch::detector_from_journal(&p.config, &model.timeline)
                })
                .collect();
            model.sharing = Sharing::Holding { followers: 0 };
            model.journal_error = None;
            model.notify(
                "you hold the incident now: the team records through this console",
                false,
                Some(15),
            );
        }
        ShareMsg::TookOver(Err(e)) => {
            model.notify(format!("could not take over: {e}"), true, Some(30));
        }
    }
    Vec::new()
}

/// The holder went away: say so, and offer to take over when the incident is on this host.
fn holder_gone(model: &mut Model, why: String) -> Vec<Effect> {
    let Sharing::Following { holder, gone, .. } = &mut model.sharing else {
        return Vec::new();
    };
    if gone.is_some() {
        return Vec::new();
    }
    *gone = Some(crate::sanitize::line(&why).into_owned());
    let text = vec![
        format!("{holder} no longer serves the incident ({why})."),
        "Taking over makes this console its holder: it records, serves the team and runs \
         runbooks."
            .to_string(),
    ];
    let dialog = Dialog::choose(
        "The incident's holder has gone".into(),
        text,
        TAKE_OVER
            .iter()
            .map(std::string::ToString::to_string)
            .collect(),
        0,
        Purpose::TakeOver,
    );
    if model.dialog.is_none() {
        model.dialog = Some(dialog);
    } else {
        model.dialogs_waiting.push_back(dialog);
    }
    Vec::new()
}

/// The takeover dialog was answered.
pub fn take_over_answered(model: &mut Model, choice: usize) -> Vec<Effect> {
    if choice == 0 {
        model.notify("taking the incident over…", false, None);
        vec![Effect::TakeOver]
    } else {
        model.notify(
            "watching only: nothing more can be recorded here until someone holds the incident",
            true,
            Some(15),
        );
        Vec::new()
    }
}

/// A follower's `x` on a runbook: ask the holder to run it.
pub fn propose(model: &mut Model, runbook: String) -> Vec<Effect> {
    if let Sharing::Following { gone: Some(_), .. } = model.sharing {
        model.notify("the holder has gone: nobody can run it now", true, Some(10));
        return Vec::new();
    }
    model.notify(
        format!("proposing \"{runbook}\" to the holder…"),
        false,
        None,
    );
    vec![Effect::Propose { runbook }]
}
