//! When the console asks for runbook advice, and what it keeps of the answer: a round every
//! [`EVERY`](crate::app::workers::advice::judge::EVERY) of the console's clock once the runbook list is loaded, never two at once,
//! never in a replay (its data are the past).

use crate::app::effect::Effect;
use crate::app::model::Model;
use crate::app::workers::advice::judge::{Advice, Headline};

/// The round due at the tick: the runbooks that can act here and name a symptom. Only while
/// the source answers: a round against a source that is down or has not answered yet would
/// only add queries to a struggling Prometheus, and its answer would not be shown.
pub fn tick(model: &mut Model) -> Vec<Effect> {
    if model.replay.is_some() || !model.advice.due(model.now) {
        return Vec::new();
    }
    if !matches!(
        model.source.health.state(),
        crate::metrics::health::HealthState::Up { .. }
    ) {
        return Vec::new();
    }
    let Some(entries) = &model.runbooks.entries else {
        return Vec::new();
    };
    // A runbook whose symptom this source has no series of waits longer.
    let mut runbooks = advisable(entries, model.rehearsal);
    runbooks.retain(|rb| model.advice.judges(&rb.name, model.now));
    if runbooks.is_empty() {
        return Vec::new();
    }
    model.advice.asked = Some(model.now);
    model.advice.in_flight = true;
    vec![Effect::Advise(runbooks)]
}

/// The runbooks a round judges: those that can act here (a rehearsal or not) and name a
/// symptom.
pub fn advisable(
    entries: &[crate::runbook::catalog::Entry],
    rehearsal: bool,
) -> Vec<crate::runbook::model::Runbook> {
    (entries.iter())
        .filter_map(|e| e.runbook())
        .filter(|rb| {
            rb.applies
                .as_ref()
                .is_some_and(|a| a.symptom.is_some() && a.on.refused_here(rehearsal).is_none())
        })
        .cloned()
        .collect()
}

/// A round came back: the headline shows it while it is fresh.
pub fn advised(model: &mut Model, advice: Advice) {
    model.advice.take(advice);
    model.dirty = true;
}

/// What the headline says of the advice now, or nothing when there is none,
/// it is stale, or the source is down (no suggestion is better than a wrong one).
pub fn headline(model: &Model) -> Option<Headline> {
    if matches!(
        model.source.health.state(),
        crate::metrics::health::HealthState::Down { .. }
    ) {
        return None;
    }
    model.advice.latest.as_ref()?.headline(model.now)
}

#[cfg(test)]
mod tests {
    use crate::app::Model;
    use crate::app::effect::Effect;
    use crate::app::msg::Msg;
    use crate::app::update::update;
    use crate::app::workers::advice::judge::{Advice, Finding, Verdict};
    use chrono::{DateTime, Duration, Utc};

    fn t0() -> DateTime<Utc> {
        "2026-07-17T07:30:00Z".parse().unwrap()
    }

    fn line(m: &Model) -> String {
        (crate::ui::summary::line(m, 400).into_iter())
            .map(|(s, _)| s)
            .collect::<Vec<_>>()
            .join(" · ")
    }

    fn advised(at: DateTime<Utc>, verdict: Verdict) -> Msg {
        Msg::Advised(Advice {
            at,
            findings: vec![Finding {
                runbook: "pool-exhaustion".into(),
                verdict,
                absent: false,
            }],
        })
    }

