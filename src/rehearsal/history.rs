//! `warroom gameday history [SCENARIO]`: past rehearsals side by side, each scored from its
//! own journal, so a team sees whether it got faster.

use super::score::{Response, response};
use crate::incident::{IncidentId, Store, StoreError};
use std::fmt::Write;

/// One past rehearsal and its score.
#[derive(Debug, Clone)]
pub struct Past {
    pub id: IncidentId,
    pub response: Response,
}

/// Incidents whose journal could not be read, and why.
pub type Unreadable = Vec<(IncidentId, String)>;

/// The ended rehearsals in `store` (of `scenario` when given), in the order they ended. An
/// incident whose journal cannot be read is skipped and named in the second list.
pub fn past(store: &Store, scenario: Option<&str>) -> Result<(Vec<Past>, Unreadable), StoreError> {
    let mut found = Vec::new();
    let mut unreadable = Vec::new();
    for id in store.list()? {
        match store.read(&id) {
            Ok(journal) => {
                let r = response(&journal.records);
                let matches = match (&r.scenario, scenario) {
                    (None, _) => false,
                    (Some(_), None) => true,
                    (Some(s), Some(want)) => s == want,
                };
                if matches {
                    found.push(Past { id, response: r });
                }
            }
            Err(e) => unreadable.push((id, e.to_string())),
        }
    }
    found.sort_by_key(|p| (p.response.ended_at, p.id.to_string()));
    Ok((found, unreadable))
}

fn minutes(s: Option<f64>) -> String {
    s.map_or("—".into(), |s| format!("{:.1}", s / 60.0))
}

/// The rehearsals as one table per scenario, times in `tz`.
pub fn table(past: &[Past], tz: chrono_tz::Tz) -> String {
    let mut out = String::new();
    if past.is_empty() {
        out.push_str("no ended rehearsal found (run `warroom demo` or `warroom gameday`)\n");
        return out;
    }
    let mut scenarios: Vec<&str> = past
        .iter()
        .filter_map(|p| p.response.scenario.as_deref())
        .collect();
    scenarios.dedup();
    scenarios.sort();
    scenarios.dedup();
    for name in scenarios {
        let rows: Vec<&Past> = past
            .iter()
            .filter(|p| p.response.scenario.as_deref() == Some(name))
            .collect();
        let objective = rows
            .iter()
            .find_map(|p| p.response.figures.as_ref())
            .map_or(String::new(), |f| {
                format!(
                    " (objective: error ratio under {:.0} %)",
                    f.objective_error_ratio * 100.0
                )
            });
        let _ = writeln!(out, "{name}{objective}, {} rehearsal(s):", rows.len());
        let header = [
            "INCIDENT", "ENDED", "SPEED", "DETECT", "MITIGATE", "RECOVER", "WRONG", "SKIPPED",
            "DECLINED", "MIN OVER",
        ];
        let cells: Vec<[String; 10]> = rows
            .iter()
            .map(|p| {
                let r = &p.response;
                let f = r.figures.as_ref();
                [
                    p.id.to_string(),
                    r.ended_at.map_or("—".into(), |t| {
                        t.with_timezone(&tz).format("%Y-%m-%d %H:%M").to_string()
                    }),
                    f.map_or("—".into(), |f| format!("{}x", f.speed)),
                    minutes(r.time_to_detect_s),
                    minutes(r.time_to_first_mitigation_s),
                    minutes(r.time_to_recovery_s),
                    r.wrong_moves.len().to_string(),
                    r.gates_skipped.len().to_string(),
                    r.steps_declined.len().to_string(),
                    f.map_or("—".into(), |f| f.minutes_over_objective.to_string()),
                ]
            })
            .collect();
        let mut widths = header.map(str::len);
        for row in &cells {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut l = String::from("  ");
            for (c, w) in cells.iter().zip(widths) {
                let _ = write!(l, "{c:<w$}  ");
            }
            l.trim_end().to_string()
        };
        let _ = writeln!(out, "{}", line(&header.map(String::from)));
        for row in &cells {
            let _ = writeln!(out, "{}", line(row));
        }
        out.push('\n');
    }
    out.push_str(
        "DETECT: minutes from the first signal (a crossing or an alert) to the first human record; \
         MITIGATE: from the fault to the first control action; RECOVER: from the fault to the first \
         five minutes within the objective; WRONG: moves the scenario knows make it worse; \
         SKIPPED: failed runbook steps continued past; DECLINED: steps not confirmed; MIN OVER: \
         minutes over the objective.\n",
    );
    out
}
