//! Checks of the kind-specific parts of a step: gates, requests, commands, batches.

use super::super::format::{RawAction, RawGate, RawStep};

/// Most actions in one target's sequence.
pub const MAX_SEQUENCE: usize = 8;
use super::super::gate::{Condition, Expect, GateSpec};
use super::super::label::{self, Label};
use super::super::model::*;
use super::super::quoting::Lang;
use super::Checker;
use serde_spanned::Spanned;
use std::collections::BTreeSet;
use std::ops::Range;
use std::time::Duration;

impl Checker<'_> {
    /// A label (`[applies] label`, a precondition's `label`): one reading mark, and variables
    /// the runbook declares.
    pub(super) fn label(
        &mut self,
        raw: &Spanned<String>,
        known: &BTreeSet<String>,
    ) -> Option<Label> {
        let (before, scale, after) = match label::split(raw.get_ref()) {
            Ok(parts) => parts,
            Err(why) => {
                self.err(raw.span(), why);
                return None;
            }
        };
        let before = self.template_text(before, raw.span(), known, false);
        let after = self.template_text(after, raw.span(), known, false);
        Some(Label {
            before: before?,
            scale,
            after: after?,
        })
    }

    /// A step's label: a precondition's only, and one that judges a number.
    pub(super) fn step_label(
        &mut self,
        raw: &Option<Spanned<String>>,
        precondition: bool,
        kind: &StepKind,
        known: &BTreeSet<String>,
    ) -> Option<Label> {
        let raw = raw.as_ref()?;
        if !precondition {
            self.err(
                raw.span(),
                "label says a precondition's reading in the headline; this step is no precondition: add precondition = true or remove label",
            );
            return None;
        }
        if kind.condition().is_none() {
            self.err(
                raw.span(),
                "label says a number, and this step judges none (no expect, or expect equals a text): judge a number (above, below, between) or remove label",
            );
            return None;
        }
        self.label(raw, known)
    }

    pub(super) fn gate_required(
        &mut self,
        g: &Option<Spanned<RawGate>>,
        step: &Range<usize>,
        known: &BTreeSet<String>,
        target_ok: bool,
    ) -> Option<GateSpec> {
        let Some(g) = g else {
            self.err(
                step.clone(),
                "this step needs a gate: expected gate = { query = \"...\", below = 0.02 } (or above / between)",
            );
            return None;
        };
        self.gate(g, known, target_ok)
    }

    pub(super) fn gate(
        &mut self,
        g: &Spanned<RawGate>,
        known: &BTreeSet<String>,
        target_ok: bool,
    ) -> Option<GateSpec> {
        let span = g.span();
        let g = g.get_ref();
        let Some(q) = &g.query else {
            self.err(span, "the gate has no query; expected query = \"<PromQL>\"");
            return None;
        };
        if q.get_ref().trim().is_empty() {
            self.err(q.span(), "the gate's query is empty; expected PromQL");
            return None;
        }
        let query = self
            .template(q, known, target_ok)
            .filter(|t| self.quoted_in(t, Lang::PromQl, &q.span()));
        let mut conds = Vec::new();
        if let Some(a) = &g.above {
            conds.push((Condition::Above(*a.get_ref()), a.span()));
        }
        if let Some(b) = &g.below {
            conds.push((Condition::Below(*b.get_ref()), b.span()));
        }
        if let Some(bt) = &g.between {
            match bt.get_ref().as_slice() {
                [lo, hi] if lo <= hi => conds.push((Condition::Between(*lo, *hi), bt.span())),
                _ => {
                    self.err(
                        bt.span(),
                        "between needs two numbers, low first: expected between = [0.5, 1.0]",
                    );
                    return None;
                }
            }
        }
        for (c, s) in &conds {
            let finite = match *c {
                Condition::Above(x) | Condition::Below(x) => x.is_finite(),
                Condition::Between(a, b) => a.is_finite() && b.is_finite(),
            };
            if !finite {
                self.err(s.clone(), "the threshold must be a finite number");
                return None;
            }
        }
        let condition = match conds.as_slice() {
            [] => {
                self.err(
                    span,
                    "the gate has no condition; expected one of above = N, below = N or between = [LOW, HIGH]",
                );
                return None;
            }
            [(c, _)] => *c,
            [_, (_, second), ..] => {
                self.err(
                    second.clone(),
                    "the gate has more than one condition; expected exactly one of above, below, between",
                );
                return None;
            }
        };
        let expect = match &g.series {
            None => Expect::One,
            Some(s) => match s.get_ref().as_str() {
                "one" => Expect::One,
                "each" => Expect::Each,
                other => {
                    self.err(
                        s.span(),
                        format!("series = \"{other}\"; expected \"one\" or \"each\""),
                    );
                    Expect::One
                }
            },
        };
        let mut spec = GateSpec::new(query?, condition);
        spec.expect = expect;
        spec.consecutive = self.count(&g.consecutive, "consecutive", 1, spec.consecutive);
        spec.failure_limit = self.count(&g.failure_limit, "failure_limit", 0, spec.failure_limit);
        spec.inconclusive_limit = self.count(
            &g.inconclusive_limit,
            "inconclusive_limit",
            0,
            spec.inconclusive_limit,
        );
        spec.error_limit = self.count(&g.error_limit, "error_limit", 0, spec.error_limit);
        spec.min_samples = self.count(&g.min_samples, "min_samples", 1, spec.consecutive);
        spec.interval = self.duration(&g.interval, spec.interval);
        Some(spec)
    }

    pub(super) fn http(
        &mut self,
        a: &RawAction,
        step: &Range<usize>,
        known: &BTreeSet<String>,
        target_ok: bool,
    ) -> Option<HttpSpec> {
        let method = match &a.method {
            None => Method::Get,
            Some(m) => match Method::parse(m.get_ref()) {
                Some(m) => m,
                None => {
                    self.err(
                        m.span(),
                        format!(
                            "\"{}\" is not an HTTP method here; expected GET, POST, PUT, PATCH or DELETE",
                            m.get_ref()
                        ),
                    );
                    return None;
                }
            },
        };
        let Some(url) = &a.url else {
            self.err(step.clone(), "an http request needs url = \"...\"");
            return None;
        };
        let url_t = self.template(url, known, target_ok)?;
        if !(url.get_ref().starts_with("http://")
            || url.get_ref().starts_with("https://")
            || url.get_ref().starts_with("{{"))
        {
            self.err(
                url.span(),
                "the url must start with http:// or https:// (or a variable such as {{base_url}})",
            );
        }
        let mut headers = Vec::new();
        for (k, v) in a.headers.iter().flatten() {
            if let Some(t) = self.template(v, known, target_ok) {
                headers.push((k.clone(), t));
            }
        }
        let json = match &a.json {
            None => None,
            Some(j) => Some(self.json(j.get_ref(), j.span(), known, target_ok)?),
        };
        Some(HttpSpec {
            method,
            url: url_t,
            headers,
            json,
            timeout: self.duration(&a.timeout, DEFAULT_HTTP_TIMEOUT),
            deadline: self.duration(&a.deadline, DEFAULT_HTTP_DEADLINE),
        })
    }

    fn json(
        &mut self,
        v: &toml::Value,
        span: Range<usize>,
        known: &BTreeSet<String>,
        target_ok: bool,
    ) -> Option<JsonTemplate> {
        Some(match v {
            toml::Value::String(s) => {
                let t = self.template_text(s, span, known, target_ok)?;
                let whole: Vec<_> = t.variables().collect();
                match whole.as_slice() {
                    [(name, 0)]
                        if s.trim_end().ends_with("}}")
                            && self.typed.get(*name).is_some_and(|k| *k != VarKind::String) =>
                    {
                        let k = self.typed[*name];
                        JsonTemplate::Typed((*name).to_string(), k)
                    }
                    _ => JsonTemplate::String(t),
                }
            }
            toml::Value::Integer(i) => JsonTemplate::Number((*i).into()),
            toml::Value::Float(f) => match serde_json::Number::from_f64(*f) {
                Some(n) => JsonTemplate::Number(n),
                None => {
                    self.err(
                        span,
                        "JSON has no NaN or infinity; expected a finite number",
                    );
                    return None;
                }
            },
            toml::Value::Boolean(b) => JsonTemplate::Bool(*b),
            toml::Value::Datetime(d) => {
                JsonTemplate::String(super::super::template::Template::parse(&d.to_string()).ok()?)
            }
            toml::Value::Array(a) => JsonTemplate::Array(
                a.iter()
                    .map(|x| self.json(x, span.clone(), known, target_ok))
                    .collect::<Option<Vec<_>>>()?,
            ),
            toml::Value::Table(t) => JsonTemplate::Object(
                t.iter()
                    .map(|(k, x)| Some((k.clone(), self.json(x, span.clone(), known, target_ok)?)))
                    .collect::<Option<Vec<_>>>()?,
            ),
        })
    }

    pub(super) fn exec(
        &mut self,
        argv: &Option<Spanned<Vec<Spanned<String>>>>,
        timeout: &Option<Spanned<String>>,
        grace: &Option<Spanned<String>>,
        step: &Range<usize>,
        known: &BTreeSet<String>,
        target_ok: bool,
    ) -> Option<ExecSpec> {
        let Some(argv) = argv else {
            self.err(
                step.clone(),
                "an exec step needs argv = [\"program\", \"arg\", ...] (a list, never a shell string)",
            );
            return None;
        };
        if argv.get_ref().is_empty() || argv.get_ref()[0].get_ref().trim().is_empty() {
            self.err(
                argv.span(),
                "argv is empty; expected the program and its arguments, e.g. [\"systemctl\", \"restart\", \"api\"]",
            );
            return None;
        }
        let mut out = Vec::new();
        let mut ok = true;
        for a in argv.get_ref() {
            match self.template(a, known, target_ok) {
                Some(t) => out.push(t),
                None => ok = false,
            }
        }
        let spec = ExecSpec {
            argv: out,
            timeout: self.duration(timeout, DEFAULT_EXEC_TIMEOUT),
            grace: self.duration(grace, DEFAULT_GRACE),
        };
        ok.then_some(spec)
    }

    pub(super) fn batch(
        &mut self,
        s: &RawStep,
        step: &Range<usize>,
        known: &BTreeSet<String>,
    ) -> Option<BatchSpec> {
        let given = [
            s.targets.as_ref().map(serde_spanned::Spanned::span),
            s.targets_query.as_ref().map(serde_spanned::Spanned::span),
            s.targets_haproxy.as_ref().map(serde_spanned::Spanned::span),
        ];
        if let Some(second) = given.iter().flatten().nth(1) {
            self.err(
                second.clone(),
                "a batch takes one of targets, targets_query or targets_haproxy, not several",
            );
            return None;
        }
        let targets = if let Some(list) = &s.targets {
            if list.get_ref().is_empty() {
                self.err(
                    list.span(),
                    "targets is empty; expected at least one target",
                );
                return None;
            }
            Targets::List(list.get_ref().clone())
        } else if let Some(q) = &s.targets_query {
            let query = self.template(q, known, false)?;
            if !self.quoted_in(&query, Lang::PromQl, &q.span()) {
                return None;
            }
            let label = match &s.target_label {
                Some(l) => l.get_ref().clone(),
                None => "pod".to_string(),
            };
            Targets::Query { query, label }
        } else if let Some(h) = &s.targets_haproxy {
            let (Some(socket), Some(backend)) = (&h.get_ref().socket, &h.get_ref().backend) else {
                self.err(
                    h.span(),
                    "targets_haproxy needs socket and backend: expected targets_haproxy = { socket = \"{{haproxy_socket}}\", backend = \"be_app\" }",
                );
                return None;
            };
            let backend_t = self.template(backend, known, false)?;
            if backend_t.variables().next().is_none()
                && super::super::haproxy::backend_name(backend.get_ref()).is_err()
            {
                self.err(
                    backend.span(),
                    format!(
                        "\"{}\" is not a backend name; expected letters, digits, '_', '.', ':' or '-'",
                        crate::sanitize::line(backend.get_ref())
                    ),
                );
                return None;
            }
            Targets::Haproxy {
                socket: self.template(socket, known, false)?,
                backend: backend_t,
            }
        } else {
            self.err(
                step.clone(),
                "a batch needs its targets: expected targets = [\"api-0\", ...], targets_query = \"<PromQL>\" with target_label, or targets_haproxy = { socket = \"...\", backend = \"...\" }",
            );
            return None;
        };
        let size = match (&s.size, &s.percent) {
            (Some(_), Some(p)) => {
                self.err(p.span(), "a batch takes size OR percent, not both");
                return None;
            }
            (None, None) => {
                self.err(
                    step.clone(),
                    "a batch needs its size: expected size = N (instances) or percent = P (1 to 100)",
                );
                return None;
            }
            (Some(n), None) => {
                if *n.get_ref() < 1 {
                    self.err(
                        n.span(),
                        format!(
                            "batch size is {}; expected at least 1 instance per batch",
                            n.get_ref()
                        ),
                    );
                    return None;
                }
                BatchSize::Count(*n.get_ref() as usize)
            }
            (None, Some(p)) => {
                if !(1..=100).contains(p.get_ref()) {
                    self.err(
                        p.span(),
                        format!("percent is {}; expected 1 to 100", p.get_ref()),
                    );
                    return None;
                }
                BatchSize::Percent(*p.get_ref() as u8)
            }
        };
        let max_unavailable = s.max_unavailable.as_ref().map(|m| {
            if *m.get_ref() < 0 {
                self.err(
                    m.span(),
                    format!(
                        "max_unavailable is {}; expected 0 or more (0 starts nothing)",
                        m.get_ref()
                    ),
                );
            }
            (*m.get_ref()).max(0) as usize
        });
        let failure_budget = self.count(&s.failure_budget, "failure_budget", 0, 0) as usize;
        let actions = match (&s.action, &s.actions) {
            (Some(_), Some(list)) => {
                self.err(
                    list.span(),
                    "a batch takes [step.action] (one action) OR [[step.actions]] (a sequence), not both",
                );
                return None;
            }
            (None, None) => {
                self.err(
                    step.clone(),
                    "a batch needs an action per target: expected [step.action] with url (and method, json) or argv, or a sequence of [[step.actions]] each with kind = \"http\", \"exec\", \"sql\" or \"haproxy\"",
                );
                return None;
            }
            (Some(a), None) => vec![self.batch_action(a, known)?],
            (None, Some(list)) => {
                if list.get_ref().is_empty() {
                    self.err(
                        list.span(),
                        "actions is empty; expected at least one action",
                    );
                    return None;
                }
                if list.get_ref().len() > MAX_SEQUENCE {
                    self.err(
                        list.span(),
                        format!(
                            "{} actions per target; expected a short sequence of at most {MAX_SEQUENCE} (drain, restart, wait healthy, ready)",
                            list.get_ref().len()
                        ),
                    );
                    return None;
                }
                let mut out = Vec::new();
                let mut ok = true;
                for a in list.get_ref() {
                    match self.batch_action(a, known) {
                        Some(x) => out.push(x),
                        None => ok = false,
                    }
                }
                if !ok {
                    return None;
                }
                out
            }
        };
        let Some(instance) = &s.instance else {
            self.err(
                step.clone(),
                "a batch needs a per-instance health check: expected [step.instance] with query = 'up{pod=\"{{target}}\"}' and above = 0.5",
            );
            return None;
        };
        let instance = self.gate(instance, known, true)?;
        if !instance.query.uses_target() {
            self.err(
                s.instance.as_ref().map_or(step.clone(), serde_spanned::Spanned::span),
                "the instance check's query must use {{target}}, e.g. app_instance_up{pod=\"{{target}}\"}",
            );
        }
        let gate = match &s.gate {
            Some(g) => Some(self.gate(g, known, false)?),
            None => None,
        };
        Some(BatchSpec {
            targets,
            size,
            max_unavailable,
            failure_budget,
            soak: self.duration(&s.soak, Duration::from_secs(10)),
            settle: self.duration(&s.settle, Duration::from_secs(5)),
            instance_deadline: self.duration(&s.instance_deadline, Duration::from_secs(120)),
            deadline: self.duration(&s.deadline, Duration::from_secs(1800)),
            actions,
            instance,
            gate,
        })
    }
}
