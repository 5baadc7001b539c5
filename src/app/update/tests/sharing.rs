//! Several responders, in `update`: records arriving twice or out of order are shown once in
//! order; a follower records no crossings and proposes runs instead of running them; the
//! holder gone offers a takeover; a proposal reaches the holder's operator.

use super::*;
use crate::app::panes::dialog::{Body, Purpose};
use crate::app::sharing::{RunProposal, ShareMsg, Sharing};
use crate::incident::store::{Holder, Role};

fn note(seq: u64, actor: &str, text: &str) -> Record {
    Record {
        seq,
        time: t0() + chrono::Duration::seconds(seq as i64),
        source: Source::Operator,
        actor: actor.into(),
        host: "laptop".into(),
        kind: Event::note(text),
    }
}

fn following() -> Model {
    let mut m = with_incident();
    m.sharing = Sharing::Following {
        holder: Holder::me(Role::Recorder),
        followers: 1,
        gone: None,
    };
    m
}

#[test]
fn a_record_from_the_feed_and_from_its_answer_is_shown_once_in_order() {
    let mut m = with_incident();
    update(
        &mut m,
        Msg::Share(ShareMsg::Record(Box::new(note(2, "bo", "b")))),
    );
    update(&mut m, Msg::Recorded(Ok(note(1, "ana", "a"))));
    update(
        &mut m,
        Msg::Share(ShareMsg::Record(Box::new(note(1, "ana", "a")))),
    );
    update(&mut m, Msg::Recorded(Ok(note(2, "bo", "b"))));
    update(
        &mut m,
        Msg::Share(ShareMsg::Record(Box::new(note(3, "cy", "c")))),
    );
    let seqs: Vec<u64> = m.timeline.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, vec![1, 2, 3]);
}

#[test]
fn a_follower_leaves_crossings_to_the_holder() {
    let mut m = following();
    let mut recorded = 0;
    for (i, v) in [0.5, 0.99, 0.99].iter().enumerate() {
        let effects = reading(&mut m, i, *v);
        recorded += effects
            .iter()
            .filter(|e| matches!(e, Effect::Record { .. }))
            .count();
    }
    assert_eq!(
        recorded, 0,
        "the holder records crossings, not its followers"
    );
    // Its notes are still recorded (through the holder, by the workers).
    update(&mut m, key('n'));
    update(&mut m, key('x'));
    let effects = update(&mut m, code(KeyCode::Enter));
    assert!(
        matches!(effects.as_slice(), [Effect::Record { .. }]),
        "{effects:?}"
    );
}

#[test]
fn the_holder_gone_offers_a_takeover_once() {
    let mut m = following();
    update(
        &mut m,
        Msg::Share(ShareMsg::HolderGone("it closed the connection".into())),
    );
    assert!(matches!(
        &m.sharing,
        Sharing::Following { gone: Some(_), .. }
    ));
    let d = m.dialog.as_ref().expect("the offer");
    assert_eq!(d.purpose, crate::app::panes::dialog::Purpose::TakeOver);
    update(&mut m, Msg::Share(ShareMsg::HolderGone("again".into())));
    assert!(m.dialogs_waiting.is_empty(), "offered once");
    let effects = update(&mut m, code(KeyCode::Enter));
    assert_eq!(effects, vec![Effect::TakeOver]);
}

#[test]
fn a_proposal_selects_the_runbook_and_says_who_asks() {
    let mut m = with_incident();
    m.sharing = Sharing::Holding { followers: 1 };
    let entries = crate::runbook::catalog::load(&[]);
    let target = entries.len().saturating_sub(1);
    let name = entries[target].name();
    update(&mut m, Msg::RunbooksLoaded(entries));
    m.runbooks.selected = 0;
    update(
        &mut m,
        Msg::Share(ShareMsg::Proposal {
            run: RunProposal {
                runbook: name.clone(),
                variables: Default::default(),
            },
            record: Box::new(note(1, "bo", "proposes")),
        }),
    );
    assert_eq!(m.runbooks.selected, target);
    let text = &m.notice.as_ref().expect("a notice").text;
    assert!(
        text.contains("bo proposes") && text.contains(&name),
        "{text}"
    );
    assert_eq!(m.timeline.len(), 1);
    assert_eq!(
        m.runbooks.run, None,
        "nothing runs without the holder's confirmation"
    );
}

