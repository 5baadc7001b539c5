//! Rendering the facts through a `minijinja` template: the built-in house format and status
//! page (embedded at build time), or another house's template given with `--template`.
//!
//! Every value a template prints passes [`words::markdown`] (a custom formatter), so text from
//! the journal can never turn into Markdown or HTML, whoever wrote the template. Text the
//! template itself contains, and what its macros return, is printed as written.

use super::facts::Facts;
use super::words;
use crate::diagnostic::Diagnostic;
use minijinja::{AutoEscape, Environment, Error, Output, State, Value};

/// The built-in house format.
pub const HOUSE: &str = include_str!("house.md.j2");
/// The built-in status-page form.
pub const STATUS: &str = include_str!("status.md.j2");

/// A template that could not be rendered, located in its file where minijinja says.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TemplateError(pub String);

fn escape_markdown(out: &mut Output, _state: &State, value: &Value) -> Result<(), Error> {
    if value.is_undefined() || value.is_none() {
        return Ok(());
    }
    let text = match value.as_str() {
        Some(s) if value.is_safe() => {
            // Safe strings come from the template (macros); they are still one sanitize away
            // from the file, in case a template holds raw control characters.
            crate::sanitize::multiline(s).into_owned()
        }
        Some(s) => words::markdown(s),
        None => words::markdown(&value.to_string()),
    };
    out.write_str(&text).map_err(Error::from)
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_keep_trailing_newline(true);
    // A custom auto-escape mode: what macros return and `join` builds is then marked safe
    // (escaped once, by the formatter, as it was built), and `|safe` works as in HTML templates.
    env.set_auto_escape_callback(|_| AutoEscape::Custom("markdown"));
    env.set_formatter(escape_markdown);
    env
}

/// Renders `source` (named `name` in errors) over `facts`.
pub fn render(name: &str, source: &str, facts: &Facts) -> Result<String, TemplateError> {
    let env = environment();
    let located = |e: Error| {
        let span = e.range();
        let msg = format!(
            "template error: {}",
            e.detail().unwrap_or(&e.kind().to_string())
        );
        match span {
            Some(span) => TemplateError(Diagnostic::at(name, source, Some(span), msg).to_string()),
            None => TemplateError(match e.line() {
                Some(line) => format!("{name}:{line}: {msg}"),
                None => format!("{name}: {msg}"),
            }),
        }
    };
    let template = env.template_from_named_str(name, source).map_err(located)?;
    template
        .render(Value::from_serialize(facts))
        .map_err(located)
}
