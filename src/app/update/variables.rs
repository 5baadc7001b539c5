//! The dashboard's variables: resolved at start, before any templated panel's query is sent,
//! and again after the user picks a value (`V`, two choices: the variable, then its value);
//! each answer gives every templated panel its query, or the reason it sends none.

use crate::app::effect::Effect;
use crate::app::model::Model;
use crate::app::panes::dialog::{Dialog, Purpose};
use crate::app::panes::variables::Choice;
use crate::variables::Bindings;

/// A resolution that is due goes out (one at a time).
pub(super) fn tick(model: &mut Model) -> Vec<Effect> {
    let vars = &mut model.variables;
    if !vars.due || vars.resolving {
        return Vec::new();
    }
    vars.due = false;
    vars.resolving = true;
    vec![Effect::ResolveVariables(vars.defs.clone())]
}

/// The resolution answered: each templated panel sends its query with the values, at once,
/// or says which variable has none.
pub(super) fn resolved(model: &mut Model, bindings: Bindings) -> Vec<Effect> {
    let vars = &mut model.variables;
    vars.resolving = false;
    vars.bindings = Some(bindings);
    for p in &mut model.panels {
        if let Some(t) = &p.template {
            let query = vars.query(t);
            p.set_query(query);
        }
    }
    model.dirty = true;
    let mut effects = tick(model);
    effects.extend(super::schedule(model));
    effects
}

/// `V`: choose a variable (straight to its values when there is one).
pub(super) fn open(model: &mut Model) -> Vec<Effect> {
    let n = model.variables.defs.len();
    if n == 0 {
        model.notify(
            "no [[variable]] in the config: `warroom import grafana` writes them",
            false,
            Some(5),
        );
        return Vec::new();
    }
    if n == 1 {
        return values(model, 0);
    }
    let list = (0..n).map(|i| model.variables.summary(i)).collect();
    model.dialog = Some(Dialog::choose(
        "Dashboard variables".into(),
        vec!["Choose the variable to set (enter), then its value.".into()],
        list,
        0,
        Purpose::PickVariable,
    ));
    Vec::new()
}

/// The values of variable `i` to choose from, the current one selected.
pub(super) fn values(model: &mut Model, i: usize) -> Vec<Effect> {
    let vars = &model.variables;
    let Some(v) = vars.defs.get(i) else {
        return Vec::new();
    };
    let choices = vars.choices(i);
    if choices.is_empty() {
        let why = (vars.bindings.as_ref())
            .and_then(|b| b.why_unset(&v.name))
            .unwrap_or("it has no values to choose from yet");
        let text = format!("${}: {why}", v.name);
        model.notify(text, true, Some(10));
        return Vec::new();
    }
    let current = (choices.iter()).position(|c| match c {
        Choice::All => v.current.iter().any(|c| c == "$__all"),
        Choice::Value(s) => v.current.contains(s),
    });
    let title = crate::sanitize::line(&format!("${}", v.name)).into_owned();
    model.dialog = Some(Dialog::choose(
        title,
        vec![model.variables.summary(i)],
        choices.iter().map(Choice::label).collect(),
        current.unwrap_or(0),
        Purpose::SetVariable { index: i, choices },
    ));
    Vec::new()
}

/// A value was chosen: the variable is resolved again, and the panels using it re-query.
pub(super) fn chosen(model: &mut Model, i: usize, choice: &Choice) -> Vec<Effect> {
    model.variables.set(i, choice);
    let name = model
        .variables
        .defs
        .get(i)
        .map(|v| v.name.clone())
        .unwrap_or_default();
    let text = format!(
        "${name} = {}: the panels using it ask again",
        choice.label()
    );
    model.notify(crate::sanitize::line(&text).into_owned(), false, Some(5));
    tick(model)
}
