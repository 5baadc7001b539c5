//! The console's silences (issue 35): the form from an alert's labels, editable; the typed
//! confirmation when the matchers select more than fires; the lapse warning five minutes
//! before, not earlier; resolving offers to expire.

use super::*;
use crate::alerts::silence::SilenceSpec;
use crate::app::panes::dialog::{Body, Purpose};
use crate::app::workers::silence::{Order, Report};
use crate::incident::event::{AlertSource, Matcher, SilenceChange, SilenceRecord};
use crate::incident::silence::MatchOp;
use std::time::Duration;

const CEILING: Duration = Duration::from_secs(12 * 3600);

fn rec(seq: u64, kind: Event) -> Record {
    Record {
        seq,
        time: t0(),
        source: Source::Alert,
        actor: "ana".into(),
        host: String::new(),
        kind,
    }
}

fn firing(name: &str, service: &str) -> Event {
    Event::AlertFiring {
        name: name.into(),
        labels: [("service", service), ("severity", "page")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        source: AlertSource::Alertmanager,
    }
}

fn silenced() -> Model {
    let mut m = with_incident();
    m.silences.ceiling = Some(CEILING);
    m.actor = "ana".into();
    m.timeline
        .push(rec(1, firing("PoolSaturated", "planner-api")));
    m
}

fn fields(m: &Model) -> Vec<String> {
    match &m.dialog.as_ref().expect("a dialog").body {
        Body::Form { fields, .. } => fields.iter().map(|f| f.value.clone()).collect(),
        other => panic!("{other:?}"),
    }
}

fn typed(m: &mut Model, text: &str) {
    for c in text.chars() {
        update(m, key(c));
    }
}

#[test]
fn s_opens_a_form_of_the_alerts_labels_whose_matchers_can_be_edited() {
    let mut m = silenced();
    update(&mut m, key('S'));
    assert_eq!(m.dialog.as_ref().unwrap().purpose, Purpose::SilenceForm);
    assert_eq!(
        fields(&m),
        [
            "alertname=\"PoolSaturated\"",
            "service=\"planner-api\"",
            "severity=\"page\"",
            "",
            ""
        ]
    );
    // The third matcher is dropped (its prefilled value is selected: backspace clears it),
    // the second edited into a regular expression, and a note typed.
    update(&mut m, code(KeyCode::Tab));
    typed(&mut m, "service=~planner-.*");
    update(&mut m, code(KeyCode::Tab));
    update(&mut m, code(KeyCode::Backspace));
    update(&mut m, code(KeyCode::Tab));
    update(&mut m, code(KeyCode::Tab));
    typed(&mut m, "pager storm");
    let effects = update(&mut m, code(KeyCode::Enter));
    let [Effect::Silence(Order::Count(spec))] = effects.as_slice() else {
        panic!("{effects:?} {:?}", m.dialog);
    };
    assert_eq!(
        spec.matchers(),
        [
            Matcher::new("alertname", MatchOp::Equal, "PoolSaturated"),
            Matcher::new("service", MatchOp::Regex, "planner-.*"),
        ]
    );
    assert_eq!(spec.comment, "warroom incident 2026-07-17-1: pager storm");
    assert_eq!(spec.created_by, "ana");
    // Until resolved: the ceiling, extended while the incident lasts.
    assert_eq!(spec.ends_at - spec.starts_at, chrono::Duration::hours(12));
    assert!(m.dialog.is_none());
}

#[test]
fn a_form_that_would_be_refused_stays_open_and_says_why() {
    let mut m = silenced();
    update(&mut m, key('S'));
    for _ in 0..3 {
        update(&mut m, code(KeyCode::Backspace));
        update(&mut m, code(KeyCode::Tab));
    }
    let effects = update(&mut m, code(KeyCode::Enter));
    assert!(effects.is_empty(), "{effects:?}");
    let d = m.dialog.as_ref().expect("kept open");
    assert!(
        d.error.as_deref().unwrap().contains("at least one matcher"),
        "{d:?}"
    );
    // Longer than the ceiling (the focus is on "for", after the three matchers).
    typed(&mut m, "13h");
    update(&mut m, code(KeyCode::Tab));
    update(&mut m, code(KeyCode::Tab));
    typed(&mut m, "alertname=X");
    assert!(update(&mut m, code(KeyCode::Enter)).is_empty());
    let d = m.dialog.as_ref().expect("kept open");
    assert!(d.error.as_deref().unwrap().contains("ceiling"), "{d:?}");
}

fn spec_of(m: &Model, matchers: &[&str]) -> Box<SilenceSpec> {
    Box::new(SilenceSpec::new(
        &crate::incident::silence::IncidentMark::new("2026-07-17-1"),
        matchers.iter().map(|s| s.parse().unwrap()).collect(),
        m.now,
        CEILING,
        "ana",
        "",
    ))
}

#[test]
fn matchers_selecting_more_than_fires_ask_for_the_typed_word_with_the_count() {
    let mut m = silenced();
    // As many as fire here: made at once.
    let spec = spec_of(&m, &["alertname=PoolSaturated"]);
    let effects = update(
        &mut m,
        Msg::SilenceCounted {
            spec: spec.clone(),
            result: Ok(1),
        },
    );
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::Silence(Order::Make {
                broad_confirmed: false,
                ..
            })]
        ),
        "{effects:?}"
    );
    assert!(m.dialog.is_none());
    // Alertmanager counts three: asked, with the count.
    let broad = spec_of(&m, &["severity=page"]);
    assert!(
        update(
            &mut m,
            Msg::SilenceCounted {
                spec: broad.clone(),
                result: Ok(3),
            },
        )
        .is_empty()
    );
    let d = m.dialog.as_ref().expect("the typed confirmation");
    assert_eq!(d.purpose, Purpose::SilenceBroad(broad.clone()));
    assert!(
        d.text[0].contains("select 3 alert(s)") && d.text[0].contains("1 of them"),
        "{d:?}"
    );
    typed(&mut m, "silenc");
    assert!(update(&mut m, code(KeyCode::Enter)).is_empty());
    assert!(
        m.dialog.as_ref().unwrap().error.is_some(),
        "a wrong word is not yes"
    );
    typed(&mut m, "e");
    let effects = update(&mut m, code(KeyCode::Enter));
    let [
        Effect::Silence(Order::Make {
            spec,
            broad_confirmed: true,
            ..
        }),
    ] = effects.as_slice()
    else {
        panic!("{effects:?}");
    };
    assert_eq!(*spec, broad);
    // A matcher matching every value is asked about even when the count is no more.
    let every = spec_of(&m, &["alertname=PoolSaturated", "pod=~.*"]);
    update(
        &mut m,
        Msg::SilenceCounted {
            spec: every,
            result: Ok(1),
        },
    );
    assert!(matches!(
        &m.dialog.as_ref().unwrap().purpose,
        Purpose::SilenceBroad(_)
    ));
}

