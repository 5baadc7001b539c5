//! The real [`VariableResolver`]: a Prometheus (or a compatible server) through warroom's own
//! client, so the look-ups have its deadline, its auth and headers and its in-flight limit.

use super::PrometheusClient;
use crate::metrics::prometheus::client::MAX_LABEL_VALUES;
use crate::metrics::source::{InstantQuery, QueryAnswer, ResultType, Source, SourceError};
use crate::variables::{ResolveError, VariableResolver};
use futures::FutureExt;
use futures::future::BoxFuture;

/// The largest label-values answer read for one variable.
const MAX_BYTES: usize = 4 << 20;

/// A list answer's values, at most [`MAX_LABEL_VALUES`].
fn values(
    asked: BoxFuture<'static, Result<Vec<String>, SourceError>>,
) -> BoxFuture<'static, Result<Vec<String>, ResolveError>> {
    async move {
        let mut values = asked.await.map_err(|e| ResolveError(e.to_string()))?;
        values.truncate(MAX_LABEL_VALUES);
        Ok(values)
    }
    .boxed()
}

/// A number as Prometheus's JSON writes it (Go's shortest form): `5`, `0.25`, `NaN`, `+Inf`.
fn prom_number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// Each series of an instant answer as Grafana's `query_result` writes it for a variable:
/// `name{a="x",b="y"} value timestamp_ms` (labels in name order, as Prometheus sends them); a
/// scalar or string answer is its value alone.
pub(crate) fn query_result_texts(answer: &QueryAnswer) -> Vec<String> {
    let scalar = matches!(
        answer.result_type,
        Some(ResultType::Scalar | ResultType::String)
    );
    answer
        .series
        .iter()
        .filter_map(|s| {
            let p = s.last()?;
            if scalar {
                return Some(prom_number(p.v));
            }
            let name = s.labels.get("__name__").map_or("", String::as_str);
            let labels: Vec<String> = s
                .labels
                .iter()
                .filter(|(k, _)| k.as_str() != "__name__")
                .map(|(k, v)| format!("{k}=\"{v}\""))
                .collect();
            Some(format!(
                "{name}{{{}}} {} {}",
                labels.join(","),
                prom_number(p.v),
                (p.t * 1000.0).round()
            ))
        })
        .take(MAX_LABEL_VALUES)
        .collect()
}

impl VariableResolver for PrometheusClient {
    fn describe(&self) -> String {
        Source::describe(self)
    }

    fn label_values(
        &self,
        label: &str,
        selector: Option<&str>,
    ) -> BoxFuture<'static, Result<Vec<String>, ResolveError>> {
        let matchers: Vec<String> = selector.map(str::to_string).into_iter().collect();
        let asked = PrometheusClient::label_values(
            self,
            label,
            &matchers,
            None,
            Some(MAX_LABEL_VALUES),
            MAX_BYTES,
        );
        values(async move { asked.await.map(|l| l.values) }.boxed())
    }

    fn label_names(
        &self,
        selector: Option<&str>,
    ) -> BoxFuture<'static, Result<Vec<String>, ResolveError>> {
        let matchers: Vec<String> = selector.map(str::to_string).into_iter().collect();
        let asked =
            PrometheusClient::label_names(self, &matchers, None, Some(MAX_LABEL_VALUES), MAX_BYTES);
        values(async move { asked.await.map(|l| l.values) }.boxed())
    }

    fn query_result(&self, expr: &str) -> BoxFuture<'static, Result<Vec<String>, ResolveError>> {
        let asked = self.query(InstantQuery {
            query: expr.to_string(),
            time: None,
        });
        values(async move { asked.await.map(|a| query_result_texts(&a)) }.boxed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::series::{Point, Series};

    #[test]
    fn query_result_texts_are_grafanas() {
        let series = |labels: &[(&str, &str)], v: f64| Series {
            labels: labels
                .iter()
                .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                .collect(),
            points: vec![Point {
                t: 1_700_000_000.25,
                v,
            }],
        };
        let answer = QueryAnswer {
            series: vec![
                series(
                    &[("__name__", "up"), ("job", "n"), ("instance", "h:1")],
                    1.0,
                ),
                series(&[("pool", "a")], 0.5),
            ],
            result_type: Some(ResultType::Vector),
            ..QueryAnswer::default()
        };
        assert_eq!(
            query_result_texts(&answer),
            vec![
                "up{instance=\"h:1\",job=\"n\"} 1 1700000000250".to_string(),
                "{pool=\"a\"} 0.5 1700000000250".to_string(),
            ]
        );
        let scalar = QueryAnswer {
            series: vec![series(&[], f64::INFINITY)],
            result_type: Some(ResultType::Scalar),
            ..QueryAnswer::default()
        };
        assert_eq!(query_result_texts(&scalar), vec!["+Inf".to_string()]);
    }
}
