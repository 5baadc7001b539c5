//! The dashboard's template variables (`[[variable]]`): their definitions, with the values the
//! user chose (`V`), what they were last resolved to against the console's Prometheus, and
//! the query each templated panel sends. The resolving is [`crate::variables`]'s, the one the
//! importer uses; this pane only keeps its answer.

use crate::variables::{Bindings, Options, Variable};

/// What a variable's chooser offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// Every value (Grafana's `$__all`), for a variable that includes "All".
    All,
    Value(String),
}

impl Choice {
    /// How the chooser shows it.
    pub fn label(&self) -> String {
        match self {
            Choice::All => "All".into(),
            Choice::Value(v) => crate::sanitize::line(v).into_owned(),
        }
    }
}

/// The variables and their values.
#[derive(Debug, Clone, Default)]
pub struct Variables {
    /// As configured; `current` is the user's choice once one is made.
    pub defs: Vec<Variable>,
    /// The last resolution's answer (`None`: none yet).
    pub bindings: Option<Bindings>,
    /// A resolution is due (at start, after a choice) and not yet asked for.
    pub due: bool,
    /// A resolution is in flight.
    pub resolving: bool,
}

impl Variables {
    pub fn new(defs: Vec<Variable>) -> Self {
        Variables {
            due: !defs.is_empty(),
            defs,
            bindings: None,
            resolving: false,
        }
    }

    /// What the look-ups and the globals go by.
    pub fn options() -> Options {
        Options::default()
    }

    /// Whether `query` names one of the variables (it is then sent only once they resolve).
    pub fn used_by(&self, query: &str) -> bool {
        let none = |_: &str| None;
        let b = crate::variables::bindings::builtins(&Self::options());
        let done = crate::variables::interpolate(query, &none, &b, crate::variables::Mode::Query);
        (done.unresolved.iter()).any(|n| self.defs.iter().any(|v| &v.name == n))
    }

    /// The query a templated panel sends, or why it sends none yet.
    pub fn query(&self, template: &str) -> Result<String, String> {
        match &self.bindings {
            Some(b) => b.apply(template, &Self::options()),
            None => Err("the variables are being resolved against the Prometheus".into()),
        }
    }

    /// What variable `i` offers: "All" where it includes it, then the values it found.
    pub fn choices(&self, i: usize) -> Vec<Choice> {
        let Some(v) = self.defs.get(i) else {
            return Vec::new();
        };
        let found = (self.bindings.as_ref()).and_then(|b| b.offered(&v.name));
        let all = v.include_all.then_some(Choice::All);
        all.into_iter()
            .chain(found.unwrap_or(&[]).iter().cloned().map(Choice::Value))
            .collect()
    }

    /// Variable `i` as the chooser lists it: `$instance = a:9100 (3 values)`.
    pub fn summary(&self, i: usize) -> String {
        let Some(v) = self.defs.get(i) else {
            return String::new();
        };
        let now = match v.current.as_slice() {
            [] => "(first found)".to_string(),
            c if c.iter().any(|c| c == "$__all") => "All".into(),
            c => c.join(", "),
        };
        let n = self.choices(i).len();
        crate::sanitize::line(&format!("${} = {now} ({n} to choose from)", v.name)).into_owned()
    }

    /// Set variable `i` to `choice`: it is resolved again (with the variables chained to it).
    pub fn set(&mut self, i: usize, choice: &Choice) {
        if let Some(v) = self.defs.get_mut(i) {
            v.current = vec![match choice {
                Choice::All => "$__all".to_string(),
                Choice::Value(s) => s.clone(),
            }];
            self.due = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variables::VarKind;

    #[test]
    fn choices_and_queries_follow_the_resolution() {
        let mut v = Variable::new("[[variable]] job", "job", VarKind::Custom);
        v.query = Some("api,db".into());
        v.include_all = true;
        let mut vars = Variables::new(vec![v]);
        assert!(vars.due);
        assert!(vars.used_by("up{job=~\"$job\"}"));
        assert!(!vars.used_by("up{job=~\"$other\"} and $__interval"));
        let q = "up{job=~\"$job\"}";
        assert!(vars.query(q).unwrap_err().contains("being resolved"));
        let mut w = Vec::new();
        let opts = Variables::options();
        vars.bindings = Some(Bindings::offline(&vars.defs, &[], &opts, &mut w));
        // No value saved: the first, as Grafana does.
        assert_eq!(vars.query(q).unwrap(), "up{job=~\"api\"}");
        let labels: Vec<String> = vars.choices(0).iter().map(Choice::label).collect();
        assert_eq!(labels, ["All", "api", "db"]);
        vars.set(0, &Choice::All);
        vars.bindings = Some(Bindings::offline(&vars.defs, &[], &opts, &mut w));
        assert_eq!(vars.query(q).unwrap(), "up{job=~\"(api|db)\"}");
        assert_eq!(vars.summary(0), "$job = All (3 to choose from)");
    }
}
