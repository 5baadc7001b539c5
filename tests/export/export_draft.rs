//! The postmortem draft of a fixed incident (issue 7): golden Markdown, the house sections in
//! the examples' order, CommonMark with the house tables, figures computed from the snapshots'
//! own curves, byte-identical exports, the status page, the facts as JSON, templates and lint.

use crate::support::export_incident as incident;
use crate::support::records;

use pulldown_cmark::{Event as Md, HeadingLevel, Options, Parser, Tag, TagEnd};
use std::path::{Path, PathBuf};
use warroom::postmortem::{self, ExportOptions, Format};

fn export_to(dir: &Path, format: Format, notes: &[&str], snaps: bool) -> (PathBuf, Vec<String>) {
    let (store, id) = incident::build(&dir.join("data"), notes, snaps);
    let mut opts = ExportOptions::new(format, incident::TZ);
    opts.out = Some(dir.join("out"));
    let report = postmortem::export(&store, &id, &opts).unwrap();
    let lint = report
        .lint
        .iter()
        .map(std::string::ToString::to_string)
        .collect();
    (dir.join("out"), lint)
}

fn markdown(notes: &[&str]) -> (String, tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let (out, lint) = export_to(dir.path(), Format::Markdown, notes, true);
    let md = std::fs::read_to_string(out.join("postmortem.md")).unwrap();
    (md, dir, lint)
}

/// The `##` headings of a Markdown text, in order.
fn h2(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for e in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match e {
            Md::Start(Tag::Heading {
                level: HeadingLevel::H2,
                ..
            }) => {
                inside = true;
                out.push(String::new());
            }
            Md::End(TagEnd::Heading(HeadingLevel::H2)) => inside = false,
            Md::Text(t) | Md::Code(t) if inside => out.last_mut().unwrap().push_str(&t),
            _ => {}
        }
    }
    out
}

/// Every table: its header cells and its rows' cell counts.
fn tables(md: &str) -> Vec<(Vec<String>, Vec<usize>)> {
    let mut out: Vec<(Vec<String>, Vec<usize>)> = Vec::new();
    let (mut in_head, mut cell) = (false, None::<String>);
    for e in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match e {
            Md::Start(Tag::Table(_)) => out.push((Vec::new(), Vec::new())),
            Md::Start(Tag::TableHead) => in_head = true,
            Md::End(TagEnd::TableHead) => in_head = false,
            Md::Start(Tag::TableRow) => out.last_mut().unwrap().1.push(0),
            Md::Start(Tag::TableCell) => cell = Some(String::new()),
            Md::End(TagEnd::TableCell) => {
                let t = out.last_mut().unwrap();
                if in_head {
                    t.0.push(cell.take().unwrap_or_default());
                } else {
                    *t.1.last_mut().unwrap() += 1;
                    cell = None;
                }
            }
            Md::Text(s) | Md::Code(s) => {
                if let Some(c) = cell.as_mut() {
                    c.push_str(&s);
                }
            }
            _ => {}
        }
    }
    out
}

#[test]
fn golden_markdown_of_the_fixed_incident() {
    let (md, _dir, _) = markdown(&[]);
    insta::assert_snapshot!("planner_postmortem", md);
}

/// The section headings of the two house-format examples (a fixture: they live outside the
/// repository).
#[derive(serde::Deserialize)]
struct HouseSections {
    journey_planner: Vec<String>,
    bird_survey: Vec<String>,
}

#[test]
fn sections_follow_the_house_examples() {
    let (md, _dir, _) = markdown(&[]);
    let ours = h2(&md);
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/export/house-sections.toml");
    let house: HouseSections = toml::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    assert_eq!(
        ours, house.journey_planner,
        "section order differs from {fixture:?}"
    );
    // The sections the other example shares with ours come in the same order.
    let shared_order: Vec<&String> = house
        .bird_survey
        .iter()
        .filter(|h| ours.contains(h))
        .collect();
    let ours_order: Vec<&String> = ours.iter().filter(|h| shared_order.contains(h)).collect();
    assert!(shared_order.len() >= 7, "{shared_order:?}");
    assert_eq!(shared_order, ours_order);
}

