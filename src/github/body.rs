//! The text warroom writes on GitHub: titles and bodies of the postmortem and of each action
//! item, each ending with its hidden [`Marker`].
//!
//! Text that people or other systems typed (action items, owners) is untrusted: it is
//! sanitized, put in a fenced block whose fence no backtick run in the text can close, and an
//! `@name` from it is never a live mention (inside code it does not notify anyone). The
//! exported postmortem keeps its Markdown, with its mentions defused the same way.

use super::publication::Publication;
use crate::incident::summary::ActionItem;
use crate::sanitize;
use std::sync::LazyLock;

/// `text` in a fenced block that it cannot break out of.
pub fn fence(text: &str) -> String {
    let clean = sanitize::multiline(text);
    let mut longest = 0;
    let mut run = 0;
    for c in clean.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let ticks = "`".repeat((longest + 1).max(3));
    format!("{ticks}text\n{}\n{ticks}", clean.trim_end())
}

static MENTION: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"(^|[^A-Za-z0-9_`/.\-])@([A-Za-z0-9][A-Za-z0-9\-]{0,38}(?:/[A-Za-z0-9_.\-]+)?)",
    )
    // A constant pattern: the tests below compile it.
    .expect("the mention pattern is a valid regex")
});

/// Markdown with every `@name` outside code put in backticks, so publishing notifies nobody.
pub fn defuse_mentions(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len() + 16);
    let mut fence: Option<&str> = None;
    for line in markdown.split_inclusive('\n') {
        let t = line.trim_start();
        match fence {
            Some(f) if t.starts_with(f) => fence = None,
            Some(_) => {}
            None if t.starts_with("```") => fence = Some("```"),
            None if t.starts_with("~~~") => fence = Some("~~~"),
            None => {
                out.push_str(&MENTION.replace_all(line, "$1`@$2`"));
                continue;
            }
        }
        out.push_str(line);
    }
    out
}

/// The owner as a GitHub login (`ana`, `@ana-l`), or `None` when it is a name or a team.
pub fn github_login(owner: &str) -> Option<&str> {
    let login = owner.trim().strip_prefix('@').unwrap_or(owner.trim());
    let ok = (1..=39).contains(&login.len())
        && login
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !login.starts_with('-')
        && !login.ends_with('-')
        && !login.contains("--");
    ok.then_some(login)
}

/// `AI-2: Add a retry budget to the gateway` (one line, cut at 100 characters).
pub fn item_title(item: &ActionItem) -> String {
    let first = item.action.lines().next().unwrap_or("").trim();
    let first = sanitize::sanitize(first, false, 100);
    format!("{}: {first}", sanitize::line(&item.id))
}

/// The labels of an action item's issue.
pub fn item_labels(item: &ActionItem) -> Vec<String> {
    let mut labels = vec!["warroom".to_string(), "action-item".to_string()];
    if let Some(p) = item.priority {
        labels.push(format!("priority:{p}"));
    }
    labels
}

/// The body of an action item's issue: what, who, when, where it came from (a link to the
/// postmortem when it exists), and its marker.
pub fn item_body(publication: &Publication, item: &ActionItem, postmortem: Option<&str>) -> String {
    let mut b = format!(
        "Action item **{}** from incident **{}** ({}",
        sanitize::line(&item.id),
        publication.incident,
        publication.date.format("%Y-%m-%d"),
    );
    if let Some(sev) = publication.severity {
        b.push_str(&format!(", {sev}"));
    }
    b.push_str(").\n\n");
    if let Some(url) = postmortem {
        b.push_str(&format!("Postmortem: {url}\n\n"));
    }
    b.push_str("| | |\n|---|---|\n");
    let priority = item.priority.map_or("none".to_string(), |p| p.to_string());
    b.push_str(&format!("| Priority | {priority} |\n"));
    let owner = match item.owner.as_deref() {
        Some(o) => format!("`{}`", sanitize::line(o).replace('`', "'")),
        None => "none yet".into(),
    };
    b.push_str(&format!("| Owner | {owner} |\n"));
    let due = item
        .due
        .map_or("none".to_string(), |d| d.format("%Y-%m-%d").to_string());
    b.push_str(&format!("| Due | {due} |\n\n"));
    b.push_str("What must be done:\n\n");
    b.push_str(&fence(&item.action));
    b.push_str("\n\n");
    b.push_str(&publication.action_marker(&item.id).render());
    b.push('\n');
    b
}

