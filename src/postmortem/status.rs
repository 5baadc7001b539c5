//! The public status page (`house-format/status-page-update.md`): a headline from the impact,
//! and each update's text built from the facts and the tagged notes, joined as sentences.
//! Nothing internal reaches it: not the incident's working title, not panel names, not runbook
//! names.

use super::customer::{Customer, Headline};
use super::effects::{Mitigation, Response};
use super::facts::{Action, Impact, Moment, Notes};
use super::words;
use serde::Serialize;

/// One update of the status page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatusUpdate {
    /// investigating, identified, monitoring, resolved, postmortem.
    pub stage: String,
    pub at: Moment,
    /// The update's text (the postmortem's is in [`StatusPage`]'s parts).
    pub text: String,
}

/// The status page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatusPage {
    /// "Major Outage", "Partial Outage", "Degraded Performance".
    pub headline: String,
    pub updates: Vec<StatusUpdate>,
    /// The postmortem update's parts, as the seed names them.
    pub impact_description: String,
    pub initial_response: String,
    pub root_cause: Option<String>,
    pub response_plan: Option<String>,
}

/// What the page is built from.
pub struct Input<'a> {
    pub stages: &'a [(String, Moment)],
    /// The recorded severity: the headline when no figure tells the impact.
    pub severity: Option<crate::incident::event::Severity>,
    pub services: &'a [String],
    pub impact: Option<&'a Impact>,
    pub time_words: &'a str,
    pub customer: &'a Customer,
    pub mitigations: &'a [Mitigation],
    pub responses: &'a [Response],
    pub notes: &'a Notes,
    pub actions: &'a [Action],
}

/// The services as customers know them: each id's public name (`[export.public_names]`); an id
/// without one is left out, and with none the page says "our service".
pub fn public(ids: &[String], names: &std::collections::BTreeMap<String, String>) -> Vec<String> {
    ids.iter().filter_map(|id| names.get(id).cloned()).collect()
}

fn services(s: &[String]) -> String {
    if s.is_empty() {
        "our service".into()
    } else {
        words::and_list(s)
    }
}

fn joined(texts: &[String]) -> String {
    texts
        .iter()
        .map(|t| words::sentence(t))
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn window(i: &Input) -> Option<String> {
    let imp = i.impact?;
    Some(match &imp.end {
        Some(e) => format!(
            "From {} to {} {} ({})",
            imp.start.clock,
            e.clock,
            i.time_words,
            imp.duration.as_deref().unwrap_or_default()
        ),
        None => format!("Since {} {}", imp.start.clock, i.time_words),
    })
}

fn failures(c: &Customer, svc: &str) -> Option<String> {
    match (&c.failed, &c.requests, &c.failed_share) {
        (Some(f), Some(r), Some(s)) if f.value > 0.0 => Some(format!(
            "{} of {} requests to {svc} ({}) failed",
            f.text, r.text, s.text
        )),
        _ => None,
    }
}

/// The status page for these facts.
pub fn compute(i: &Input) -> StatusPage {
    let svc = services(i.services);
    use crate::incident::event::Severity;
    let headline = i.customer.headline.unwrap_or(match i.severity {
        Some(Severity::Sev1) => Headline::Major,
        Some(Severity::Sev2) => Headline::Partial,
        _ => Headline::Degraded,
    });
    let investigating = match i.customer.headline {
        Some(Headline::Major) => {
            format!("We are investigating an outage of {svc}: most requests are failing.")
        }
        Some(Headline::Partial) => {
            format!("We are investigating errors affecting {svc}: some requests are failing.")
        }
        Some(Headline::Degraded) => {
            format!("We are investigating degraded performance of {svc}.")
        }
        None => format!("We are investigating a problem with {svc}."),
    };
    let mut impact = Vec::new();
    if let Some(w) = window(i) {
        match failures(i.customer, &svc) {
            Some(f) => impact.push(format!("{w}, {f}")),
            None => impact.push(format!("{w}, customers of {svc} were affected")),
        }
    }
    if let Some(m) = &i.customer.worst_minute
        && let Some(at) = &m.at
        && m.value > 0.0
    {
        impact.push(format!(
            "At the worst moment, around {}, {} of requests failed",
            at.clock, m.text
        ));
    }
    if let Some(d) = &i.customer.duplicates {
        // No promise ("will be reconciled") that no record supports.
        impact.push(format!("{} submissions were recorded twice", d.text));
    }
    impact.extend(i.notes.impact.iter().cloned());
    let recovered = i
        .responses
        .iter()
        .find(|r| r.credited)
        .and(i.impact.and_then(|imp| imp.end.as_ref()));
    // The steps in customers' words: when the team acted, never a runbook's or a step's title.
    let acted: Vec<&Mitigation> = i.mitigations.iter().filter(|m| !m.manual).collect();
    let mut response: Vec<String> = Vec::new();
    if let Some(first) = acted.first() {
        response.push(match acted.len() {
            1 => format!("Our team began mitigating at {}", first.started.clock),
            n => format!(
                "Our team began mitigating at {} and took {n} steps in all",
                first.started.clock
            ),
        });
    }
    if let Some(end) = recovered {
        response.push(format!("Service returned to normal at {}", end.clock));
    }
    let mut updates = Vec::new();
    for (stage, at) in i.stages {
        let text = match stage.as_str() {
            "investigating" => investigating.clone(),
            "identified" => "We have identified the cause and are working on a fix.".into(),
            "monitoring" => "A fix has been applied and we are monitoring the results.".into(),
            "resolved" => match window(i) {
                Some(w) => format!(
                    "This incident has been resolved. {w}, {}.",
                    failures(i.customer, &svc)
                        .unwrap_or_else(|| format!("customers of {svc} were affected"))
                ),
                None => "This incident has been resolved.".into(),
            },
            _ => String::new(),
        };
        updates.push(StatusUpdate {
            stage: stage.clone(),
            at: at.clone(),
            text,
        });
    }
    StatusPage {
        headline: headline.as_str().into(),
        updates,
        impact_description: joined(&impact),
        initial_response: joined(&response),
        root_cause: (!i.notes.root_cause.is_empty()).then(|| joined(&i.notes.root_cause)),
        response_plan: (!i.actions.is_empty()).then(|| {
            let plans: Vec<String> = i.actions.iter().map(|a| a.action.clone()).collect();
            format!("The team has these changes planned: {}", joined(&plans))
        }),
    }
}
