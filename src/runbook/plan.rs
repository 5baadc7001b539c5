//! The plan of a run: every request and command exactly as it will be sent (secrets masked),
//! the targets and batch order, the gates and the conventions they follow. A dry run prints
//! this and does nothing else.

use super::gate::GateSpec;
use super::http::Request;
use super::model::*;
use super::template::{Context, RenderError, Values};
use super::vars::Resolved;
use std::collections::BTreeMap;
use std::fmt::Write;

/// What the plan says about idempotency keys (the key itself is made at run time).
pub const KEY_NOTE: &str =
    "<created and recorded before the first send; the same on every retry and after a restart>";

/// The retry policy in words.
pub fn retry_policy(b: &crate::backoff::Backoff) -> String {
    format!(
        "at most {} attempts, full-jitter backoff (base {}, cap {}), a retry budget shared by the run; retried only on connection refused, 429, 502, 503, 504 (Retry-After obeyed) and timeouts with a key; never on 400, 401, 403, 404, 409, 422",
        b.max_attempts,
        humantime::format_duration(b.base),
        humantime::format_duration(b.cap)
    )
}

/// Render a JSON body template.
pub fn render_json(
    j: &JsonTemplate,
    values: &Values,
    target: Option<&str>,
) -> Result<serde_json::Value, RenderError> {
    Ok(match j {
        JsonTemplate::Null => serde_json::Value::Null,
        JsonTemplate::Bool(b) => serde_json::Value::Bool(*b),
        JsonTemplate::Number(n) => serde_json::Value::Number(n.clone()),
        JsonTemplate::String(t) => {
            serde_json::Value::String(t.render(values, target, Context::Literal)?)
        }
        JsonTemplate::Typed(name, kind) => {
            let v = values
                .get(name)
                .ok_or_else(|| RenderError::Missing(name.clone()))?
                .trim();
            match kind {
                VarKind::Bool => serde_json::Value::Bool(v == "true"),
                VarKind::Number => serde_json::from_str::<serde_json::Number>(v)
                    .map(serde_json::Value::Number)
                    .unwrap_or_else(|_| serde_json::Value::String(v.to_string())),
                VarKind::String | VarKind::Duration => serde_json::Value::String(v.to_string()),
            }
        }
        JsonTemplate::Array(a) => serde_json::Value::Array(
            a.iter()
                .map(|x| render_json(x, values, target))
                .collect::<Result<_, _>>()?,
        ),
        JsonTemplate::Object(o) => serde_json::Value::Object(
            o.iter()
                .map(|(k, x)| Ok((k.clone(), render_json(x, values, target)?)))
                .collect::<Result<_, RenderError>>()?,
        ),
    })
}

/// The request an http spec makes, rendered.
pub fn request(
    h: &HttpSpec,
    values: &Values,
    target: Option<&str>,
) -> Result<Request, RenderError> {
    Ok(Request {
        method: h.method,
        url: h.url.render(values, target, Context::Url)?,
        headers: h
            .headers
            .iter()
            .map(|(k, v)| Ok((k.clone(), v.render(values, target, Context::Literal)?)))
            .collect::<Result<_, RenderError>>()?,
        body: h
            .json
            .as_ref()
            .map(|j| render_json(j, values, target))
            .transpose()?,
        timeout: h.timeout,
        deadline: h.deadline,
    })
}

/// The argv an exec spec runs, rendered: each element as written, except the script of a
/// shell (`sh -c SCRIPT`), whose values are quoted as shell words.
pub fn argv(
    e: &ExecSpec,
    values: &Values,
    target: Option<&str>,
) -> Result<Vec<String>, RenderError> {
    let mut out = e
        .argv
        .iter()
        .map(|a| a.render(values, target, Context::Literal))
        .collect::<Result<Vec<_>, _>>()?;
    let words: Vec<&str> = out.iter().map(String::as_str).collect();
    if let Some(i) = super::quoting::shell_script_index(&words) {
        out[i] = e.argv[i].render(values, target, Context::Shell)?;
    }
    Ok(out)
}

fn d(x: std::time::Duration) -> String {
    humantime::format_duration(x).to_string()
}

