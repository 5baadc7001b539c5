//! Which data source a panel's or query's reference names: Prometheus (or an engine that speaks
//! PromQL), a mixed panel whose queries each say, or something else that is skipped. A reference
//! is a plugin type, an `__inputs` entry (`${DS_PROMETHEUS}`), a data source variable
//! (`$datasource`), or in old dashboards a bare name.

use super::json::{Board, Ds, VarKind};
use crate::variables::Binding;
use crate::variables::Bindings;

/// What a data source reference comes to.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Source {
    Prometheus,
    Mixed,
    /// Not Prometheus; the text names it.
    Other(String),
}

fn is_promql_type(t: &str) -> bool {
    let t = t.to_ascii_lowercase();
    t.contains("prometheus") || t.starts_with("victoriametrics") || t == "mimir" || t == "thanos"
}

fn classify_type(t: &str) -> Source {
    match t {
        t if is_promql_type(t) => Source::Prometheus,
        "datasource" | "-- Mixed --" => Source::Mixed,
        "__expr__" => Source::Other("a server-side expression (__expr__)".into()),
        "grafana" => Source::Other("Grafana's built-in data source".into()),
        "-- Dashboard --" => Source::Other("another panel's results (-- Dashboard --)".into()),
        other => Source::Other(format!(
            "data source \"{}\"",
            crate::sanitize::sanitize(other, false, 60)
        )),
    }
}

/// A `$var`, `${var}` or `[[var]]` alone: the variable's name.
fn variable_name(s: &str) -> Option<&str> {
    let s = s.trim();
    let name = s
        .strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .or_else(|| s.strip_prefix("[[").and_then(|r| r.strip_suffix("]]")))
        .or_else(|| s.strip_prefix('$'))?;
    let name = name.split(':').next().unwrap_or(name);
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then_some(name)
}

/// Data sources that are not Prometheus, as their plugins are named.
const NOT_PROMETHEUS: &[&str] = &[
    "loki",
    "elasticsearch",
    "opensearch",
    "influx",
    "graphite",
    "tempo",
    "jaeger",
    "zipkin",
    "mysql",
    "postgres",
    "mssql",
    "cloudwatch",
    "stackdriver",
    "azure",
    "testdata",
    "pyroscope",
    "clickhouse",
];

/// An old dashboard names its data source (`"datasource": "Loki"`): a name that is plainly
/// another kind of data source is taken as one.
fn named_elsewhere(name: &str) -> Option<Source> {
    let lower = name.to_ascii_lowercase();
    if is_promql_type(&lower) {
        return None;
    }
    NOT_PROMETHEUS.iter().find(|k| lower.contains(*k)).map(|_| {
        Source::Other(format!(
            "data source \"{}\" (by its name)",
            crate::sanitize::sanitize(name, false, 60)
        ))
    })
}

/// The data source a reference names: a type, an `__inputs` entry, or a data source variable.
/// Unknown names are taken as Prometheus (the default data source of a dashboard of PromQL
/// queries); the parser still checks every query.
pub(super) fn classify(ds: &Ds, board: &Board, bindings: &Bindings) -> Source {
    let by_name = |name: &str| -> Option<Source> {
        if let Some(input) = board.inputs.iter().find(|i| i.name == name) {
            return input.plugin_id.as_deref().map(classify_type);
        }
        let v = board.variables.iter().find(|v| v.name == name)?;
        if v.kind != VarKind::Datasource {
            return None;
        }
        match bindings.get(name) {
            Some(Binding::One(plugin)) if !plugin.is_empty() => Some(classify_type(plugin)),
            _ => v.query.as_deref().map(classify_type),
        }
    };
    match ds {
        Ds::Default => Source::Prometheus,
        Ds::Named(n) => match n.as_str() {
            "-- Mixed --" => Source::Mixed,
            "-- Grafana --" => Source::Other("Grafana's built-in data source".into()),
            "-- Dashboard --" => Source::Other("another panel's results (-- Dashboard --)".into()),
            n => variable_name(n)
                .and_then(by_name)
                .or_else(|| named_elsewhere(n))
                .unwrap_or(Source::Prometheus),
        },
        Ds::Ref { kind, uid } => {
            if uid.as_deref() == Some("-- Mixed --") {
                return Source::Mixed;
            }
            if uid.as_deref() == Some("-- Dashboard --") {
                return Source::Other("another panel's results (-- Dashboard --)".into());
            }
            if let Some(k) = kind
                .as_deref()
                .filter(|k| !k.is_empty() && !k.starts_with('$'))
            {
                return classify_type(k);
            }
            kind.iter()
                .chain(uid.iter())
                .find_map(|s| variable_name(s).and_then(by_name))
                .unwrap_or(Source::Prometheus)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variable_names_in_datasource_references() {
        assert_eq!(variable_name("$datasource"), Some("datasource"));
        assert_eq!(variable_name("${DS_PROMETHEUS}"), Some("DS_PROMETHEUS"));
        assert_eq!(variable_name("[[ds]]"), Some("ds"));
        assert_eq!(variable_name("Prometheus"), None);
    }

    #[test]
    fn plugin_types_and_names() {
        assert_eq!(classify_type("prometheus"), Source::Prometheus);
        assert_eq!(
            classify_type("grafana-amazonprometheus-datasource"),
            Source::Prometheus
        );
        assert_eq!(
            classify_type("victoriametrics-metrics-datasource"),
            Source::Prometheus
        );
        assert_eq!(classify_type("datasource"), Source::Mixed);
        assert!(matches!(classify_type("loki"), Source::Other(_)));
        assert!(named_elsewhere("Prometheus EU").is_none());
        assert!(named_elsewhere("Loki (prod)").is_some());
        assert!(named_elsewhere("metrics").is_none());
    }
}
