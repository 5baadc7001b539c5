//! Which signals an alert rule watches: the alerting rules as Prometheus's `/api/v1/rules`
//! lists them, and for each panel whether any rule reads every metric its query reads. The
//! draft's Detection names the signals that moved with no rule on them, and the suggested
//! actions propose one. The fetch itself is the caller's (`ExportOptions::alert_rules`).

use promql_parser::label::MatchOp;
use promql_parser::parser::{self, Expr};
use promql_parser::util::{ExprVisitor, walk_expr};
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

struct Names(BTreeSet<String>);

impl ExprVisitor for Names {
    type Error = std::convert::Infallible;
    fn pre_visit(&mut self, e: &Expr) -> Result<bool, Self::Error> {
        let vs = match e {
            Expr::VectorSelector(vs) => vs,
            Expr::MatrixSelector(ms) => &ms.vs,
            _ => return Ok(true),
        };
        if let Some(n) = &vs.name {
            self.0.insert(n.clone());
        }
        for m in &vs.matchers.matchers {
            if m.name == "__name__" && matches!(m.op, MatchOp::Equal) {
                self.0.insert(m.value.clone());
            }
        }
        Ok(true)
    }
}

/// The metric names a PromQL expression reads (`None` when it does not parse).
pub fn metrics(query: &str) -> Option<BTreeSet<String>> {
    let expr = parser::parse(query).ok()?;
    let mut names = Names(BTreeSet::new());
    let _ = walk_expr(&mut names, &expr);
    Some(names.0)
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
