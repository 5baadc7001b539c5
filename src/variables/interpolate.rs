//! Grafana's variable syntax in queries, titles and legends: `$name`, `${name}`,
//! `${name:format}`, `[[name]]`, `[[name:format]]`, and the global `$__interval`,
//! `$__rate_interval`, `$__range` (with `_ms`/`_s` forms).
//!
//! In a query, values are formatted as Grafana's Prometheus data source does
//! (`interpolateQueryExpr`): a variable that is neither multi-value nor include-all gives its
//! value escaped for a PromQL string (`\` and `"`); one that is gives its values regex-escaped,
//! one as it is, several as `(a|b)`, none as `()`; "All" gives every value so, or the
//! variable's custom all value as written. In titles values are the variable's text (`a + b`,
//! `All`), in legends Grafana's glob (`{a,b}`), neither escaped.

use std::time::Duration;

/// What a variable stands for.
#[derive(Debug, Clone, PartialEq)]
pub enum Binding {
    /// The value of a variable that is neither multi-value nor include-all.
    One(String),
    /// The values of a multi-value or include-all variable (regex-escaped in a query).
    Many(Vec<String>),
    /// "All": every value of the variable, or its custom all value when it has one.
    All {
        values: Vec<String>,
        custom: Option<String>,
    },
    /// An interval variable set to `auto`: the panel's `$__interval`.
    AutoInterval,
}

/// The durations the global variables stand for in one panel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Builtins {
    pub interval: Duration,
    pub rate_interval: Duration,
    pub range: Duration,
}

/// Where the text goes, which decides the format of a reference that names none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A query: the Prometheus data source's formatting, escaped for PromQL.
    Query,
    /// A title: the variable's text (`a + b`, `All`).
    Text,
    /// A legend: Grafana's glob (`{a,b}`; a custom all value as written).
    Legend,
}

/// The text with every known variable replaced, and the names that were not.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    pub text: String,
    /// Referenced names that are neither bound nor global (each once, in order).
    pub unresolved: Vec<String>,
    /// `name:format` pairs whose format is not supported (the default was used).
    pub unknown_formats: Vec<String>,
}

const MAX_REFERENCE: usize = 200;

/// Replace the variables in `s`.
pub fn interpolate<'b>(
    s: &str,
    lookup: &dyn Fn(&str) -> Option<&'b Binding>,
    builtins: &Builtins,
    mode: Mode,
) -> Outcome {
    let mut out = Outcome::default();
    let mut text = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(pos) = rest.find(['$', '[']) {
        text.push_str(&rest[..pos]);
        rest = &rest[pos..];
        let Some((reference, len)) = reference_at(rest) else {
            let c = rest.chars().next().unwrap_or('$');
            text.push(c);
            rest = &rest[c.len_utf8()..];
            continue;
        };
        let whole = &rest[..len];
        rest = &rest[len..];
        match value_of(&reference, lookup, builtins, mode) {
            Some(Ok(v)) => text.push_str(&v),
            Some(Err(v)) => {
                let key = format!("{}:{}", reference.name, reference.format.unwrap_or(""));
                if !out.unknown_formats.contains(&key) {
                    out.unknown_formats.push(key);
                }
                text.push_str(&v);
            }
            None => {
                // `$1` in a label_replace replacement is PromQL's, not Grafana's.
                if !reference.name.chars().all(|c| c.is_ascii_digit())
                    && !out.unresolved.iter().any(|n| n == reference.name)
                {
                    out.unresolved.push(reference.name.to_string());
                }
                text.push_str(whole);
            }
        }
    }
    text.push_str(rest);
    out.text = text;
    out
}

struct Reference<'a> {
    name: &'a str,
    format: Option<&'a str>,
    /// `${name.field}`: a field path, which no Prometheus variable has.
    field: bool,
}

/// At most the first `n` bytes of `s`, cut on a character boundary.
fn head(s: &str, n: usize) -> &str {
    let mut end = n.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Up to `close` in `inner`: the reference's head and `:format`, and where `close` starts.
fn braced<'a>(inner: &'a str, close: &str) -> Option<(&'a str, Option<&'a str>, usize)> {
    let end = head(inner, MAX_REFERENCE).find(close)?;
    let body = &inner[..end];
    Some(match body.split_once(':') {
        Some((n, f)) => (n, Some(f), end),
        None => (body, None, end),
    })
}