    /// The console asks for a round once the list is loaded, one at a time and every 30 s
    /// only; the suggestion shows while it is fresh and goes when it is stale or the source
    /// is down.
    #[test]
    fn a_suggestion_appears_with_its_reason_and_goes() {
        let config =
            crate::config::Config::default().with_panels(crate::metrics::presets::sim_panels());
        let mut m = Model::new(&config, crate::theme::Theme::fallback(), "t".into(), t0());
        m.rehearsal = true;
        assert!(
            !(update(&mut m, Msg::Tick(t0())).iter()).any(|e| matches!(e, Effect::Advise(_))),
            "nothing to advise before the runbooks are loaded"
        );
        update(
            &mut m,
            Msg::RunbooksLoaded(crate::runbook::catalog::load(&[])),
        );
        assert!(
            !(update(&mut m, Msg::Tick(t0())).iter()).any(|e| matches!(e, Effect::Advise(_))),
            "nothing asked of a source that has not answered yet"
        );
        let pass = m.source.health.admit(m.now).unwrap();
        (m.source.health).report(pass, Ok(()), m.now, &mut rand::rng());
        let asked = update(&mut m, Msg::Tick(t0()));
        let Some(Effect::Advise(runbooks)) = asked.iter().find(|e| matches!(e, Effect::Advise(_)))
        else {
            panic!("{asked:?}")
        };
        // Only what can act on a rehearsal and names a symptom.
        let names: Vec<&str> = runbooks.iter().map(|r| r.name.as_str()).collect();
        assert!(names.contains(&"pool-exhaustion"), "{names:?}");
        assert!(!names.contains(&"pgbouncer-raise-pool"), "{names:?}");
        assert!(!names.contains(&"shed-load"), "{names:?}");
        // One round at a time.
        let later = t0() + Duration::seconds(40);
        let again = update(&mut m, Msg::Tick(later));
        assert!(!again.iter().any(|e| matches!(e, Effect::Advise(_))));
        update(
            &mut m,
            advised(later, Verdict::Suggest("symptom 1 (> 0.95 for 20s)".into())),
        );
        let said = line(&m);
        assert!(
            said.contains("→ try pool-exhaustion: symptom 1 (> 0.95 for 20s)"),
            "{said}"
        );
        // Due again 30 s after the last ask.
        let again = update(&mut m, Msg::Tick(later + Duration::seconds(1)));
        assert!(again.iter().any(|e| matches!(e, Effect::Advise(_))));
        // No answer for 91 s: the suggestion is stale and goes.
        update(&mut m, Msg::Tick(later + Duration::seconds(91)));
        assert!(!line(&m).contains("try"), "{}", line(&m));
        // A held-back runbook says why.
        let now = m.now;
        update(
            &mut m,
            advised(now, Verdict::HeldBack("room: 0.89 (needs < 0.8)".into())),
        );
        let said = line(&m);
        assert!(
            said.contains("pool-exhaustion held back: room: 0.89 (needs < 0.8)"),
            "{said}"
        );
        // The source down: nothing but that.
        let pass = m.source.health.admit(m.now).unwrap();
        let error = crate::metrics::SourceError::Unreachable("refused".into());
        (m.source.health).report(pass, Err(&error), m.now, &mut rand::rng());
        let said = line(&m);
        assert!(!said.contains("held back"), "{said}");
    }

    /// A runbook whose symptom this source has no series of (the PgBouncer runbooks on a
    /// node-only Prometheus) is judged again only after 5 minutes; the others every 30 s.
    #[test]
    fn a_runbook_with_no_series_waits_five_minutes() {
        let config =
            crate::config::Config::default().with_panels(crate::metrics::presets::sim_panels());
        let mut m = Model::new(&config, crate::theme::Theme::fallback(), "t".into(), t0());
        m.rehearsal = true;
        update(
            &mut m,
            Msg::RunbooksLoaded(crate::runbook::catalog::load(&[])),
        );
        let pass = m.source.health.admit(m.now).unwrap();
        (m.source.health).report(pass, Ok(()), m.now, &mut rand::rng());
        let asked = |m: &mut Model, at: DateTime<Utc>| -> Option<Vec<String>> {
            update(m, Msg::Tick(at)).into_iter().find_map(|e| match e {
                Effect::Advise(rbs) => Some(rbs.into_iter().map(|r| r.name).collect()),
                _ => None,
            })
        };
        let first = asked(&mut m, t0()).expect("a round");
        assert!(first.contains(&"pool-exhaustion".to_string()), "{first:?}");
        let none = |at| {
            Msg::Advised(Advice {
                at,
                findings: Vec::new(),
            })
        };
        update(
            &mut m,
            Msg::Advised(Advice {
                at: t0(),
                findings: vec![Finding {
                    runbook: "pool-exhaustion".into(),
                    verdict: Verdict::Not("its symptom is not known: no series".into()),
                    absent: true,
                }],
            }),
        );
        let next = asked(&mut m, t0() + Duration::seconds(31));
        assert!(
            next.as_ref()
                .is_none_or(|n| !n.contains(&"pool-exhaustion".to_string())),
            "{next:?}"
        );
        update(&mut m, none(t0() + Duration::seconds(31)));
        let later = asked(&mut m, t0() + Duration::seconds(301)).expect("a round");
        assert!(later.contains(&"pool-exhaustion".to_string()), "{later:?}");
    }
}
