//! When the console asks for runbook advice, and what it keeps of the answer: a round every
//! [`EVERY`](crate::app::workers::advice::judge::EVERY) of the console's clock once the runbook list is loaded, never two at once,
//! never in a replay (its data are the past).

use crate::app::effect::Effect;
use crate::app::model::Model;
use crate::app::workers::advice::judge::{Advice, Headline};

/// The round due at the tick: the runbooks that can act here and name a symptom.
pub fn tick(model: &mut Model) -> Vec<Effect> {
    if model.replay.is_some() || !model.advice.due(model.now) {
        return Vec::new();
    }
    let Some(entries) = &model.runbooks.entries else {
        return Vec::new();
    };
    let runbooks: Vec<_> = (entries.iter())
        .filter_map(|e| e.runbook())
        .filter(|rb| {
            rb.applies.as_ref().is_some_and(|a| {
                a.symptom.is_some() && a.on.refused_here(model.rehearsal).is_none()
            })
        })
        .cloned()
        .collect();
    if runbooks.is_empty() {
        return Vec::new();
    }
    model.advice.asked = Some(model.now);
    model.advice.in_flight = true;
    vec![Effect::Advise(runbooks)]
}

/// A round came back: the headline shows it while it is fresh.
pub fn advised(model: &mut Model, advice: Advice) {
    model.advice.in_flight = false;
    model.advice.latest = Some(advice);
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
