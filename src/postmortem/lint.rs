//! The checks printed with every export: what the author still has to do, and where the draft's
//! facts may be wrong.

use super::facts::Facts;
use crate::incident::event::Severity;
use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

/// How far the impact window set in the journal may be from the one the signals give before
/// the lint says they disagree.
pub const IMPACT_TOLERANCE: Duration = Duration::minutes(5);

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// `prompt`, `header`, `action`, `gap`, `impact`, `missing`, `journal`.
    pub kind: &'static str,
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

fn parse(utc: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(utc)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// The findings for `facts` (`gap_limit`: the longest quiet stretch allowed in the timeline).
pub fn check(facts: &Facts, gap_limit: Duration, id: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut add = |kind: &'static str, message: String| out.push(Finding { kind, message });

    let n = &facts.notes;
    for (section, empty, tag) in [
        ("Summary", n.summary.is_empty(), "summary"),
        ("Root Cause", n.root_cause.is_empty(), "root-cause"),
        ("Contributing Factors", n.factor.is_empty(), "factor"),
        ("What Went Well", n.went_well.is_empty(), "went-well"),
        ("What Went Poorly", n.went_poorly.is_empty(), "went-poorly"),
        ("Lessons Learned", n.lesson.is_empty(), "lesson"),
    ] {
        if empty {
            add(
                "prompt",
                format!(
                    "section \"{section}\" still holds the prompt for the author: write it, or \
                     seed it with notes tagged #{tag} (`warroom incident note {id} \"… #{tag}\"`)"
                ),
            );
        }
    }
    if facts.impact.is_none() {
        add(
            "prompt",
            "section \"Customer Impact\" still holds the prompt for the author: no impact window \
             is known (no threshold crossing and no impact start in the journal)"
                .into(),
        );
    }
    if facts.resolution.is_empty() {
        add(
            "prompt",
            "section \"Resolution and Recovery\" still holds the prompt for the author: no runbook \
             step is in the journal"
                .into(),
        );
    }
    if facts.severity.is_none() {
        add("header", "the severity is not recorded".into());
    }
    let sev = |s: &Option<String>| s.as_deref().and_then(|s| s.parse::<Severity>().ok());
    if let (Some(recorded), Some(reads)) = (sev(&facts.severity), sev(&facts.impact_severity))
        && reads < recorded
    {
        let why = match (&facts.customer.worst_minute, &facts.signals.error_ratio) {
            (Some(w), _) => format!("in the worst minute {} of user requests failed", w.text),
            (None, Some(e)) => format!("at the peak {} of attempts failed", e.text),
            _ => "the impact says so".into(),
        };
        add(
            "header",
            format!(
                "the severity is {recorded}, but the impact reads as {reads} ({why}): raise it \
                 (`warroom incident severity {id} {reads}`) or say in the draft why not"
            ),
        );
    }
    if facts.services.is_empty() {
        add("header", "the affected services are not recorded".into());
    }

    if !facts.suggestions.is_empty() {
        add(
            "action",
            format!(
                "{} corrective action(s) are suggested by the data (rows marked [Suggested]): \
                 keep each as an action item (`warroom incident action {id} …`) or delete it",
                facts.suggestions.len()
            ),
        );
    }
    if facts.actions.is_empty() {
        add(
            "action",
            format!("there are no action items (`warroom incident action {id} …`)"),
        );
    }
    for a in &facts.actions {
        let mut lacks = Vec::new();
        if a.owner.is_none() {
            lacks.push("owner");
        }
        if a.priority.is_none() {
            lacks.push("priority");
        }
        if a.due.is_none() {
            lacks.push("due date");
        }
        if !lacks.is_empty() {
            add(
                "action",
                format!(
                    "action item {} \"{}\" has no {}",
                    a.id,
                    a.action,
                    lacks.join(", no ")
                ),
            );
        }
    }

    // Gaps: quiet stretches between consecutive timeline rows.
    for w in facts.timeline.windows(2) {
        let gap = w[1].at - w[0].at;
        if gap > gap_limit {
            add(
                "gap",
                format!(
                    "the timeline has nothing between {} and {} ({}, longer than the {} limit): \
                     add what happened as notes",
                    w[0].time,
                    w[1].time,
                    super::words::duration(gap.num_seconds()),
                    super::words::duration(gap_limit.num_seconds())
                ),
            );
        }
    }

    if let Some(i) = &facts.impact {
        let pairs = [
            ("start", Some(&i.start), i.signal_start.as_ref()),
            ("end", i.end.as_ref(), i.signal_end.as_ref()),
        ];
        for (what, set, signal) in pairs {
            if let (Some(set), Some(signal)) = (set, signal)
                && let (Some(a), Some(b)) = (parse(&set.utc), parse(&signal.utc))
                && (a - b).abs() > IMPACT_TOLERANCE
            {
                add(
                    "impact",
                    format!(
                        "the impact {what} ({} {}) does not match the signals ({}): check the \
                         impact window",
                        set.clock, facts.time_words, signal.clock
                    ),
                );
            }
        }
        if i.signal_start.is_none() {
            add(
                "impact",
                "the impact window was set by hand and no signal crossed a threshold: the \
                 signals do not confirm it"
                    .into(),
            );
        }
        if i.end.is_none() {
            add(
                "impact",
                "the impact has no end: the signals have not come back, and no impact end is in \
                 the journal"
                    .into(),
            );
        }
    }

    for m in &facts.missing {
        add("missing", m.clone());
    }
    out
}

/// What marks text the author has still to write or decide in the house draft: a row the data
/// suggested (`[Suggested] …`), and a placeholder or prompt (`[Author: owner]`,
/// `> **[Author]** …`). The house template writes them; [`unfinished`] finds them.
const SUGGESTED: &str = "[Suggested]";
const AUTHOR: &str = "[Author";

/// The author's work still left in an exported draft (its Markdown): what `warroom publish`
/// warns about before it sends the draft out.
pub fn unfinished(markdown: &str) -> Vec<Finding> {
    let lines_with = |marker: &str| -> (usize, Vec<usize>) {
        let mut count = 0;
        let mut lines = Vec::new();
        for (i, line) in markdown.lines().enumerate() {
            let n = line.matches(marker).count();
            if n > 0 {
                count += n;
                lines.push(i + 1);
            }
        }
        (count, lines)
    };
    let at = |lines: &[usize]| {
        let shown: Vec<String> = lines.iter().take(8).map(usize::to_string).collect();
        let more = lines.len().saturating_sub(8);
        if more > 0 {
            format!("{} and {more} more", shown.join(", "))
        } else {
            shown.join(", ")
        }
    };
    let mut out = Vec::new();
    let (rows, lines) = lines_with(SUGGESTED);
    if rows > 0 {
        out.push(Finding {
            kind: "unfinished",
            message: format!(
                "{rows} line(s) marked {SUGGESTED} are still in the draft (line {}): keep each \
                 (a corrective action as an action item, `warroom incident action`; a judgement \
                 as a note with its tag), reword it or delete it, then export again",
                at(&lines)
            ),
        });
    }
    let (asks, lines) = lines_with(AUTHOR);
    if asks > 0 {
        out.push(Finding {
            kind: "unfinished",
            message: format!(
                "{asks} {AUTHOR}…] placeholder(s) are still in the draft (line {}): write them \
                 or delete them",
                at(&lines)
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_house_templates_markers_are_the_ones_found() {
        // The template writes both kinds: a change to its wording must change the markers.
        let found = unfinished(super::super::template::HOUSE);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].message.contains("[Suggested]"), "{found:?}");
        assert!(found[1].message.contains("[Author…]"), "{found:?}");
    }

    #[test]
    fn rows_and_placeholders_are_counted_by_line() {
        let md =
            "# T\n| [Suggested] a | [Author: owner] | [Author: due] |\nok\n> **[Author]** say\n";
        let found = unfinished(md);
        assert_eq!(found.len(), 2);
        assert!(found[0].message.starts_with("1 line(s)"), "{found:?}");
        assert!(found[0].message.contains("(line 2)"), "{found:?}");
        assert!(found[1].message.starts_with("3 [Author"), "{found:?}");
        assert!(found[1].message.contains("(line 2, 4)"), "{found:?}");
        assert!(unfinished("# Done\nAll written.\n").is_empty());
    }
}
