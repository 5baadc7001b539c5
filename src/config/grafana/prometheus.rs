//! The real [`VariableResolver`]: a Prometheus (or a compatible server) through warroom's own
//! client, so the look-ups have its deadline, its auth and headers and its in-flight limit.

use super::{ResolveError, VariableResolver};
use crate::metrics::Source;
use crate::metrics::prometheus::PrometheusClient;
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
        let asked = PrometheusClient::label_values(self, label, &matchers);
        async move { asked.await.map_err(|e| ResolveError(e.to_string())) }.boxed()
    }
}