fn gate_lines(out: &mut String, indent: &str, g: &GateSpec, values: &Values, target: Option<&str>) {
    let q = g
        .query
        .render(values, target, Context::PromQl)
        .unwrap_or_else(|e| format!("<{e}>"));
    let _ = writeln!(out, "{indent}query:     {q}");
    let _ = writeln!(out, "{indent}condition: {}", g.condition);
    let _ = writeln!(out, "{indent}rule:      {}", g.describe_rule());
}

fn request_lines(
    out: &mut String,
    indent: &str,
    r: &Request,
    mutating: bool,
    backoff: &crate::backoff::Backoff,
) {
    let _ = writeln!(out, "{indent}{} {}", r.method.as_str(), r.url);
    for (k, v) in &r.headers {
        let _ = writeln!(out, "{indent}{k}: {v}");
    }
    if mutating {
        let _ = writeln!(out, "{indent}Idempotency-Key: {KEY_NOTE}");
    }
    if let Some(b) = &r.body {
        let _ = writeln!(out, "{indent}Content-Type: application/json");
        let _ = writeln!(
            out,
            "{indent}{}",
            serde_json::to_string(b).unwrap_or_default()
        );
    }
    let _ = writeln!(
        out,
        "{indent}timeout {} per attempt, deadline {}; {}",
        d(r.timeout),
        d(r.deadline),
        retry_policy(backoff)
    );
}

/// Where the runbook acts, the symptom it answers and its preconditions (`[applies]`).
fn applies_lines(out: &mut String, rb: &Runbook, v: &Values) {
    let _ = writeln!(out, "\nApplies");
    let Some(a) = &rb.applies else {
        let _ = writeln!(
            out,
            "  not said ([applies] is missing): never suggested, shown with the others"
        );
        return;
    };
    let on = match a.on {
        Acts::Real => "your own systems",
        Acts::Simulator => "the simulator's control API (rehearsals)",
    };
    let _ = writeln!(out, "  acts on {on}");
    match &a.symptom {
        Some(g) => {
            let _ = writeln!(out, "  when this holds (read only):");
            gate_lines(out, "    ", g, v, None);
            label_line(out, "    ", a.label.as_ref(), v);
        }
        None => {
            let _ = writeln!(out, "  no symptom given: never suggested");
        }
    }
    let pre: Vec<&str> = rb.preconditions().map(|s| s.id.as_str()).collect();
    if !pre.is_empty() {
        let _ = writeln!(out, "  and these pass first: {}", pre.join(", "));
    }
}

/// How the headline says a reading (`label`), if the runbook says.
fn label_line(
    out: &mut String,
    ind: &str,
    label: Option<&crate::runbook::label::Label>,
    v: &Values,
) {
    if let Some(l) = label {
        let _ = writeln!(out, "{ind}said as:   {}", l.shown(v));
    }
}

