//! The dashboard's `[[variable]]`s through `update`: resolved before any templated query is
//! sent, a panel whose variable has no value says why and sends nothing, and choosing a value
//! with `V` changes the panel's query at once.

use super::*;
use crate::app::panes::dialog::Body;
use crate::variables::{Bindings, ResolveError, Variable, VariableResolver};
use futures::future::BoxFuture;

/// Label values from a table: `instance` has two, anything else fails.
struct Fixed;

impl VariableResolver for Fixed {
    fn describe(&self) -> String {
        "fixed answers".into()
    }
    fn label_values(
        &self,
        label: &str,
        _selector: Option<&str>,
    ) -> BoxFuture<'static, Result<Vec<String>, ResolveError>> {
        let answer = match label {
            "instance" => Ok(vec!["a:9100".to_string(), "b:9100".to_string()]),
            _ => Err(ResolveError("connection refused".into())),
        };
        Box::pin(async move { answer })
    }
}

/// What the worker answers for `vars` (the same call, against [`Fixed`]).
fn resolved(vars: &[Variable]) -> Msg {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let opts = crate::app::panes::variables::Variables::options();
    let (b, _) = rt.block_on(Bindings::resolve_all(vars, &opts, &Fixed));
    Msg::VariablesResolved(Box::new(b))
}

/// The console on the config `toml`, 120×40.
fn model_of(toml: &str) -> Model {
    let cfg = Config::parse("w.toml", toml).unwrap_or_else(|e| panic!("{e}"));
    let mut m = Model::new(&cfg, Theme::fallback(), "test".into(), t0());
    m.width = 120;
    m.height = 40;
    m
}

fn templated_model() -> Model {
    model_of(
        r#"
[[panel]]
title = "Load"
query = 'node_load1{instance="$instance"}'
[[panel]]
title = "Up"
query = "up"
[[panel]]
title = "Disk"
query = 'node_disk{device="$device"}'
[[variable]]
name = "instance"
query = "label_values(node_load1, instance)"
current = "b:9100"
[[variable]]
name = "device"
query = "label_values(node_disk, device)"
"#,
    )
}

/// The first tick, the variables resolved and every query answered.
fn start(m: &mut Model) {
    let e = update(m, Msg::Tick(t0()));
    let first = answer_all(m, e.clone(), true);
    let e = update(m, resolved(&resolution(&e)));
    answer_all(m, [first, e].concat(), true);
}

/// The queries of the range fetches among `effects`, by panel.
fn fetched(effects: &[Effect]) -> Vec<(usize, String)> {
    (effects.iter())
        .filter_map(|e| match e {
            Effect::Fetch { panel, query, .. } => Some((*panel, query.query.clone())),
            _ => None,
        })
        .collect()
}

fn resolution(effects: &[Effect]) -> Vec<Variable> {
    (effects.iter())
        .find_map(|e| match e {
            Effect::ResolveVariables(v) => Some(v.clone()),
            _ => None,
        })
        .expect("the variables are resolved")
}

