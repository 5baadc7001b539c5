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

fn templated_model() -> Model {
    let cfg = Config::parse(
        "w.toml",
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
    .unwrap_or_else(|e| panic!("{e}"));
    let mut m = Model::new(&cfg, Theme::fallback(), "test".into(), t0());
    m.width = 120;
    m.height = 40;
    m
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
    let e = update(&mut m, Msg::Tick(t0()));
    let first = answer_all(&mut m, e.clone(), true);
    let e = update(&mut m, resolved(&resolution(&e)));
    answer_all(&mut m, [first, e].concat(), true);
    assert!(!m.panels[0].series.is_empty());
    // V lists the variables; enter on the first shows its values, the current one selected.
    update(&mut m, key('V'));
    let d = m.dialog.as_ref().expect("the chooser");
    assert!(matches!(&d.body, Body::Choose { options, .. } if options.len() == 2));
    update(&mut m, code(KeyCode::Enter));
    let d = m.dialog.as_ref().expect("the values");
    assert_eq!(d.title, "$instance");
    match &d.body {
        Body::Choose { options, selected } => {
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