/// Render the plan. `targets` gives resolved batch targets per step id, if known.
pub fn render(
    rb: &Runbook,
    vars: &Resolved,
    targets: &BTreeMap<String, Vec<String>>,
    backoff: &crate::backoff::Backoff,
) -> String {
    let mut out = String::new();
    let v = &vars.values;
    let _ = writeln!(out, "Runbook \"{}\" ({})", rb.name, rb.hash);
    for l in rb.description.lines() {
        let _ = writeln!(out, "  {l}");
    }
    if !rb.variables.is_empty() {
        let _ = writeln!(out, "\nVariables");
        for var in &rb.variables {
            let val = vars.shown.get(&var.name).cloned().unwrap_or_default();
            let from = match (&var.env, var.secret) {
                (Some(e), true) => format!("  (secret, from ${e})"),
                (Some(e), false) => format!("  (from ${e} if set)"),
                _ => String::new(),
            };
            let _ = writeln!(out, "  {} = {val}{from}", var.name);
        }
        for (name, env) in &vars.unset {
            let how = env.as_ref().map_or_else(
                || "it has no environment variable to read".to_string(),
                |e| format!("set the environment variable {e}"),
            );
            let _ = writeln!(out, "  needed before a run: the secret \"{name}\" ({how})");
        }
    }
    applies_lines(&mut out, rb, v);
    let _ = writeln!(out, "\nSteps");
    for (i, s) in rb.steps.iter().enumerate() {
        let title = s.title_rendered(v);
        let flag = match (s.mutating, s.skippable, s.precondition) {
            (true, true, _) => "  [MUTATING: typed confirmation; may be skipped]",
            (true, false, _) => "  [MUTATING: typed confirmation]",
            (false, true, _) => "  [may be skipped]",
            (false, false, true) => "  [precondition]",
            (false, false, false) => "",
        };
        let _ = writeln!(out, "\n{}. {} ({}){flag}", i + 1, s.id, s.kind.name());
        if title != s.id {
            let _ = writeln!(out, "   {title}");
        }
        let ind = "   ";
        label_line(&mut out, ind, s.label.as_ref(), v);
        match &s.kind {
            StepKind::Note { text } | StepKind::Manual { text } => {
                for l in text.lines() {
                    let _ = writeln!(out, "{ind}{l}");
                }
                if matches!(s.kind, StepKind::Manual { .. }) {
                    let _ = writeln!(out, "{ind}the operator confirms when done");
                }
            }
            StepKind::Check(g) => gate_lines(&mut out, ind, g, v, None),
            StepKind::Wait { gate, timeout } => {
                let _ = writeln!(
                    out,
                    "{ind}polls every {} until {} consecutive successes; bad readings do not end a wait; at most {}",
                    d(gate.interval),
                    gate.consecutive,
                    d(*timeout)
                );
                let q = gate
                    .query
                    .render(v, None, Context::PromQl)
                    .unwrap_or_else(|e| format!("<{e}>"));
                let _ = writeln!(out, "{ind}query:     {q}");
                let _ = writeln!(out, "{ind}condition: {}", gate.condition);
            }
            StepKind::Http(h) => match request(h, v, None) {
                Ok(r) => request_lines(&mut out, ind, &r, s.mutating, backoff),
                Err(e) => {
                    let _ = writeln!(out, "{ind}<{e}>");
                }
            },
            StepKind::Exec(e) => exec_lines(&mut out, ind, e, v, None),
            StepKind::Batch(b) => batch_lines(&mut out, s, b, v, targets.get(&s.id), backoff),
            StepKind::Sql(q) => sql_lines(&mut out, ind, q, v, None),
            StepKind::Haproxy(h) => haproxy_lines(&mut out, ind, h, v, None),
        }
    }
    // Templates render exactly what is sent, which may hold anything; what is printed is not.
    crate::sanitize::multiline(&vars.masker.mask(&out)).into_owned()
}

fn exec_lines(out: &mut String, ind: &str, e: &ExecSpec, v: &Values, target: Option<&str>) {
    match argv(e, v, target) {
        Ok(a) => {
            let _ = writeln!(
                out,
                "{ind}argv: {}",
                serde_json::to_string(&a).unwrap_or_default()
            );
        }
        Err(err) => {
            let _ = writeln!(out, "{ind}<{err}>");
        }
    }
    let _ = writeln!(
        out,
        "{ind}own process group; timeout {}, then SIGTERM to the group and SIGKILL after {}",
        d(e.timeout),
        d(e.grace)
    );
}

fn condition_lines(
    out: &mut String,
    ind: &str,
    expect: Option<&RowCondition>,
    wait: Option<std::time::Duration>,
    interval: std::time::Duration,
    v: &Values,
    target: Option<&str>,
) {
    if let Some(c) = expect {
        let _ = writeln!(out, "{ind}expect:    {}", c.describe(v, target));
        match wait {
            Some(w) => {
                let _ = writeln!(
                    out,
                    "{ind}reads again every {} until it holds, at most {}",
                    d(interval),
                    d(w)
                );
            }
            None => {
                let _ = writeln!(out, "{ind}the step fails unless it holds");
            }
        }
    }
}

