//! The dashboard's template variables (`[[variable]]`): their definitions, with the values the
//! user chose (`V`), what they were last resolved to against the console's Prometheus, and
//! the query each templated panel sends. The resolving is [`crate::variables`]'s, the one the
//! importer uses; this pane only keeps its answer.

use crate::config::PanelConfig;
use crate::variables::{Binding, Bindings, Options, Variable};

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

    /// Whether the panel's query, title or legend names one of the variables (its query is
    /// then sent only once they resolve).
    pub fn used_by(&self, panel: &PanelConfig) -> bool {
        crate::config::variables::uses(panel, &self.defs)
    }

    /// The panel as sent and shown with the values (`raw` as configured), or why its query
    /// is not sent yet.
    pub fn panel(&self, raw: &PanelConfig) -> Result<PanelConfig, String> {
        match &self.bindings {
            Some(b) => crate::config::variables::with_values(raw, b, &Self::options()),
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

    /// Set variable `i` to `picked` (several for a multi-value variable; "All" alone): it
    /// is resolved again (with the variables chained to it).
    pub fn set(&mut self, i: usize, picked: &[Choice]) {
        if let Some(v) = self.defs.get_mut(i) {
            v.current = (picked.iter())
                .map(|c| match c {
                    Choice::All => "$__all".to_string(),
                    Choice::Value(s) => s.clone(),
                })
                .collect();
            self.due = true;
        }
    }

    /// Whether `choice` is among the values variable `i` has now: those its last resolution
    /// gave (a saved value no longer offered gave way to the first), else those saved.
    pub fn is_current(&self, i: usize, choice: &Choice) -> bool {
        let Some(v) = self.defs.get(i) else {
            return false;
        };
        let bound = (self.bindings.as_ref()).and_then(|b| b.get(&v.name));
        match (choice, bound) {
            (Choice::All, Some(b)) => matches!(b, Binding::All { .. }),
            (Choice::Value(s), Some(Binding::One(x))) => x == s,
            (Choice::Value(s), Some(Binding::Many(xs))) => xs.contains(s),
            (Choice::Value(_), Some(_)) => false,
            (Choice::All, None) => v.current.iter().any(|c| c == "$__all"),
            (Choice::Value(s), None) => v.current.contains(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variables::VarKind;

    fn panel(title: &str, query: &str, legend: Option<&str>) -> PanelConfig {
        PanelConfig {
            title: title.into(),
            query: query.into(),
            unit: Default::default(),
            warn: None,
            crit: None,
            bad_when: Default::default(),
            legend: legend.map(String::from),
            signal: None,
            shape: Default::default(),
        }
    }

    #[test]
    fn choices_and_queries_follow_the_resolution() {
        let mut v = Variable::new("[[variable]] job", "job", VarKind::Custom);
        v.query = Some("api,db".into());
        v.include_all = true;
        v.multi = true;
        let mut vars = Variables::new(vec![v]);
        assert!(vars.due);
        let raw = panel(
            "Up of $job",
            "up{job=~\"$job\"}",
            Some("{{instance}} of $job"),
        );
        assert!(vars.used_by(&raw));
        assert!(!vars.used_by(&panel("Up", "up{job=~\"$other\"} and $__interval", None)));
        // A title or a legend alone makes the panel wait for the values too.
        assert!(vars.used_by(&panel("Up of ${job}", "up", None)));
        assert!(vars.used_by(&panel("Up", "up", Some("[[job]]"))));
        assert!(vars.panel(&raw).unwrap_err().contains("being resolved"));
        let mut w = Vec::new();
        let opts = Variables::options();
        vars.bindings = Some(Bindings::offline(&vars.defs, &[], &opts, &mut w));
        // No value saved: the first, as Grafana does, in the query, the title and the legend.
        let filled = vars.panel(&raw).unwrap();
        assert_eq!(filled.query, "up{job=~\"api\"}");
        assert_eq!(filled.title, "Up of api");
        assert_eq!(filled.legend.as_deref(), Some("{{instance}} of api"));
        let labels: Vec<String> = vars.choices(0).iter().map(Choice::label).collect();
        assert_eq!(labels, ["All", "api", "db"]);
        let current: Vec<bool> = (vars.choices(0).iter())
            .map(|c| vars.is_current(0, c))
            .collect();
        assert_eq!(current, [false, true, false]);
        // Several values: a regex in the query, their text in the title, glob in the legend.
        let two = [Choice::Value("api".into()), Choice::Value("db".into())];
        vars.set(0, &two);
        vars.bindings = Some(Bindings::offline(&vars.defs, &[], &opts, &mut w));
        let filled = vars.panel(&raw).unwrap();
        assert_eq!(filled.query, "up{job=~\"(api|db)\"}");
        assert_eq!(filled.title, "Up of api + db");
        assert_eq!(filled.legend.as_deref(), Some("{{instance}} of {api,db}"));
        assert_eq!(vars.summary(0), "$job = api, db (3 to choose from)");
        vars.set(0, &[Choice::All]);
        vars.bindings = Some(Bindings::offline(&vars.defs, &[], &opts, &mut w));
        let filled = vars.panel(&raw).unwrap();
        assert_eq!(filled.query, "up{job=~\"(api|db)\"}");
        assert_eq!(filled.title, "Up of All");
        assert_eq!(vars.summary(0), "$job = All (3 to choose from)");
        assert!(vars.is_current(0, &Choice::All));
    }
}