#[test]
fn a_proposed_note_is_recorded_in_the_proposers_name_or_declined_on_the_record() {
    let agent = "agent (pytest) via mcp, for ana";
    let mut m = with_incident();
    m.sharing = Sharing::Holding { followers: 1 };
    let propose = |m: &mut Model, seq: u64| {
        update(
            m,
            Msg::Share(ShareMsg::NoteProposal {
                text: "the pool filled at 07:31".into(),
                record: Box::new(note(seq, agent, "proposes the note")),
            }),
        );
    };
    propose(&mut m, 1);
    let d = m.dialog.as_ref().expect("the operator is asked");
    assert!(d.text.iter().any(|l| l.contains(agent)), "{:?}", d.text);
    let effects = update(&mut m, code(KeyCode::Enter));
    let accepted = crate::incident::Event::note("the pool filled at 07:31");
    assert!(
        effects.iter().any(|e| matches!(e,
            Effect::Record { actor, event, .. } if actor == agent && *event == accepted)),
        "{effects:?}"
    );
    // Esc declines, and the refusal is recorded by the operator.
    propose(&mut m, 2);
    let effects = update(&mut m, code(KeyCode::Esc));
    assert!(
        effects.iter().any(|e| matches!(e,
            Effect::Record { actor, event: crate::incident::Event::Note { text, .. }, .. }
                if *actor == m.actor && text.contains("declined the note proposed by agent"))),
        "{effects:?}"
    );
    assert!(m.dialog.is_none());
}

const AGENT: &str = "agent (pytest) via mcp, for ana";

/// The holder's console with the shipped runbooks, and `runbook` proposed by the agent as
/// record `seq` with `variables`.
fn proposed_run(runbook: &str, variables: &[(&str, &str)], seq: u64) -> Model {
    let mut m = with_incident();
    m.sharing = Sharing::Holding { followers: 0 };
    update(
        &mut m,
        Msg::RunbooksLoaded(crate::runbook::catalog::load(&[])),
    );
    propose_run(&mut m, runbook, variables, seq);
    m
}

fn propose_run(m: &mut Model, runbook: &str, variables: &[(&str, &str)], seq: u64) {
    let run = RunProposal {
        runbook: runbook.into(),
        variables: (variables.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    };
    update(
        m,
        Msg::Share(ShareMsg::Proposal {
            run,
            record: Box::new(note(seq, AGENT, "proposes running runbook")),
        }),
    );
}

fn note_by(effects: &[Effect], actor: &str, has: &str) -> bool {
    effects.iter().any(|e| {
        matches!(e, Effect::Record { actor: a, event: crate::incident::Event::Note { text, .. }, .. }
            if a == actor && text.contains(has))
    })
}

#[test]
fn a_proposed_run_shows_its_values_and_never_takes_or_shows_a_secret() {
    let m = proposed_run(
        "pg-cancel-long-transactions",
        &[
            ("max_count", "2"),
            ("pg_password", "canary-77"),
            ("nonsense", "x"),
        ],
        4,
    );
    let d = m.dialog.as_ref().expect("the operator is asked");
    let text = d.text.join("\n");
    assert!(text.contains(AGENT) && text.contains("(#4)"), "{text}");
    assert!(text.contains("  max_count = 2"), "{text}");
    assert!(
        !text.contains("canary-77"),
        "a secret's value is never shown: {text}"
    );
    assert!(text.contains("not taken: pg_password (a secret"), "{text}");
    assert!(
        text.contains("not taken: nonsense (the runbook has no such"),
        "{text}"
    );
    let Purpose::Proposal {
        what: crate::app::sharing::Proposed::Run(run),
        ..
    } = &d.purpose
    else {
        panic!("{:?}", d.purpose)
    };
    let taken: Vec<_> = run.variables.keys().collect();
    assert_eq!(
        taken,
        ["max_count"],
        "only what the runbook declares and is no secret"
    );
}

#[test]
fn an_accepted_run_opens_its_dialog_with_the_proposed_values_and_runs_with_them() {
    let mut m = proposed_run("pool-exhaustion", &[("service", "planner-worker")], 7);
    let effects = update(&mut m, code(KeyCode::Enter));
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::PlanRunbook { runbook, vars }
            if runbook.name == "pool-exhaustion"
                && vars == &[("service".to_string(), "planner-worker".to_string())])),
        "the plan is made with the proposed values: {effects:?}"
    );
    // The plan's usual value does not replace the proposed one.
    let mut values = std::collections::BTreeMap::new();
    values.insert("service".to_string(), "planner-api".to_string());
    values.insert("window".to_string(), "1m".to_string());
    let plan = crate::runbook::setup::Plan {
        lines: vec!["1. restart planner-worker".into()],
        batches: Default::default(),
        titles: Default::default(),
        values,
    };
    let name = "pool-exhaustion".to_string();
    update(
        &mut m,
        Msg::Planned {
            name,
            result: Ok(plan),
        },
    );
    let d = m.dialog.as_ref().expect("the run dialog");
    assert!(matches!(&d.purpose, Purpose::StartRun(rb) if rb.name == "pool-exhaustion"));
    let Body::Form { fields, .. } = &d.body else {
        panic!("{d:?}")
    };
    let field = |label: &str| {
        fields
            .iter()
            .find(|f| f.label == label)
            .map(|f| f.value.clone())
    };
    assert_eq!(field("service").as_deref(), Some("planner-worker"));
    assert_eq!(field("window").as_deref(), Some("1m"));
    // Nothing runs until the operator types the runbook's name.
    assert!(m.runbooks.run.is_none());
    for c in "pool-exhaustion".chars() {
        update(&mut m, key(c));
    }
    let effects = update(&mut m, code(KeyCode::Enter));
    let Some(Effect::StartRun { vars, run_id, .. }) = effects
        .iter()
        .find(|e| matches!(e, Effect::StartRun { .. }))
    else {
        panic!("{effects:?}")
    };
    assert_eq!(
        vars,
        &[("service".to_string(), "planner-worker".to_string())]
    );
    let both = format!("as {AGENT} proposed (#7): run {run_id}");
    assert!(note_by(&effects, &m.actor, &both), "{effects:?}");
    assert_eq!(m.runbooks.accepted, None, "the proposal is spent");
}

