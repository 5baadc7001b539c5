//! Several responders on one incident: what the socket workers report (records synced by the
//! holder, followers, proposals, the holder gone, a takeover), a follower's proposal to run a
//! runbook, and the offer to take over when the holder goes.

use super::super::model::Model;
use super::super::panes::dialog::{Dialog, Purpose};
use super::super::sharing::{AcceptedRun, Proposed, RunProposal, ShareMsg, Sharing};
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
        ShareMsg::Proposal { run, record } => {
            let (who, seq) = (record.actor.clone(), record.seq);
            model.add_record(*record);
            // Only the holder runs runbooks, after its own typed confirmation: the proposal
            // selects the runbook; accepting opens its run dialog with the proposed values.
            if let Some(i) = (model.runbooks.entries.as_ref())
                .and_then(|e| e.iter().position(|e| e.name() == run.runbook))
            {
                model.runbooks.selected = i;
            }
            model.notify(
                format!("{who} proposes running runbook \"{}\"", run.runbook),
                false,
                Some(30),
            );
            ask(model, who, seq, Proposed::Run(run));
        }
        ShareMsg::NoteProposal { text, record } => {
            let (who, seq) = (record.actor.clone(), record.seq);
            model.add_record(*record);
            ask(model, who, seq, Proposed::Note(text));
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
        ShareMsg::Engine(news) => engine_news(model, news),
    }
    Vec::new()
}