/// A variable reference at the start of `s`, and its length in bytes.
fn reference_at(s: &str) -> Option<(Reference<'_>, usize)> {
    let word = |name: &str| !name.is_empty() && name.chars().all(is_word);
    if let Some(inner) = s.strip_prefix("[[") {
        let (name, format, end) = braced(inner, "]]")?;
        let field = false;
        return word(name).then_some((
            Reference {
                name,
                format,
                field,
            },
            end + 4,
        ));
    }
    if let Some(inner) = s.strip_prefix("${") {
        let (head, format, end) = braced(inner, "}")?;
        let (name, field) = match head.split_once('.') {
            Some((n, _)) => (n, true),
            None => (head, false),
        };
        return word(name).then_some((
            Reference {
                name,
                format,
                field,
            },
            end + 3,
        ));
    }
    let inner = s.strip_prefix('$')?;
    let len = inner.find(|c: char| !is_word(c)).unwrap_or(inner.len());
    if len == 0 {
        return None;
    }
    Some((
        Reference {
            name: &inner[..len],
            format: None,
            field: false,
        },
        len + 1,
    ))
}

/// `Some(Ok)`: the replacement; `Some(Err)`: the replacement in the default format because
/// the one asked for is not supported; `None`: leave the reference as written.
fn value_of<'b>(
    r: &Reference<'_>,
    lookup: &dyn Fn(&str) -> Option<&'b Binding>,
    b: &Builtins,
    mode: Mode,
) -> Option<Result<String, String>> {
    let builtin = match r.name {
        "__interval" => Some(prom_duration(b.interval)),
        "__interval_ms" => Some(b.interval.as_millis().to_string()),
        "__rate_interval" => Some(prom_duration(b.rate_interval)),
        "__rate_interval_ms" => Some(b.rate_interval.as_millis().to_string()),
        "__range" => Some(prom_duration(b.range)),
        "__range_s" => Some(b.range.as_secs().to_string()),
        "__range_ms" => Some(b.range.as_millis().to_string()),
        _ => None,
    };
    if let Some(v) = builtin {
        return Some(Ok(v));
    }
    if r.field {
        return None;
    }
    let binding = lookup(r.name)?;
    Some(format_binding(binding, r.format, b, mode))
}

fn format_binding(
    binding: &Binding,
    format: Option<&str>,
    b: &Builtins,
    mode: Mode,
) -> Result<String, String> {
    // Grafana's default: the data source's PromQL formatting in a query, the variable's text
    // in a title (`replaceVariables(title, …, 'text')`), glob in a legend (no format given).
    let default = match mode {
        Mode::Query => None,
        Mode::Text => Some("text"),
        Mode::Legend => Some("glob"),
    };
    let formatted = |f: Option<&str>| formatted(binding, f, b, mode);
    match format.map(str::trim).filter(|f| !f.is_empty()) {
        None => Ok(formatted(default).unwrap_or_default()),
        Some(f) => formatted(Some(f)).ok_or_else(|| formatted(default).unwrap_or_default()),
    }
}

