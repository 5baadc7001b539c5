//! The dashboard by discovery: asked at the first tick when no `[[panel]]` is configured,
//! answered by `Msg::Discovered`, asked again with backoff when it fails and every minute while
//! nothing known is found. Once found, it keeps looking while signals of the stacks found are
//! absent (a PgBouncer with no pool yet): every [`ABSENT_AGAIN`], and at once on `r`; what
//! appears joins the dashboard, and the incident's timeline says so. The first frame never
//! waits for it.

use crate::app::effect::Effect;
use crate::app::model::{Discovery, Model};
use crate::app::msg::{DiscoverFailure, Discovered};
use crate::app::panes::panel::Panel;
use crate::incident::{Event, Source};
use chrono::Duration;

/// How long to wait after a failed discovery: 2 s doubling to a minute; five minutes when
/// asking again soon cannot help (the server refused us).
fn backoff(attempts: u32, failure: &DiscoverFailure) -> Duration {
    if let Some(after) = failure.retry_after {
        return Duration::from_std(after).unwrap_or(Duration::seconds(60));
    }
    if !failure.transient {
        return Duration::minutes(5);
    }
    Duration::seconds((2i64 << attempts.min(5)).min(60))
}

/// How often to look again when the Prometheus holds no known exporter (one cheap request:
/// a Prometheus that has only just started has scraped nothing yet).
pub const NOTHING_AGAIN: Duration = Duration::seconds(15);

/// How often to look again while signals of a stack found are absent.
pub const ABSENT_AGAIN: Duration = Duration::seconds(60);

/// At a tick: ask when it is due.
pub(super) fn tick(model: &mut Model) -> Vec<Effect> {
    let now = model.now;
    let attempts = match &mut model.discovery {
        Some(Discovery::Due { at, attempts, .. }) if at.is_none_or(|at| now >= at) => *attempts,
        Some(Discovery::Nothing { next, .. }) if now >= *next => 0,
        Some(Discovery::Found { next, .. }) if next.is_some_and(|n| now >= n) => {
            // Looking again behind the dashboard: it stays as it is meanwhile.
            *next = None;
            return vec![Effect::Discover];
        }
        _ => return Vec::new(),
    };
    model.discovery = Some(Discovery::Running { attempts });
    model.dirty = true;
    vec![Effect::Discover]
}

/// `r`: look again at once, when signals are absent (and no look is under way).
pub(super) fn look_again(model: &mut Model) {
    if let Some(Discovery::Found { missing, next, .. }) = &mut model.discovery
        && !missing.is_empty()
        && next.is_some()
    {
        *next = Some(model.now);
    }
}

/// Discovery answered.
pub(super) fn answered(
    model: &mut Model,
    result: Result<Discovered, DiscoverFailure>,
) -> Vec<Effect> {
    let now = model.now;
    let attempts = match &model.discovery {
        Some(Discovery::Running { attempts }) => *attempts,
        _ => 0,
    };
    model.dirty = true;
    let again = |missing: &[String]| (!missing.is_empty()).then(|| now + ABSENT_AGAIN);
    match result {
        Ok(d) if d.panels.is_empty() && model.panels.is_empty() => {
            model.discovery = Some(Discovery::Nothing {
                line: d.status,
                next: now + NOTHING_AGAIN,
            });
        }
        Ok(d) if model.panels.is_empty() => {
            let n = d.panels.len();
            model.panels = (d.panels.into_iter().zip(d.hints))
                .map(|(config, hint)| Panel::with_empty_hint(config, hint))
                .collect();
            model.selected = 0;
            model.zoomed = false;
            model.detectors = (model.panels.iter())
                .map(|p| {
                    crate::recorder::panel_watch::detector_from_journal(&p.config, &model.timeline)
                })
                .collect();
            model.notify(format!("found {}: {n} panels", d.summary), false, Some(10));
            model.discovery = Some(Discovery::Found {
                next: again(&d.missing),
                summary: d.summary,
                missing: d.missing,
            });
        }
        Ok(d) => {
            let next = again(&d.missing);
            let added = join(model, d.panels, d.hints);
            model.discovery = Some(Discovery::Found {
                next,
                summary: d.summary,
                missing: d.missing,
            });
            if !added.is_empty() {
                return said(model, &added);
            }
        }
        // Looking again failed: the dashboard stays, and so does the plan to look again.
        Err(_) if !model.panels.is_empty() => {
            if let Some(Discovery::Found { next, .. }) = &mut model.discovery {
                *next = Some(now + ABSENT_AGAIN);
            }
        }
        Err(f) => {
            let wait = backoff(attempts, &f);
            model.discovery = Some(Discovery::Due {
                at: Some(now + wait),
                attempts: attempts + 1,
                last_error: Some(crate::sanitize::line(&f.error).into_owned()),
            });
        }
    }
    Vec::new()
}

/// Add the panels a later discovery found that the dashboard lacks (by query), after the
/// others; the ones shown keep their history and their place. Returns the added titles.
fn join(
    model: &mut Model,
    panels: Vec<crate::config::PanelConfig>,
    hints: Vec<String>,
) -> Vec<String> {
    let mut added = Vec::new();
    for (config, hint) in panels.into_iter().zip(hints) {
        if model.panels.iter().any(|p| p.config.query == config.query) {
            continue;
        }
        added.push(config.title.clone());
        model
            .detectors
            .push(crate::recorder::panel_watch::detector_from_journal(
                &config,
                &model.timeline,
            ));
        model.panels.push(Panel::with_empty_hint(config, hint));
    }
    added
}

