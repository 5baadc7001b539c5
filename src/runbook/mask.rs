//! Masking secrets in anything shown or recorded: by value (the runbook's secret variables,
//! environment canaries) and by pattern (bearer tokens, `password=…`, well-known token
//! prefixes), so that a secret printed by a command is hidden too.

/// What replaces a secret.
pub const MASK: &str = "***";

/// Values shorter than this are not masked by value (masking "1" would garble everything).
const MIN_SECRET_LEN: usize = 4;

/// Masks known secret values and secret-looking patterns.
#[derive(Clone, Default)]
pub struct Masker {
    values: Vec<String>,
}

impl std::fmt::Debug for Masker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Masker({} values)", self.values.len())
    }
}

/// `key=value` / `key: value` keys whose value is hidden.
const SECRET_KEYS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "access_key",
    "authorization",
    "bearer",
];

/// Prefixes of well-known tokens; the whole word after them is hidden.
const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghs_",
    "ghu_",
    "github_pat_",
    "xoxb-",
    "xoxp-",
    "AKIA",
    "glpat-",
];

impl Masker {
    pub fn new() -> Self {
        Masker::default()
    }

    /// Add a secret value, and each form it takes once quoted into a statement, a query or a
    /// script (`it''s` in SQL); longest first so a value containing another is masked whole.
    pub fn add(&mut self, value: &str) {
        for form in std::iter::once(value.to_string()).chain(super::quoting::quoted_forms(value)) {
            if form.len() >= MIN_SECRET_LEN && !self.values.contains(&form) {
                self.values.push(form);
            }
        }
        self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }

    /// Mask `text`.
    pub fn mask(&self, text: &str) -> String {
        let mut out = text.to_string();
        for v in &self.values {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), MASK);
            }
        }
        mask_patterns(&out)
    }
}

fn is_word(c: char) -> bool {
    !(c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ';' | '&' | ')' | '(' | '<' | '>'))
}

fn mask_patterns(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut hide: Vec<(usize, usize)> = Vec::new();
    for key in SECRET_KEYS {
        let mut from = 0;
        while let Some(i) = lower[from..].find(key) {
            let at = from + i;
            from = at + key.len();
            // key, optional closing quote, then '=' or ':' (or a space after "bearer"),
            // optional spaces/quote, then the value up to the end of the word.
            let rest = &text[from..];
            let mut skip = 0;
            let mut chars = rest.char_indices().peekable();
            let mut sep = false;
            while let Some(&(j, c)) = chars.peek() {
                match c {
                    '"' | '\'' if !sep => {}
                    '=' | ':' if !sep => sep = true,
                    ' ' if sep || *key == "bearer" => sep = true,
                    '"' | '\'' if sep => {}
                    _ => {
                        skip = j;
                        break;
                    }
                }
                chars.next();
                skip = j + c.len_utf8();
            }
            if !sep {
                continue;
            }
            let start = from + skip;
            let len: usize = text[start..]
                .chars()
                .take_while(|&c| is_word(c))
                .map(char::len_utf8)
                .sum();
            // "Authorization: Bearer x" hides the scheme word; the bearer rule hides the token.
            if len > 0 && &text[start..start + len] != MASK {
                hide.push((start, start + len));
            }
        }
    }
    for p in TOKEN_PREFIXES {
        let mut from = 0;
        while let Some(i) = text[from..].find(p) {
            let at = from + i;
            let len: usize = text[at..]
                .chars()
                .take_while(|&c| is_word(c))
                .map(char::len_utf8)
                .sum();
            if len > p.len() + 3 {
                hide.push((at, at + len));
            }
            from = at + p.len();
        }
    }
    hide.extend(url_passwords(text));
    if hide.is_empty() {
        return text.to_string();
    }
    hide.sort();
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for (s, e) in hide {
        if e <= pos {
            continue;
        }
        out.push_str(&text[pos..s.max(pos)]);
        out.push_str(MASK);
        pos = e;
    }
    out.push_str(&text[pos..]);
    out
}

/// The password of each URL with one (`postgresql://app:PASSWORD@host/db`).
fn url_passwords(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find("://") {
        let start = from + i + 3;
        let authority_len = text[start..]
            .find(|c: char| c == '/' || c.is_whitespace() || matches!(c, '"' | '\'' | '?' | '#'))
            .unwrap_or(text.len() - start);
        let authority = &text[start..start + authority_len];
        if let Some(at) = authority.rfind('@')
            && let Some(colon) = authority[..at].find(':')
            && colon + 1 < at
        {
            spans.push((start + colon + 1, start + at));
        }
        from = start;
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_values_and_patterns() {
        let mut m = Masker::new();
        m.add("s3cr3t-canary");
        assert_eq!(m.mask("x s3cr3t-canary y"), "x *** y");
        assert_eq!(m.mask("password=hunter22 ok"), "password=*** ok");
        assert_eq!(
            m.mask("Authorization: Bearer abc.def"),
            "Authorization: *** ***"
        );
        assert_eq!(m.mask("{\"token\": \"zzz\"}"), "{\"token\": \"***\"}");
        assert_eq!(m.mask("use ghp_abcdefghijkl now"), "use *** now");
        assert_eq!(m.mask("nothing here: 42"), "nothing here: 42");
        assert_eq!(m.mask("tokens are fine"), "tokens are fine");
        assert_eq!(
            m.mask("dsn postgresql://app:hunter22@db:5432/app?x=1 ok"),
            "dsn postgresql://app:***@db:5432/app?x=1 ok"
        );
        assert_eq!(m.mask("http://db:5432/app"), "http://db:5432/app");
        assert_eq!(m.mask("https://user@host/x"), "https://user@host/x");
    }

    /// A secret rendered into a statement is quoted there; the quoted form is masked too.
    #[test]
    fn a_secret_is_masked_in_the_form_it_was_quoted_into() {
        use crate::runbook::template::{Context, Template, Values};
        let secret = "it's-a\\canary\"$x";
        let mut m = Masker::new();
        m.add(secret);
        let values: Values = [("s".to_string(), secret.to_string())].into();
        for (text, ctx) in [
            ("SELECT E'{{s}}', \"{{s}}\"", Context::Sql),
            ("up{a=\"{{s}}\", b=~'{{s}}'}", Context::PromQl),
            ("echo {{s}} \"{{s}}\" '{{s}}'", Context::Shell),
        ] {
            let shown = Template::parse(text)
                .unwrap()
                .render(&values, None, ctx)
                .unwrap();
            let masked = m.mask(&shown);
            assert!(!masked.contains("canary"), "{text}: {masked}");
        }
    }
}
