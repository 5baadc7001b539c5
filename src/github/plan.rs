//! `warroom publish --dry-run`: the requests publishing would send, in order, without sending
//! anything (no token needed). What the outbox knows decides between create and update; what
//! only GitHub knows (does the branch exist, did a file change) is shown as a condition.

use super::body;
use super::client::Method;
use super::outbox::Object;
use super::publication::Publication;
use super::publish::Target;
use crate::config::RepoName;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One request of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedRequest {
    pub method: Method,
    pub path: String,
    /// What it is for, and when it is sent.
    pub why: String,
}

fn req(method: Method, path: String, why: impl Into<String>) -> PlannedRequest {
    PlannedRequest {
        method,
        path,
        why: why.into(),
    }
}

/// The requests of publishing `p` to `repo` as `target`.
pub fn plan(
    p: &Publication,
    repo: &RepoName,
    target: Target,
    known: &BTreeMap<String, Object>,
    base_branch: Option<&str>,
) -> Vec<PlannedRequest> {
    let r = format!("/repos/{}/{}", repo.owner, repo.name);
    let branch = p.branch();
    let mut out = Vec::new();
    let mut files: Vec<String> = Vec::new();
    if target == Target::Pr {
        files.push(p.file_path());
    }
    files.extend(p.charts.iter().map(|c| p.chart_path(c)));
    if !files.is_empty() || target == Target::Pr {
        if base_branch.is_none() {
            out.push(req(Method::Get, r.clone(), "learn the default branch"));
        }
        let base = base_branch.unwrap_or("<default branch>");
        out.push(req(
            Method::Get,
            format!("{r}/git/ref/heads/{branch}"),
            "does the postmortem branch exist",
        ));
        out.push(req(
            Method::Post,
            format!("{r}/git/refs"),
            format!("if it does not: create branch \"{branch}\" from \"{base}\""),
        ));
        for f in &files {
            out.push(req(
                Method::Get,
                format!("{r}/contents/{f}?ref={branch}"),
                "is the file there already",
            ));
            out.push(req(
                Method::Put,
                format!("{r}/contents/{f}"),
                "if missing or different: commit it to the branch",
            ));
        }
    }
    let scan_path = format!("{r}/issues?state=all&sort=created&direction=desc&per_page=100&page=1");
    let mut scanned = false;
    let mut scan = |out: &mut Vec<PlannedRequest>| {
        if !scanned {
            scanned = true;
            out.push(req(
                Method::Get,
                scan_path.clone(),
                "search for warroom's markers (more pages while full, at most 10)",
            ));
        }
    };
    let pm = known.get(match target {
        Target::Pr => super::publish::PR_KEY,
        Target::Issue => super::publish::ISSUE_KEY,
    });
    match (target, pm) {
        (Target::Pr, Some(o)) => out.push(req(
            Method::Get,
            format!("{r}/pulls/{}", o.number),
            format!("the pull request known from the outbox ({})", o.url),
        )),
        (Target::Pr, None) => {
            out.push(req(
                Method::Get,
                format!("{r}/pulls?state=all&head={}:{branch}", repo.owner),
                "is there a pull request for the branch",
            ));
            out.push(req(
                Method::Post,
                format!("{r}/pulls"),
                format!("if not: open \"{}\"", body::postmortem_title(p)),
            ));
        }
        (Target::Issue, Some(o)) => out.push(req(
            Method::Get,
            format!("{r}/issues/{}", o.number),
            format!("the postmortem issue known from the outbox ({})", o.url),
        )),
        (Target::Issue, None) => {
            scan(&mut out);
            out.push(req(
                Method::Post,
                format!("{r}/issues"),
                format!("if no marker: file \"{}\"", body::postmortem_title(p)),
            ));
        }
    }
    for item in &p.actions {
        if let Some(login) = item.owner.as_deref().and_then(body::github_login) {
            out.push(req(
                Method::Get,
                format!("{r}/assignees/{login}"),
                format!("may \"{login}\" be assigned"),
            ));
        }
        let labels = body::item_labels(item).join(", ");
        match known.get(&format!("action:{}", item.id)) {
            Some(o) => {
                out.push(req(
                    Method::Get,
                    format!("{r}/issues/{}", o.number),
                    format!("{} known from the outbox", item.id),
                ));
                out.push(req(
                    Method::Patch,
                    format!("{r}/issues/{}", o.number),
                    format!(
                        "if changed: update \"{}\" [{labels}]",
                        body::item_title(item)
                    ),
                ));
            }
            None => {
                scan(&mut out);
                out.push(req(
                    Method::Post,
                    format!("{r}/issues"),
                    format!(
                        "if no marker: file \"{}\" [{labels}]",
                        body::item_title(item)
                    ),
                ));
            }
        }
    }
    let last = match (target, pm) {
        (Target::Pr, Some(o)) => format!("{r}/pulls/{}", o.number),
        (Target::Issue, Some(o)) => format!("{r}/issues/{}", o.number),
        (Target::Pr, None) => format!("{r}/pulls/<new>"),
        (Target::Issue, None) => format!("{r}/issues/<new>"),
    };
    out.push(req(
        Method::Get,
        last.clone(),
        "the postmortem as it stands",
    ));
    out.push(req(
        Method::Patch,
        last,
        "if changed: link every action item's issue",
    ));
    out
}

/// The plan as printed by `--dry-run`.
pub fn render(p: &Publication, repo: &RepoName, target: Target, plan: &[PlannedRequest]) -> String {
    let mut s = String::new();
    let form = match target {
        Target::Pr => "a pull request",
        Target::Issue => "an issue",
    };
    let _ = writeln!(
        s,
        "Publishing incident {} to {repo} as {form} would send, in order (nothing was sent):",
        p.incident
    );
    for r in plan {
        let _ = writeln!(
            s,
            "  {:<5} {}\n        {}",
            r.method.as_str(),
            r.path,
            r.why
        );
    }
    let writes = plan.iter().filter(|r| r.method.is_write()).count();
    let _ = writeln!(
        s,
        "At most {writes} write(s), one request at a time and at least 1 s between writes; \
         {} action item(s).",
        p.actions.len()
    );
    s
}
