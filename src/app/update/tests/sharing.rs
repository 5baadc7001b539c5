//! Several responders, in `update`: records arriving twice or out of order are shown once in
//! order; a follower records no crossings and proposes runs instead of running them; the
//! holder gone offers a takeover; a proposal reaches the holder's operator.

use super::*;
use crate::app::sharing::{ShareMsg, Sharing};
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
            runbook: name.clone(),
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
