//! Masking secrets in anything shown or recorded: by value (the runbook's secret variables,
//! environment canaries) and by pattern (bearer tokens, `password=…`, well-known token
//! prefixes: [`crate::secret::mask_patterns`]), so that a secret printed by a command is
//! hidden too.

/// What replaces a secret.
pub use crate::secret::MASK;

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
        crate::secret::mask_patterns(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_values_and_patterns() {
        let mut m = Masker::new();
        m.add("s3cr3t-canary");
        for (text, masked) in [
            ("x s3cr3t-canary y", "x *** y"),
            ("password=hunter22 ok", "password=*** ok"),
            ("Authorization: Bearer abc.def", "Authorization: *** ***"),
            ("{\"token\": \"zzz\"}", "{\"token\": \"***\"}"),
            ("use ghp_abcdefghijkl now", "use *** now"),
            ("nothing here: 42", "nothing here: 42"),
            ("tokens are fine", "tokens are fine"),
            (
                "dsn postgresql://app:hunter22@db:5432/app?x=1 ok",
                "dsn postgresql://app:***@db:5432/app?x=1 ok",
            ),
            ("http://db:5432/app", "http://db:5432/app"),
            ("https://user@host/x", "https://user@host/x"),
        ] {
            assert_eq!(m.mask(text), masked, "{text}");
        }
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
