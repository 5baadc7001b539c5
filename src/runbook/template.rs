//! `{{name}}` templates in runbook text.
//!
//! Substitution is string replacement, quoted for where the text goes: nothing is ever handed
//! to a shell unasked, so a label value such as `$(touch /tmp/x)` stays one literal argument.
//! In a SQL statement, a PromQL query or a `sh -c` script every value (the runbook's variables
//! and the batch `{{target}}` alike) is quoted by that language's rules for the place it sits
//! in ([`super::quoting`]); in a URL `{{target}}` is percent-encoded; elsewhere values go in
//! as written (argv elements, JSON strings, headers).

use super::quoting::{Lang, Lexer, Place};
use std::collections::BTreeMap;

/// The name of the per-target variable inside a batch.
pub const TARGET: &str = "target";

/// Where a rendered template is used, which decides how an outside value is escaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// argv elements, JSON string values, header values, text: literal.
    Literal,
    /// A URL: `{{target}}` is percent-encoded.
    Url,
    /// PromQL: every value quoted for its place (string, regex, number, duration).
    PromQl,
    /// SQL: every value quoted for its place (literal, name, number).
    Sql,
    /// A shell script (`sh -c SCRIPT`): every value quoted for its place, a bare one as a word.
    Shell,
}

impl Context {
    /// The language whose quoting rules apply, if any.
    pub fn lang(self) -> Option<Lang> {
        match self {
            Context::Literal | Context::Url => None,
            Context::PromQl => Some(Lang::PromQl),
            Context::Sql => Some(Lang::Sql),
            Context::Shell => Some(Lang::Shell),
        }
    }
}

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    /// A variable and its byte offset in the template text.
    Var(String, usize),
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    source: String,
    pieces: Vec<Piece>,
}

/// A template that does not parse: byte offset in the template text and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TemplateError {
    pub offset: usize,
    pub message: String,
}

/// Variable values for rendering; secrets are values like any other here and masked on output.
pub type Values = BTreeMap<String, String>;

impl Template {
    /// Parse `text`; `{{ name }}` (spaces allowed) is a variable, `name` letters, digits, `_`, `-`.
    pub fn parse(text: &str) -> Result<Template, TemplateError> {
        let mut pieces = Vec::new();
        let mut rest = text;
        let mut base = 0;
        while let Some(open) = rest.find("{{") {
            if open > 0 {
                pieces.push(Piece::Text(rest[..open].to_string()));
            }
            let after = &rest[open + 2..];
            let Some(close) = after.find("}}") else {
                return Err(TemplateError {
                    offset: base + open,
                    message: "\"{{\" is not closed; expected \"{{name}}\"".into(),
                });
            };
            let name = after[..close].trim();
            let valid = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !valid {
                return Err(TemplateError {
                    offset: base + open,
                    message: format!(
                        "\"{{{{{}}}}}\" is not a variable name; expected letters, digits, '_' or '-'",
                        &after[..close]
                    ),
                });
            }
            pieces.push(Piece::Var(name.to_string(), base + open));
            let consumed = open + 2 + close + 2;
            base += consumed;
            rest = &rest[consumed..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Text(rest.to_string()));
        }
        Ok(Template {
            source: text.to_string(),
            pieces,
        })
    }

