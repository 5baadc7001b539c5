//! The series a PromQL query reads: its vector selectors (range selectors' included), found
//! with the PromQL parser. Discovery, the alert-rule check and the gates' freshness check all
//! ask this one walker.

use promql_parser::label::MatchOp;
use promql_parser::parser::{self, Expr, VectorSelector};
use promql_parser::util::{ExprVisitor, walk_expr};

/// Every vector selector of `query`, in the order they appear (a range selector gives its
/// vector selector). `Err` when `query` is not PromQL.
pub fn selectors(query: &str) -> Result<Vec<VectorSelector>, String> {
    struct All(Vec<VectorSelector>);
    impl ExprVisitor for All {
        type Error = std::convert::Infallible;
        fn pre_visit(&mut self, e: &Expr) -> Result<bool, Self::Error> {
            match e {
                Expr::VectorSelector(vs) => self.0.push(vs.clone()),
                Expr::MatrixSelector(ms) => self.0.push(ms.vs.clone()),
                _ => {}
            }
            Ok(true)
        }
    }
    let expr = parser::parse(query)?;
    let mut all = All(Vec::new());
    let _ = walk_expr(&mut all, &expr);
    Ok(all.0)
}

/// The metric names `query` selects (by name or by an exact `__name__` matcher), each once,
/// in the order they first appear.
pub fn metric_names(query: &str) -> Result<Vec<String>, String> {
    let mut names: Vec<String> = Vec::new();
    for vs in selectors(query)? {
        let exact = vs
            .matchers
            .matchers
            .iter()
            .filter(|m| m.name == "__name__" && matches!(m.op, MatchOp::Equal))
            .map(|m| m.value.clone());
        for n in vs.name.clone().into_iter().chain(exact) {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    Ok(names)
}
