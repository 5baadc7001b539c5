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
            let filled = vars.panel(t);
            p.set_filled(filled);
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
    let title = crate::sanitize::line(&format!("${}", v.name)).into_owned();
    let labels = choices.iter().map(Choice::label).collect();
    let current: Vec<bool> = (choices.iter()).map(|c| vars.is_current(i, c)).collect();
    let mut text = vec![vars.summary(i)];
    if v.multi {
        text.push("Several values: space checks or unchecks, enter applies.".into());
    }
    let purpose = Purpose::SetVariable { index: i, choices };
    model.dialog = Some(match v.multi {
        true => Dialog::check(title, text, labels, current, purpose),
        false => {
            let at = current.iter().position(|c| *c).unwrap_or(0);
            Dialog::choose(title, text, labels, at, purpose)
        }
    });
    Vec::new()
}

/// Space in a multi-value variable's values: check or uncheck the highlighted one; "All"
/// and the values exclude each other, as in Grafana's picker.
pub(super) fn toggle(model: &mut Model) {
    let Some(d) = model.dialog.as_mut() else {
        return;
    };
    let (Some(at), Some(checked)) = (d.selected(), d.checked()) else {
        return;
    };
    let Purpose::SetVariable { choices, .. } = &d.purpose else {
        return;
    };
    let on = !checked.contains(&at);
    let all = (choices.iter()).position(|c| *c == Choice::All);
    let clear: Vec<usize> = match (on, all) {
        (true, Some(a)) if a == at => (0..choices.len()).filter(|i| *i != a).collect(),
        (true, Some(a)) => vec![a],
        _ => Vec::new(),
    };
    for i in clear {
        d.set_checked(i, false);
    }
    d.set_checked(at, on);
}

/// Values were chosen: the variable is resolved again, and the panels using it re-query.
pub(super) fn chosen(model: &mut Model, i: usize, picked: &[Choice]) -> Vec<Effect> {
    model.variables.set(i, picked);
    let name = (model.variables.defs.get(i))
        .map(|v| v.name.clone())
        .unwrap_or_default();
    let labels: Vec<String> = picked.iter().map(Choice::label).collect();
    let text = format!(
        "${name} = {}: the panels using it ask again",
        labels.join(" + ")
    );
    model.notify(crate::sanitize::line(&text).into_owned(), false, Some(5));
    tick(model)
}