fn sql_lines(out: &mut String, ind: &str, q: &SqlSpec, v: &Values, target: Option<&str>) {
    let dsn = q
        .dsn
        .render(v, target, Context::Literal)
        .unwrap_or_else(|e| format!("<{e}>"));
    let password = match &q.password {
        PasswordSource::None => "no password".to_string(),
        PasswordSource::Variable(n) => format!("password from secret variable \"{n}\""),
        PasswordSource::Env(e) => format!("password from ${e}"),
        PasswordSource::File(f) => format!(
            "password from the owner-only file {}",
            f.render(v, target, Context::Literal)
                .unwrap_or_else(|e| format!("<{e}>"))
        ),
    };
    let _ = writeln!(out, "{ind}connect:   {dsn} ({password})");
    let stmt = q
        .statement
        .render(v, target, Context::Sql)
        .unwrap_or_else(|e| format!("<{e}>"));
    let _ = writeln!(out, "{ind}statement: {stmt}");
    let console = dsn
        .parse::<tokio_postgres::Config>()
        .is_ok_and(|c| c.get_dbname() == Some("pgbouncer"));
    let ro = match (q.read_only, console) {
        (true, true) => "read-only: SHOW commands only (PgBouncer's admin console)",
        (true, false) => "read-only: runs in a BEGIN READ ONLY transaction",
        (false, _) => "may change things",
    };
    let _ = writeln!(
        out,
        "{ind}{ro}; simple-query protocol; statement timeout {} (then cancelled on the server), deadline {}",
        d(q.statement_timeout),
        d(q.deadline)
    );
    condition_lines(out, ind, q.expect.as_ref(), q.wait, q.interval, v, target);
}

fn haproxy_lines(out: &mut String, ind: &str, h: &HaproxySpec, v: &Values, target: Option<&str>) {
    let sock = h
        .socket
        .render(v, target, Context::Literal)
        .unwrap_or_else(|e| format!("<{e}>"));
    let cmd = match super::haproxy::command(&h.op, v, target) {
        Ok(c) => c,
        // A placeholder target (no targets known yet) is shown as written.
        Err(_) if target.is_some_and(|t| t.starts_with('<')) => {
            super::haproxy::command_unchecked(&h.op, v, target)
        }
        Err(e) => format!("<{e}>"),
    };
    let cmd = match &h.op {
        HaproxyOp::WaitSessions { .. } => format!("{cmd} (read only)"),
        _ => cmd,
    };
    let _ = writeln!(out, "{ind}runtime API {sock}: {cmd}");
    let _ = writeln!(out, "{ind}timeout {} per command", d(h.timeout));
    if let Some(w) = h.drain_wait {
        let _ = writeln!(
            out,
            "{ind}then waits until the server's current sessions (scur) are 0, at most {}",
            d(w)
        );
    }
    condition_lines(out, ind, h.expect.as_ref(), h.wait, h.interval, v, target);
}