/// The new panels said on screen and, when an incident records here, on its timeline.
fn said(model: &mut Model, added: &[String]) -> Vec<Effect> {
    let text = format!("discovery found {} more: {}", added.len(), added.join(", "));
    model.notify(text.clone(), false, Some(10));
    if model.incident.is_none() || model.sharing.following() {
        return Vec::new();
    }
    vec![super::record(
        model,
        Source::System,
        "warroom".into(),
        Event::note(text),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::theme::Theme;

    fn model() -> Model {
        let now = "2026-12-01T10:00:00Z".parse().unwrap();
        let mut m = Model::new(&Config::default(), Theme::fallback(), "p".into(), now);
        m.discovery = Some(Discovery::Due {
            at: None,
            attempts: 0,
            last_error: None,
        });
        m
    }

    fn found() -> Discovered {
        let panel = crate::metrics::presets::sim_panels().remove(0);
        Discovered {
            panels: vec![panel],
            hints: vec!["no series for x · warroom discover".into()],
            summary: "postgres_exporter".into(),
            status: String::new(),
            missing: vec![],
        }
    }

    #[test]
    fn discovery_is_asked_once_and_its_panels_replace_the_empty_dashboard() {
        let mut m = model();
        assert_eq!(tick(&mut m), vec![Effect::Discover]);
        assert!(tick(&mut m).is_empty(), "one discovery at a time");
        answered(&mut m, Ok(found()));
        assert_eq!(m.panels.len(), 1);
        assert_eq!(m.detectors.len(), 1);
        assert_eq!(
            m.panels[0].empty_hint(),
            Some("no series for x · warroom discover")
        );
        assert_eq!(
            m.discovery.as_ref().unwrap().line(m.now),
            "found postgres_exporter"
        );
        m.now += Duration::hours(1);
        assert!(
            tick(&mut m).is_empty(),
            "found with nothing absent is final"
        );
    }

    #[test]
    fn a_failure_is_said_and_asked_again_with_backoff() {
        let mut m = model();
        tick(&mut m);
        let failure = DiscoverFailure {
            error: "unreachable: connection refused".into(),
            retry_after: None,
            transient: true,
        };
        answered(&mut m, Err(failure.clone()));
        let line = m.discovery.as_ref().unwrap().line(m.now);
        // Two seconds, shown rounded up to the countdown's step of five.
        assert!(
            line.contains("connection refused") && line.contains("next try in 5s"),
            "{line}"
        );
        assert!(tick(&mut m).is_empty(), "not before its time");
        m.now += Duration::seconds(2);
        assert_eq!(tick(&mut m), vec![Effect::Discover]);
        answered(&mut m, Err(failure));
        assert!(
            m.discovery
                .as_ref()
                .unwrap()
                .line(m.now)
                .contains("next try in 5s")
        );
        m.now += Duration::seconds(3);
        assert!(tick(&mut m).is_empty(), "the second wait is four seconds");
        // Nothing known: said, and looked at again a minute later.
        tick_at(&mut m, 1);
        answered(
            &mut m,
            Ok(Discovered {
                panels: vec![],
                ..found()
            }),
        );
        assert!(m.panels.is_empty());
        assert!(tick(&mut m).is_empty());
        m.now += NOTHING_AGAIN;
        assert_eq!(tick(&mut m), vec![Effect::Discover]);
    }

    /// Issue 30, point 4: a PgBouncer with no pool yet. Its absent signals are looked for again
    /// every minute and at once on `r`; what appears joins the dashboard (the panels shown keep
    /// their place) and the incident's timeline says so; once nothing is absent it stops.
    #[test]
    fn absent_signals_are_looked_for_again_and_join_the_dashboard() {
        let mut m = model();
        m.incident = Some(crate::app::model::IncidentHeader {
            id: "2026-12-04-1".into(),
            title: "t".into(),
        });
        let sim = crate::metrics::presets::sim_panels();
        tick(&mut m);
        let first = Discovered {
            missing: vec!["Pool wait p99".into()],
            ..found()
        };
        answered(&mut m, Ok(first));
        assert_eq!(m.panels.len(), 1);
        assert!(tick(&mut m).is_empty(), "not before a minute");
        // `r` looks at once.
        look_again(&mut m);
        assert_eq!(tick(&mut m), vec![Effect::Discover]);
        assert!(tick(&mut m).is_empty(), "one look at a time");
        let more = Discovered {
            panels: sim[..2].to_vec(),
            hints: vec!["h".into(), "h".into()],
            missing: vec![],
            ..found()
        };
        let effects = answered(&mut m, Ok(more));
        assert_eq!(
            m.panels.len(),
            2,
            "the new signal joins, the shown one stays"
        );
        assert_eq!(m.panels[0].config.title, sim[0].title);
        assert_eq!(m.detectors.len(), 2);
        let text = format!("discovery found 1 more: {}", sim[1].title);
        assert!(
            matches!(&effects[..], [Effect::Record { event: Event::Note { text: t, .. }, .. }] if *t == text),
            "{effects:?}"
        );
        // Nothing absent any more: no further look.
        m.now += Duration::hours(1);
        assert!(tick(&mut m).is_empty());
        look_again(&mut m);
        assert!(tick(&mut m).is_empty());
    }

    fn tick_at(m: &mut Model, secs: i64) {
        m.now += Duration::seconds(secs);
        assert_eq!(tick(m), vec![Effect::Discover]);
    }
}