#[test]
fn the_draft_is_commonmark_with_the_house_tables_and_header() {
    let (md, _dir, _) = markdown(&[]);
    let tables = tables(&md);
    assert_eq!(tables.len(), 2, "{md}");
    assert_eq!(tables[0].0, ["Time", "Event"]);
    assert_eq!(tables[1].0, ["Action", "Owner", "Priority", "Due date"]);
    for (head, rows) in &tables {
        assert!(!rows.is_empty());
        assert!(rows.iter().all(|n| *n == head.len()), "{head:?} {rows:?}");
    }
    for line in [
        "# Incident Postmortem: Journey planner outage",
        "**Incident date:** July 17, 2026  ",
        "**Duration:** 1 hour 35 minutes  ",
        "**Severity:** SEV-1  ",
        "**Services affected:** Web trip planner, mobile applications, public journey-planning API  ",
        "**Status:** Resolved",
        "Between 07:18 and 08:53 local time:",
        "All times are local (Europe/London).",
    ] {
        assert!(md.lines().any(|l| l == line), "missing {line:?} in\n{md}");
    }
    // Every chart linked from the draft exists beside it.
    let links: Vec<String> = Parser::new(&md)
        .filter_map(|e| match e {
            Md::Start(Tag::Image { dest_url, .. }) => Some(dest_url.to_string()),
            _ => None,
        })
        .collect();
    // Every panel but the request rate, which never moved.
    assert_eq!(links.len(), 8, "{links:?}");
    assert!(
        !links.iter().any(|l| l.contains("request-rate")),
        "{links:?}"
    );
    assert!(
        links
            .iter()
            .all(|l| l.starts_with("charts/") && l.ends_with(".svg"))
    );
}