/// `binding` in Grafana's format `format` (`None`: the Prometheus data source's own), the
/// values escaped for a PromQL string in a query; `None` for a format warroom does not know.
fn formatted(binding: &Binding, format: Option<&str>, b: &Builtins, mode: Mode) -> Option<String> {
    if format == Some("text") {
        return Some(match binding {
            Binding::One(v) => v.clone(),
            Binding::Many(vs) => vs.join(" + "),
            Binding::All { .. } => "All".to_string(),
            Binding::AutoInterval => prom_duration(b.interval),
        });
    }
    let (values, several) = match binding {
        Binding::One(v) => (std::slice::from_ref(v), false),
        Binding::Many(vs) => (vs.as_slice(), true),
        Binding::AutoInterval => return Some(prom_duration(b.interval)),
        Binding::All {
            custom: Some(custom),
            ..
        } => return Some(custom.clone()),
        Binding::All { values, .. } => (values.as_slice(), true),
    };
    let esc = |s: &str| match mode {
        Mode::Query => string_escape(s),
        Mode::Text | Mode::Legend => s.to_string(),
    };
    let Some(format) = format else {
        return Some(match several {
            true => esc(&regex_list(values)),
            false => esc(&values[0]),
        });
    };
    Some(match format {
        "regex" => esc(&regex_list(values)),
        "raw" | "csv" => values.join(","),
        "pipe" => values.join("|"),
        "glob" if values.len() > 1 => format!("{{{}}}", values.join(",")),
        "glob" => values.join(""),
        "doublequote" => values
            .iter()
            .map(|v| format!("\"{}\"", esc(v)))
            .collect::<Vec<_>>()
            .join(","),
        "singlequote" => values
            .iter()
            .map(|v| format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'")))
            .collect::<Vec<_>>()
            .join(","),
        _ => return None,
    })
}

/// `a`, `(a|b)` or `()`, each value regex-escaped.
fn regex_list(values: &[String]) -> String {
    let escaped: Vec<String> = values.iter().map(|v| regex_escape(v)).collect();
    if escaped.len() == 1 {
        escaped[0].clone()
    } else {
        format!("({})", escaped.join("|"))
    }
}

/// Escape RE2's special characters.
pub fn regex_escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        if "\\^$.|?*+()[]{}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Escape for the inside of a double-quoted PromQL string.
pub fn string_escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"")
}

/// A duration as PromQL writes it, in its largest whole unit: `90s`, `1m`, `6h`, `1500ms`.
pub fn prom_duration(d: Duration) -> String {
    let ms = d.as_millis().max(1);
    if !ms.is_multiple_of(1000) {
        return format!("{ms}ms");
    }
    let s = ms / 1000;
    for (unit, n) in [("d", 86_400), ("h", 3600), ("m", 60)] {
        if s.is_multiple_of(n) {
            return format!("{}{unit}", s / n);
        }
    }
    format!("{s}s")
}

/// Make an interpolated query one clean line: comments (`# …`) dropped, line breaks and runs of
/// blanks outside strings made one space, and characters that must never reach a terminal
/// escaped inside strings (`\u001b`). `Err` when such a character is outside a string or in a
/// raw (backtick) string, where PromQL cannot escape it.
pub fn one_line(q: &str) -> Result<String, char> {
    let mut out = String::with_capacity(q.len());
    let mut chars = q.chars().peekable();
    let mut blank = false;
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' | '`' => {
                if blank && !out.is_empty() {
                    out.push(' ');
                }
                blank = false;
                out.push(c);
                while let Some(d) = chars.next() {
                    if d == c {
                        out.push(d);
                        break;
                    }
                    if d == '\\' && c != '`' {
                        out.push(d);
                        if let Some(e) = chars.next() {
                            push_escaped(&mut out, e, c)?;
                        }
                        continue;
                    }
                    push_escaped(&mut out, d, c)?;
                }
            }
            '#' => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
                blank = true;
            }
            c if c.is_whitespace() => blank = true,
            c if crate::sanitize::is_hostile(c) => return Err(c),
            c => {
                if blank && !out.is_empty() {
                    out.push(' ');
                }
                blank = false;
                out.push(c);
            }
        }
    }
    Ok(out)
}

