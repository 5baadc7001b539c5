//! Reading a Grafana dashboard's JSON in tests, independently of the importer: its panels in
//! the order Grafana lays them out (rows' own panels in place).

#![allow(dead_code)]

use serde_json::Value;

/// Every panel that is not a row, with its JSON path, rows' own panels included.
pub fn source_panels(json: &Value) -> Vec<(String, &Value)> {
    fn walk<'a>(list: &'a Value, at: &str, out: &mut Vec<(String, &'a Value)>) {
        for (i, p) in list.as_array().into_iter().flatten().enumerate() {
            let path = format!("{at}[{i}]");
            if p["type"] == "row" {
                walk(&p["panels"], &format!("{path}.panels"), out);
            } else {
                out.push((path, p));
            }
        }
    }
    let mut out = Vec::new();
    walk(&json["panels"], "panels", &mut out);
    out
}