#[test]
fn figures_match_the_curves_the_snapshots_were_made_from() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident::build(&dir.path().join("data"), &[], true);
    let recs = store.read(&id).unwrap().records;
    let snap_dir = store.snapshots_dir(&id);
    let snaps = warroom::incident::snapshot::read_all(&snap_dir).unwrap();
    let facts_snaps =
        warroom::incident::snapshot::read_all(&warroom::incident::snapshot::facts_dir(&snap_dir))
            .unwrap();
    let facts = postmortem::facts::compute_from(
        &id.to_string(),
        &postmortem::facts::Evidence {
            records: &recs,
            panels: &snaps,
            facts: &facts_snaps,
            rules: None,
            public_names: &Default::default(),
        },
        incident::TZ,
        postmortem::timeline::Mode::Folded,
    );
    let (from, to) = (
        incident::at("07:18").timestamp() as f64,
        incident::at("08:53").timestamp() as f64,
    );
    // The curves sampled every second over the impact window.
    let secs: Vec<f64> = (0..=(to - from) as usize)
        .map(|i| from + i as f64)
        .collect();
    let max = |f: fn(f64) -> f64| secs.iter().map(|x| f(*x)).fold(f64::MIN, f64::max);
    let s = &facts.signals;
    let close = |got: f64, want: f64| (got - want).abs() <= want.abs() * 0.01;
    let er = s.error_ratio.as_ref().unwrap();
    assert!(close(er.value, max(incident::error_ratio)), "{er:?}");
    let amp = s.retry_amplification.as_ref().unwrap();
    assert!(close(amp.value, max(incident::amplification)), "{amp:?}");
    let lat = s.latency.as_ref().unwrap();
    assert!(close(lat.peak, max(incident::latency_p50)), "{lat:?}");
    assert!(
        close(lat.before, incident::latency_p50(from - 600.0)),
        "{lat:?}"
    );
    assert_eq!(s.pool_saturation.as_ref().unwrap().text, "100%");
    // User requests: made and failed, from the counters, against the curves.
    let c = &facts.customer;
    let made = (to - from) * incident::RPS;
    let failed: f64 = secs
        .iter()
        .map(|x| incident::user_failure(*x) * incident::RPS)
        .sum();
    let got = c.requests.as_ref().unwrap().value;
    assert!(close(got, made), "{got} vs {made}");
    let got = c.failed.as_ref().unwrap().value;
    assert!(close(got, failed), "{got} vs {failed}");
    // The worst minute: the curve's highest user failure share (81 % / 2 at 08:00).
    let worst = c.worst_minute.as_ref().unwrap();
    assert!(
        (worst.value - max(incident::user_failure)).abs() < 0.01,
        "{worst:?}"
    );
    assert_eq!(
        c.headline
            .map(warroom::postmortem::customer::Headline::as_str),
        Some("Partial Outage")
    );
    let impact = facts.impact.as_ref().unwrap();
    assert_eq!(
        (
            impact.start.clock.as_str(),
            impact.end.as_ref().unwrap().clock.as_str(),
            impact.duration.as_deref()
        ),
        ("07:18", "08:53", Some("1 hour 35 minutes"))
    );
    assert_eq!(impact.source, "signals");
    // Detection: the first crossing (latency, 07:12, six minutes before the impact), the alert
    // three minutes after the impact began, the incident opened at 07:25.
    let d = &facts.detection;
    assert_eq!(d.first_crossing.as_ref().unwrap().clock, "07:12");
    assert_eq!(d.lead.as_deref(), Some("6 minutes"));
    assert_eq!(d.alert_after.as_deref(), Some("3 minutes"));
    assert_eq!(
        d.first_action_what.as_deref(),
        Some("opened the incident"),
        "{d:?}"
    );
    assert_eq!(d.action_after.as_deref(), Some("7 minutes"));
    // The steps in the order they ran, by title (none recorded: the id in words), with
    // outcomes.
    let steps: Vec<(String, String)> = facts
        .resolution
        .iter()
        .map(|s| (s.title.clone(), s.outcome.clone()))
        .collect();
    assert_eq!(
        steps,
        [
            ("Rollback", "succeeded"),
            ("Gateway off", "succeeded"),
            ("Restart", "failed"),
            ("Restart", "succeeded")
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    // The recovery (08:53) came 23 minutes after the restarts (08:30), outside every step's
    // effect window: no step is credited with it, and the recovery says how long after.
    let credited: Vec<&Vec<String>> = facts
        .responses
        .iter()
        .filter(|r| r.credited)
        .map(|r| &r.titles)
        .collect();
    assert!(credited.is_empty(), "{credited:?}");
    let recovery = &facts.recovery.as_ref().unwrap().text;
    assert!(
        recovery.contains("23 minutes after Restart; no step is credited with it"),
        "{recovery}"
    );
    // Corrections applied: the corrected note replaced, the retracted one gone.
    assert_eq!(
        facts.notes.impact,
        ["The connection pools of all ten API instances stayed full."]
    );
    assert!(
        facts
            .timeline
            .iter()
            .all(|r| r.event != "typo" && !r.event.contains("90%"))
    );
    // Noise folded: two alert series, one firing row; the full record has the resolution too.
    let alert_rows = facts
        .timeline
        .iter()
        .filter(|r| r.event.contains("PlannerHigh503"))
        .count();
    assert_eq!(alert_rows, 1);
}

#[test]
fn two_exports_are_byte_identical() {
    let read_all = |dir: &Path| {
        let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
        for sub in ["", "charts"] {
            let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
                continue;
            };
            for e in entries {
                let p = e.unwrap().path();
                if p.is_file() {
                    files.push((
                        p.strip_prefix(dir).unwrap().to_path_buf(),
                        std::fs::read(&p).unwrap(),
                    ));
                }
            }
        }
        files.sort();
        files
    };
    for format in [Format::Markdown, Format::Status, Format::Json] {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (out_a, _) = export_to(a.path(), format, &[], true);
        let (out_b, _) = export_to(b.path(), format, &[], true);
        let (fa, fb) = (read_all(&out_a), read_all(&out_b));
        assert!(!fa.is_empty());
        assert_eq!(fa, fb, "{format:?}");
    }
}

#[test]
fn the_default_output_is_the_incidents_exports_dir() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident::build(dir.path(), &[], true);
    let report = postmortem::export(
        &store,
        &id,
        &ExportOptions::new(Format::Markdown, incident::TZ),
    )
    .unwrap();
    let exports = store.exports_dir(&id);
    assert_eq!(report.written[0], exports.join("postmortem.md"));
    assert!(exports.join("charts/error-ratio.svg").is_file());
    assert_eq!(report.written.len(), 9);
}

