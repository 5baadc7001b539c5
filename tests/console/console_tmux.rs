//! The runbook pane of `warroom demo` in a real terminal (tmux): the list, the plan with the
//! simulator's control URL, the typed confirmations, live progress, quit refused while the run
//! is active, abort, then a clean exit.

use crate::support::tmux;

use std::time::Duration;

#[test]
fn demo_runs_a_runbook_from_the_pane() {
    let dir = tempfile::tempdir().unwrap();
    let Some(term) = tmux::demo_past_briefing(dir.path(), 30, 160, 48) else {
        return;
    };
    term.send(&["b"]);
    term.expect("pool-exhaustion", Duration::from_secs(10));
    // The list is sorted: batch-restart, then disable-retries.
    term.send(&["j", "Enter"]);
    let plan = term.expect("/control/retries", Duration::from_secs(20));
    assert!(plan.contains("Plan · disable-retries"), "{plan}");
    assert!(
        plan.contains("POST http://127.0.0.1:"),
        "the demo's control URL: {plan}"
    );
    term.send(&["x"]);
    term.expect("Run runbook \"disable-retries\"?", Duration::from_secs(5));
    term.type_text("disable-retries");
    term.send(&["Enter"]);
    term.expect("Confirm step \"disable\"", Duration::from_secs(20));
    term.answer("disable");
    term.send(&["Enter"]);
    let screen = term.expect("✓ disable", Duration::from_secs(20));
    assert!(screen.contains("HTTP 200"), "{screen}");
    assert!(screen.contains("▶ running"), "{screen}");
    term.send(&["q"]);
    term.expect("abort it first", Duration::from_secs(5));
    term.send(&["A"]);
    term.expect("Abort run of", Duration::from_secs(5));
    term.send(&["Down", "Enter"]);
    term.expect("■ aborted", Duration::from_secs(20));
    term.send(&["q"]);
    let screen = term.expect("[exited 0]", Duration::from_secs(10));
    assert!(screen.contains("time to first mitigation"), "{screen}");
}

/// `warroom open` with nothing listening at the Prometheus URL still records: a note written
/// in `$EDITOR` (the terminal handed over and taken back), a status chosen in a dialog, both
/// on the timeline and in the journal.
#[test]
fn open_records_a_note_from_the_editor_and_a_status() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    // The simulator's dashboard, written out (with no [[panel]] the console would discover).
    let panels = warroom::config::panels::render_toml(&warroom::metrics::presets::sim_panels());
    std::fs::write(dir.path().join("w.toml"), panels).unwrap();
    let editor = dir.path().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nprintf 'pool full after the deploy #root-cause\\n' > \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = dir.path().join("data");
    let cmd = format!(
        "EDITOR={} {} --config {} --log-file {} --data-dir {} open --prometheus http://127.0.0.1:1 --title Editor",
        editor.display(),
        env!("CARGO_BIN_EXE_warroom"),
        dir.path().join("w.toml").display(),
        dir.path().join("log").display(),
        data.display(),
    );
    let Some(term) = tmux::Tmux::start(&cmd, 160, 48) else {
        return;
    };
    // Nothing listens there: the configured panels say so.
    term.expect("Pool saturation", Duration::from_secs(10));
    term.send(&["t"]);
    term.expect("Timeline", Duration::from_secs(5));
    term.send(&["e"]);
    term.expect("pool full after the deploy", Duration::from_secs(10));
    assert_eq!(
        term.format("#{alternate_on}"),
        "1",
        "back on the console's screen"
    );
    term.send(&["s"]);
    term.expect("Incident status", Duration::from_secs(5));
    term.send(&["Down", "Enter"]);
    term.expect("Status: identified", Duration::from_secs(10));
    term.send(&["q"]);
    term.expect("[exited 0]", Duration::from_secs(10));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_warroom"))
        .args(["--data-dir", data.to_str().unwrap(), "incident", "list"])
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&out.stdout);
    let id = list
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("an incident in {list}"))
        .to_string();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_warroom"))
        .args([
            "--data-dir",
            data.to_str().unwrap(),
            "incident",
            "timeline",
            &id,
            "--json",
        ])
        .output()
        .unwrap();
    let json = String::from_utf8_lossy(&out.stdout);
    assert!(
        json.contains("pool full after the deploy #root-cause"),
        "{json}"
    );
    assert!(json.contains("\"root-cause\""), "{json}");
    assert!(json.contains("\"identified\""), "{json}");
}