#[test]
fn variables_resolve_before_their_queries_go_and_one_without_a_value_says_why() {
    let mut m = templated_model();
    let e = update(&mut m, Msg::Tick(t0()));
    let vars = resolution(&e);
    // Only the panel without variables asks meanwhile.
    assert_eq!(fetched(&e), [(1, "up".to_string())]);
    assert!(matches!(m.panel_state(0), PanelState::Unset { .. }));
    // A second tick asks nothing more of the resolver while it works.
    let e = update(&mut m, Msg::Tick(t0()));
    assert!(!e.iter().any(|e| matches!(e, Effect::ResolveVariables(_))));
    let e = update(&mut m, resolved(&vars));
    // The saved value is among those found: kept; the query goes at once.
    let load = "node_load1{instance=\"b:9100\"}".to_string();
    assert_eq!(fetched(&e), [(0, load.clone())]);
    assert_eq!(m.panels[0].config.query, load);
    // `$device` could not be looked up: its panel sends nothing and says why.
    match m.panel_state(2) {
        PanelState::Unset { reason } => assert!(
            reason.starts_with("variable $device has no value: its query")
                && reason.contains("connection refused"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    let later = t0() + chrono::Duration::seconds(60);
    let e = update(&mut m, Msg::Tick(later));
    assert!(fetched(&e).iter().all(|(p, q)| *p != 2 && !q.contains('$')));
}

#[test]
fn choosing_a_value_changes_the_panels_query_at_once() {
    let mut m = templated_model();
    start(&mut m);
    assert!(!m.panels[0].series.is_empty());
    // V lists the variables; enter on the first shows its values, the current one selected.
    update(&mut m, key('V'));
    let d = m.dialog.as_ref().expect("the chooser");
    assert!(matches!(&d.body, Body::Choose { options, .. } if options.len() == 2));
    update(&mut m, code(KeyCode::Enter));
    let d = m.dialog.as_ref().expect("the values");
    assert_eq!(d.title, "$instance");
    match &d.body {
        Body::Choose {
            options, selected, ..
        } => {
            assert_eq!(options, &["a:9100", "b:9100"]);
            assert_eq!(*selected, Some(1));
        }
        other => panic!("{other:?}"),
    }
    update(&mut m, key('k'));
    let e = update(&mut m, code(KeyCode::Enter));
    assert!(m.dialog.is_none());
    let vars = resolution(&e);
    assert_eq!(vars[0].current, ["a:9100"]);
    let e = update(&mut m, resolved(&vars));
    let load = "node_load1{instance=\"a:9100\"}".to_string();
    assert_eq!(m.panels[0].config.query, load);
    assert!(fetched(&e).contains(&(0, load)), "{:?}", fetched(&e));
    // The panel starts afresh: nothing of the old instance is held.
    assert!(m.panels[0].series.is_empty());
}

/// A dashboard of one multi-value variable with "All", used in a query, a title and a legend.
fn multi_model() -> Model {
    model_of(
        r#"
panel = [{ title = "Load of $instance", legend = "{{job}} on ${instance}", query = 'sum by (job) (node_load1{instance=~"$instance"})' }]
variable = [{ name = "instance", query = "label_values(node_load1, instance)", multi = true, include_all = true }]
"#,
    )
}

/// The values dialog's options and which are checked.
fn checks(m: &Model) -> (Vec<String>, Vec<usize>) {
    let d = m.dialog.as_ref().expect("the values");
    match &d.body {
        Body::Choose { options, .. } => (options.clone(), d.checked().expect("checks")),
        other => panic!("{other:?}"),
    }
}

/// Enter in the values dialog: the variables resolved again with the values checked; the
/// values, and the queries sent at once.
fn apply(m: &mut Model) -> (Vec<String>, Vec<(usize, String)>) {
    let e = update(m, code(KeyCode::Enter));
    assert!(m.dialog.is_none(), "{:?}", m.dialog);
    let vars = resolution(&e);
    let current = vars[0].current.clone();
    let e = update(m, resolved(&vars));
    (current, fetched(&e))
}

#[test]
fn a_multi_value_variable_takes_several_values_then_all() {
    let mut m = multi_model();
    start(&mut m);
    // Nothing saved: the first value, as Grafana does, in the query, title and legend.
    let p = &m.panels[0].config;
    assert_eq!(p.query, "sum by (job) (node_load1{instance=~\"a:9100\"})");
    assert_eq!(p.title, "Load of a:9100");
    assert_eq!(p.legend.as_deref(), Some("{{job}} on a:9100"));

    // V: the values with checks, the one in use checked; space on the second checks it too.
    update(&mut m, key('V'));
    let (options, checked) = checks(&m);
    assert_eq!(options, ["All", "a:9100", "b:9100"]);
    assert_eq!(checked, [1]);
    update(&mut m, key('j'));
    update(&mut m, key(' '));
    assert_eq!(checks(&m).1, [1, 2]);
    let (current, sent) = apply(&mut m);
    assert_eq!(current, ["a:9100", "b:9100"]);
    // Grafana's formats for several values: a regex, their text, glob; the query goes at once.
    let p = &m.panels[0].config;
    let query = "sum by (job) (node_load1{instance=~\"(a:9100|b:9100)\"})";
    assert_eq!(p.query, query);
    assert_eq!(sent, [(0, query.to_string())]);
    assert_eq!(p.title, "Load of a:9100 + b:9100");
    assert_eq!(p.legend.as_deref(), Some("{{job}} on {a:9100,b:9100}"));

    // "All" clears the values; a value checked again clears "All".
    update(&mut m, key('V'));
    assert_eq!(checks(&m).1, [1, 2]);
    update(&mut m, key('k'));
    update(&mut m, key(' '));
    assert_eq!(checks(&m).1, [0]);
    update(&mut m, key('j'));
    update(&mut m, key(' '));
    assert_eq!(checks(&m).1, [1]);
    update(&mut m, key('k'));
    update(&mut m, key(' '));
    assert_eq!(apply(&mut m).0, ["$__all"]);
    let p = &m.panels[0].config;
    assert_eq!(p.query, query);
    assert_eq!(p.title, "Load of All");

    // Nothing checked: enter says what to do, and nothing is resolved.
    update(&mut m, key('V'));
    update(&mut m, key(' '));
    assert_eq!(checks(&m).1, Vec::<usize>::new());
    let e = update(&mut m, code(KeyCode::Enter));
    assert!(!e.iter().any(|e| matches!(e, Effect::ResolveVariables(_))));
    let d = m.dialog.as_ref().expect("kept open");
    assert!(
        d.error
            .as_deref()
            .unwrap_or("")
            .contains("check at least one")
    );
}

#[test]
fn a_single_value_variable_keeps_its_one_choice() {
    // Space means nothing in a choice of one; enter takes the highlighted value.
    let mut m = templated_model();
    let e = update(&mut m, Msg::Tick(t0()));
    update(&mut m, resolved(&resolution(&e)));
    update(&mut m, key('V'));
    update(&mut m, code(KeyCode::Enter));
    update(&mut m, key(' '));
    let d = m.dialog.as_ref().expect("the values");
    assert_eq!(d.checked(), None);
    assert_eq!(d.selected(), Some(1));
}
