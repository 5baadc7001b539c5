//! Checking the acting kinds that reach other systems' own protocols: `sql` and `haproxy`
//! steps and batch actions (and which kind a batch action is), and the conditions on their
//! results.

use super::super::format::{RawAction, RawExpect, RawKind, allowed_fields};
use super::super::gate::Condition;
use super::super::haproxy::{self, DEFAULT_COMMAND_TIMEOUT, HaproxyOp, HaproxySpec, ServerState};
use super::super::model::Action;
use super::super::rows::{RowCondition, ValueTest};
use super::super::sql::{
    DEFAULT_POLL_INTERVAL, DEFAULT_SQL_DEADLINE, DEFAULT_STATEMENT_TIMEOUT, PasswordSource, SqlSpec,
};
use super::super::template::Template;
use super::Checker;
use serde_spanned::Spanned;
use std::collections::BTreeSet;
use std::ops::Range;
use std::str::FromStr;

const DSN_EXAMPLE: &str = "e.g. \"host=127.0.0.1 port=6432 user=app dbname=pgbouncer\"";

impl Checker<'_> {
    /// An acting step or action of `kind` (http, exec, sql, haproxy).
    pub(super) fn action(
        &mut self,
        kind: RawKind,
        a: &RawAction,
        span: &Range<usize>,
        known: &BTreeSet<String>,
        target_ok: bool,
    ) -> Option<Action> {
        match kind {
            RawKind::Http => self.http(a, span, known, target_ok).map(Action::Http),
            RawKind::Exec => self
                .exec(&a.argv, &a.timeout, &a.grace, span, known, target_ok)
                .map(Action::Exec),
            RawKind::Sql => self.sql(a, span, known, target_ok).map(Action::Sql),
            RawKind::Haproxy => self.haproxy(a, span, known, target_ok).map(Action::Haproxy),
            RawKind::Check | RawKind::Wait | RawKind::Batch | RawKind::Manual | RawKind::Note => {
                self.err(
                    span.clone(),
                    format!(
                        "a \"{}\" step cannot be a batch action; expected kind = \"http\", \"exec\", \"sql\" or \"haproxy\"",
                        kind.name()
                    ),
                );
                None
            }
        }
    }

    /// One batch action: its kind as written, or `url` → http and `argv` → exec.
    pub(super) fn batch_action(
        &mut self,
        a: &Spanned<RawAction>,
        known: &BTreeSet<String>,
    ) -> Option<Action> {
        let span = a.span();
        let a = a.get_ref();
        let kind = match (&a.kind, &a.url, &a.argv) {
            (Some(k), _, _) => *k.get_ref(),
            (None, Some(_), None) => RawKind::Http,
            (None, None, Some(_)) => RawKind::Exec,
            _ => {
                self.err(
                    span,
                    "the batch action needs exactly one of url (an HTTP request) or argv (a command), or kind = \"sql\" or \"haproxy\"",
                );
                return None;
            }
        };
        let allowed = allowed_fields(kind);
        let mut ok = true;
        for (field, fspan) in a.present_fields() {
            if !allowed.contains(&field) {
                self.err(
                    fspan,
                    format!(
                        "\"{field}\" is not allowed in a \"{}\" action; expected one of: {}",
                        kind.name(),
                        allowed.join(", ")
                    ),
                );
                ok = false;
            }
        }
        let action = self.action(kind, a, &span, known, true)?;
        ok.then_some(action)
    }

    fn required<'s>(
        &mut self,
        f: &'s Option<Spanned<String>>,
        step: &Range<usize>,
        msg: &str,
    ) -> Option<&'s Spanned<String>> {
        match f {
            Some(v) if !v.get_ref().trim().is_empty() => Some(v),
            Some(v) => {
                self.err(
                    v.span(),
                    msg.replace("needs", "has an empty value; it needs"),
                );
                None
            }
            None => {
                self.err(step.clone(), msg);
                None
            }
        }
    }

    pub(super) fn sql(
        &mut self,
        a: &RawAction,
        step: &Range<usize>,
        known: &BTreeSet<String>,
        target_ok: bool,
    ) -> Option<SqlSpec> {
        let dsn = self.required(
            &a.dsn,
            step,
            &format!(
                "a sql step needs dsn = \"{{{{pg_dsn}}}}\": host, port, user and dbname, never the password ({DSN_EXAMPLE})"
            ),
        )?;
        let dsn_t = self.template(dsn, known, target_ok);
        if let Some(t) = &dsn_t
            && t.variables().next().is_none()
        {
            match tokio_postgres::Config::from_str(dsn.get_ref()) {
                Err(e) => self.err(
                    dsn.span(),
                    format!("the DSN does not parse: {e}; expected {DSN_EXAMPLE}"),
                ),
                Ok(c) if c.get_password().is_some() => self.err(
                    dsn.span(),
                    "the DSN holds a password; passwords never go in the runbook: use password = \"{{secret_variable}}\", password_env or password_file",
                ),
                Ok(_) => {}
            }
        }
        let stmt = self.required(
            &a.statement,
            step,
            "a sql step needs statement = \"...\", e.g. \"SHOW POOLS\" or \"SELECT count(*) FROM pg_stat_activity\"",
        )?;
        let statement = self.template(stmt, known, target_ok);
        let password = self.password(a, known, target_ok)?;
        let read_only = a.read_only.as_ref().is_some_and(|r| *r.get_ref());
        let statement = statement.filter(|t| self.sql_statement(t, &stmt.span(), read_only));
        let statement_timeout = self.duration(&a.statement_timeout, DEFAULT_STATEMENT_TIMEOUT);
        let deadline = self.duration(&a.deadline, DEFAULT_SQL_DEADLINE);
        if let Some(t) = &a.statement_timeout
            && statement_timeout > deadline
        {
            self.err(
                t.span(),
                format!(
                    "statement_timeout ({}) is longer than the step's deadline ({}); expected it within the deadline",
                    humantime::format_duration(statement_timeout),
                    humantime::format_duration(deadline)
                ),
            );
        }
        let expect = match &a.expect {
            Some(e) => Some(self.expect(e, known, target_ok)?),
            None => None,
        };
        let wait = self.poll(a, expect.is_some(), Some(read_only))?;
        Some(SqlSpec {
            dsn: dsn_t?,
            password,
            statement: statement?,
            read_only,
            statement_timeout,
            deadline,
            expect,
            wait,
            interval: self.duration(&a.interval, DEFAULT_POLL_INTERVAL),
        })
    }

    /// `wait`: allowed only with a condition (and, for sql, on a read-only statement).
    fn poll(
        &mut self,
        a: &RawAction,
        has_expect: bool,
        read_only: Option<bool>,
    ) -> Option<Option<std::time::Duration>> {
        let Some(w) = &a.wait else { return Some(None) };
        if !has_expect {
            self.err(
                w.span(),
                "wait reads the result again until its condition holds: it needs expect = { ... }",
            );
            return None;
        }
        if read_only == Some(false) {
            self.err(
                w.span(),
                "a sql step that waits runs its statement again and again: it must be read_only = true",
            );
            return None;
        }
        Some(Some(self.duration(&a.wait, DEFAULT_STATEMENT_TIMEOUT)))
    }

    fn password(
        &mut self,
        a: &RawAction,
        known: &BTreeSet<String>,
        target_ok: bool,
    ) -> Option<PasswordSource> {
        let given: Vec<Range<usize>> = [&a.password, &a.password_env, &a.password_file]
            .into_iter()
            .flatten()
            .map(serde_spanned::Spanned::span)
            .collect();
        if let Some(second) = given.get(1) {
            self.err(
                second.clone(),
                "give the password one way: password (a secret variable), password_env or password_file",
            );
            return None;
        }
        if let Some(p) = &a.password {
            let written = p.get_ref().trim();
            let name = written
                .strip_prefix("{{")
                .and_then(|t| t.strip_suffix("}}"))
                .map(str::trim);
            return match name {
                Some(n) if self.secrets.contains(n) => {
                    Some(PasswordSource::Variable(n.to_string()))
                }
                Some(n) if known.contains(n) => {
                    self.err(
                        p.span(),
                        format!(
                            "variable \"{n}\" is not secret; a password may only come from a secret variable: declare {n} = {{ secret = true, env = \"VAR_NAME\" }}"
                        ),
                    );
                    None
                }
                _ => {
                    self.err(
                        p.span(),
                        "password must name a secret variable, e.g. password = \"{{pg_password}}\" with [variables] pg_password = { secret = true, env = \"PGPASSWORD\" }; a password is never written in the runbook",
                    );
                    None
                }
            };
        }
        if let Some(e) = &a.password_env {
            let v = e.get_ref();
            if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                self.err(
                    e.span(),
                    "password_env names an environment variable, e.g. \"PGBOUNCER_PASSWORD\"",
                );
                return None;
            }
            return Some(PasswordSource::Env(v.clone()));
        }
        if let Some(f) = &a.password_file {
            return Some(PasswordSource::File(self.template(f, known, target_ok)?));
        }
        Some(PasswordSource::None)
    }

    pub(super) fn haproxy(
        &mut self,
        a: &RawAction,
        step: &Range<usize>,
        known: &BTreeSet<String>,
        target_ok: bool,
    ) -> Option<HaproxySpec> {
        let socket = self.required(
            &a.socket,
            step,
            "an haproxy step needs socket = \"{{haproxy_socket}}\": the path of HAProxy's stats socket or its host:port (stats socket ... level admin)",
        )?;
        let socket_t = self.template(socket, known, target_ok);
        if socket_t
            .as_ref()
            .is_some_and(|t| t.variables().next().is_none())
            && let Err(e) = haproxy::Socket::parse(socket.get_ref())
        {
            self.err(socket.span(), e.to_string());
        }
        let server = match &a.server {
            None => None,
            Some(s) => {
                let t = self.template(s, known, target_ok)?;
                if t.variables().next().is_none()
                    && let Err(e) = haproxy::server_name(s.get_ref())
                {
                    self.err(s.span(), e.to_string());
                }
                Some((t, s.span()))
            }
        };
        let ops: Vec<Range<usize>> = [
            a.state.as_ref().map(serde_spanned::Spanned::span),
            a.weight.as_ref().map(serde_spanned::Spanned::span),
            a.show.as_ref().map(serde_spanned::Spanned::span),
        ]
        .into_iter()
        .flatten()
        .collect();
        if let Some(second) = ops.get(1) {
            self.err(
                second.clone(),
                "an haproxy step does one thing: one of state, weight or show",
            );
            return None;
        }
        let need_server = |c: &mut Self, what: &str, span: Range<usize>| {
            c.err(
                span,
                format!("{what} needs server = \"backend/server\", e.g. server = \"be_app/{{{{target}}}}\""),
            );
        };
        let op = if let Some(st) = &a.state {
            let Some(state) = ServerState::parse(st.get_ref()) else {
                self.err(
                    st.span(),
                    format!(
                        "state = \"{}\"; expected \"ready\", \"drain\" or \"maint\"",
                        crate::sanitize::line(st.get_ref())
                    ),
                );
                return None;
            };
            let Some((server, _)) = server.clone() else {
                need_server(self, "state", st.span());
                return None;
            };
            HaproxyOp::SetState { server, state }
        } else if let Some(w) = &a.weight {
            let text = match w.get_ref() {
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::String(s) => s.clone(),
                _ => {
                    self.err(
                        w.span(),
                        "weight is a whole number 0 to 256, or a variable such as \"{{weight}}\"",
                    );
                    return None;
                }
            };
            let weight = self.template_text(&text, w.span(), known, target_ok)?;
            let Some((server, _)) = server.clone() else {
                need_server(self, "weight", w.span());
                return None;
            };
            HaproxyOp::SetWeight { server, weight }
        } else if let Some(sh) = &a.show {
            if let Some((_, span)) = &server {
                self.err(
                    span.clone(),
                    "show reads every server; select rows with expect = { where = { svname = \"...\" }, ... } instead of server",
                );
                return None;
            }
            match sh.get_ref().as_str() {
                "stat" => HaproxyOp::ShowStat,
                "servers state" => HaproxyOp::ShowServersState {
                    backend: match &a.backend {
                        Some(b) => Some(self.template(b, known, target_ok)?),
                        None => None,
                    },
                },
                other => {
                    self.err(
                        sh.span(),
                        format!(
                            "show = \"{}\"; expected \"stat\" or \"servers state\"",
                            crate::sanitize::line(other)
                        ),
                    );
                    return None;
                }
            }
        } else {
            match (&server, &a.drain_wait) {
                (Some((server, _)), Some(_)) => HaproxyOp::WaitSessions {
                    server: server.clone(),
                },
                _ => {
                    self.err(
                        step.clone(),
                        "an haproxy step needs one of state = \"drain\" (ready, maint), weight = N or show = \"stat\" (\"servers state\"), or server with drain_wait",
                    );
                    return None;
                }
            }
        };
        if let Some(b) = &a.backend
            && !matches!(op, HaproxyOp::ShowServersState { .. })
        {
            self.err(b.span(), "backend goes with show = \"servers state\"");
            return None;
        }
        let drain_ok = matches!(
            op,
            HaproxyOp::SetState {
                state: ServerState::Drain | ServerState::Maint,
                ..
            } | HaproxyOp::WaitSessions { .. }
        );
        if let Some(d) = &a.drain_wait
            && !drain_ok
        {
            self.err(
                d.span(),
                "drain_wait waits for a drained server's sessions: it goes with state = \"drain\" or \"maint\" (or alone, with server)",
            );
            return None;
        }
        let is_show = matches!(op, HaproxyOp::ShowStat | HaproxyOp::ShowServersState { .. });
        let expect = match &a.expect {
            Some(e) if !is_show => {
                self.err(
                    e.span(),
                    "expect judges a show result; use it with show = \"stat\" or \"servers state\"",
                );
                return None;
            }
            Some(e) => Some(self.expect(e, known, target_ok)?),
            None => None,
        };
        let wait = self.poll(a, expect.is_some(), None)?;
        Some(HaproxySpec {
            socket: socket_t?,
            drain_wait: a
                .drain_wait
                .as_ref()
                .map(|_| self.duration(&a.drain_wait, std::time::Duration::from_secs(60))),
            op,
            timeout: self.duration(&a.timeout, DEFAULT_COMMAND_TIMEOUT),
            expect,
            wait,
            interval: self.duration(&a.interval, DEFAULT_POLL_INTERVAL),
        })
    }

    fn value_template(
        &mut self,
        v: &Spanned<toml::Value>,
        known: &BTreeSet<String>,
        target_ok: bool,
    ) -> Option<Template> {
        let text = match v.get_ref() {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            _ => {
                self.err(v.span(), "expected a string or a number");
                return None;
            }
        };
        self.template_text(&text, v.span(), known, target_ok)
    }

    fn expect(
        &mut self,
        e: &Spanned<RawExpect>,
        known: &BTreeSet<String>,
        target_ok: bool,
    ) -> Option<RowCondition> {
        let span = e.span();
        let e = e.get_ref();
        let mut tests: Vec<(ValueTest, Range<usize>)> = Vec::new();
        if let Some(a) = &e.above {
            tests.push((ValueTest::Number(Condition::Above(*a.get_ref())), a.span()));
        }
        if let Some(b) = &e.below {
            tests.push((ValueTest::Number(Condition::Below(*b.get_ref())), b.span()));
        }
        if let Some(bt) = &e.between {
            match bt.get_ref().as_slice() {
                [lo, hi] if lo <= hi && lo.is_finite() && hi.is_finite() => {
                    tests.push((ValueTest::Number(Condition::Between(*lo, *hi)), bt.span()));
                }
                _ => {
                    self.err(
                        bt.span(),
                        "between needs two finite numbers, low first: expected between = [0, 10]",
                    );
                    return None;
                }
            }
        }
        if let Some(q) = &e.equals {
            tests.push((
                ValueTest::Equals(self.value_template(q, known, target_ok)?),
                q.span(),
            ));
        }
        for (t, s) in &tests {
            if let ValueTest::Number(Condition::Above(x) | Condition::Below(x)) = t
                && !x.is_finite()
            {
                self.err(s.clone(), "the threshold must be a finite number");
                return None;
            }
        }
        let test = match tests.len() {
            0 => {
                self.err(
                    span,
                    "expect has no test; expected one of above = N, below = N, between = [LOW, HIGH] or equals = \"…\"",
                );
                return None;
            }
            1 => tests.remove(0).0,
            _ => {
                self.err(
                    tests[1].1.clone(),
                    "expect has more than one test; expected exactly one of above, below, between, equals",
                );
                return None;
            }
        };
        if let Some(each) = &e.each
            && e.column.is_none()
        {
            self.err(
                each.span(),
                "each goes with column: without a column, expect judges the number of rows",
            );
            return None;
        }
        let mut filter = Vec::new();
        for (k, v) in e.filter.iter().flatten() {
            filter.push((k.clone(), self.value_template(v, known, target_ok)?));
        }
        Some(RowCondition {
            column: e.column.as_ref().map(|c| c.get_ref().clone()),
            filter,
            each: e.each.as_ref().is_some_and(|x| *x.get_ref()),
            test,
        })
    }
}