#[test]
fn a_silence_made_is_recorded_as_the_cli_records_it() {
    let mut m = silenced();
    let made = SilenceRecord {
        change: SilenceChange::Made,
        id: "0f7c3a2e-silence".into(),
        matchers: vec![Matcher::new("alertname", MatchOp::Equal, "PoolSaturated")],
        until: t0() + chrono::Duration::hours(12),
        author: "ana".into(),
    };
    let effects = update(
        &mut m,
        Msg::Silenced(Report {
            records: vec![made.clone()],
            error: None,
        }),
    );
    let [Effect::Record { event, .. }] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_eq!(*event, Event::Silence(made));
}

fn with_silence_until(minutes: i64) -> Model {
    let mut m = silenced();
    m.timeline.push(rec(
        2,
        Event::Silence(SilenceRecord {
            change: SilenceChange::Made,
            id: "0f7c3a2e-silence".into(),
            matchers: vec![Matcher::new("alertname", MatchOp::Equal, "PoolSaturated")],
            until: t0() + chrono::Duration::minutes(minutes),
            author: "ana".into(),
        }),
    ));
    m
}

fn lapsing(effects: &[Effect]) -> bool {
    effects.iter().any(|e| {
        matches!(e, Effect::Record { event: Event::Silence(s), .. } if s.change == SilenceChange::Lapsing)
    })
}

