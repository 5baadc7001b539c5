//! `warroom export` end to end through the binary: an incident fed with `warroom incident …`,
//! exported in each format, with and without a reachable Prometheus, and refused clearly when
//! the template or the id is wrong.

use std::path::Path;
use std::process::{Command, Output};

fn run(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warroom"))
        .arg("--data-dir")
        .arg(data)
        .arg("--log-file")
        .arg(data.join("warroom.log"))
        .args(args)
        .env("WARROOM_ACTOR", "ana")
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap()
}

fn ok(data: &Path, args: &[&str]) -> String {
    let out = run(data, args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn an_incident_fed_through_the_cli_exports_in_every_format() {
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let id = ok(
        d,
        &[
            "incident",
            "new",
            "--title",
            "Planner pools full",
            "--severity",
            "sev2",
        ],
    );
    let id = id.trim();
    ok(
        d,
        &[
            "incident",
            "note",
            id,
            "The stop-time query scans #root-cause",
        ],
    );
    ok(
        d,
        &[
            "incident",
            "action",
            id,
            "Alert on pool saturation",
            "--owner",
            "SRE",
            "--priority",
            "p1",
            "--due",
            "2026-08-07",
        ],
    );
    ok(d, &["incident", "action", id, "Add a retry budget"]);
    ok(d, &["incident", "status", id, "resolved"]);

    let out = ok(d, &["export", id]);
    let exports = d.join("incidents").join(id).join("exports");
    let md_path = exports.join("postmortem.md");
    assert!(
        out.contains(&format!("wrote {}", md_path.display())),
        "{out}"
    );
    let md = std::fs::read_to_string(&md_path).unwrap();
    assert!(
        md.starts_with("# Incident Postmortem: Planner pools full\n"),
        "{md}"
    );
    assert!(
        md.contains("\n## Root Cause\n\nThe stop-time query scans.\n"),
        "{md}"
    );
    assert!(md.contains("All times are in UTC."), "{md}");
    assert!(
        md.contains("| Alert on pool saturation | SRE | P1 | August 7, 2026 |"),
        "{md}"
    );
    // The lint is printed: the second action item lacks everything, the figures lack snapshots.
    assert!(out.contains("lint: "), "{out}");
    assert!(
        out.contains("Add a retry budget\" has no owner, no priority, no due date"),
        "{out}"
    );
    assert!(out.contains("missing: no panel snapshots"), "{out}");

    let status = ok(d, &["export", id, "--format", "status"]);
    assert!(status.contains("status.md"), "{status}");
    let text = std::fs::read_to_string(exports.join("status.md")).unwrap();
    assert!(
        text.starts_with("Partial Outage\n\nUpdate timeline\n\n1. investigating "),
        "{text}"
    );

    let elsewhere = d.join("elsewhere");
    ok(
        d,
        &[
            "export",
            id,
            "--format",
            "json",
            "--out",
            elsewhere.to_str().unwrap(),
        ],
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(elsewhere.join("facts.json")).unwrap()).unwrap();
    assert_eq!(v["incident"], id);
    assert_eq!(v["notes"]["root_cause"][0], "The stop-time query scans.");
}

#[test]
fn an_unreachable_prometheus_or_a_bad_template_is_said_clearly() {
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let id = ok(d, &["incident", "new", "--title", "x"]);
    let id = id.trim();

    // Nothing listens on this port: the snapshots cannot be taken, the draft is still written.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let out = run(d, &["export", id, "--prometheus", &url]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    // With no [[panel]], the panels come from discovery, which is what fails first here.
    assert!(
        err.contains("could not capture panel snapshots: discovery failed")
            && err.contains("Connection refused"),
        "{err}"
    );
    assert!(
        d.join("incidents")
            .join(id)
            .join("exports/postmortem.md")
            .is_file()
    );

    let out = run(d, &["export", id, "--template", "no-such-template.j2"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot read template \"no-such-template.j2\""),
        "{err}"
    );

    let out = run(d, &["export", "2026-01-01-9"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("there is no incident \"2026-01-01-9\""),
        "{err}"
    );
}
