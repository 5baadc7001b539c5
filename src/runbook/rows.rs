//! Results as rows: what a `sql` step's statement and an `haproxy` step's `show` command
//! return, shown bounded (a table for the run pane, a short summary for the journal) and judged
//! by an optional condition, so that such a step can be a check.
//!
//! A condition names a column (or none: then the number of rows is judged), optionally keeps
//! only the rows whose columns equal given values (`where`), and tests the value: `above`,
//! `below`, `between` (numbers, as gates do) or `equals` (text, or numbers when both are). It
//! has the gate's four outcomes: holds, fails, inconclusive (no row, several rows where one
//! was expected, NULL, not a number), and error (the query itself failed, judged by the caller).

use super::gate::Condition;
use super::mask::Masker;
use super::template::{Context, RenderError, Template, Values};
use std::fmt::Write;

/// Rows shown in the run pane, at most.
pub const MAX_SHOWN_ROWS: usize = 20;
/// Rows summarized in the journal's record of the step, at most.
pub const MAX_RECORDED_ROWS: usize = 5;
/// Columns of each row summarized there, at most.
pub const MAX_RECORDED_COLUMNS: usize = 10;
/// The longest summary, in characters.
pub const MAX_SUMMARY: usize = 600;
/// A cell is cut to this many characters where it is shown or recorded.
pub const MAX_CELL: usize = 40;
/// Rows kept from a result at all; the rest are counted, not kept.
pub const MAX_KEPT_ROWS: usize = 10_000;

/// A result: column names and rows of text cells (`None` is SQL NULL).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rows {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
    /// Rows the server sent beyond [`MAX_KEPT_ROWS`] (counted, dropped).
    pub dropped: u64,
    /// The server's count for a statement without rows (`UPDATE 3`), if any.
    pub affected: Option<u64>,
}

impl Rows {
    /// Rows in all, kept or not.
    pub fn count(&self) -> u64 {
        self.rows.len() as u64 + self.dropped
    }

    fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }

    /// The table for the run pane: a header and at most [`MAX_SHOWN_ROWS`] rows, each cell cut,
    /// every line sanitized and masked.
    pub fn shown(&self, masker: &Masker) -> Vec<String> {
        let mut out = Vec::new();
        if self.columns.is_empty() {
            out.push(match self.affected {
                Some(n) => format!("({n} row(s) affected)"),
                None => "(no rows)".into(),
            });
            return out;
        }
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .take(MAX_SHOWN_ROWS)
            .map(|r| r.iter().map(|c| cell(c.as_deref(), masker)).collect())
            .collect();
        let header: Vec<String> = self.columns.iter().map(|c| cell(Some(c), masker)).collect();
        let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
        for r in &cells {
            for (i, c) in r.iter().enumerate() {
                if let Some(w) = widths.get_mut(i) {
                    *w = (*w).max(c.chars().count());
                }
            }
        }
        let line = |r: &[String]| {
            let mut l = String::new();
            for (i, c) in r.iter().enumerate() {
                if i > 0 {
                    l.push_str(" | ");
                }
                let pad = widths.get(i).copied().unwrap_or(0);
                let _ = write!(l, "{c:<pad$}");
            }
            crate::sanitize::line(l.trim_end()).into_owned()
        };
        out.push(line(&header));
        for r in &cells {
            out.push(line(r));
        }
        let rest = self.count().saturating_sub(cells.len() as u64);
        if rest > 0 {
            out.push(format!("… {rest} more row(s)"));
        }
        out.push(format!("({} row(s))", self.count()));
        out
    }

    /// A one-line summary for the journal: the row count and the first few rows, bounded,
    /// sanitized and masked.
    pub fn summary(&self, masker: &Masker) -> String {
        if self.columns.is_empty() {
            return match self.affected {
                Some(n) => format!("{n} row(s) affected"),
                None => "no rows".into(),
            };
        }
        let mut s = format!("{} row(s)", self.count());
        for r in self.rows.iter().take(MAX_RECORDED_ROWS) {
            let mut pairs: Vec<String> = self
                .columns
                .iter()
                .zip(r)
                .take(MAX_RECORDED_COLUMNS)
                .map(|(c, v)| format!("{}={}", cell(Some(c), masker), cell(v.as_deref(), masker)))
                .collect();
            if self.columns.len() > MAX_RECORDED_COLUMNS {
                pairs.push("…".into());
            }
            let _ = write!(s, "; {}", pairs.join(", "));
        }
        if self.count() > MAX_RECORDED_ROWS as u64 {
            s.push_str("; …");
        }
        let s = crate::sanitize::line(&s);
        if s.chars().count() > MAX_SUMMARY {
            let mut cut: String = s.chars().take(MAX_SUMMARY - 1).collect();
            cut.push('…');
            cut
        } else {
            s.into_owned()
        }
    }
}