#[test]
fn the_status_page_lists_each_stage_with_its_time() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident::build(&dir.path().join("data"), &[], true);
    let mut opts = ExportOptions::new(Format::Status, incident::TZ);
    opts.out = Some(dir.path().join("out"));
    // Two of the three services have a public name; the third is not named on the page.
    opts.public_names = [
        ("Web trip planner", "Journey planner"),
        ("mobile applications", "our apps"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    postmortem::export(&store, &id, &opts).unwrap();
    let text = std::fs::read_to_string(dir.path().join("out").join("status.md")).unwrap();
    // At the worst minute 40 % of user requests failed (the attempts' 81 % counts retries).
    assert!(
        text.starts_with("Partial Outage\n\nUpdate timeline\n"),
        "{text}"
    );
    let stages: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_once(". ").filter(|(n, _)| n.parse::<u32>().is_ok()))
        .map(|(_, rest)| rest)
        .collect();
    assert_eq!(
        stages,
        [
            "investigating Jul 17, 2026, 7:25 AM BST",
            "identified Jul 17, 2026, 8:03 AM BST",
            "monitoring Jul 17, 2026, 8:42 AM BST",
            "resolved Jul 17, 2026, 9:05 AM BST",
            "postmortem Jul 17, 2026, 9:15 AM BST",
        ],
        "{text}"
    );
    assert!(text.contains("**Root cause** A deploy applied"), "{text}");
    // Built from the facts, for customers: the users' failed requests, no internal title.
    assert!(
        text.contains(
            "From 07:18 to 08:53 local time (1 hour 35 minutes), 2,240,854 of 8,550,000 \
             requests to Journey planner and our apps (26%) failed."
        ),
        "{text}"
    );
    assert!(!text.contains("Journey planner outage"), "{text}");
    assert!(
        text.contains("**Initial response** Our team began mitigating at 08:03"),
        "{text}"
    );
    // No runbook or step title, no service id.
    for internal in [
        "Rollback",
        "Web trip planner",
        "public journey-planning API",
    ] {
        assert!(!text.contains(internal), "{internal}: {text}");
    }
    // Each update is its own list item: a blank line before the next, none at the end.
    assert!(text.contains("(26%) failed.\n\n5. postmortem"), "{text}");
    assert!(text.ends_with("backoff and jitter.\n"), "{text}");
}

#[test]
fn json_carries_the_facts_and_the_lint() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = export_to(dir.path(), Format::Json, &[], true);
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("facts.json")).unwrap()).unwrap();
    assert_eq!(v["incident"], "2026-07-17-1");
    assert_eq!(v["impact"]["start"]["utc"], "2026-07-17T06:18:00Z");
    assert_eq!(v["signals"]["error_ratio"]["text"], "81%");
    assert_eq!(v["actions"][1]["owner"], serde_json::Value::Null);
    assert_eq!(v["resolution"][0]["at"], "2026-07-17T07:03:00Z");
    assert_eq!(v["resolution"][0]["title"], "Rollback");
    assert_eq!(v["customer"]["failed_share"]["text"], "26%");
    assert_eq!(v["timeline"][0]["at"], "2026-07-17T05:52:00Z");
    assert!(
        v["lint"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "action")
    );
}

#[test]
fn another_houses_template_renders_the_same_facts_and_errors_say_where() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident::build(&dir.path().join("data"), &[], true);
    let tpl = dir.path().join("ours.md.j2");
    std::fs::write(
        &tpl,
        "## {{ title }}\n{% for a in actions %}* {{ a.action }} ({{ a.owner or 'nobody' }})\n{% endfor %}",
    )
    .unwrap();
    let mut opts = ExportOptions::new(Format::Markdown, incident::TZ);
    opts.out = Some(dir.path().join("out"));
    opts.template = Some(tpl.clone());
    postmortem::export(&store, &id, &opts).unwrap();
    let md = std::fs::read_to_string(dir.path().join("out/postmortem.md")).unwrap();
    assert_eq!(
        md,
        "## Journey planner outage\n\
         * Alert on database connection-pool saturation and sustained query latency. (Site Reliability Engineering)\n\
         * Implement a shared retry budget with backoff and jitter. (nobody)\n"
    );
    std::fs::write(&tpl, "line one\n{% for x in %}\n").unwrap();
    let err = postmortem::export(&store, &id, &opts)
        .unwrap_err()
        .to_string();
    assert!(err.contains("ours.md.j2:2:"), "{err}");
}