    /// The text as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The variables used, with their byte offsets in the text.
    pub fn variables(&self) -> impl Iterator<Item = (&str, usize)> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Var(name, at) => Some((name.as_str(), *at)),
            Piece::Text(_) => None,
        })
    }

    /// Whether `{{target}}` appears.
    pub fn uses_target(&self) -> bool {
        self.variables().any(|(n, _)| n == TARGET)
    }

    /// Where each variable sits in `lang`, in order of appearance, and the lexer at the end.
    pub fn places(&self, lang: Lang) -> (Vec<Place>, Lexer) {
        let mut lexer = Lexer::new(lang);
        let mut places = Vec::new();
        for p in &self.pieces {
            match p {
                Piece::Text(t) => lexer.feed(t),
                Piece::Var(..) => {
                    places.push(lexer.place());
                    lexer.variable();
                }
            }
        }
        (places, lexer)
    }

    /// Render with `values` and, inside a batch, the current `target`, each value quoted for
    /// `ctx`. Unknown names were rejected at load; one missing here renders as an empty string
    /// would be a silent bug, so it is an error; so is a value that cannot be quoted where it
    /// sits (a word where a SQL number is expected).
    pub fn render(
        &self,
        values: &Values,
        target: Option<&str>,
        ctx: Context,
    ) -> Result<String, RenderError> {
        let places = ctx.lang().map(|l| (l, self.places(l).0));
        let mut out = String::with_capacity(self.source.len());
        let mut nth = 0;
        for p in &self.pieces {
            let (name, value) = match p {
                Piece::Text(t) => {
                    out.push_str(t);
                    continue;
                }
                Piece::Var(name, _) if name == TARGET => (name, target),
                Piece::Var(name, _) => (name, values.get(name).map(String::as_str)),
            };
            let value = value.ok_or_else(|| RenderError::Missing(name.clone()))?;
            let place = places.as_ref().map(|(l, ps)| (*l, ps[nth]));
            nth += 1;
            match (place, ctx) {
                (Some((lang, place)), _) => {
                    let quoted =
                        place
                            .quote(lang, value)
                            .map_err(|why| RenderError::Unquotable {
                                name: name.clone(),
                                why,
                            })?;
                    out.push_str(&quoted);
                }
                (None, Context::Url) if name == TARGET => out.push_str(&percent_encode(value)),
                (None, _) => out.push_str(value),
            }
        }
        Ok(out)
    }
}

/// Why a template could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// A variable with no value at run time.
    #[error("variable \"{0}\" has no value; set it with --var {0}=VALUE")]
    Missing(String),
    /// A value that cannot go where the variable sits (never shown: it may be a secret).
    #[error("the value of \"{name}\" cannot be used where it is written: {why}")]
    Unquotable { name: String, why: String },
}

/// Percent-encode everything but RFC 3986 unreserved characters.
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals() -> Values {
        [("base".to_string(), "http://h:1".to_string())].into()
    }

    #[test]
    fn renders_variables_and_target() {
        let t = Template::parse("{{base}}/restart/{{ target }}").unwrap();
        let s = t.render(&vals(), Some("a b/c"), Context::Url).unwrap();
        assert_eq!(s, "http://h:1/restart/a%20b%2Fc");
        let lit = t
            .render(&vals(), Some("$(touch x)"), Context::Literal)
            .unwrap();
        assert_eq!(lit, "http://h:1/restart/$(touch x)");
    }

    #[test]
    fn promql_values_stay_inside_the_string() {
        let t = Template::parse("up{pod=\"{{target}}\"}").unwrap();
        let s = t
            .render(&vals(), Some("x\"} or vector(1) #"), Context::PromQl)
            .unwrap();
        assert_eq!(s, "up{pod=\"x\\\"} or vector(1) #\"}");
    }

    #[test]
    fn bad_templates_say_where() {
        let e = Template::parse("abc {{oops").unwrap_err();
        assert_eq!(e.offset, 4);
        let e = Template::parse("x {{a b}}").unwrap_err();
        assert_eq!(e.offset, 2);
        let t = Template::parse("a {{x}} b {{y}}").unwrap();
        let v: Vec<_> = t.variables().collect();
        assert_eq!(v, vec![("x", 2), ("y", 10)]);
    }

    #[test]
    fn missing_values_are_errors() {
        let t = Template::parse("{{nope}}").unwrap();
        assert!(t.render(&vals(), None, Context::Literal).is_err());
        let t = Template::parse("{{target}}").unwrap();
        assert!(t.render(&vals(), None, Context::Literal).is_err());
    }
}