fn cell(v: Option<&str>, masker: &Masker) -> String {
    let Some(v) = v else {
        return "NULL".into();
    };
    let v = masker.mask(&crate::sanitize::line(v));
    if v.chars().count() > MAX_CELL {
        let mut c: String = v.chars().take(MAX_CELL - 1).collect();
        c.push('…');
        c
    } else {
        v
    }
}

/// What a value must do.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueTest {
    /// A number above, below or between, as a gate's condition.
    Number(Condition),
    /// Equal as text, or as numbers when both sides are numbers (`0` equals `0.0`).
    Equals(Template),
}

/// A condition on a result, as a runbook writes it under `expect`.
#[derive(Debug, Clone, PartialEq)]
pub struct RowCondition {
    /// The column judged; `None` judges the number of (kept) rows.
    pub column: Option<String>,
    /// Only rows whose columns equal these values count.
    pub filter: Vec<(String, Template)>,
    /// Every counted row must hold (at least one); otherwise exactly one row is expected.
    pub each: bool,
    pub test: ValueTest,
}

/// The judgement of a result: the gate's outcomes, each with what was seen.
#[derive(Debug, Clone, PartialEq)]
pub enum Judgement {
    Holds(String),
    Fails(String),
    Inconclusive(String),
}

impl Judgement {
    pub fn holds(&self) -> bool {
        matches!(self, Judgement::Holds(_))
    }

    /// The text of the judgement.
    pub fn text(&self) -> &str {
        match self {
            Judgement::Holds(t) | Judgement::Fails(t) | Judgement::Inconclusive(t) => t,
        }
    }
}

