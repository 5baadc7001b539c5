//! PromQL parsed with the bounds the parser itself does not have: length, nesting, and
//! durations too large to be one. Every query an importer writes and every variable query sent
//! passes here first.

/// Longest expression (after substitution) handed to the PromQL parser, in bytes.
pub const MAX_EXPR_BYTES: usize = 16 * 1024;

/// Deepest bracket nesting handed to the parser.
pub const MAX_NESTING: usize = 64;

/// Parse PromQL with bounds the parser itself does not have: length and nesting.
pub fn parse_promql(q: &str) -> Result<promql_parser::parser::Expr, String> {
    if q.len() > MAX_EXPR_BYTES {
        return Err(format!(
            "the expression is {} bytes, over the {MAX_EXPR_BYTES} bytes read",
            q.len()
        ));
    }
    if nesting(q) > MAX_NESTING {
        return Err(format!(
            "the expression nests brackets deeper than {MAX_NESTING} levels"
        ));
    }
    if let Some(n) = huge_duration(q) {
        return Err(format!(
            "the duration {n} is beyond any range Prometheus can hold"
        ));
    }
    // promql-parser 0.11 panics on some input it should refuse (a unitless duration past
    // u64 seconds); the check above catches the known case, this any other.
    std::panic::catch_unwind(|| promql_parser::parser::parse(q))
        .unwrap_or_else(|_| Err("the PromQL parser failed on this expression".to_string()))
}

/// Largest unitless number taken as a duration (about 31 million years of seconds).
const MAX_DURATION_NUMBER: f64 = 1e15;

/// A unitless number where PromQL reads a duration (`x[N]`, `x[5m:N]`, `offset N`) too large
/// to be one, as written.
fn huge_duration(q: &str) -> Option<String> {
    static NUMBER: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^(0[xX][0-9a-fA-F]+|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)").ok()
    });
    let number = NUMBER.as_ref()?;
    let chars: Vec<(usize, char)> = q.char_indices().collect();
    let mut stack: Vec<char> = Vec::new();
    let mut after_offset = false;
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        match c {
            '"' | '\'' | '`' => {
                i += 1;
                while i < chars.len() && chars[i].1 != c {
                    if chars[i].1 == '\\' && c != '`' {
                        i += 1;
                    }
                    i += 1;
                }
                after_offset = false;
            }
            '(' | '[' | '{' => {
                stack.push(c);
                after_offset = false;
            }
            ')' | ']' | '}' => {
                stack.pop();
                after_offset = false;
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = at;
                while i + 1 < chars.len()
                    && (chars[i + 1].1.is_ascii_alphanumeric() || chars[i + 1].1 == '_')
                {
                    i += 1;
                }
                let end = chars.get(i + 1).map_or(q.len(), |c| c.0);
                after_offset = q[start..end].eq_ignore_ascii_case("offset");
            }
            c if c.is_ascii_digit() || c == '.' => {
                if let Some(m) = number.find(&q[at..]) {
                    let text = m.as_str();
                    let value = match text.strip_prefix("0x").or(text.strip_prefix("0X")) {
                        Some(hex) => {
                            u64::from_str_radix(hex, 16).map_or(f64::INFINITY, |v| v as f64)
                        }
                        None => text.parse::<f64>().unwrap_or(f64::INFINITY),
                    };
                    let in_range = stack.last() == Some(&'[');
                    if (in_range || after_offset) && value.abs() >= MAX_DURATION_NUMBER {
                        return Some(crate::sanitize::sanitize(text, false, 40).into_owned());
                    }
                    i += text.chars().count().max(1) - 1;
                }
                after_offset = false;
            }
            c if c.is_whitespace() || c == '-' || c == '+' => {}
            _ => after_offset = false,
        }
        i += 1;
    }
    None
}

fn nesting(q: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for c in q.chars() {
        match c {
            '(' | '[' | '{' => {
                depth += 1;
                max = max.max(depth);
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_or_long_expressions_are_refused_before_parsing() {
        let deep = format!("{}up{}", "(".repeat(500), ")".repeat(500));
        assert!(parse_promql(&deep).unwrap_err().contains("nests"));
        let long = format!("up{{a=\"{}\"}}", "x".repeat(MAX_EXPR_BYTES));
        assert!(parse_promql(&long).unwrap_err().contains("bytes"));
        assert!(parse_promql("sum(rate(x[1m]))").is_ok());
        // The deepest nesting allowed parses on a test thread's small stack.
        let ok = format!("{}up{}", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
        assert!(parse_promql(&ok).is_ok());
        // Unitless durations past u64 seconds made promql-parser 0.11 panic.
        for q in [
            "x[1e20]",
            "x[5m:18446744073709551615]",
            "x offset 1e20",
            "x offset -1e20",
            "rate(x[ 0xffffffffffffffffff ])",
        ] {
            assert!(
                parse_promql(q).unwrap_err().contains("beyond any range"),
                "{q}"
            );
        }
        for q in [
            "x > 1e20",
            "x[1e9]",
            "x{a=\"[1e20]\"}",
            "x @ 1e20",
            "sum(x offset 5m)",
        ] {
            assert!(parse_promql(q).is_ok(), "{q}");
        }
        // `one_line` escapes control characters as `\u001b`; the parser takes that.
        assert!(parse_promql("up{a=\"x\\u001by\"}").is_ok());
    }
}