#[test]
fn lint_names_what_the_author_still_has_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let (_, lint) = export_to(dir.path(), Format::Markdown, &[], true);
    let has = |needle: &str| lint.iter().any(|l| l.contains(needle));
    assert!(
        has("section \"Summary\" still holds the prompt"),
        "{lint:#?}"
    );
    assert!(!has("section \"Root Cause\""), "{lint:#?}");
    assert!(
        has("AI-2") && has("no owner, no priority, no due date"),
        "{lint:#?}"
    );
    assert!(!has("AI-1"), "{lint:#?}");
    assert!(!has("missing"), "{lint:#?}");

    // Without snapshots the lint says which facts are missing, and the draft still renders.
    let dir = tempfile::tempdir().unwrap();
    let (out, lint) = export_to(dir.path(), Format::Markdown, &[], false);
    assert!(
        lint.iter()
            .any(|l| l.starts_with("missing: no panel snapshots")),
        "{lint:#?}"
    );
    let md = std::fs::read_to_string(out.join("postmortem.md")).unwrap();
    assert!(md.contains("Between 07:18 and 08:53 local time:"), "{md}");

    // A short gap limit finds the quiet stretches of the timeline.
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident::build(dir.path(), &[], true);
    let mut opts = ExportOptions::new(Format::Json, incident::TZ);
    opts.gap_limit = chrono::Duration::minutes(10);
    let report = postmortem::export(&store, &id, &opts).unwrap();
    let gaps: Vec<&str> = report
        .lint
        .iter()
        .filter(|f| f.kind == "gap")
        .map(|f| f.message.as_str())
        .collect();
    assert!(
        gaps.iter().any(|g| g.contains("between 07:46 and 08:03")),
        "{gaps:#?}"
    );
}

#[test]
fn an_impact_window_set_by_hand_wins_and_the_lint_says_when_signals_disagree() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = incident::build(dir.path(), &[], true);
    let (mut journal, _clock) = records::manual_journal(&store, &id, incident::at("09:20"));
    journal
        .append(
            warroom::incident::Source::Operator,
            "ana",
            warroom::incident::Event::ImpactStart {
                at: incident::at("07:05"),
            },
        )
        .unwrap();
    drop(journal);
    let report =
        postmortem::export(&store, &id, &ExportOptions::new(Format::Json, incident::TZ)).unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report.written[0]).unwrap()).unwrap();
    assert_eq!(v["impact"]["start"]["clock"], "07:05");
    assert_eq!(v["impact"]["signal_start"]["clock"], "07:18");
    assert_eq!(v["impact"]["source"], "journal and signals");
    let impact: Vec<String> = report
        .lint
        .iter()
        .filter(|f| f.kind == "impact")
        .map(|f| f.message.clone())
        .collect();
    assert_eq!(impact.len(), 1, "{impact:#?}");
    assert!(
        impact[0].contains("impact start (07:05 local time) does not match the signals (07:18)"),
        "{impact:#?}"
    );
}

/// Issue 32, point 7: the judgement sections open with sentences built from the facts and
/// every tagged note is a sentence (capitalized, with its full stop), not a pasted fragment;
/// what the draft judges on its own is marked `[Suggested]`, which the lint knows.
#[test]
fn notes_become_sentences_and_the_facts_open_the_judgement_sections() {
    let (md, _dir, _) = markdown(&[
        "pools full on every instance #root-cause",
        "the canary ran before the peak #went-poorly",
        "retries doubled the load #lesson",
    ]);
    let section = |name: &str| -> String {
        let from = md.find(&format!("## {name}\n")).unwrap();
        let rest = &md[from + name.len() + 4..];
        rest[..rest.find("\n## ").unwrap_or(rest.len())].to_string()
    };
    let summary = section("Summary");
    assert!(summary.trim_start().starts_with("On "), "{summary}");
    assert!(summary.contains("user requests failed"), "{summary}");
    // The fixed incident recovered 23 minutes after its last step, credited to none.
    assert!(
        summary.contains("Service recovered at 08:53, 23 minutes after Restart"),
        "{summary}"
    );
    let root = section("Root Cause");
    assert!(root.contains("Pools full on every instance.\n"), "{root}");
    assert!(
        root.contains("Database connection-pool saturation"),
        "{root}"
    );
    let poorly = section("What Went Poorly");
    assert!(
        poorly.contains("- The canary ran before the peak.\n"),
        "{poorly}"
    );
    assert!(section("Lessons Learned").contains("Retries doubled the load.\n"));
    for name in ["What Went Well", "What Went Poorly"] {
        let s = section(name);
        for line in s.lines().filter(|l| l.starts_with("- [Suggested]")) {
            assert!(line.ends_with('.'), "{line}");
        }
    }
    let found = postmortem::lint::unfinished(&md);
    assert!(
        found.iter().any(|f| f.message.contains("[Suggested]")),
        "{found:?}"
    );
}