#[test]
fn a_declined_run_and_an_accepted_run_not_started_are_recorded() {
    let mut m = proposed_run("pool-exhaustion", &[("service", "planner-worker")], 3);
    let effects = update(&mut m, code(KeyCode::Esc));
    let declined = format!("declined the run of \"pool-exhaustion\" proposed by {AGENT} (#3)");
    assert!(note_by(&effects, &m.actor, &declined), "{effects:?}");
    assert!(m.dialog.is_none() && m.runbooks.accepted.is_none());
    // Accepted, then its run dialog closed: nothing runs, and the record says so.
    propose_run(
        &mut m,
        "pool-exhaustion",
        &[("service", "planner-worker")],
        5,
    );
    update(&mut m, code(KeyCode::Enter));
    assert!(matches!(
        m.dialog.as_ref().map(|d| &d.purpose),
        Some(Purpose::StartRun(_))
    ));
    let effects = update(&mut m, code(KeyCode::Esc));
    let dropped = format!("did not run \"pool-exhaustion\" proposed by {AGENT} (#5)");
    assert!(note_by(&effects, &m.actor, &dropped), "{effects:?}");
    assert!(!effects.iter().any(|e| matches!(e, Effect::StartRun { .. })));
    assert!(m.runbooks.run.is_none() && m.runbooks.accepted.is_none());
}

#[test]
fn the_engines_news_reach_the_bar_and_other_responders_records_the_timeline_by_time() {
    use crate::share::session::News;
    use crate::share::{Shared, WriterId};
    let mut m = with_incident();
    m.add_record(note(1, "ana", "mine"));
    let engine = |m: &mut Model, n: News| update(m, Msg::Share(ShareMsg::Engine(n)));
    engine(
        &mut m,
        News::Unreachable {
            reason: "the engine at nats://x:4222 is unreachable: refused".into(),
            unsent: 2,
        },
    );
    let (text, warn) = crate::ui::statusbar::engine(&m).unwrap();
    assert!(
        warn && text.contains("unreachable") && text.contains("2 unsent"),
        "{text}"
    );
    engine(
        &mut m,
        News::Shared {
            responders: 3,
            unsent: 0,
        },
    );
    let (text, warn) = crate::ui::statusbar::engine(&m).unwrap();
    assert_eq!(
        (text.as_str(), warn),
        ("⇄ shared · 3 responders · 0 unsent", false)
    );
    // Another writer's records keep their own sequence numbers (1 again) and go by time.
    let bo = WriterId::parse("bo-2").unwrap();
    for (seq, secs) in [(2, 9), (1, 0)] {
        let mut r = note(seq, "bo", "theirs");
        r.time = t0() + chrono::Duration::seconds(secs);
        engine(
            &mut m,
            News::Record(Box::new(Shared {
                writer: bo.clone(),
                record: r,
            })),
        );
    }
    let times: Vec<i64> = m
        .others
        .iter()
        .map(|r| (r.time - t0()).num_seconds())
        .collect();
    assert_eq!(times, [0, 9]);
    assert_eq!(m.timeline.len(), 1, "this console's journal stays its own");
}

