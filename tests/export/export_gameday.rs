//! Issue 7's acceptance, driven through the command line as a team would on a game day:
//! `warroom gameday planner-peak --headless` rehearses the outage, records it as an incident
//! and runs the `pool-exhaustion` runbook as a play; notes, an action item and the status are
//! added with `warroom incident ...`; then `warroom export` drafts the postmortem from the
//! journal and snapshots alone. The draft's facts must match the simulator's own record (which
//! the game day reports at every scrape): the impact window within one scrape interval, the
//! peaks within 1 %, the resolution steps in the order they ran.

use chrono::{DateTime, Utc};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const SCRAPE_S: f64 = 5.0;

pub(crate) fn warroom(data: &Path, config: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_warroom"));
    c.arg("--data-dir")
        .arg(data)
        .arg("--config")
        .arg(config)
        .env("WARROOM_ACTOR", "ana");
    c
}

/// Runs to completion within `limit`; returns stdout, failing with stderr when it fails.
/// Output goes to files, not pipes: the game day's report is larger than a pipe holds.
pub(crate) fn run(mut cmd: Command, limit: Duration) -> String {
    let (status, out, err) = crate::support::child::run_to_end(&mut cmd, limit);
    assert!(status.success(), "{cmd:?} failed ({status}): {out}\n{err}");
    out
}

fn utc(v: &serde_json::Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(v.as_str().unwrap_or_else(|| panic!("not a time: {v}")))
        .unwrap()
        .with_timezone(&Utc)
}