/// What the sync with the engine says: its state for the status bar, another responder's
/// record for the timeline (by time), a responder joining or leaving, a refused message.
fn engine_news(model: &mut Model, news: crate::share::session::News) {
    use crate::share::session::News;
    match news {
        News::Record(shared) => {
            let r = shared.record;
            proposed_to_us(model, &r);
            let at = model.others.partition_point(|o| o.time <= r.time);
            model.others.insert(at, r);
        }
        News::Presence(words) => model.notify(words, false, Some(15)),
        News::Refused(why) => model.notify(
            format!("refused a record on the engine: {why}"),
            true,
            Some(30),
        ),
        News::Unreachable { reason, unsent } => {
            let was = matches!(model.engine, Some(News::Unreachable { .. }));
            if !was {
                model.notify(
                    format!(
                        "not shared: {reason}; recording goes on here and is shared when it is back"
                    ),
                    true,
                    Some(30),
                );
            }
            model.engine = Some(News::Unreachable { reason, unsent });
        }
        state @ News::Shared { .. } => model.engine = Some(state),
    }
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

/// The choices of a proposal's dialog.
pub const PROPOSAL: [&str; 2] = ["Accept", "Decline (recorded)"];

/// Ask the operator to accept or decline a responder's proposal.
fn ask(model: &mut Model, proposer: String, seq: u64, what: Proposed) {
    let (what, text) = match what {
        Proposed::Run(run) => {
            let (run, text) = run_text(model, &proposer, seq, run);
            (Proposed::Run(run), text)
        }
        Proposed::Note(note) => {
            let text = vec![
                format!("{proposer} proposes this note (#{seq}):"),
                note.clone(),
                "Accepting records it in their name.".to_string(),
            ];
            (Proposed::Note(note), text)
        }
    };
    let purpose = Purpose::Proposal {
        proposer,
        seq,
        what,
    };
    let options = PROPOSAL.iter().map(|s| (*s).to_string()).collect();
    let dialog = Dialog::choose("A proposal".into(), text, options, 0, purpose);
    show(model, dialog);
}

/// Open `dialog`, or queue it behind the one open.
fn show(model: &mut Model, dialog: Dialog) {
    if model.dialog.is_none() {
        model.dialog = Some(dialog);
    } else {
        model.dialogs_waiting.push_back(dialog);
    }
}

/// How long a proposal shared on the engine is put to this console's operator: a responder
/// joining later replays the stream, and old proposals are history, not questions.
const PROPOSAL_FRESH_MINUTES: i64 = 5;

/// A record another responder shared: a run proposed to this console's executor lease holder
/// (this operator, on this host) is put to the operator, as a follower's proposal is.
fn proposed_to_us(model: &mut Model, r: &crate::incident::Record) {
    let crate::incident::Event::RunProposed {
        runbook,
        variables,
        to,
    } = &r.kind
    else {
        return;
    };
    let fresh = model.now - r.time < chrono::Duration::minutes(PROPOSAL_FRESH_MINUTES);
    if *to != crate::share::lease::holder_name() || !fresh {
        return;
    }
    model.notify(
        format!("{} proposes running runbook \"{runbook}\"", r.actor),
        false,
        Some(30),
    );
    let run = RunProposal {
        runbook: runbook.clone(),
        variables: variables.clone(),
    };
    ask(model, r.actor.clone(), r.seq, Proposed::Run(run));
}

/// The choices when a run is refused because another responder holds the executor lease.
pub const LEASE_BUSY: [&str; 2] = ["Propose the run to them", "Do not propose"];

/// A run was not started: `by` holds the executor lease. Say so, and offer to propose the run
/// to them (their console asks them; they run it after their own confirmation).
pub fn lease_busy(model: &mut Model, by: String, runbook: String, lapses_s: u64) {
    let by = crate::sanitize::line(&by).into_owned();
    model.notify(
        format!("not run: {by} holds the executor lease (one responder runs at a time)"),
        true,
        Some(20),
    );
    let text = vec![
        format!(
            "\"{runbook}\" was not run: {by} holds the incident's executor lease, and one responder runs at a time."
        ),
        format!(
            "Propose it to them: their console asks them, and they run it after their own confirmation. Or run it after theirs: a lease lapses {lapses_s} s after its holder stops renewing it."
        ),
    ];
    let options = LEASE_BUSY.iter().map(|s| (*s).to_string()).collect();
    let purpose = Purpose::ProposeToLeaseHolder { by, runbook };
    show(
        model,
        Dialog::choose("Executor lease held".into(), text, options, 0, purpose),
    );
    model.dirty = true;
}

/// The lease dialog was answered: the proposal is recorded (and so shared on the engine,
/// where the lease holder's console picks it up), or nothing is.
pub fn propose_to_lease_holder(
    model: &mut Model,
    by: &str,
    runbook: &str,
    propose: bool,
) -> Vec<Effect> {
    if !propose {
        model.notify(format!("\"{runbook}\" not proposed"), false, Some(6));
        return Vec::new();
    }
    model.notify(
        format!("proposed \"{runbook}\" to {by}: their console asks them"),
        false,
        Some(15),
    );
    vec![Effect::Record {
        source: crate::incident::Source::Operator,
        actor: model.actor.clone(),
        event: crate::incident::Event::RunProposed {
            runbook: runbook.to_string(),
            variables: Default::default(),
            to: by.to_string(),
        },
    }]
}

/// The proposal's values this console takes (those of variables its runbook declares and
/// that are not secrets: a secret's value comes from this console's environment only, and is
/// never shown), and the dialog's lines: each value taken as `name = value`, each name not
/// taken with why.
fn run_text(
    model: &Model,
    proposer: &str,
    seq: u64,
    mut run: RunProposal,
) -> (RunProposal, Vec<String>) {
    let declared = (model.runbooks.entries.as_ref())
        .and_then(|e| e.iter().find(|e| e.name() == run.runbook))
        .and_then(|e| e.runbook())
        .map(|rb| rb.variables.clone());
    let mut text = vec![format!(
        "{proposer} proposes running runbook \"{}\" (#{seq}).",
        run.runbook
    )];
    let mut refused = Vec::new();
    run.variables.retain(|name, _| {
        let why = match declared
            .as_ref()
            .map(|d| d.iter().find(|v| v.name == *name))
        {
            None => "its runbook does not load here",
            Some(None) => "the runbook has no such variable",
            Some(Some(v)) if v.secret => {
                "a secret: its value comes from this console's environment"
            }
            Some(Some(_)) => return true,
        };
        refused.push(format!("  not taken: {name} ({why})"));
        false
    });
    if run.variables.is_empty() {
        text.push("With the usual values of its variables.".into());
    } else {
        text.push("With:".into());
        text.extend(run.variables.iter().map(|(k, v)| format!("  {k} = {v}")));
    }
    text.extend(refused);
    text.push(
        "Accepting opens its run dialog with these values: its plan and your typed \
         confirmation come before it runs."
            .into(),
    );
    (run, text)
}

/// A proposal's dialog was answered (`accepted`, or declined: enter on the second choice, or
/// esc); a declined proposal is recorded, an accepted note recorded in the proposer's name,
/// an accepted run's dialog opened with the proposed values.
pub fn proposal_answered(
    model: &mut Model,
    proposer: &str,
    seq: u64,
    what: &Proposed,
    accepted: bool,
) -> Vec<Effect> {
    use crate::incident::{Event, Source};
    let event = match (what, accepted) {
        (Proposed::Run(run), true) => {
            model.runbooks.accepted = Some(AcceptedRun {
                proposer: proposer.to_string(),
                seq,
                run: run.clone(),
            });
            return super::runbooks::ask_to_run_proposed(model);
        }
        (Proposed::Note(text), true) => {
            return vec![Effect::Record {
                source: Source::Operator,
                actor: proposer.to_string(),
                event: Event::note(text.clone()),
            }];
        }
        (Proposed::Run(run), false) => format!(
            "declined the run of \"{}\" proposed by {proposer} (#{seq})",
            run.runbook
        ),
        (Proposed::Note(_), false) => format!("declined the note proposed by {proposer} (#{seq})"),
    };
    vec![Effect::Record {
        source: Source::Operator,
        actor: model.actor.clone(),
        event: Event::note(event),
    }]
}

/// A run of `runbook` starts as `run_id` with the dialog's `vars`: when it is the accepted
/// proposal's, the proposed values go under the dialog's (later wins), and the operator's
/// record of it names the proposer, so the run has both authors on the timeline.
pub fn run_proposed(
    model: &mut Model,
    runbook: &str,
    run_id: &str,
    vars: Vec<(String, String)>,
) -> (Vec<(String, String)>, Option<Effect>) {
    let Some(a) = model
        .runbooks
        .accepted
        .take_if(|a| a.run.runbook == runbook)
    else {
        return (vars, None);
    };
    let mut all: Vec<(String, String)> = a.run.variables.into_iter().collect();
    all.extend(vars);
    let mut text = format!(
        "runs \"{runbook}\" as {} proposed (#{}): run {run_id}",
        a.proposer, a.seq
    );
    if !all.is_empty() {
        let list: Vec<String> = all.iter().map(|(k, v)| format!("{k}={v}")).collect();
        text.push_str(&format!(", with {}", list.join(", ")));
    }
    let record = Effect::Record {
        source: crate::incident::Source::Operator,
        actor: model.actor.clone(),
        event: crate::incident::Event::note(text),
    };
    (all, Some(record))
}

/// The accepted proposal of a run of `runbook` will not run (`why`): dropped, and recorded.
pub fn accepted_run_dropped(model: &mut Model, runbook: &str, why: &str) -> Option<Effect> {
    let a = model
        .runbooks
        .accepted
        .take_if(|a| a.run.runbook == runbook)?;
    Some(Effect::Record {
        source: crate::incident::Source::Operator,
        actor: model.actor.clone(),
        event: crate::incident::Event::note(format!(
            "did not run \"{runbook}\" proposed by {} (#{}): {why}",
            a.proposer, a.seq
        )),
    })
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
