//! A reading in plain words (issue 30): `[applies] label` says the symptom's value and a
//! precondition's `label` its reading, so the headline reads "waiting clients 30, PostgreSQL at
//! 26 % of max_connections" rather than a query's bare number. A label holds one `{value}` (the
//! number as read) or one `{percent}` (a ratio said as a percentage) and may use the runbook's
//! `{{variables}}`; a failed reading adds what it needed on the same scale ("…, needs < 80 %").

use super::gate::Condition;
use super::template::{Context, RenderError, Template, Values};

/// How the reading is said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// `{value}`: the number as read, two decimals from 1 up, four under it.
    Value,
    /// `{percent}`: a ratio times 100, at most one decimal, then " %".
    Percent,
}

impl Scale {
    const MARKS: [(&'static str, Scale); 2] =
        [("{value}", Scale::Value), ("{percent}", Scale::Percent)];

    /// `v` on this scale: `30`, `0.2568`, `25.7 %`.
    pub fn say(self, v: f64) -> String {
        match self {
            Scale::Value if v.abs() >= 1.0 => format!("{}", (v * 1e2).round() / 1e2),
            Scale::Value => format!("{}", (v * 1e4).round() / 1e4),
            Scale::Percent => format!("{} %", (v * 1e3).round() / 10.0),
        }
    }

    /// A condition in a few characters on this scale: `> 0`, `< 80 %`, `in [1, 2]`.
    pub fn condition(self, c: Condition) -> String {
        match c {
            Condition::Above(x) => format!("> {}", self.say(x)),
            Condition::Below(x) => format!("< {}", self.say(x)),
            Condition::Between(a, b) => format!("in [{}, {}]", self.say(a), self.say(b)),
        }
    }

    fn mark(self) -> &'static str {
        Self::MARKS
            .iter()
            .find(|(_, s)| *s == self)
            .map_or("", |m| m.0)
    }
}

/// A label as the runbook writes it: the text around its one reading.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    pub before: Template,
    pub scale: Scale,
    pub after: Template,
}

/// A label's text split at its one mark: the text before, the scale, the text after; or why
/// it cannot be (no mark, or more than one).
pub fn split(text: &str) -> Result<(&str, Scale, &str), String> {
    let found: Vec<(usize, &str, Scale)> = (Scale::MARKS.iter())
        .flat_map(|(m, s)| text.match_indices(m).map(move |(at, m)| (at, m, *s)))
        .collect();
    match found[..] {
        [(at, mark, scale)] => Ok((&text[..at], scale, &text[at + mark.len()..])),
        [] => Err(
            "a label says its reading with {value} (the number as read) or {percent} (a ratio as a percentage); expected e.g. \"waiting clients {value}\"".into(),
        ),
        _ => Err(format!(
            "a label says one reading, this one has {}: keep one {{value}} or {{percent}}",
            found.len()
        )),
    }
}

impl Label {
    /// The label as written, e.g. `PostgreSQL at {percent} of max_connections`.
    pub fn source(&self) -> String {
        format!(
            "{}{}{}",
            self.before.source(),
            self.scale.mark(),
            self.after.source()
        )
    }

    /// The label with the variables filled in and its mark kept, as a plan shows it (the
    /// text as written where a variable has no value).
    pub fn shown(&self, values: &Values) -> String {
        match self.words(values) {
            Ok(w) => format!("{}{}{}", w.before, self.scale.mark(), w.after),
            Err(_) => self.source(),
        }
    }

    /// The label with the runbook's variables filled in.
    pub fn words(&self, values: &Values) -> Result<Words, RenderError> {
        let text = |t: &Template| t.render(values, None, Context::Literal);
        Ok(Words {
            before: crate::sanitize::line(&text(&self.before)?).into_owned(),
            scale: self.scale,
            after: crate::sanitize::line(&text(&self.after)?).into_owned(),
        })
    }
}

/// A label ready to say a reading.
#[derive(Debug, Clone, PartialEq)]
pub struct Words {
    before: String,
    pub scale: Scale,
    after: String,
}

impl Words {
    /// The reading `v` in words: "PostgreSQL at 25.7 % of max_connections".
    pub fn reading(&self, v: f64) -> String {
        format!("{}{}{}", self.before, self.scale.say(v), self.after)
    }

    /// A reading that failed `needs`: "PostgreSQL at 89 % of max_connections, needs < 80 %".
    pub fn short_of(&self, v: f64, needs: Condition) -> String {
        format!("{}, needs {}", self.reading(v), self.scale.condition(needs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(text: &str) -> Label {
        let (before, scale, after) = split(text).unwrap();
        Label {
            before: Template::parse(before).unwrap(),
            scale,
            after: Template::parse(after).unwrap(),
        }
    }

    #[test]
    fn a_label_says_its_reading_and_what_it_needed_on_its_scale() {
        let room = label("PostgreSQL at {percent} of max_connections");
        let w = room.words(&Values::new()).unwrap();
        assert_eq!(
            w.reading(0.2567891),
            "PostgreSQL at 25.7 % of max_connections"
        );
        assert_eq!(
            w.short_of(0.89, Condition::Below(0.8)),
            "PostgreSQL at 89 % of max_connections, needs < 80 %"
        );
        assert_eq!(room.source(), "PostgreSQL at {percent} of max_connections");
        let waiting = label("waiting clients of {{database}} {value}");
        let values = Values::from([("database".to_string(), "appdb".to_string())]);
        let w = waiting.words(&values).unwrap();
        assert_eq!(w.reading(30.0), "waiting clients of appdb 30");
        assert_eq!(
            w.short_of(0.0, Condition::Above(0.0)),
            "waiting clients of appdb 0, needs > 0"
        );
        assert_eq!(
            Scale::Value.condition(Condition::Between(1.0, 2.5)),
            "in [1, 2.5]"
        );
    }

    #[test]
    fn a_label_has_exactly_one_reading() {
        assert!(split("waiting clients").unwrap_err().contains("{value}"));
        assert!(split("{value} of {percent}").unwrap_err().contains("has 2"));
        assert_eq!(split("{value}").unwrap(), ("", Scale::Value, ""));
    }
}
