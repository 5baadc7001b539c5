//! Reading the latest values of many panels in one instant query (issue 34): each panel's
//! query is reduced to its worst series (`topk(1, …)`, or `bottomk` when low is bad: all a
//! hidden panel needs for its headline and its crossings, with the worst one named), tagged
//! with its index by `label_replace`, and the tagged queries are joined with `or`, so one
//! request answers for the whole group, one series a panel, and is split back by the tag.
//!
//! A query that is not an instant vector (a scalar, a string) makes `label_replace` refuse the
//! whole group: the caller then asks for those panels one by one.

use super::series::{KeepWorst, keep_worst};
use super::source::{InstantQuery, QueryAnswer};

/// The label each panel's series are tagged with, taken off again when the answer is split.
pub const TAG: &str = "warroom_panel";

/// Most panels in one group.
pub const MAX_PANELS: usize = 25;

/// Longest grouped query, in bytes: well under the URL limits of proxies in front of a
/// Prometheus (8 KiB is common) when the query goes as a GET parameter.
pub const MAX_QUERY_BYTES: usize = 6_000;

/// One panel's part of a group: its index and its query.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub panel: usize,
    pub query: String,
    pub keep: KeepWorst,
}

/// A query reduced to its worst series by the panel's bad side (`topk(1, …)` when high is
/// bad, else `bottomk`): all a panel's headline and crossings need, with the worst named.
pub fn worst(query: &str, keep: KeepWorst) -> String {
    let k = if keep.higher_is_worse {
        "topk"
    } else {
        "bottomk"
    };
    format!("{k}(1, ({query}))")
}

/// A panel's worst series, tagged with its index.
fn tagged(m: &Member) -> String {
    format!(
        "label_replace({}, \"{TAG}\", \"{}\", \"\", \"\")",
        worst(&m.query, m.keep),
        m.panel
    )
}

/// Splits `members` into groups of at most [`MAX_PANELS`] whose joined query stays within
/// [`MAX_QUERY_BYTES`] (a query longer than that alone is a group of its own).
pub fn chunk(members: Vec<Member>) -> Vec<Vec<Member>> {
    let mut out: Vec<Vec<Member>> = Vec::new();
    let mut bytes = 0;
    for m in members {
        let len = tagged(&m).len() + " or ".len();
        match out.last_mut() {
            Some(g) if g.len() < MAX_PANELS && bytes + len <= MAX_QUERY_BYTES => {
                bytes += len;
                g.push(m);
            }
            _ => {
                bytes = len;
                out.push(vec![m]);
            }
        }
    }
    out
}

/// The one instant query that reads every member's latest values at `time`.
pub fn query(members: &[Member], time: Option<f64>) -> InstantQuery {
    let parts: Vec<String> = members.iter().map(tagged).collect();
    InstantQuery {
        query: parts.join(" or "),
        time,
    }
}

/// The answer of a group, split back into one answer per member (every member gets one, empty
/// when its query matched nothing), each keeping its worst series. Warnings go to every member;
/// the bytes are counted once, on the first.
pub fn split(answer: QueryAnswer, members: &[Member]) -> Vec<(usize, QueryAnswer)> {
    let mut out: Vec<(usize, QueryAnswer)> = members
        .iter()
        .map(|m| {
            let a = QueryAnswer {
                warnings: answer.warnings.clone(),
                infos: answer.infos.clone(),
                result_type: answer.result_type,
                ..Default::default()
            };
            (m.panel, a)
        })
        .collect();
    if let Some((_, first)) = out.first_mut() {
        first.bytes = answer.bytes;
    }
    for mut s in answer.series {
        let Some(panel) = (s.labels.remove(TAG)).and_then(|v| v.parse::<usize>().ok()) else {
            continue;
        };
        if let Some((_, a)) = out.iter_mut().find(|(p, _)| *p == panel) {
            a.series.push(s);
        }
    }
    for ((_, a), m) in out.iter_mut().zip(members) {
        a.omitted = keep_worst(&mut a.series, m.keep);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Point, Series};

    /// Series of a split answer, for tests: the values by label `name`.
    fn values(series: &[Series], name: &str) -> Vec<(String, f64)> {
        series
            .iter()
            .map(|s| {
                (
                    s.labels.get(name).cloned().unwrap_or_default(),
                    s.last().map_or(f64::NAN, |p| p.v),
                )
            })
            .collect()
    }

    fn member(panel: usize, query: &str) -> Member {
        Member {
            panel,
            query: query.into(),
            keep: KeepWorst {
                higher_is_worse: true,
                cap: 2,
            },
        }
    }

    fn series(labels: &[(&str, &str)], v: f64) -> Series {
        Series {
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            points: vec![Point { t: 1.0, v }],
        }
    }

    #[test]
    fn a_group_is_one_query_tagging_each_panel() {
        let q = query(&[member(3, "up"), member(7, "sum(x)")], Some(10.0));
        assert_eq!(
            q.query,
            "label_replace(topk(1, (up)), \"warroom_panel\", \"3\", \"\", \"\") or \
             label_replace(topk(1, (sum(x))), \"warroom_panel\", \"7\", \"\", \"\")"
        );
        assert_eq!(q.time, Some(10.0));
    }

    #[test]
    fn groups_are_bounded_in_panels_and_bytes() {
        let many: Vec<Member> = (0..60).map(|i| member(i, "up")).collect();
        let groups = chunk(many);
        assert_eq!(
            groups.iter().map(Vec::len).collect::<Vec<_>>(),
            [25, 25, 10]
        );
        let long = "x".repeat(2_500);
        let groups = chunk((0..5).map(|i| member(i, &long)).collect());
        assert_eq!(groups.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2, 1]);
        assert!(
            groups
                .iter()
                .all(|g| query(g, None).query.len() <= MAX_QUERY_BYTES)
        );
    }

    #[test]
    fn an_answer_splits_back_by_panel_and_keeps_each_panels_worst() {
        let members = [member(3, "a"), member(7, "b"), member(9, "c")];
        let answer = QueryAnswer {
            series: vec![
                series(&[(TAG, "7"), ("pod", "p1")], 1.0),
                series(&[(TAG, "3"), ("pod", "p1")], 5.0),
                series(&[(TAG, "7"), ("pod", "p2")], 9.0),
                series(&[(TAG, "7"), ("pod", "p3")], 4.0),
                series(&[("pod", "untagged")], 100.0),
            ],
            bytes: 500,
            warnings: vec!["partial".into()],
            ..Default::default()
        };
        let out = split(answer, &members);
        assert_eq!(out.iter().map(|(p, _)| *p).collect::<Vec<_>>(), [3, 7, 9]);
        assert_eq!(values(&out[0].1.series, "pod"), [("p1".into(), 5.0)]);
        assert_eq!(
            values(&out[1].1.series, "pod"),
            [("p2".into(), 9.0), ("p3".into(), 4.0)]
        );
        assert_eq!(out[1].1.omitted, 1);
        assert!(out[2].1.series.is_empty());
        assert!(out[1].1.series.iter().all(|s| !s.labels.contains_key(TAG)));
        assert_eq!(out[0].1.bytes + out[1].1.bytes + out[2].1.bytes, 500);
        assert!(out.iter().all(|(_, a)| a.warnings == ["partial"]));
    }
}
