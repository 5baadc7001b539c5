//! Which signals an alert rule watches: the alerting rules as Prometheus's `/api/v1/rules`
//! lists them, and for each panel whether any rule reads every metric its query reads. The
//! draft's Detection names the signals that moved with no rule on them, and the suggested
//! actions propose one. The fetch itself is the caller's (`ExportOptions::alert_rules`).

use serde::Serialize;
use std::collections::BTreeSet;

/// One alerting rule: its name and expression.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AlertRule {
    pub name: String,
    pub query: String,
}

/// The alerting rules in the body of `GET /api/v1/rules` (`{"data":{"groups":[{"rules":
/// [{"type":"alerting","name":…,"query":…}]}]}}`); recording rules are left out.
pub fn from_api(body: &serde_json::Value) -> Vec<AlertRule> {
    let groups = body["data"]["groups"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    groups
        .iter()
        .flat_map(|g| g["rules"].as_array().cloned().unwrap_or_default())
        .filter(|r| r["type"] == "alerting")
        .filter_map(|r| {
            Some(AlertRule {
                name: crate::sanitize::line(r["name"].as_str()?).into_owned(),
                query: r["query"].as_str()?.to_string(),
            })
        })
        .collect()
}

/// The metric names a PromQL expression reads (`None` when it does not parse).
pub fn metrics(query: &str) -> Option<BTreeSet<String>> {
    crate::metrics::selectors::metric_names(query)
        .ok()
        .map(|names| names.into_iter().collect())
}

/// Whether some rule watches the panel whose query is `query`: a rule that reads every metric
/// the panel reads (an error-rate rule over `app_requests_total` covers the error ratio, not
/// retry amplification, which also divides by `app_logical_requests_total`).
pub fn covers(rules: &[AlertRule], query: &str) -> bool {
    let Some(wanted) = metrics(query).filter(|m| !m.is_empty()) else {
        return false;
    };
    rules
        .iter()
        .any(|r| metrics(&r.query).is_some_and(|have| wanted.iter().all(|m| have.contains(m))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_read_from_the_api_and_cover_what_they_read() {
        let body = serde_json::json!({"status":"success","data":{"groups":[{"name":"g","rules":[
            {"type":"alerting","name":"HighErrors","query":"sum(rate(app_requests_total{code=~\"5..\"}[1m])) / sum(rate(app_requests_total[1m])) > 0.05"},
            {"type":"recording","name":"job:x","query":"sum(db_pool_connections_in_use)"}
        ]}]}});
        let rules = from_api(&body);
        assert_eq!(rules.len(), 1);
        assert!(covers(
            &rules,
            "sum(rate(app_requests_total{code=~\"5..\"}[1m])) / sum(rate(app_requests_total[1m]))"
        ));
        assert!(!covers(
            &rules,
            "sum(rate(app_requests_total[1m])) / sum(rate(app_logical_requests_total[1m]))"
        ));
        assert!(!covers(
            &rules,
            "max by (pod) (db_pool_connections_in_use / db_pool_connections_max)"
        ));
        assert!(!covers(&rules, "not promql ((("));
    }
}
