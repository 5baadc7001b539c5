//! Which panels a runbook's gates read: the metric names in the gates' queries matched against
//! each panel's query. The dashboard puts the panels the running step reads first, and the
//! "what's wrong" line suggests the runbook whose gates read the panels in trouble.

use crate::runbook::gate::GateSpec;
use crate::runbook::model::{Runbook, Step, StepKind};

/// The gates of a step: a check's, a wait's, a batch's instance health and batch gate.
fn gates(step: &Step) -> Vec<&GateSpec> {
    match &step.kind {
        StepKind::Check(g) => vec![g],
        StepKind::Wait { gate, .. } => vec![gate],
        StepKind::Batch(b) => std::iter::once(&b.instance)
            .chain(b.gate.as_ref())
            .collect(),
        _ => Vec::new(),
    }
}

/// The names a query's text mentions outside strings and `{…}` matchers: the metric names
/// among them (a gate's query is a template, so it is read as words, not parsed).
pub fn words(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut word = String::new();
    let (mut quote, mut braces, mut template) = (None::<char>, 0usize, false);
    let mut chars = query.chars().peekable();
    let flush = |w: &mut String, out: &mut Vec<String>| {
        if !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()) && !out.contains(w) {
            out.push(w.clone());
        }
        w.clear();
    };
    while let Some(c) = chars.next() {
        if template {
            if c == '}' && chars.peek() == Some(&'}') {
                chars.next();
                template = false;
            }
            continue;
        }
        if let Some(q) = quote {
            if c == '\\' {
                chars.next();
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                flush(&mut word, &mut out);
                template = true;
            }
            '"' | '\'' | '`' => {
                flush(&mut word, &mut out);
                quote = Some(c);
            }
            '{' => {
                flush(&mut word, &mut out);
                braces += 1;
            }
            '}' => braces = braces.saturating_sub(1),
            c if (c.is_ascii_alphanumeric() || c == '_' || c == ':') && braces == 0 => word.push(c),
            _ => flush(&mut word, &mut out),
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The metric names a panel's query selects (parsed; read as words when it does not parse).
/// Kept per query: the status line asks on every frame, and parsing PromQL builds the parser's
/// regexes each time (11 % of the idle console's CPU before, issue 20).
pub fn panel_metrics(query: &str) -> Vec<String> {
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex};
    /// Queries kept at most (a dashboard has a few dozen; a config reloaded many times is
    /// bounded by starting over).
    const KEPT: usize = 512;
    static KNOWN: LazyLock<Mutex<HashMap<String, Vec<String>>>> =
        LazyLock::new(|| Mutex::new(HashMap::new()));
    if let Some(names) = KNOWN.lock().ok().and_then(|k| k.get(query).cloned()) {
        return names;
    }
    let names = crate::metrics::presets::metric_names(query).unwrap_or_else(|_| words(query));
    if let Ok(mut known) = KNOWN.lock() {
        if known.len() >= KEPT {
            known.clear();
        }
        known.insert(query.to_string(), names.clone());
    }
    names
}

/// The words of the gates of `step` (every step's when `None`).
pub fn gate_words(rb: &Runbook, step: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    for s in rb.steps.iter().filter(|s| step.is_none_or(|id| s.id == id)) {
        for g in gates(s) {
            for w in words(g.query.source()) {
                if !out.contains(&w) {
                    out.push(w);
                }
            }
        }
    }
    out
}

/// Whether a panel with `query` shows something the gates with `words` read.
pub fn reads(words: &[String], query: &str) -> bool {
    panel_metrics(query).iter().any(|m| words.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_templates_read_as_metric_names() {
        let w = words(
            r#"sum(rate(http_requests_total{service="{{service}}",code=~"5.."}[{{window}}])) / sum(rate(http_requests_total{service="{{service}}"}[1m])) > bool 0.05"#,
        );
        assert!(w.contains(&"http_requests_total".to_string()), "{w:?}");
        assert!(
            !w.iter()
                .any(|x| x == "service" || x == "window" || x == "code"),
            "{w:?}"
        );
        assert!(reads(
            &w,
            "sum(rate(http_requests_total{code=~\"5..\"}[5m]))"
        ));
        assert!(!reads(&w, "pg_stat_activity_count"));
    }

    #[test]
    fn every_shipped_runbook_with_gates_reads_some_metric() {
        for e in crate::runbook::catalog::load(&[]) {
            let Some(rb) = e.runbook() else { continue };
            let has_gates = rb.steps.iter().any(|s| !gates(s).is_empty());
            let w = gate_words(rb, None);
            assert_eq!(has_gates, !w.is_empty(), "{}: {w:?}", rb.name);
        }
    }
}