/// Across machines (issue 36): a run refused because bo holds the executor lease offers to
/// propose it to bo; proposing records a `RunProposed` to bo (shared on the engine like every
/// record). On bo's console, that record from another responder is put to the operator as a
/// proposal, accepted into the run dialog as a follower's is; one to someone else, or one
/// replayed from long ago, is not.
#[test]
fn a_run_refused_by_the_lease_is_proposed_to_its_holder_whose_console_asks() {
    use crate::share::session::News;
    use crate::share::{Shared, WriterId};
    let mut ana = with_incident();
    let refused = |m: &mut Model| {
        let busy = Msg::LeaseBusy {
            by: "bo on laptop".into(),
            runbook: "pool-exhaustion".into(),
            lapses_s: 30,
        };
        update(m, busy)
    };
    refused(&mut ana);
    let d = ana.dialog.as_ref().expect("the lease dialog");
    assert!(
        matches!(&d.purpose, Purpose::ProposeToLeaseHolder { by, runbook }
            if by == "bo on laptop" && runbook == "pool-exhaustion"),
        "{d:?}"
    );
    let effects = update(&mut ana, code(KeyCode::Enter));
    let proposal = effects.iter().find_map(|e| match e {
        Effect::Record { event, .. } => Some(event.clone()),
        _ => None,
    });
    let Some(event) = proposal else {
        panic!("{effects:?}")
    };
    let Event::RunProposed { runbook, to, .. } = &event else {
        panic!("{event:?}")
    };
    assert_eq!(
        (runbook.as_str(), to.as_str()),
        ("pool-exhaustion", "bo on laptop")
    );
    // Declining records nothing.
    refused(&mut ana);
    update(&mut ana, code(KeyCode::Down));
    let none = update(&mut ana, code(KeyCode::Enter));
    assert!(
        !none.iter().any(|e| matches!(e, Effect::Record { .. })),
        "{none:?}"
    );

    // bo's console (this process plays bo: the proposal names this holder).
    let here = crate::share::lease::holder_name();
    let shared = |to: &str, minutes_ago: i64| {
        let mut r = note(4, "ana", "");
        r.kind = match &event {
            Event::RunProposed {
                runbook, variables, ..
            } => Event::RunProposed {
                runbook: runbook.clone(),
                variables: variables.clone(),
                to: to.into(),
            },
            _ => unreachable!(),
        };
        r.time = t0() - chrono::Duration::minutes(minutes_ago);
        Msg::Share(ShareMsg::Engine(News::Record(Box::new(Shared {
            writer: WriterId::parse("ana-1").unwrap(),
            record: r,
        }))))
    };
    let mut bo = with_incident();
    update(
        &mut bo,
        Msg::RunbooksLoaded(crate::runbook::catalog::load(&[])),
    );
    update(&mut bo, shared("carol on desk", 0));
    update(&mut bo, shared(&here, 30));
    assert!(bo.dialog.is_none(), "{:?}", bo.dialog);
    update(&mut bo, shared(&here, 0));
    let d = bo.dialog.as_ref().expect("the proposal is put to bo");
    assert!(
        matches!(&d.purpose, Purpose::Proposal { proposer, .. } if proposer == "ana"),
        "{d:?}"
    );
    let effects = update(&mut bo, code(KeyCode::Enter));
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::PlanRunbook { runbook, .. }
            if runbook.name == "pool-exhaustion")),
        "accepting opens the run: {effects:?}"
    );
    assert_eq!(bo.others.len(), 3, "every shared record is on the timeline");
}