fn push_escaped(out: &mut String, c: char, quote: char) -> Result<(), char> {
    if !crate::sanitize::is_hostile(c) {
        out.push(c);
        return Ok(());
    }
    if quote == '`' {
        return Err(c);
    }
    let n = c as u32;
    if n <= 0xffff {
        out.push_str(&format!("\\u{n:04x}"));
    } else {
        out.push_str(&format!("\\U{n:08x}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b() -> Builtins {
        Builtins {
            interval: Duration::from_secs(30),
            rate_interval: Duration::from_secs(60),
            range: Duration::from_secs(21_600),
        }
    }

    fn run(s: &str, vars: &[(&str, Binding)], mode: Mode) -> Outcome {
        let lookup = |n: &str| vars.iter().find(|(k, _)| *k == n).map(|(_, v)| v);
        interpolate(s, &lookup, &b(), mode)
    }

    #[test]
    fn globals_in_every_syntax() {
        let o = run(
            "rate(x[$__rate_interval]) + rate(y[${__interval}]) + increase(z[[[__range]]]) + $__range_s",
            &[],
            Mode::Query,
        );
        assert_eq!(
            o.text,
            "rate(x[1m]) + rate(y[30s]) + increase(z[6h]) + 21600"
        );
        assert!(o.unresolved.is_empty());
    }

    #[test]
    fn values_are_escaped_for_promql() {
        let vars = [
            ("one", Binding::One("a\"b\\c".into())),
            (
                "many",
                Binding::Many(vec!["10.0.0.1:9100".into(), "b".into()]),
            ),
            (
                "all",
                Binding::All {
                    values: vec!["x".into(), "y.z".into()],
                    custom: None,
                },
            ),
            (
                "custom",
                Binding::All {
                    values: vec!["x".into()],
                    custom: Some("api-.+".into()),
                },
            ),
            ("none", Binding::Many(Vec::new())),
            ("empty", Binding::One(String::new())),
        ];
        let o = run(
            "x{a=\"$one\", b=~\"$many\", c=~\"${all}\", d=~\"[[custom]]\", e=\"${many:pipe}\", f=~\"$none\", g=\"$empty\"}",
            &vars,
            Mode::Query,
        );
        assert_eq!(
            o.text,
            "x{a=\"a\\\"b\\\\c\", b=~\"(10\\\\.0\\\\.0\\\\.1:9100|b)\", c=~\"(x|y\\\\.z)\", d=~\"api-.+\", e=\"10.0.0.1:9100|b\", f=~\"()\", g=\"\"}"
        );
        // A title shows the text (`text`), a legend Grafana's default, glob, unescaped.
        let t = run("CPU on $many ($all, ${one:csv})", &vars, Mode::Text);
        assert_eq!(t.text, "CPU on 10.0.0.1:9100 + b (All, a\"b\\c)");
        let l = run("{{pod}} $many $all [[custom]] $one", &vars, Mode::Legend);
        assert_eq!(l.text, "{{pod}} {10.0.0.1:9100,b} {x,y.z} api-.+ a\"b\\c");
    }

    #[test]
    fn unknown_names_are_kept_and_reported_once() {
        let o = run(
            "label_replace(x{p=\"$pod\"}, \"d\", \"$1\", \"s\", \"(.*)\") / $pod + ${a.b} $ [x] $$",
            &[],
            Mode::Query,
        );
        assert_eq!(
            o.text,
            "label_replace(x{p=\"$pod\"}, \"d\", \"$1\", \"s\", \"(.*)\") / $pod + ${a.b} $ [x] $$"
        );
        assert_eq!(o.unresolved, vec!["pod".to_string(), "a".to_string()]);
    }

    #[test]
    fn unsupported_formats_fall_back_and_say_so() {
        let vars = [("v", Binding::One("x".into()))];
        let o = run("${v:lucene}", &vars, Mode::Query);
        assert_eq!(o.text, "x");
        assert_eq!(o.unknown_formats, vec!["v:lucene".to_string()]);
    }

    #[test]
    fn durations_use_their_largest_unit() {
        assert_eq!(prom_duration(Duration::from_secs(90)), "90s");
        assert_eq!(prom_duration(Duration::from_secs(120)), "2m");
        assert_eq!(prom_duration(Duration::from_secs(7200)), "2h");
        assert_eq!(prom_duration(Duration::from_secs(86_400 * 7)), "7d");
        assert_eq!(prom_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(prom_duration(Duration::ZERO), "1ms");
    }

    #[test]
    fn queries_become_one_clean_line() {
        assert_eq!(
            one_line("sum by (pod) (\n  rate(x[5m])  # per pod\n)\n").unwrap(),
            "sum by (pod) ( rate(x[5m]) )"
        );
        assert_eq!(
            one_line("x{a=\"has # hash\tand\u{1b}esc\"}").unwrap(),
            "x{a=\"has # hash\\u0009and\\u001besc\"}"
        );
        assert_eq!(one_line("x\u{1b}[2J"), Err('\u{1b}'));
        assert_eq!(one_line("x{a=`\u{7}`}"), Err('\u{7}'));
        assert_eq!(
            one_line("x{a=\"q\\\"\u{7}\"}").unwrap(),
            "x{a=\"q\\\"\\u0007\"}"
        );
    }
}