impl RowCondition {
    /// The condition in words, for the plan (values rendered).
    pub fn describe(&self, values: &Values, target: Option<&str>) -> String {
        let what = match &self.column {
            Some(c) => format!("column \"{c}\""),
            None => "the number of rows".into(),
        };
        let test = match &self.test {
            ValueTest::Number(c) => c.to_string().replace("value", &what),
            ValueTest::Equals(t) => format!(
                "{what} = \"{}\"",
                t.render(values, target, Context::Literal)
                    .unwrap_or_else(|e| format!("<{e}>"))
            ),
        };
        let mut s = test;
        if !self.filter.is_empty() {
            let f: Vec<String> = self
                .filter
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{k} = \"{}\"",
                        v.render(values, target, Context::Literal)
                            .unwrap_or_else(|e| format!("<{e}>"))
                    )
                })
                .collect();
            let _ = write!(s, ", in the rows where {}", f.join(" and "));
        }
        if self.column.is_some() {
            s.push_str(if self.each {
                "; every such row must hold (at least one)"
            } else {
                "; exactly one such row expected"
            });
        }
        s.push_str("; no row, several rows where one is expected, NULL or a non-number never hold");
        s
    }

    /// Judge `rows`.
    pub fn judge(
        &self,
        rows: &Rows,
        values: &Values,
        target: Option<&str>,
    ) -> Result<Judgement, RenderError> {
        Ok(self.judge_reading(rows, values, target)?.0)
    }

    /// [`Self::judge`] with the number judged, when the test is on a number and one was read:
    /// the row count, or the column's value (the one that failed, else the last).
    pub fn judge_reading(
        &self,
        rows: &Rows,
        values: &Values,
        target: Option<&str>,
    ) -> Result<(Judgement, Option<f64>), RenderError> {
        let number = |v: &str| match self.test {
            ValueTest::Number(_) => v.trim().parse::<f64>().ok().filter(|x| x.is_finite()),
            ValueTest::Equals(_) => None,
        };
        // Nothing judged: no number.
        let unsure = |why: String| Ok((Judgement::Inconclusive(why), None));
        let mut filter = Vec::with_capacity(self.filter.len());
        for (col, v) in &self.filter {
            let Some(i) = rows.column(col) else {
                return unsure(format!(
                    "the result has no column \"{col}\" to select rows by; it has: {}",
                    rows.columns.join(", ")
                ));
            };
            filter.push((i, v.render(values, target, Context::Literal)?));
        }
        let selected: Vec<&Vec<Option<String>>> = rows
            .rows
            .iter()
            .filter(|r| {
                filter
                    .iter()
                    .all(|(i, want)| r.get(*i).and_then(|c| c.as_deref()) == Some(want.as_str()))
            })
            .collect();
        let Some(column) = &self.column else {
            let n = if filter.is_empty() {
                rows.count()
            } else {
                selected.len() as u64
            };
            let j = self.test_value(&n.to_string(), "the number of rows", values, target)?;
            return Ok((j, number(&n.to_string())));
        };
        let Some(ci) = rows.column(column) else {
            return unsure(format!(
                "the result has no column \"{column}\"; it has: {}",
                rows.columns.join(", ")
            ));
        };
        if selected.is_empty() {
            return unsure(if filter.is_empty() {
                "no row to judge".into()
            } else {
                // Say which rows were looked for: a name that does not exist reads as such.
                let wanted: Vec<String> = (self.filter.iter().zip(&filter))
                    .map(|((col, _), (_, v))| format!("{col} = \"{}\"", crate::sanitize::line(v)))
                    .collect();
                format!("no row where {}", wanted.join(" and "))
            });
        }
        if !self.each && selected.len() > 1 {
            return unsure(format!(
                "{} rows where one was expected (select one with where = {{ … }}, or set each = true)",
                selected.len()
            ));
        }
        let mut last = None;
        for r in selected {
            let Some(v) = r.get(ci).and_then(|c| c.as_deref()) else {
                return unsure(format!("\"{column}\" is NULL"));
            };
            let j = self.test_value(v, &format!("\"{column}\""), values, target)?;
            if !j.holds() {
                return Ok((j, number(v)));
            }
            last = Some((j, number(v)));
        }
        last.map_or_else(|| unsure("no row to judge".into()), Ok)
    }

    fn test_value(
        &self,
        v: &str,
        what: &str,
        values: &Values,
        target: Option<&str>,
    ) -> Result<Judgement, RenderError> {
        let shown: String = crate::sanitize::line(v).chars().take(MAX_CELL).collect();
        Ok(match &self.test {
            ValueTest::Number(c) => match v.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => {
                    let text = format!(
                        "{what} = {shown}, expected {}",
                        c.to_string().replace("value", "it")
                    );
                    if c.holds(x) {
                        Judgement::Holds(text)
                    } else {
                        Judgement::Fails(text)
                    }
                }
                _ => {
                    Judgement::Inconclusive(format!("{what} = \"{shown}\" is not a finite number"))
                }
            },
            ValueTest::Equals(t) => {
                let want = t.render(values, target, Context::Literal)?;
                let same = match (v.trim().parse::<f64>(), want.trim().parse::<f64>()) {
                    (Ok(a), Ok(b)) => a == b,
                    _ => v == want,
                };
                let text = format!(
                    "{what} = \"{shown}\", expected \"{}\"",
                    crate::sanitize::line(&want)
                );
                if same {
                    Judgement::Holds(text)
                } else {
                    Judgement::Fails(text)
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Rows {
        Rows {
            columns: vec!["database".into(), "cl_waiting".into()],
            rows: vec![
                vec![Some("appdb".into()), Some("12".into())],
                vec![Some("pgbouncer".into()), Some("0".into())],
            ],
            dropped: 0,
            affected: None,
        }
    }

    fn t(s: &str) -> Template {
        Template::parse(s).unwrap()
    }

    #[test]
    fn a_column_of_one_selected_row_is_judged() {
        let c = RowCondition {
            column: Some("cl_waiting".into()),
            filter: vec![("database".into(), t("appdb"))],
            each: false,
            test: ValueTest::Number(Condition::Below(1.0)),
        };
        let j = c.judge(&rows(), &Values::new(), None).unwrap();
        assert!(matches!(j, Judgement::Fails(_)), "{j:?}");
        assert!(j.text().contains("\"cl_waiting\" = 12"), "{j:?}");
        let c = RowCondition {
            filter: vec![("database".into(), t("pgbouncer"))],
            ..c
        };
        assert!(c.judge(&rows(), &Values::new(), None).unwrap().holds());
    }

    #[test]
    fn several_rows_none_null_and_text_are_never_success() {
        let base = RowCondition {
            column: Some("cl_waiting".into()),
            filter: vec![],
            each: false,
            test: ValueTest::Number(Condition::Above(-1.0)),
        };
        let v = Values::new();
        assert!(matches!(
            base.judge(&rows(), &v, None).unwrap(),
            Judgement::Inconclusive(_)
        ));
        let empty = Rows {
            rows: vec![],
            ..rows()
        };
        assert!(matches!(
            base.judge(&empty, &v, None).unwrap(),
            Judgement::Inconclusive(_)
        ));
        let odd = Rows {
            rows: vec![vec![Some("x".into()), None]],
            ..rows()
        };
        assert!(matches!(
            base.judge(&odd, &v, None).unwrap(),
            Judgement::Inconclusive(_)
        ));
        let text = Rows {
            rows: vec![vec![Some("x".into()), Some("NaN".into())]],
            ..rows()
        };
        assert!(matches!(
            base.judge(&text, &v, None).unwrap(),
            Judgement::Inconclusive(_)
        ));
        let missing = RowCondition {
            column: Some("nope".into()),
            ..base.clone()
        };
        assert!(matches!(
            missing.judge(&rows(), &v, None).unwrap(),
            Judgement::Inconclusive(_)
        ));
        let each = RowCondition { each: true, ..base };
        assert!(each.judge(&rows(), &v, None).unwrap().holds());
    }

    #[test]
    fn the_row_count_and_equality() {
        let v = Values::new();
        let count = RowCondition {
            column: None,
            filter: vec![],
            each: false,
            test: ValueTest::Equals(t("2")),
        };
        assert!(count.judge(&rows(), &v, None).unwrap().holds());
        let zero = RowCondition {
            test: ValueTest::Equals(t("0")),
            ..count.clone()
        };
        assert!(matches!(
            zero.judge(&rows(), &v, None).unwrap(),
            Judgement::Fails(_)
        ));
        let name = RowCondition {
            column: Some("database".into()),
            filter: vec![("cl_waiting".into(), t("0"))],
            each: false,
            test: ValueTest::Equals(t("pgbouncer")),
        };
        assert!(name.judge(&rows(), &v, None).unwrap().holds());
    }

    #[test]
    fn the_table_is_bounded_sanitized_and_masked() {
        let mut m = Masker::new();
        m.add("hunter22");
        let mut r = Rows {
            columns: vec!["a".into(), "b".into()],
            rows: vec![],
            dropped: 0,
            affected: None,
        };
        for i in 0..50 {
            r.rows.push(vec![
                Some(format!("\u{1b}]0;x\u{7}{i}")),
                Some(format!("pw hunter22 {}", "y".repeat(100))),
            ]);
        }
        let lines = r.shown(&m);
        assert_eq!(lines.len(), 1 + MAX_SHOWN_ROWS + 2, "{lines:?}");
        for l in &lines {
            assert!(!l.contains('\u{1b}') && !l.contains("hunter22"), "{l}");
            assert!(l.chars().count() < 200, "{l}");
        }
        assert!(lines.last().unwrap().contains("50 row(s)"));
        let s = r.summary(&m);
        assert!(
            s.starts_with("50 row(s)") && !s.contains("hunter22") && s.len() < 1300,
            "{s}"
        );
    }
}