#[test]
fn a_game_day_driven_from_the_command_line_exports_a_draft_that_matches_the_simulator() {
    let _shared = crate::HEAVY.blocking_read();
    let dir = tempfile::tempdir().unwrap();
    let (data, config) = (dir.path().join("data"), dir.path().join("warroom.toml"));
    // A one-minute gap limit: the lint must find the five quiet minutes before the fault.
    std::fs::write(
        &config,
        "timezone = \"Europe/London\"\n[export]\ngap_limit = \"1m\"\n",
    )
    .unwrap();
    let cli = |args: &[&str]| {
        let mut c = warroom(&data, &config);
        c.args(args);
        run(c, Duration::from_secs(60))
    };

    // The rehearsal: the fault at 07:00 (simulated), the runbook three minutes later, and
    // twenty more minutes for its batch restarts (a two-minute soak each, simulated) and the
    // recovery to show.
    let mut gameday = warroom(&data, &config);
    gameday.args([
        "gameday",
        "planner-peak",
        "--headless",
        "--speed",
        "50",
        "--seed",
        "1",
        "--play",
        "pool-exhaustion@+3m",
        "--for",
        "30m",
        "--json",
    ]);
    let report: serde_json::Value =
        serde_json::from_str(&run(gameday, Duration::from_secs(240))).unwrap();
    let id = report["incident"]
        .as_str()
        .expect("the rehearsal's incident");
    assert_eq!(report["plays"][0]["outcome"], "succeeded", "{report}");
    assert_eq!(report["snapshots"], 8, "one snapshot per panel");

    // What the people add afterwards, through the command line.
    cli(&[
        "incident",
        "note",
        id,
        "Journey planning failed for most riders at the morning peak #summary",
    ]);
    cli(&[
        "incident",
        "note",
        id,
        "A deploy turned on retries in a second layer; the pools filled #root-cause",
    ]);
    cli(&[
        "incident",
        "action",
        id,
        "--owner",
        "ana",
        "--priority",
        "P1",
        "--due",
        "2026-12-15",
        "Allow retries in one layer only",
    ]);
    cli(&["incident", "status", id, "resolved"]);

    let out = dir.path().join("out");
    let out_s = out.to_str().unwrap();
    cli(&["export", id, "--format", "json", "--out", out_s]);
    let printed = cli(&["export", id, "--out", out_s]);
    let quiet = "gap: the timeline has nothing between 06:55 and 07:00";
    assert!(printed.contains(quiet), "the config's gap limit: {printed}");
    let printed = cli(&["export", id, "--out", out_s, "--gap-limit", "10m"]);
    assert!(!printed.contains(quiet), "--gap-limit wins: {printed}");
    let facts: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("facts.json")).unwrap_or_else(|_| {
            let names: Vec<_> = std::fs::read_dir(&out)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            panic!("no facts.json in the export: {names:?}")
        }),
    )
    .unwrap();
    let md = std::fs::read_to_string(out.join("postmortem.md")).unwrap();

    // The simulator's own record: the first scrape where its error ratio reached 5 %, and the
    // scrape after the last one still above the way back (5 % less 5 % hysteresis).
    let scrapes: Vec<(f64, f64, f64, f64)> = report["simulator"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let f = |k: &str| s[k].as_f64().unwrap();
            (f("t"), f("error_ratio"), f("answered"), f("logical"))
        })
        .collect();
    assert!(scrapes.len() > 300, "a scrape every 5 s for 30 min");
    let (crit, back) = (0.05, 0.05 * 0.95);
    let truth_start = scrapes.iter().find(|s| s.1 >= crit).unwrap().0;
    let truth_end = scrapes.iter().rfind(|s| s.1 >= back).unwrap().0 + SCRAPE_S;

    // Simulated second 0 (06:40 local today), as the game day reports it.
    let epoch = utc(&report["epoch"]);
    let secs = |v: &serde_json::Value| (utc(v) - epoch).num_milliseconds() as f64 / 1000.0;
    let (start, end) = (
        secs(&facts["impact"]["start"]["utc"]),
        secs(&facts["impact"]["end"]["utc"]),
    );
    println!("impact {start}..{end}, simulator {truth_start}..{truth_end}");
    assert!(
        (start - truth_start).abs() <= SCRAPE_S,
        "impact start {start} vs the simulator's {truth_start}"
    );
    assert!(
        (end - truth_end).abs() <= SCRAPE_S,
        "impact end {end} vs the simulator's {truth_end}"
    );

    // Peaks: the simulator's figures at the snapshot's own instants inside the window.
    let store = warroom::incident::Store::new(&data);
    let found = store.find(id).unwrap();
    let snaps = warroom::incident::snapshot::read_all(&store.snapshots_dir(&found)).unwrap();
    let err = snaps.iter().find(|s| s.title == "Error ratio").unwrap();
    let instants: Vec<f64> = err.series[0]
        .points
        .iter()
        .map(|p| p[0] - epoch.timestamp() as f64)
        .filter(|t| *t >= start && *t <= end)
        .collect();
    assert!(!instants.is_empty());
    let nearest = |t: f64| {
        *scrapes
            .iter()
            .min_by(|a, b| (a.0 - t).abs().total_cmp(&(b.0 - t).abs()))
            .unwrap()
    };
    let peak = |f: &dyn Fn(f64) -> f64| instants.iter().map(|t| f(*t)).fold(f64::MIN, f64::max);
    let truth_err = peak(&|t| nearest(t).1);
    // Attempts answered per logical request over the minute before each instant.
    let truth_amp = peak(&|t| {
        let (a, b) = (nearest(t - 60.0), nearest(t));
        (b.2 - a.2) / (b.3 - a.3)
    });
    let got_err = facts["signals"]["error_ratio"]["value"].as_f64().unwrap();
    let got_amp = facts["signals"]["retry_amplification"]["value"]
        .as_f64()
        .unwrap();
    println!(
        "peak error ratio {got_err} (simulator {truth_err}), amplification {got_amp} (simulator {truth_amp})"
    );
    assert!(
        (got_err - truth_err).abs() <= truth_err * 0.01,
        "peak error ratio {got_err} vs the simulator's {truth_err}"
    );
    assert!(
        (got_amp - truth_amp).abs() <= truth_amp * 0.01,
        "peak amplification {got_amp} vs the simulator's {truth_amp}"
    );
    let pool = facts["signals"]["pool_saturation"]["value"]
        .as_f64()
        .unwrap();
    assert!((pool - 1.0).abs() <= 0.01, "peak pool saturation {pool}");

    // The resolution: the runbook's steps that act, in the order the file gives them, all
    // done, each named by its title (waits and notes are gates, not steps taken).
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("runbooks/pool-exhaustion.toml"),
    )
    .unwrap();
    let file: toml::Value = toml::from_str(&text).unwrap();
    let order: Vec<&str> = file["step"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| ["http", "exec", "batch", "manual"].contains(&s["kind"].as_str().unwrap()))
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    let ran: Vec<&str> = facts["resolution"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert_eq!(s["runbook"], "pool-exhaustion");
            assert_eq!(s["ok"], true, "{s}");
            assert_ne!(s["title"], s["step"], "named by its title: {s}");
            s["step"].as_str().unwrap()
        })
        .collect();
    assert_eq!(ran, order);

    // The draft: the notes seeded their sections, the action item has the house columns, the
    // times are named in the configured zone, and the status is the one set last.
    let section = |name: &str| {
        let from = md
            .find(&format!("## {name}\n"))
            .unwrap_or_else(|| panic!("no {name} in {md}"));
        let rest = &md[from + name.len() + 4..];
        rest[..rest.find("\n## ").unwrap_or(rest.len())].to_string()
    };
    assert!(section("Summary").contains("Journey planning failed for most riders"));
    assert!(section("Root Cause").contains("retries in a second layer"));
    let actions = section("Corrective and Preventive Actions");
    assert!(
        actions.contains("| Action | Owner | Priority | Due date |"),
        "{actions}"
    );
    assert!(
        actions.contains("| Allow retries in one layer only | ana | P1 |"),
        "{actions}"
    );
    assert!(md.contains("**Status:** Resolved"), "{md}");
    // The rehearsal is titled after the scenario's own title, not its slug, and its service
    // is the one affected.
    let scenario = warroom::sim::Scenario::load("planner-peak").unwrap();
    assert!(
        md.starts_with(&format!(
            "# Incident Postmortem: Rehearsal: {}\n",
            scenario.title
        )),
        "{}",
        md.lines().next().unwrap_or_default()
    );
    assert!(
        md.contains(&format!("**Services affected:** {}", scenario.service)),
        "{md}"
    );
    assert!(
        section("Timeline").contains("All times are local (Europe/London)."),
        "times named in the configured zone: {}",
        section("Timeline")
    );
}
