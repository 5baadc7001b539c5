//! Checking where a runbook's variables land in SQL and PromQL: a variable written bare in
//! the code (outside quotes) must be declared a number (or, in PromQL, a duration), since a
//! value there cannot be quoted; and a `sql` statement holds exactly one command, which a
//! read-only one may not use to end its read-only transaction.

use super::super::model::VarKind;
use super::super::quoting::{Lang, Place};
use super::super::template::{TARGET, Template};
use super::{Checker, within};
use std::ops::Range;

/// First words of the commands that end, change or nest a transaction: a read-only statement
/// that began with one could undo its own read-only transaction.
const TRANSACTION_CONTROL: &[&str] = &[
    "begin",
    "start",
    "commit",
    "end",
    "rollback",
    "abort",
    "savepoint",
    "release",
    "prepare",
    "set",
    "reset",
    "discard",
    "do",
    "call",
    "copy",
];

impl Checker<'_> {
    /// Every variable of `t` (written at `span`) sits where its value can be quoted in `lang`.
    pub(super) fn quoted_in(&mut self, t: &Template, lang: Lang, span: &Range<usize>) -> bool {
        if Place::bare_needs(lang).is_none() {
            return true;
        }
        let (places, _) = t.places(lang);
        let mut ok = true;
        let mut named = std::collections::BTreeSet::new();
        for ((name, _), place) in t.variables().zip(places) {
            if place != Place::Bare || !named.insert(name) {
                continue;
            }
            let kind = self.typed.get(name).copied();
            let fits = match (lang, kind) {
                _ if name == TARGET => false,
                (Lang::Sql, Some(VarKind::Number | VarKind::Bool)) => true,
                (Lang::PromQl, Some(VarKind::Number | VarKind::Duration)) => true,
                _ => false,
            };
            if !fits {
                let (code, quote, typed) = match lang {
                    Lang::Sql => ("SQL", format!("'{{{{{name}}}}}'"), "\"number\""),
                    _ => (
                        "PromQL",
                        format!("\"{{{{{name}}}}}\""),
                        "\"number\" or \"duration\"",
                    ),
                };
                let expected = if name == TARGET {
                    format!("expected it inside quotes ({quote}): a target is a label value")
                } else {
                    format!(
                        "expected it inside quotes ({quote}), or the variable declared with type = {typed}"
                    )
                };
                self.err(
                    within(self.source, span, &format!("{{{{{name}}}}}")),
                    format!(
                        "\"{{{{{name}}}}}\" is used unquoted, where its value would become {code} code; {expected}"
                    ),
                );
                ok = false;
            }
        }
        ok
    }

    /// A `sql` statement: variables quoted, one command, and a read-only one that does not
    /// begin with transaction control.
    pub(super) fn sql_statement(
        &mut self,
        t: &Template,
        span: &Range<usize>,
        read_only: bool,
    ) -> bool {
        let mut ok = self.quoted_in(t, Lang::Sql, span);
        let (_, lexer) = t.places(Lang::Sql);
        if let Some(offset) = lexer.second_command() {
            let near: String = crate::sanitize::line(t.source().get(offset..).unwrap_or(""))
                .chars()
                .take(40)
                .collect();
            self.err(
                within(self.source, span, &near),
                format!(
                    "the statement holds more than one command (\"{near}\"); a sql step runs exactly one: expected one statement, or one step for each"
                ),
            );
            ok = false;
        }
        let first = t
            .source()
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let first = first.trim_end_matches(';');
        if read_only && TRANSACTION_CONTROL.contains(&first) {
            self.err(
                span.clone(),
                format!(
                    "a read_only statement cannot begin with {}: it runs inside a read-only transaction it must not end or change; expected a SELECT, SHOW, EXPLAIN or TABLE",
                    first.to_ascii_uppercase()
                ),
            );
            ok = false;
        }
        ok
    }
}