/// One line per action item, linking its issue once it exists (`#12`).
fn items_list(publication: &Publication, issues: &dyn Fn(&str) -> Option<u64>) -> String {
    if publication.actions.is_empty() {
        return "No action items.\n".into();
    }
    let mut s = String::new();
    for item in &publication.actions {
        let link =
            issues(&item.id).map_or("(issue not filed yet)".to_string(), |n| format!("#{n}"));
        s.push_str(&format!(
            "- {} {link}\n",
            item_title(item).replace('@', "`@`")
        ));
    }
    s
}

/// The postmortem pull request's title.
pub fn postmortem_title(publication: &Publication) -> String {
    let title = sanitize::sanitize(&publication.title, false, 120);
    format!(
        "Postmortem {}: {title}",
        publication.date.format("%Y-%m-%d")
    )
}

/// The pull request's description: what it adds, the action items, the marker.
pub fn pr_body(publication: &Publication, issues: &dyn Fn(&str) -> Option<u64>) -> String {
    format!(
        "Adds the postmortem of incident **{}** as `{}`{}.\n\n### Action items\n\n{}\n{}\n",
        publication.incident,
        publication.file_path(),
        if publication.charts.is_empty() {
            String::new()
        } else {
            format!(" with {} chart(s)", publication.charts.len())
        },
        items_list(publication, issues),
        publication.pr_marker().render()
    )
}

/// The postmortem as an issue: the Markdown with chart links pointing at `chart_url(name)`, the
/// action items, the marker.
pub fn issue_body(
    publication: &Publication,
    chart_url: &dyn Fn(&str) -> Option<String>,
    issues: &dyn Fn(&str) -> Option<u64>,
) -> String {
    format!(
        "{}\n\n### Action items (filed by warroom)\n\n{}\n{}\n",
        defuse_mentions(&rewrite_charts(
            &publication.markdown,
            publication,
            chart_url
        ))
        .trim_end(),
        items_list(publication, issues),
        publication.postmortem_marker().render()
    )
}

/// The Markdown file as committed: charts linked where the branch keeps them, mentions
/// defused.
pub fn postmortem_file(publication: &Publication) -> String {
    let dir = format!(
        "{}-{}",
        publication.date.format("%Y-%m-%d"),
        publication.slug()
    );
    let relative = |name: &str| Some(format!("{dir}/{name}"));
    defuse_mentions(&rewrite_charts(
        &publication.markdown,
        publication,
        &relative,
    ))
}

/// Points the export's `charts/<name>` links at `url(name)`.
fn rewrite_charts(
    markdown: &str,
    publication: &Publication,
    url: &dyn Fn(&str) -> Option<String>,
) -> String {
    let mut text = markdown.to_string();
    for chart in &publication.charts {
        let Some(to) = url(&chart.name) else { continue };
        for from in [
            format!("(charts/{})", chart.name),
            format!("(./charts/{})", chart.name),
        ] {
            text = text.replace(&from, &format!("({to})"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_cannot_be_closed_from_inside() {
        let f = fence("a\n````\n@everyone \u{1b}[2J");
        assert!(f.starts_with("`````text\n"), "{f}");
        assert!(f.ends_with("\n`````"), "{f}");
        assert!(sanitize::is_clean(&f, true));
    }

    #[test]
    fn mentions_outside_code_are_defused() {
        let md = "cc @ana and @acme/dba, mail ana@example.com\n```\n@kept\n```\n`@x` done @bob.";
        let out = defuse_mentions(md);
        assert_eq!(
            out,
            "cc `@ana` and `@acme/dba`, mail ana@example.com\n```\n@kept\n```\n`@x` done `@bob`."
        );
    }

    #[test]
    fn logins_are_told_from_names() {
        assert_eq!(github_login("@ana-l"), Some("ana-l"));
        assert_eq!(github_login("bob"), Some("bob"));
        for not in [
            "Ana Lopez",
            "db-team/",
            "-x",
            "a--b",
            "",
            "x".repeat(40).as_str(),
        ] {
            assert_eq!(github_login(not), None, "{not}");
        }
    }
}
