//! The real [`VariableResolver`]: a Prometheus (or a compatible server) through warroom's own
//! client, so the look-ups have its deadline, its auth and headers and its in-flight limit.

use super::{ResolveError, VariableResolver};
use crate::metrics::Source;
use crate::metrics::prometheus::PrometheusClient;
use crate::metrics::prometheus::client::MAX_LABEL_VALUES;

/// The largest label-values answer read for one variable.
const MAX_BYTES: usize = 4 << 20;
use futures::FutureExt;
use futures::future::BoxFuture;

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
        async move {
            let mut values = asked.await.map_err(|e| ResolveError(e.to_string()))?.values;
            values.truncate(MAX_LABEL_VALUES);
            Ok(values)
        }
        .boxed()
    }
}