fn batch_lines(
    out: &mut String,
    s: &Step,
    b: &BatchSpec,
    v: &Values,
    resolved: Option<&Vec<String>>,
    backoff: &crate::backoff::Backoff,
) {
    let ind = "   ";
    let list = match (&b.targets, resolved) {
        (Targets::List(l), _) => Some(l.clone()),
        (_, Some(r)) => Some(r.clone()),
        _ => None,
    };
    match &b.targets {
        Targets::Query { query, label } => {
            let q = query.render(v, None, Context::PromQl).unwrap_or_default();
            let _ = writeln!(out, "{ind}targets: the \"{label}\" label of {q}");
        }
        Targets::Haproxy { socket, backend } => {
            let sock = socket
                .render(v, None, Context::Literal)
                .unwrap_or_else(|e| format!("<{e}>"));
            let backend = backend
                .render(v, None, Context::Literal)
                .unwrap_or_else(|e| format!("<{e}>"));
            let _ = writeln!(
                out,
                "{ind}targets: the servers of HAProxy backend \"{backend}\" (show servers state {backend} on {sock})"
            );
        }
        Targets::List(_) => {}
    }
    let size = match b.size {
        BatchSize::Count(n) => format!("{n} per batch"),
        BatchSize::Percent(p) => format!("{p} % per batch (rounded up)"),
    };
    let budget = b
        .max_unavailable
        .map_or_else(|| "the batch size".to_string(), |m| m.to_string());
    let _ = writeln!(
        out,
        "{ind}{size}; at most {budget} unavailable at once, counting instances already unhealthy; a failure budget of {} instance(s) that do not come back, then no batch starts",
        b.failure_budget
    );
    let _ = writeln!(
        out,
        "{ind}an instance counts healthy after {} healthy without interruption (readings in the first {} after its action are ignored); instance deadline {}, run deadline {} (after it, no new action without a decision)",
        d(b.soak),
        d(b.settle),
        d(b.instance_deadline),
        d(b.deadline)
    );
    match &list {
        Some(l) => {
            let n = b.size.resolve(l.len());
            let budget = b.max_unavailable.unwrap_or(n);
            let per = n.min(budget.max(1));
            let _ = writeln!(
                out,
                "{ind}planned batches (fewer per batch when instances are already unhealthy):"
            );
            for (i, chunk) in l.chunks(per).enumerate() {
                let _ = writeln!(out, "{ind}batch {}: {}", i + 1, chunk.join(", "));
            }
        }
        None => {
            let from = match b.targets {
                Targets::Haproxy { .. } => "HAProxy's server list",
                Targets::Query { .. } | Targets::List(_) => "the query",
            };
            let _ = writeln!(
                out,
                "{ind}batches: resolved from {from} when the run starts"
            );
        }
    }
    let first = list.as_ref().and_then(|l| l.first().cloned());
    let shown = first.as_deref().unwrap_or("<target>");
    let _ = writeln!(out, "{ind}per target (shown for {shown}):");
    let ind2 = "     ";
    let many = b.actions.len() > 1;
    if many {
        let _ = writeln!(
            out,
            "{ind2}{} actions in order; the first that does not succeed ends the target's sequence",
            b.actions.len()
        );
    }
    for (i, a) in b.actions.iter().enumerate() {
        let ind3 = if many { "       " } else { ind2 };
        if many {
            let _ = writeln!(out, "{ind2}{}. {}", i + 1, a.kind().name());
        }
        match a {
            Action::Http(h) => match request(h, v, Some(shown)) {
                Ok(r) => request_lines(out, ind3, &r, s.mutating, backoff),
                Err(e) => {
                    let _ = writeln!(out, "{ind3}<{e}>");
                }
            },
            Action::Exec(e) => exec_lines(out, ind3, e, v, Some(shown)),
            Action::Sql(q) => sql_lines(out, ind3, q, v, Some(shown)),
            Action::Haproxy(h) => haproxy_lines(out, ind3, h, v, Some(shown)),
        }
    }
    let _ = writeln!(
        out,
        "{ind}instance healthy when every reading (every {}) holds for the whole soak of {}:",
        d(b.instance.interval.clamp(
            std::time::Duration::from_millis(200),
            std::time::Duration::from_secs(5)
        )),
        d(b.soak)
    );
    let q = b
        .instance
        .query
        .render(v, Some(shown), Context::PromQl)
        .unwrap_or_else(|e| format!("<{e}>"));
    let _ = writeln!(out, "{ind2}query:     {q}");
    let _ = writeln!(
        out,
        "{ind2}condition: {} (empty, NaN, ±Inf or several series count as unhealthy)",
        b.instance.condition
    );
    match &b.gate {
        Some(g) => {
            let _ = writeln!(out, "{ind}health gate between batches:");
            gate_lines(out, ind2, g, v, None);
        }
        None => {
            let _ = writeln!(out, "{ind}no health gate between batches");
        }
    }
    let _ = writeln!(
        out,
        "{ind}on a lost instance or a failed gate: pause for the operator (continue, retry, abort)"
    );
}

impl Step {
    /// The title with variables filled in (falls back to the text as written).
    pub fn title_rendered(&self, values: &Values) -> String {
        super::template::Template::parse(&self.title)
            .ok()
            .and_then(|t| t.render(values, None, Context::Literal).ok())
            .unwrap_or_else(|| self.title.clone())
    }
}