#[test]
fn the_lapse_is_warned_of_five_minutes_before_not_earlier_and_once() {
    let mut m = with_silence_until(20);
    let early = t0() + chrono::Duration::minutes(15) - chrono::Duration::seconds(1);
    let effects = update(&mut m, Msg::Tick(early));
    assert!(!lapsing(&effects) && m.dialog.is_none(), "{effects:?}");
    let at = t0() + chrono::Duration::minutes(15);
    let effects = update(&mut m, Msg::Tick(at));
    assert!(lapsing(&effects), "{effects:?}");
    let notice = m.notice.as_ref().unwrap();
    assert!(
        notice.warning && notice.text.contains("lapses at"),
        "{notice:?}"
    );
    let d = m.dialog.as_ref().expect("the offer to extend");
    assert!(matches!(d.purpose, Purpose::SilenceLapsing(_)));
    assert_eq!(d.selected(), None, "a decision starts unselected");
    let later = at + chrono::Duration::seconds(1);
    assert!(!lapsing(&update(&mut m, Msg::Tick(later))), "warned once");
    assert!(update(&mut m, code(KeyCode::Enter)).is_empty());
    assert!(
        m.dialog.as_ref().unwrap().error.is_some(),
        "enter alone does not choose"
    );
    update(&mut m, code(KeyCode::Down));
    let effects = update(&mut m, code(KeyCode::Enter));
    let [Effect::Silence(Order::Extend { id, until, author })] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_eq!((id.as_str(), author.as_str()), ("0f7c3a2e-silence", "ana"));
    assert_eq!(*until, later + chrono::Duration::hours(12));
}

#[test]
fn a_lapse_warned_of_before_a_restart_is_not_warned_again() {
    let mut m = with_silence_until(4);
    let Some(Event::Silence(s)) = m.timeline.last().map(|r| r.kind.clone()) else {
        unreachable!()
    };
    m.timeline.push(rec(
        3,
        Event::Silence(SilenceRecord {
            change: SilenceChange::Lapsing,
            ..s
        }),
    ));
    assert!(!lapsing(&update(&mut m, Msg::Tick(t0()))));
    assert!(m.dialog.is_none());
}

#[test]
fn resolving_lists_the_live_silences_and_offers_to_expire_them() {
    let mut m = with_silence_until(60);
    update(&mut m, key('s'));
    for _ in 0..3 {
        update(&mut m, code(KeyCode::Down));
    }
    let effects = update(&mut m, code(KeyCode::Enter));
    assert!(
        matches!(effects.as_slice(), [Effect::Record { .. }]),
        "{effects:?}"
    );
    let d = m.dialog.as_ref().expect("the offer to expire");
    let Purpose::SilenceExpire(silences) = &d.purpose else {
        panic!("{d:?}");
    };
    assert_eq!(silences.len(), 1);
    assert!(d.text.iter().any(|l| l.contains("0f7c3a2e")), "{d:?}");
    assert_eq!(d.selected(), None);
    update(&mut m, code(KeyCode::Down));
    let effects = update(&mut m, code(KeyCode::Enter));
    let [Effect::Silence(Order::Expire { silences, .. })] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_eq!(silences[0].id, "0f7c3a2e-silence");
}

#[test]
fn without_alertmanager_or_alerts_s_says_why() {
    let mut m = silenced();
    m.silences.ceiling = None;
    update(&mut m, key('S'));
    let said = m
        .notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default();
    assert!(
        m.dialog.is_none() && said.contains("[alertmanager] url"),
        "{said}"
    );
    let mut m = with_incident();
    m.silences.ceiling = Some(CEILING);
    update(&mut m, key('S'));
    assert!(m.dialog.is_none());
    assert!(m.notice.as_ref().unwrap().text.contains("no alert fires"));
}

#[test]
fn two_alerts_firing_ask_which_unless_the_timelines_top_row_is_one() {
    let mut m = silenced();
    m.timeline.push(rec(2, firing("DiskFilling", "planner-db")));
    update(&mut m, key('S'));
    let d = m.dialog.as_ref().unwrap();
    assert!(matches!(d.purpose, Purpose::SilencePick(_)));
    assert_eq!(d.selected(), None);
    update(&mut m, code(KeyCode::Down));
    update(&mut m, code(KeyCode::Enter));
    assert_eq!(m.dialog.as_ref().unwrap().title, "Silence DiskFilling");
    update(&mut m, code(KeyCode::Esc));
    // The timeline's top row (newest first: DiskFilling; one down: PoolSaturated).
    m.show_timeline = true;
    m.timeline_pane.scroll = 1;
    update(&mut m, key('S'));
    assert_eq!(m.dialog.as_ref().unwrap().title, "Silence PoolSaturated");
}
